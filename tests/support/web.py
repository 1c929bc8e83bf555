"""The dashboard as its tests reach it: a CSRF-aware Flask client, a real ``memory-curator serve``
process (``start_server``/``stop_server``), and helpers for Chromium pages (screenshots, htmx
settling, axe-core)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support import REPO
from webapp.settings import Settings
from webapp.stores import ConversationStore, MemoryStore

ARTIFACTS = REPO / "test-artifacts"


CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]


_TOKEN = re.compile(r'"X-CSRFToken": "([^"]+)"')


class CsrfClient:
    """A Flask test client that knows the page's CSRF token and can speak htmx."""

    def __init__(self, client) -> None:
        self.raw = client
        self._token: str | None = None

    def token(self) -> str:
        if self._token is None:
            page = self.raw.get("/memories/")
            match = _TOKEN.search(page.get_data(as_text=True))
            assert match, "the page carries no CSRF token for htmx"
            self._token = match.group(1)
        return self._token

    def _headers(self, htmx: bool, csrf: bool, extra: dict | None) -> dict:
        headers = {"HX-Request": "true"} if htmx else {}
        if csrf:
            headers["X-CSRFToken"] = self.token()
        headers.update(extra or {})
        return headers

    def get(self, url: str, *, htmx: bool = False, headers: dict | None = None, **kw):
        return self.raw.get(url, headers=self._headers(htmx, False, headers), **kw)

    def post(
        self, url: str, *, htmx: bool = False, csrf: bool = True, headers: dict | None = None, **kw
    ):
        return self.raw.post(url, headers=self._headers(htmx, csrf, headers), **kw)

    def put(
        self, url: str, *, htmx: bool = False, csrf: bool = True, headers: dict | None = None, **kw
    ):
        return self.raw.put(url, headers=self._headers(htmx, csrf, headers), **kw)

    def delete(
        self, url: str, *, htmx: bool = False, csrf: bool = True, headers: dict | None = None, **kw
    ):
        return self.raw.delete(url, headers=self._headers(htmx, csrf, headers), **kw)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LiveServer:
    """A real ``memory-curator serve`` process on 127.0.0.1 over a temporary data folder."""

    url: str
    data_dir: Path
    settings: Settings
    process: subprocess.Popen

    def memories(self) -> MemoryStore:
        return MemoryStore.from_settings(self.settings, actor="test")

    def conversations(self) -> ConversationStore:
        return ConversationStore.from_settings(self.settings)


def start_server(
    data_dir: Path,
    env_extra: dict | None = None,
    args: list[str] | None = None,
    *,
    program: list[str] | None = None,
    cwd: Path | None = None,
    port: int | None = None,
) -> LiveServer:
    """Start the dashboard as its own process and wait until it answers (on ``port`` if given).

    ``program`` replaces ``python -m webapp`` (e.g. another environment's ``memory-curator``).
    The server does not extract by itself (``MEMORY_AUTO_EXTRACT=false``) unless ``env_extra``
    says so: a test that presses Extract must find the facts its press gives.
    """
    port = port or free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMORY_", "CONVERSATION_", "SUPERVISOR"))
    }
    env["MEMORY_AUTO_EXTRACT"] = "false"
    env.update(env_extra or {})
    command = [
        *(program or [sys.executable, "-m", "webapp"]),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        *(args or []),
    ]
    process = subprocess.Popen(
        command,
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = process.stdout.read().decode("utf-8", "replace") if process.stdout else ""
            raise RuntimeError(f"the server exited early ({process.returncode}):\n{output}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.1)
    else:
        process.kill()
        raise RuntimeError("the server did not start within 30 s")
    settings = Settings.from_env(
        environ=dict((env_extra or {}).items()),
        options_file=data_dir / "no-options.json",
    ).with_data_dir(data_dir)
    return LiveServer(f"http://127.0.0.1:{port}", data_dir, settings, process)


def stop_server(server: LiveServer) -> None:
    try:
        os.killpg(server.process.pid, signal.SIGTERM)
        server.process.wait(timeout=10)
    except ProcessLookupError:
        pass  # it had stopped already
    except subprocess.TimeoutExpired:
        os.killpg(server.process.pid, signal.SIGKILL)
    server.process.wait()
    if server.process.stdout:
        server.process.stdout.close()


@dataclass
class PageWatch:
    """What a page did that a person must never see: dialogs (XSS), console errors, CSP violations."""

    dialogs: list[str]
    console_errors: list[str]
    page_errors: list[str]


def screenshot(page, name: str, doc_name: str | None = None) -> Path:
    """Save a full-page screenshot under test-artifacts/screenshots/ (git-ignored).

    With UPDATE_DOC_SCREENSHOTS=1 it also replaces docs/screenshots/<doc_name or name>.png
    when the docs show a picture of that name; otherwise the committed copies stay as they are.
    """
    folder = ARTIFACTS / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    committed = REPO / "docs" / "screenshots" / f"{doc_name or name}.png"
    if os.environ.get("UPDATE_DOC_SCREENSHOTS") and committed.exists():
        shutil.copyfile(path, committed)
    return path


def wait_for_htmx(page, timeout: float = 10.0) -> None:
    """Wait until no htmx request, swap or settle is under way.

    Polls from Python: Playwright's wait_for_function evaluates its predicate with eval inside
    the page, which the dashboard's CSP (rightly) forbids.
    """
    deadline = time.monotonic() + timeout
    busy = "() => !!document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')"
    while page.evaluate(busy):
        if time.monotonic() > deadline:
            raise AssertionError(f"htmx was still busy after {timeout:.0f} s")
        time.sleep(0.05)


def assert_accessible(page, context: str = "") -> None:
    """Run axe-core in the page; fail on any serious or critical violation."""
    from axe_playwright_python.sync_playwright import Axe

    page.wait_for_load_state("load")  # colour-contrast needs the stylesheets applied
    wait_for_htmx(page)
    results = Axe().run(page)
    bad = [v for v in results.response["violations"] if v.get("impact") in ("serious", "critical")]
    details = "\n".join(
        f"- {v['id']} ({v['impact']}): {v['help']} -> "
        + "; ".join(
            node["target"][0] if isinstance(node["target"][0], str) else str(node["target"])
            for node in v["nodes"][:5]
        )
        for v in bad
    )
    assert not bad, f"axe-core found serious/critical violations {context}:\n{details}"
