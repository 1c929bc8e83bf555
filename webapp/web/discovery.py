"""Tell Home Assistant the add-on serves MCP, so Assist offers it as a server to add.

At start the add-on asks the Supervisor for its own host name (``GET /addons/self/info``)
and announces ``http://<hostname>:<port>/mcp`` (``POST /discovery``, service ``mcp``), with
the ``SUPERVISOR_TOKEN`` the Supervisor gave it. It runs in a background thread with short
timeouts: a Supervisor that is down or refuses is said in the log and the dashboard serves on.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import httpx

from ..settings import Settings

TIMEOUT = 10.0  # seconds per request to the Supervisor
RETRY_DELAYS = (2.0, 5.0, 15.0)  # the Supervisor may still be starting


def announce_in_background(
    settings: Settings, port: int, *, on_hostname: Callable[[str], None] | None = None
) -> threading.Thread | None:
    """Start announcing the MCP server when the Supervisor gave a token (the add-on), else
    do nothing. ``on_hostname`` learns the host name Home Assistant will call."""
    token = os.environ.get("SUPERVISOR_TOKEN", "")
    if not token:
        return None
    thread = threading.Thread(
        target=announce,
        args=(settings.supervisor_url, token, port),
        kwargs={"on_hostname": on_hostname},
        name="mcp-discovery",
        daemon=True,
    )
    thread.start()
    return thread


def announce(
    base_url: str,
    token: str,
    port: int,
    *,
    on_hostname: Callable[[str], None] | None = None,
    delays: tuple[float, ...] = RETRY_DELAYS,
) -> str | None:
    """Announce the MCP server to the Supervisor at ``base_url``, trying again after each of
    ``delays``; the URL announced, or None when the Supervisor never took it."""
    for attempt, delay in enumerate((0.0, *delays)):
        time.sleep(delay)
        try:
            return _announce_once(base_url, token, port, on_hostname)
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            last = attempt == len(delays)
            then = (
                "Add http://<this add-on's host name>:8099/mcp to Home Assistant's MCP "
                "integration by hand."
                if last
                else "Trying again."
            )
            print(
                f"Could not announce the MCP server to Home Assistant: {_why(exc)}. {then}",
                flush=True,
            )
    return None


def _announce_once(
    base_url: str, token: str, port: int, on_hostname: Callable[[str], None] | None
) -> str:
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base_url, headers=headers, timeout=TIMEOUT) as client:
        info = client.get("/addons/self/info")
        info.raise_for_status()
        hostname = str(info.json()["data"]["hostname"]).strip()
        if not hostname:
            raise ValueError("the Supervisor gave no host name")
        if on_hostname is not None:
            on_hostname(hostname)
        url = f"http://{hostname}:{port}/mcp"
        answer = client.post("/discovery", json={"service": "mcp", "config": {"url": url}})
        answer.raise_for_status()
    print(
        f"Announced the MCP server to Home Assistant as {url}: accept it under Settings > "
        "Devices & services (Discovered).",
        flush=True,
    )
    return url


def _why(exc: Exception) -> str:
    if isinstance(exc, httpx.HTTPStatusError):
        return f"the Supervisor answered {exc.response.status_code} to {exc.request.url.path}"
    if isinstance(exc, httpx.HTTPError):
        return f"the Supervisor cannot be reached ({type(exc).__name__}: {exc})"
    return f"the Supervisor's answer is not what was expected ({type(exc).__name__}: {exc})"
