"""No client the server has not authenticated can stop it: idle and slow connections against
the real ``memory-curator serve`` process on loopback (real sockets from addresses of their
own, 127.0.0.x), while /healthz, a dashboard page and an MCP call with the token answer; and
bodies without credentials never reach the temporary disk waitress spools into."""

from __future__ import annotations

import http.client
import os
import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import anyio
import pytest

from tests.support.auth import TOKEN
from tests.support.mcp_http import Dashboard, call_tool, dashboard

PER_CLIENT = 6
TOTAL = 40
IDLE = 2  # seconds
REQUEST = 3  # seconds
HOME_ASSISTANT = "127.0.0.5"  # stands in for 172.30.32.1, which loopback does not have
LIMITS = {
    "MEMORY_SERVER_CONNECTIONS": str(TOTAL),
    "MEMORY_SERVER_CONNECTIONS_PER_CLIENT": str(PER_CLIENT),
    "MEMORY_SERVER_IDLE_TIMEOUT": str(IDLE),
    "MEMORY_SERVER_REQUEST_TIMEOUT": str(REQUEST),
    "MEMORY_MCP_TRUSTED": HOME_ASSISTANT,  # 127.0.0.1 itself must send the token
    "MEMORY_MCP_TOKEN": TOKEN,
}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Dashboard]:
    """A server whose idle and slow connections time out within seconds."""
    with dashboard(tmp_path / "data", **LIMITS) as running:
        yield running


@pytest.fixture(scope="module")
def patient(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Dashboard, Path]]:
    """A server with a dashboard token and timeouts longer than any test here, spooling large
    bodies into a folder of its own (TMPDIR)."""
    folder = tmp_path_factory.mktemp("guard")
    spool = folder / "spool"
    spool.mkdir()
    env = dict(
        LIMITS,
        MEMORY_SERVER_IDLE_TIMEOUT="60",
        MEMORY_SERVER_REQUEST_TIMEOUT="60",
        MEMORY_DASHBOARD_TOKEN=TOKEN + "-dashboard",
        TMPDIR=str(spool),
    )
    with dashboard(folder / "data", **env) as running:
        yield running, spool


def connect(port: int, source: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")  # close: RST
    return sock


def get(port: int, path: str, source: str = "127.0.0.1", timeout: float = 5) -> int:
    connection = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=timeout, source_address=(source, 0)
    )
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def kept(sockets: list[socket.socket], wait: float = 0.5) -> list[socket.socket]:
    """The connections the server kept: those it refused have its 503 (or, when the client
    had already written, a reset) to read within ``wait``."""
    time.sleep(wait)
    readable, _, _ = select.select(sockets, [], [], 0)
    for sock in readable:
        sock.setblocking(False)
        try:
            answer = sock.recv(200)
        except ConnectionResetError:
            continue
        assert answer.startswith(b"HTTP/1.1 503") and b"Retry-After" in answer, answer
    return [sock for sock in sockets if sock not in readable]


class Dribbler:
    """Sends one byte every half second on each socket until stopped, noting when the server
    closed each one (a send or a read that fails, or an empty read)."""

    def __init__(self, sockets: list[socket.socket]) -> None:
        self.sockets = sockets
        self.closed_at: dict[int, float] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(0.5):
            for index, sock in enumerate(self.sockets):
                if index in self.closed_at:
                    continue
                try:
                    sock.setblocking(False)
                    if sock.recv(1, socket.MSG_PEEK) == b"":
                        raise ConnectionResetError
                except BlockingIOError:
                    pass
                except OSError:
                    self.closed_at[index] = time.monotonic()
                    continue
                try:
                    sock.send(b"X")
                except OSError:
                    self.closed_at[index] = time.monotonic()


def closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except OSError:
        pass
    return True


def test_idle_and_slow_clients_do_not_stop_the_server(served: Dashboard) -> None:
    port = served.port
    with ExitStack() as stack:
        opened = time.monotonic()
        # Three attackers, 40 connections each: 120, more than waitress's 100 by default.
        idle = [stack.enter_context(connect(port, "127.0.0.2")) for _ in range(40)]
        headers = [stack.enter_context(connect(port, "127.0.0.3")) for _ in range(40)]
        bodies = [stack.enter_context(connect(port, "127.0.0.4")) for _ in range(40)]
        for sock in headers:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        for sock in bodies:
            sock.sendall(b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 9000\r\n\r\n")
        assert get(port, "/healthz") == 200  # today's waitress stops accepting at 100
        held = {"idle": kept(idle), "headers": kept(headers), "bodies": kept(bodies)}
        # Each address keeps its share; the rest were told 503 and let go.
        assert {name: len(group) for name, group in held.items()} == {
            "idle": PER_CLIENT,
            "headers": PER_CLIENT,
            "bodies": PER_CLIENT,
        }
        dribbler = Dribbler(held["headers"] + held["bodies"])
        try:
            # Meanwhile the server answers: /healthz, a dashboard page and an MCP call.
            assert get(port, "/healthz") == 200
            assert get(port, "/memories/") == 200
            is_error, text = anyio.run(
                lambda: call_tool(served.mcp_url, "manage_memory", {"action": "list"}, token=TOKEN)
            )
            assert not is_error, text
            # The idle ones are closed after MEMORY_SERVER_IDLE_TIMEOUT, the dribbling ones
            # after MEMORY_SERVER_REQUEST_TIMEOUT however often they send a byte.
            for sock in held["idle"]:
                assert closed_by_server(sock, within=IDLE + 4)
            idle_gone = time.monotonic() - opened
            deadline = time.monotonic() + REQUEST + 4
            while len(dribbler.closed_at) < 2 * PER_CLIENT and time.monotonic() < deadline:
                time.sleep(0.2)
        finally:
            dribbler.stop.set()
            dribbler.thread.join(timeout=5)
        assert len(dribbler.closed_at) == 2 * PER_CLIENT, "a dribbling connection stayed open"
        slow_gone = max(dribbler.closed_at.values()) - opened
        assert idle_gone < IDLE + 4 and slow_gone < REQUEST + 4, (idle_gone, slow_gone)
        assert slow_gone > IDLE, "the dribbling connections outlive the idle timeout"
        assert get(port, "/healthz") == 200


def test_home_assistant_and_trusted_addresses_are_exempt(patient: tuple[Dashboard, Path]) -> None:
    port = patient[0].port
    with ExitStack() as stack:
        # Strangers from eight addresses take every place the others may have.
        strangers = [
            stack.enter_context(connect(port, f"127.0.0.{20 + n}"))
            for n in range(8)
            for _ in range(PER_CLIENT)
        ]
        placed = kept(strangers)
        assert len(placed) == TOTAL
        assert not kept([stack.enter_context(connect(port, "127.0.0.99"))])
        # Home Assistant's burst, past one address's share and the total, is served in full.
        burst = [stack.enter_context(connect(port, HOME_ASSISTANT)) for _ in range(3 * PER_CLIENT)]
        for sock in burst:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        for sock in burst:
            sock.settimeout(5)
            assert sock.recv(100).startswith(b"HTTP/1.1 200"), "an exempt connection was refused"
        assert len(kept(placed, wait=0)) == TOTAL, "the strangers still hold their places"


def spooled(pid: int, folder: Path) -> int:
    """Bytes the process holds open in files of ``folder`` (waitress's unnamed temp files)."""
    total = 0
    fds = Path(f"/proc/{pid}/fd")
    for fd in os.listdir(fds):
        try:
            if os.readlink(fds / fd).startswith(str(folder)):
                total += os.stat(fds / fd).st_size
        except OSError:
            continue
    return total


def spooled_past(pid: int, folder: Path, least: int, within: float = 20.0) -> int:
    """``spooled`` once it is past ``least`` bytes, or what it is after ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        found = spooled(pid, folder)
        if found > least or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def post_all_but_one(port: int, path: str, size: int, headers: str = "") -> socket.socket:
    """Send a POST of ``size`` bytes but its last one (or until the server stops it)."""
    sock = connect(port, "127.0.0.1")
    sock.sendall(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {size}\r\n{headers}\r\n".encode("ascii")
    )
    chunk = b" " * 65536
    left = size - 1
    sock.settimeout(60)  # a busy server may read late; only its closing ends the sending early
    try:
        while left > 0:
            sent = sock.send(chunk[: min(left, len(chunk))])
            left -= sent
    except OSError:
        pass
    return sock


def answer(sock: socket.socket) -> bytes:
    sock.settimeout(5)
    try:
        return sock.recv(200)
    except OSError:
        return b""


def test_bodies_without_credentials_never_reach_the_disk(
    patient: tuple[Dashboard, Path],
) -> None:
    running, spool = patient
    pid, port = running.process.pid, running.port
    # The test before filled the strangers' total on this server; on a busy machine the server
    # may not have seen all of those connections close yet: wait until a stranger gets in.
    deadline = time.monotonic() + 30
    while get(port, "/healthz") == 503 and time.monotonic() < deadline:
        time.sleep(0.1)
    bearer = f"Authorization: Bearer {TOKEN}\r\n"
    # The measure sees a body that may be spooled: an MCP call with the token.
    sock = post_all_but_one(port, "/mcp", 3_000_000, bearer)
    try:
        # polled, not slept for: on a busy machine the server may read the body late
        found = spooled_past(pid, spool, 2_000_000)
        assert found > 2_000_000, answer(sock)
        sock.sendall(b" ")
        assert not answer(sock).startswith(b"HTTP/1.1 413")
    finally:
        sock.close()
    strangers = {
        "MCP without the token": ("/mcp", ""),
        "MCP with a wrong token": ("/mcp", "Authorization: Bearer not-the-token-at-all\r\n"),
        "an import without a login": ("/memories/import", ""),
        "a forged session": ("/memories/import", "Cookie: memory_curator_session=eyJhIjoxfQ\r\n"),
    }
    for name, (path, headers) in strangers.items():
        sock = post_all_but_one(port, path, 12_000_000, headers)
        time.sleep(0.5)
        assert spooled(pid, spool) == 0, name
        assert answer(sock).startswith(b"HTTP/1.1 413"), name
        sock.close()
    # Past the largest request anyone needs, even with the token: refused before reading.
    sock = post_all_but_one(port, "/mcp", 300_000_000, bearer)
    assert spooled(pid, spool) == 0
    assert answer(sock).startswith(b"HTTP/1.1 413")
    sock.close()
    assert running.get("/healthz")[0] == 200
