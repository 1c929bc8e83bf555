"""Home Assistant ingress: one WSGI middleware decides whom to trust and what prefix to use.

Home Assistant proxies ``/api/hassio_ingress/<token>/...`` to the add-on with the prefix
stripped, adds ``X-Ingress-Path`` and the user's headers, and connects from 172.30.32.2.
Those headers are believed only from a trusted proxy address; then the prefix becomes
``SCRIPT_NAME``, so every ``url_for`` (links, forms, static files, htmx URLs, redirects)
carries it. Headers from anyone else are removed before the app sees them.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

from flask import Flask, g, request
from werkzeug.wrappers import Response

from ...settings import Settings

log = logging.getLogger(__name__)

INGRESS_PATH = re.compile(r"^/api/hassio_ingress/[A-Za-z0-9_-]+$")
INGRESS_KEY = "memory_curator.ingress_path"
USER_KEY = "memory_curator.user_name"
USER_ID_KEY = "memory_curator.user_id"
LOGIN_KEY = "memory_curator.user_login"  # the Home Assistant user name (X-Remote-User-Name)
TRUSTED_KEY = "memory_curator.trusted_proxy"

# Headers only Home Assistant's proxy may set (WSGI environ names).
PROXY_HEADERS = (
    "HTTP_X_INGRESS_PATH",
    "HTTP_X_REMOTE_USER_ID",
    "HTTP_X_REMOTE_USER_NAME",
    "HTTP_X_REMOTE_USER_DISPLAY_NAME",
    # What a reverse proxy says about the client (its address, HTTPS): believed from a
    # trusted proxy only (the login limit, the Secure cookie), dropped from anyone else.
    "HTTP_X_FORWARDED_FOR",
    "HTTP_X_FORWARDED_PROTO",
    "HTTP_X_FORWARDED_HOST",
    "HTTP_X_FORWARDED_PORT",
    "HTTP_FORWARDED",
)
MAX_NAME_LENGTH = 100
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")

FORBIDDEN_BODY = (
    b"Forbidden: in the Home Assistant add-on this dashboard is reached through "
    b"the Home Assistant sidebar (ingress). To open its port directly, turn on "
    b"the add-on option memory_allow_direct_access.\n"
)

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class IngressMiddleware:
    """Trust ingress headers from the proxy only, set SCRIPT_NAME, refuse strangers in the add-on."""

    def __init__(self, app: WsgiApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.trusted = parse_networks(settings.trusted_proxies)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        trusted = is_trusted(environ.get("REMOTE_ADDR", ""), self.trusted)
        environ[TRUSTED_KEY] = trusted
        if not trusted:
            for name in PROXY_HEADERS:
                environ.pop(name, None)
            if self.settings.is_addon and not self.settings.allow_direct_access:
                start_response(
                    "403 Forbidden",
                    [
                        ("Content-Type", "text/plain; charset=utf-8"),
                        ("Content-Length", str(len(FORBIDDEN_BODY))),
                    ],
                )
                return [FORBIDDEN_BODY]
            return self.app(environ, start_response)
        prefix = ingress_prefix(environ.get("HTTP_X_INGRESS_PATH", ""))
        if prefix:
            environ[INGRESS_KEY] = prefix
            environ["SCRIPT_NAME"] = prefix
            path = environ.get("PATH_INFO", "")
            if path == prefix or path.startswith(prefix + "/"):
                # A proxy that forwards the full path (not stripped) still routes right.
                environ["PATH_INFO"] = path[len(prefix) :] or "/"
        user_name = header_text(environ.get("HTTP_X_REMOTE_USER_DISPLAY_NAME")) or header_text(
            environ.get("HTTP_X_REMOTE_USER_NAME")
        )
        if user_name:
            environ[USER_KEY] = user_name
        login = header_text(environ.get("HTTP_X_REMOTE_USER_NAME"))
        if login:
            environ[LOGIN_KEY] = login
        user_id = header_text(environ.get("HTTP_X_REMOTE_USER_ID"))
        if user_id:
            environ[USER_ID_KEY] = user_id
        return self.app(environ, start_response)


def parse_networks(
    entries: Iterable[str],
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """Trusted proxies as networks: a single address or a CIDR block each; junk is ignored."""
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            log.warning("Ignoring trusted proxy %r: not an IP address or network", entry)
    return tuple(networks)


def is_trusted(remote_addr: str, networks: Iterable[Any]) -> bool:
    """True when ``remote_addr`` is inside one of the trusted networks."""
    try:
        address = ipaddress.ip_address(remote_addr.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return any(address.version == net.version and address in net for net in networks)


def ingress_prefix(value: str) -> str | None:
    """The ingress path when it looks exactly like one, else None (never a forged URL)."""
    value = value.strip()
    return value if INGRESS_PATH.fullmatch(value) else None


def header_text(value: str | None) -> str | None:
    """A header as text: WSGI hands over latin-1, Home Assistant sends UTF-8; no control chars."""
    if not value:
        return None
    try:
        text = value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        text = value
    text = _CONTROL.sub("", text).strip()[:MAX_NAME_LENGTH]
    return text or None


def forwarded_https() -> bool:
    """True when a trusted proxy says the client's connection to it is HTTPS."""
    if not request.environ.get(TRUSTED_KEY):
        return False
    proto = request.headers.get("X-Forwarded-Proto", "")
    return proto.split(",", 1)[0].strip().lower() == "https"


def via_ingress() -> bool:
    """True when Home Assistant's ingress proxy forwarded this request (it authenticated the user)."""
    return bool(request.environ.get(INGRESS_KEY))


def _load_user() -> None:
    """Expose the Home Assistant user to templates (g.user_name) and the history log (g.actor)."""
    name = request.environ.get(USER_KEY)
    if name:
        g.user_name = name
        g.actor = name


def prefixed_location(value: str, prefix: str) -> str:
    """A root-absolute URL without the prefix gets it; anything else is returned unchanged."""
    if (
        value.startswith("/")
        and not value.startswith("//")
        and not (value == prefix or value.startswith(prefix + "/"))
    ):
        log.warning("Root-absolute URL %r lacked the ingress prefix; fixed", value)
        return prefix + value
    return value


def _guard_redirects(response: Response) -> Response:
    """Catch a stray root-absolute redirect (Location, HX-Redirect, HX-Location) behind ingress."""
    prefix = request.environ.get(INGRESS_KEY)
    if not prefix:
        return response
    for header in ("Location", "HX-Redirect"):
        if header in response.headers:
            response.headers[header] = prefixed_location(response.headers[header], prefix)
    if "HX-Location" in response.headers:
        response.headers["HX-Location"] = _prefixed_hx_location(
            response.headers["HX-Location"], prefix
        )
    return response


def _prefixed_hx_location(value: str, prefix: str) -> str:
    """HX-Location is a path or a JSON object with a "path"."""
    if not value.lstrip().startswith("{"):
        return prefixed_location(value, prefix)
    try:
        spec = json.loads(value)
    except ValueError:
        return value
    if isinstance(spec, dict) and isinstance(spec.get("path"), str):
        spec["path"] = prefixed_location(spec["path"], prefix)
        return json.dumps(spec)
    return value


def init_app(app: Flask, settings: Settings) -> None:
    """Wrap the WSGI app and register the per-request user and redirect guard."""
    app.wsgi_app = IngressMiddleware(app.wsgi_app, settings)  # type: ignore[method-assign]
    app.before_request(_load_user)
    app.after_request(_guard_redirects)
