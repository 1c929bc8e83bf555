"""Tell Home Assistant the add-on serves MCP and the Assist API, so it offers both to add.

At start the add-on asks the Supervisor for its own host name (``GET /addons/self/info``)
and announces (``POST /discovery``) ``http://<hostname>:<port>/mcp`` as the service ``mcp``
(Home Assistant's MCP integration) and ``{"url": "http://<hostname>:<port>", "api": 1}`` as
the service ``memory_curator`` (the Memory Curator integration, ``docs/assist-api.md``), with
the ``SUPERVISOR_TOKEN`` the Supervisor gave it. It runs in a background thread with short
timeouts and retries: a Supervisor that is down or refuses is said in the log and the
dashboard serves on; a service announced is not announced again by a retry.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import httpx

from ...assist.http import API_VERSION
from ...settings import Settings

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
    """Announce the MCP server and the Assist API to the Supervisor at ``base_url``, trying
    again after each of ``delays`` what it has not taken yet; the MCP URL announced, or None
    when the Supervisor never took both."""
    done: dict[str, str] = {}
    for attempt, delay in enumerate((0.0, *delays)):
        time.sleep(delay)
        try:
            return _announce_once(base_url, token, port, on_hostname, done)
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            last = attempt == len(delays)
            then = (
                "Add http://<this add-on's host name>:8099/mcp to Home Assistant's MCP "
                "integration (or http://<host name>:8099 to the Memory Curator integration) "
                "by hand."
                if last
                else "Trying again."
            )
            print(
                f"Could not announce the MCP server to Home Assistant: {_why(exc)}. {then}",
                flush=True,
            )
    return None


def services(hostname: str, port: int) -> dict[str, dict[str, object]]:
    """What is announced, by service: MCP's URL, and the Assist API's base URL and version."""
    base = f"http://{hostname}:{port}"
    return {
        "mcp": {"url": f"{base}/mcp"},
        "memory_curator": {"url": base, "api": API_VERSION},
    }


def _announce_once(
    base_url: str,
    token: str,
    port: int,
    on_hostname: Callable[[str], None] | None,
    done: dict[str, str],
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
        for service, config in services(hostname, port).items():
            if service in done:
                continue
            answer = client.post("/discovery", json={"service": service, "config": config})
            answer.raise_for_status()
            done[service] = str(config["url"])
            what = "the MCP server" if service == "mcp" else "the Assist API"
            print(
                f"Announced {what} to Home Assistant as {config['url']}: accept it under "
                "Settings > Devices & services (Discovered).",
                flush=True,
            )
    return done["mcp"]


def _why(exc: Exception) -> str:
    if isinstance(exc, httpx.HTTPStatusError):
        return f"the Supervisor answered {exc.response.status_code} to {exc.request.url.path}"
    if isinstance(exc, httpx.HTTPError):
        return f"the Supervisor cannot be reached ({type(exc).__name__}: {exc})"
    return f"the Supervisor's answer is not what was expected ({type(exc).__name__}: {exc})"
