"""The Flask extensions of the dashboard, made once and bound to each app in ``create_app``."""

from __future__ import annotations

from flask_htmx import HTMX
from flask_wtf.csrf import CSRFProtect

htmx = HTMX()
csrf = CSRFProtect()
