"""Run the dashboard with a production WSGI server (waitress: threads, no dev server)."""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
from collections.abc import Mapping
from pathlib import Path

from ...settings import MAKE_ONE, Settings, SettingsError, UnsafeBindError, token_problem


def is_loopback(host: str) -> bool:
    """True for an address only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name may resolve anywhere: treat it as public


def check_exposure(settings: Settings, host: str) -> None:
    """Refuse a public address without a token, or with a weak one (``token_problem``; the
    add-on is guarded by its address allow-list)."""
    if settings.is_addon or is_loopback(host):
        return
    token = settings.dashboard_token
    if token:
        where = "(MEMORY_DASHBOARD_TOKEN or --token-file)"
        problem = token_problem(token, where, refusing=f"Refusing to listen on {host}: ")
        if problem is not None:
            raise problem
        return
    raise UnsafeBindError(
        f"Refusing to listen on {host} without an access token: anyone who can reach this "
        "address could read and change every memory. Set one with "
        f"MEMORY_DASHBOARD_TOKEN=<long random text> (e.g. from {MAKE_ONE}) or --token-file "
        "FILE, or listen on 127.0.0.1."
    )


LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def allowed_hosts(settings: Settings, host: str) -> frozenset[str] | None:
    """Host names a loopback dashboard without a login answers to; None means any.

    Only there is the Host header the guard: with a token every visitor logs in, and the
    add-on only answers Home Assistant's ingress proxy.
    """
    if settings.is_addon or settings.dashboard_token or not is_loopback(host):
        return None
    return LOOPBACK_NAMES | {host.strip("[]").lower()}


def with_token_file(settings: Settings, token_file: str | None) -> Settings:
    """The settings with the access token read from ``token_file`` (first line, trimmed)."""
    if not token_file:
        return settings
    path = Path(token_file)
    try:
        raw = path.read_bytes()
        token = raw.decode("utf-8").strip()
    except OSError as exc:
        raise SettingsError(f"Cannot read the token file {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise SettingsError(f"The token file {path} is not UTF-8 text.") from exc
    if not token or "\n" in token:
        raise SettingsError(f"The token file {path} must hold one line: the access token.")
    problem = token_problem(token, f"in {path}")
    if problem is not None:
        raise problem
    return dataclasses.replace(settings, dashboard_token=token)


def run(settings: Settings, *, host: str = "127.0.0.1", port: int = 8099, threads: int = 8) -> None:
    """Serve the dashboard until interrupted."""
    from ...assist.http import is_assist_path
    from ...mcp.http import McpOff, is_mcp_path, mcp_threads, with_mcp
    from .. import create_app
    from ..blueprints import auth
    from . import guard
    from .background import start_background
    from .discovery import announce_in_background

    check_exposure(settings, host)
    app = create_app(settings)
    app.config["MEMORY_ALLOWED_HOSTS"] = allowed_hosts(settings, host)
    served = with_mcp(app, settings, host=host)
    if settings.is_addon and settings.allow_direct_access and not settings.dashboard_token:
        print(
            "Warning: direct access is on and no access token is set: anyone who can reach "
            f"port {port} can use the dashboard. Set memory_dashboard_token.",
            flush=True,
        )
    elif settings.dashboard_token:
        print("Access token set: direct visitors must log in.", flush=True)
    print(
        f"Memory Curator dashboard on http://{_display_host(host)}:{port}/ "
        f"(data in {settings.data_dir})",
        flush=True,
    )
    access = None
    if isinstance(served, McpOff):  # nothing to announce to Home Assistant either
        print(f"MCP over HTTP is off: {served.off} The dashboard is served as usual.", flush=True)
    else:
        print(
            f"MCP for assistants on http://{_display_host(host)}:{port}/mcp (streamable HTTP) "
            f"and /sse (SSE)",
            flush=True,
        )
        announce_in_background(settings, port, on_hostname=served.gate.allow_host)
        access = served.gate.access

    def may_send_body(client: str, path: str, headers: Mapping[str, str]) -> bool:
        if is_mcp_path(path) or is_assist_path(path):  # with MCP off, 503 and no body
            return (
                access is not None
                and access.admits(client, headers.get("AUTHORIZATION")) is not None
            )
        return auth.may_send_body(app, headers.get("COOKIE", ""))

    server = guard.create_server(
        served,
        guard.Limits.from_settings(settings),
        may_send_body,
        host=host,
        port=port,
        # the dashboard's threads, and as many again as MCP may hold (its calls and their
        # waiters, SSE streams), so no burst of an assistant's calls takes the dashboard's
        threads=threads + mcp_threads(),
        ident="memory-curator",
        # Forwarded headers reach the app, which believes them only from a trusted proxy
        # (MEMORY_TRUSTED_PROXIES) and drops them from anyone else (ingress.PROXY_HEADERS).
        clear_untrusted_proxy_headers=False,
        # Reading one request ahead lets an SSE stream learn at once that its client left
        # (waitress.client_disconnected), instead of at its next write.
        channel_request_lookahead=1,
    )
    logging.basicConfig()  # as waitress.serve: its warnings reach the add-on's log
    server.print_listen("Serving on http://{}:{}")
    background = start_background(app, settings)
    try:
        server.run()
    finally:
        if background is not None:
            background.stop()


def _display_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
