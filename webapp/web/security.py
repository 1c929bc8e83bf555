"""Security headers on every response: a strict CSP, no sniffing, same-origin framing only."""

from __future__ import annotations

from flask import Flask, Response

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


def init_app(app: Flask) -> None:
    """Register the header hook."""
    app.after_request(add_security_headers)
