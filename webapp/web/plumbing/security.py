"""Security headers on every response (a strict CSP, no sniffing, same-origin framing only),
where the server says so a check of the Host header against DNS rebinding, and page text
that is always valid UTF-8."""

from __future__ import annotations

import hashlib

from flask import Flask, Response, current_app, request
from flask.sessions import SecureCookieSessionInterface

from ...text import replace_lone_surrogates
from .ingress import forwarded_https

CONTENT_SECURITY_POLICY = "; ".join(
    [
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
    ]
)


def add_security_headers(response: Response) -> Response:
    """Set the headers every dashboard response carries."""
    headers = response.headers
    headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("Referrer-Policy", "same-origin")
    headers.setdefault("X-Frame-Options", "SAMEORIGIN")
    headers.setdefault("Cross-Origin-Opener-Policy", "same-origin")
    if request.endpoint != "static":
        # Pages, partials, exports and JSON all show memories or conversations: never cached.
        headers.setdefault("Cache-Control", "no-store")
    if response.mimetype == "text/html":
        response.vary.add("HX-Request")
    return response


class Utf8Response(Response):
    """A response whose text is always valid UTF-8: a lone surrogate (which another program
    may have written into a store, as the JSON escape ``\\ud800``) is sent as U+FFFD instead
    of failing the whole page with a 500."""

    def set_data(self, value: bytes | str) -> None:
        if isinstance(value, str):
            # The encoding the response needs anyway finds a lone surrogate (a page of 100 kB:
            # 0.05 ms, where searching the text for one first took 0.23 ms).
            try:
                encoded = value.encode("utf-8")
            except UnicodeEncodeError:
                encoded = replace_lone_surrogates(value).encode("utf-8")
            super().set_data(encoded)
            return
        super().set_data(value)


class PerPathSessionInterface(SecureCookieSessionInterface):
    """A session cookie named for this app and scoped to its ingress path.

    Behind Home Assistant every add-on shares one origin, so a plain name and path "/" would
    let two add-ons (or two ingress entries) overwrite each other's cookie.
    """

    def get_cookie_name(self, app: Flask) -> str:
        base: str = app.config["SESSION_COOKIE_NAME"]
        prefix = request.script_root if request else ""
        if not prefix:
            return base
        return f"{base}_{hashlib.sha256(prefix.encode()).hexdigest()[:12]}"

    def get_cookie_secure(self, app: Flask) -> bool:
        """Secure when the browser reached us over HTTPS, directly or through a trusted proxy."""
        if super().get_cookie_secure(app):
            return True
        return bool(request) and (request.is_secure or forwarded_https())

    def get_cookie_path(self, app: Flask) -> str:
        prefix = request.script_root if request else ""
        return prefix or super().get_cookie_path(app)


def request_hostname() -> str:
    """The request's Host header without its port (IPv6 brackets removed)."""
    host = request.host.lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    return host.rsplit(":", 1)[0]


def check_host() -> Response | None:
    """Refuse requests addressed to a name this server does not answer to (MEMORY_ALLOWED_HOSTS).

    A web page on another site can point its own name at 127.0.0.1 (DNS rebinding) and
    read a loopback dashboard that needs no login; the Host header gives it away.
    """
    allowed = current_app.config.get("MEMORY_ALLOWED_HOSTS")
    if allowed is None or request_hostname() in allowed:
        return None
    return Response(
        "This dashboard answers only requests addressed to this machine "
        "(localhost / 127.0.0.1). Open it by that address.\n",
        status=400,
        mimetype="text/plain",
    )


def init_app(app: Flask) -> None:
    """Register the host check, the header hook, the per-path session cookie and the UTF-8
    safe response class."""
    app.response_class = Utf8Response
    app.before_request(check_host)
    app.after_request(add_security_headers)
    app.session_interface = PerPathSessionInterface()
