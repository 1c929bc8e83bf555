"""The add-on's side of MCP, with ``memory-curator serve`` as a real process: it tells a
Supervisor (a real HTTP server on 127.0.0.1 speaking the documented endpoints) of its MCP
server, serves on when the Supervisor is down or fails, moves its private data into the
shared folder, and shares that folder with a second program without losing a write."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.support import REPO
from tests.support.mcp_http import call_tool, dashboard, free_port
from webapp.stores import ConversationStore, MemoryStore, PeopleStore

SUPERVISOR_TOKEN = "supervisor-token-of-the-test"
HOSTNAME = "a0d7b954-memory-curator"


class FakeSupervisor:
    """The Supervisor's ``GET /addons/self/info`` and ``POST /discovery`` on 127.0.0.1,
    answering ``status`` (200: as documented) and keeping every request it got."""

    def __init__(self, status: int = 200) -> None:
        self.requests: list[dict[str, Any]] = []
        seen = self.requests

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self, data: dict[str, Any]) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                seen.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "authorization": self.headers.get("Authorization"),
                        "body": json.loads(body) if body else None,
                    }
                )
                payload = json.dumps(
                    {"result": "ok", "data": data} if status == 200 else {"result": "error"}
                ).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                self._answer({"hostname": HOSTNAME, "slug": "memory_curator"})

            def do_POST(self) -> None:
                self._answer({"uuid": "5f4e8a5c0ba14c12b1b2f4a6a9b1d001"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeSupervisor:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def addon_env(supervisor_url: str) -> dict[str, str]:
    """The add-on's environment: the Supervisor's token and (for the test) its address."""
    return {
        "SUPERVISOR_TOKEN": SUPERVISOR_TOKEN,
        "MEMORY_SUPERVISOR_URL": supervisor_url,
        "MEMORY_MCP_TRUSTED": "127.0.0.1",
        "MEMORY_ALLOW_DIRECT_ACCESS": "true",  # so the test may ask /healthz from 127.0.0.1
    }


def test_the_dashboard_announces_its_mcp_server_and_assist_api_to_the_supervisor(
    tmp_path: Path,
) -> None:
    with FakeSupervisor() as supervisor:
        with dashboard(tmp_path / "data", **addon_env(supervisor.url)) as running:
            running.wait_for_output("Announced the Assist API")
            # the host name Home Assistant calls is one token-less calls may use
            answer = httpx2.post(
                running.mcp_url,
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={
                    "Accept": "application/json, text/event-stream",
                    "Host": f"{HOSTNAME}:8099",
                },
                timeout=30,
            )
            assert answer.status_code == 200, answer.text
            # the Assist API too, and a name that is not ours (DNS rebinding) is refused
            info = running.base + "/api/assist/v1/info"
            ours = httpx2.get(info, headers={"Host": f"{HOSTNAME}:8099"}, timeout=30)
            assert ours.status_code == 200 and ours.json()["service"] == "memory_curator"
            rebound = httpx2.get(info, headers={"Host": "evil.example:8099"}, timeout=30)
            assert rebound.status_code == 403, rebound.text
            assert rebound.json()["error"]["code"] == "forbidden"
    info, discovery, assist = supervisor.requests
    assert (info["method"], info["path"]) == ("GET", "/addons/self/info")
    assert (discovery["method"], discovery["path"]) == ("POST", "/discovery")
    assert (assist["method"], assist["path"]) == ("POST", "/discovery")
    for request in (info, discovery, assist):
        assert request["authorization"] == f"Bearer {SUPERVISOR_TOKEN}"
    assert discovery["body"] == {
        "service": "mcp",
        "config": {"url": f"http://{HOSTNAME}:{running.port}/mcp"},
    }
    assert assist["body"] == {
        "service": "memory_curator",
        "config": {"url": f"http://{HOSTNAME}:{running.port}", "api": 1},
    }
    assert f"http://{HOSTNAME}:{running.port}/mcp" in running.output


@pytest.mark.parametrize("supervisor", ["down", "500"])
def test_a_supervisor_that_is_down_or_fails_leaves_the_dashboard_serving(
    tmp_path: Path, supervisor: str
) -> None:
    failing = FakeSupervisor(status=500)
    with failing:
        url = failing.url if supervisor == "500" else f"http://127.0.0.1:{free_port()}"
        with dashboard(tmp_path / "data", **addon_env(url)) as running:
            running.wait_for_output("Could not announce the MCP server")
            assert running.get("/healthz")[0] == 200
            _, text = anyio.run(lambda: call_tool(running.mcp_url, "recall", {}))
            assert text == "Nothing is remembered yet."
            assert running.process.poll() is None
    expected = "answered 500" if supervisor == "500" else "cannot be reached"
    assert expected in running.output


def write_options(folder: Path, **options: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "options.json"
    path.write_text(json.dumps(options), encoding="utf-8")
    return path


def test_memory_data_dir_moves_the_private_data_into_the_shared_folder(tmp_path: Path) -> None:
    private, shared = tmp_path / "private", tmp_path / "share" / "memory_curator"
    options = write_options(private, memory_data_dir=str(shared), memory_mcp_trusted="127.0.0.1")
    # what the add-on kept before: its own layout under /data
    old = MemoryStore(private / "memories" / "memories.json")
    kept = [old.add(f"Fact number {n}.").content for n in range(5)]
    ana = PeopleStore(private / "memories" / "people.json").add("Ana")
    old.add("Ana likes jasmine tea.", person=ana.id)
    ConversationStore(private / "conversations" / "conversations.json").add_exchange(
        "thread-1", "hello", "hi"
    )
    before = {
        str(p.relative_to(private)): p.read_bytes() for p in private.rglob("*") if p.is_file()
    }
    with dashboard(shared, MEMORY_OPTIONS_FILE=str(options), MEMORY_DATA_DIR="") as running:
        running.wait_for_output("Moved the data")
        _, text = anyio.run(lambda: call_tool(running.mcp_url, "recall", {"person": "Ana"}))
    assert [p.name for p in private.iterdir()] == ["options.json"]
    moved = MemoryStore(shared / "memories.json")
    assert [m.content for m in moved.get_all()] == [*kept, "Ana likes jasmine tea."]
    assert "Ana likes jasmine tea." in text and "Fact number 4." in text
    assert ConversationStore(shared / "conversations" / "conversations.json").get_history(
        "thread-1"
    )
    for name, content in before.items():
        if not name.endswith(".lock") and name != "options.json":
            assert (shared / name.removeprefix("memories/")).read_bytes() == content, name


def test_a_shared_folder_that_already_holds_a_memory_is_used_and_nothing_is_removed(
    tmp_path: Path,
) -> None:
    private, shared = tmp_path / "private", tmp_path / "share" / "memory_curator"
    options = write_options(private, memory_data_dir=str(shared), memory_mcp_trusted="127.0.0.1")
    MemoryStore(private / "memories" / "memories.json").add("Old private fact.")
    MemoryStore(shared / "memories.json").add("Shared fact.")
    with dashboard(shared, MEMORY_OPTIONS_FILE=str(options), MEMORY_DATA_DIR="") as running:
        running.wait_for_output("already holds a memory")
        _, text = anyio.run(lambda: call_tool(running.mcp_url, "recall", {}))
    assert "Shared fact." in text
    assert [m.content for m in MemoryStore(private / "memories" / "memories.json").get_all()] == [
        "Old private fact."
    ]


WRITER = """
import sys, time
from webapp.stores import MemoryStore
store = MemoryStore(sys.argv[1], max_items=1_000_000, max_chars=100_000_000, lock_timeout=30)
deadline = time.monotonic() + float(sys.argv[2])
n = 0
while time.monotonic() < deadline:
    store.add(f"Library fact {n}.")
    n += 1
print(n)
"""


@pytest.mark.slow
def test_two_programs_share_the_folder_and_lose_no_write_in_30_seconds(tmp_path: Path) -> None:
    """The dashboard (configured with memory_data_dir, written to over MCP) and a second
    program using the library on the same folder add memories as fast as they can."""
    private, shared = tmp_path / "private", tmp_path / "share" / "memory_curator"
    options = write_options(
        private,
        memory_data_dir=str(shared),
        memory_mcp_trusted="127.0.0.1",
        memory_max_items=1_000_000,
        memory_max_chars=100_000_000,
    )
    seconds = 30.0
    with dashboard(shared, MEMORY_OPTIONS_FILE=str(options), MEMORY_DATA_DIR="") as running:
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(shared / "memories.json"), str(seconds)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        added: list[str] = []
        deadline = time.monotonic() + seconds

        def over_mcp(worker: int) -> None:
            n = 0
            while time.monotonic() < deadline:
                content = f"MCP fact {worker}-{n}."
                # Numbered facts read as one fact in other words: this test is about writes.
                arguments = {"action": "add", "content": content, "confirm_similar": True}
                is_error, text = anyio.run(call_tool, running.mcp_url, "manage_memory", arguments)
                if not is_error:
                    added.append(content)
                elif "Busy" not in text:
                    raise AssertionError(text)
                n += 1

        with ThreadPoolExecutor(2) as pool:
            list(pool.map(over_mcp, range(2)))
        out, _ = writer.communicate(timeout=120)
        assert writer.returncode == 0
    library_count = int(out.strip())
    stored = {m.content for m in MemoryStore(shared / "memories.json").get_all()}
    print(f"\n30 s: {len(added)} added over MCP, {library_count} by the library")
    assert added and library_count
    assert set(added) <= stored
    assert {f"Library fact {n}." for n in range(library_count)} <= stored
    assert len(stored) == len(added) + library_count
