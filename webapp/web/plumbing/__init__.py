"""What the dashboard's pages share and how it is served: the request's curator and stores
(``context``), htmx answers, sign-in guard, security headers, ingress, translations' helpers,
formatting, pagination, the background jobs, discovery and the server (``serve``)."""
