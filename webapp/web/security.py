"""Security headers on every response: a strict CSP, no sniffing, same-origin framing only."""

from __future__ import annotations

import hashlib

from flask import Flask, Response, request
from flask.sessions import SecureCookieSessionInterface

CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'self'",
])


def add_security_headers(response: Response) -> Response:
    """Set the headers every dashboard response carries."""
    headers = response.headers
    headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("Referrer-Policy", "same-origin")
    headers.setdefault("X-Frame-Options", "SAMEORIGIN")
    headers.setdefault("Cross-Origin-Opener-Policy", "same-origin")
    if response.mimetype == "text/html":
        headers.setdefault("Cache-Control", "no-store")
        response.vary.add("HX-Request")
    return response


class PerPathSessionInterface(SecureCookieSessionInterface):
    """A session cookie named for this app and scoped to its ingress path.

    Behind Home Assistant every add-on shares one origin, so a plain name and path "/" would
    let two add-ons (or two ingress entries) overwrite each other's cookie.
    """

    def get_cookie_name(self, app: Flask) -> str:
        base = app.config["SESSION_COOKIE_NAME"]
        prefix = request.script_root if request else ""
        if not prefix:
            return base
        return f"{base}_{hashlib.sha256(prefix.encode()).hexdigest()[:12]}"

    def get_cookie_path(self, app: Flask) -> str:
        prefix = request.script_root if request else ""
        return prefix or super().get_cookie_path(app)


def init_app(app: Flask) -> None:
    """Register the header hook and the per-path session cookie."""
    app.after_request(add_security_headers)
    app.session_interface = PerPathSessionInterface()
