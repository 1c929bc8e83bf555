"""The dashboard: a Flask app factory and one blueprint per area.

``create_app`` reads nothing at import time; everything comes from ``Settings``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Flask, redirect, url_for

from ..settings import Settings
from .blueprints import (
    as_of,
    attention,
    auth,
    bring,
    conversations,
    expiry,
    expiry_hint,
    forgetting,
    health,
    i18n,
    memories,
    people,
    prompt,
    provenance,
    review,
    skills,
)
from .plumbing import (
    assets,
    context,
    errors,
    formatting,
    ingress,
    security,
    threads,
)
from .plumbing.context import Stores
from .plumbing.extensions import csrf, htmx
from .plumbing.guard import MAX_REQUEST_BYTES
from .plumbing.secret_key import secret_key_for

__all__ = ["create_app", "csrf", "htmx", "resource_dir"]

PACKAGE_DIR = Path(__file__).resolve().parent.parent


def resource_dir(name: str) -> Path:
    """Where ``templates`` or ``static`` live: inside the installed package (the wheel puts
    them there), else at the top of the source checkout (their place in the repository)."""
    installed = PACKAGE_DIR / name
    return installed if installed.is_dir() else PACKAGE_DIR.parent / name


def create_app(settings: Settings | None = None, **overrides: Any) -> Flask:
    """Build the dashboard for ``settings`` (default: from the environment)."""
    settings = settings or Settings.from_env()
    app = Flask(
        "webapp",
        template_folder=str(resource_dir("templates")),
        static_folder=str(resource_dir("static")),
    )
    app.config.update(
        SECRET_KEY=secret_key_for(settings),
        MEMORY_SETTINGS=settings,
        WTF_CSRF_TIME_LIMIT=None,
        WTF_CSRF_SSL_STRICT=False,
        MAX_CONTENT_LENGTH=MAX_REQUEST_BYTES,  # the server refuses more before reading it
        SESSION_COOKIE_NAME="memory_curator_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        TEMPLATES_AUTO_RELOAD=False,
    )
    app.config.update(overrides)
    app.extensions["memory_curator"] = Stores(settings)
    htmx.init_app(app)
    ingress.init_app(app, settings)
    auth.init_app(app)  # before CSRF: a visitor without a session goes to the login page first
    csrf.init_app(app)
    security.init_app(app)
    assets.init_app(app)
    context.init_app(app)
    i18n.init_app(app)
    errors.init_app(app)
    formatting.init_app(app)
    threads.init_app(app)
    forgetting.init_app(app)
    expiry.init_app(app)
    expiry_hint.init_app(app)
    for area in (
        health,
        memories,
        people,
        forgetting,
        as_of,
        provenance,
        conversations,
        prompt,
        review,
        attention,
        skills,
    ):
        app.register_blueprint(area.bp)
    app.register_blueprint(expiry.bp)
    app.register_blueprint(expiry_hint.bp)
    app.register_blueprint(bring.bp)
    app.add_url_rule("/", "index", lambda: redirect(url_for("memories.index")))
    return app
