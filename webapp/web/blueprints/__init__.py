"""The dashboard's pages: one Flask blueprint per module, each parsing a request, calling the
curator and rendering a template (``webapp.web.create_app`` registers them)."""
