"""How fast /healthz answers while idle and slow clients hold connections to the real
``memory-curator serve``, this checkout against an earlier one, beside /healthz with nobody
else connected (the anchor, measured in the same run on the same server).

    .venv/bin/python benchmarks/bench_server_guard.py                 # against 5984b2d
    .venv/bin/python benchmarks/bench_server_guard.py --before HEAD~3 --clients 50 150

Each tree's server runs in its own process (the earlier checkout is a git worktree of
``--before``), on loopback with its default settings and 127.0.0.5 in MEMORY_MCP_TRUSTED.
The attackers: half of N connections opened and never written to, half sending a request
header a byte every half second, from one address each (127.0.0.2 and .3), or spread over
ten addresses (127.0.0.10-19). Probes: /healthz from 127.0.0.1 (a stranger too) and from
127.0.0.5 (trusted, exempt from the bounds); a probe unanswered in ``--timeout`` seconds
counts as failed.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "5984b2d"  # main before the server's bounds (hardening round four)
TRUSTED = "127.0.0.5"
PROBES = 5


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start(tree: Path, data: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "SUPERVISOR"))}
    env.update(MEMORY_DATA_DIR=str(data), MEMORY_AUTO_EXTRACT="false", MEMORY_MCP_TRUSTED=TRUSTED)
    command = [sys.executable, "-m", "webapp", "serve", "--port", str(port)]
    process = subprocess.Popen(
        command, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    while probe(port, "127.0.0.1", 1.0) is None:
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            raise RuntimeError(f"the server in {tree} did not start")
        time.sleep(0.2)
    return process, port


def probe(port: int, source: str, timeout: float) -> float | None:
    """Milliseconds until /healthz answered 200, or None."""
    started = time.perf_counter()
    try:
        with socket.create_connection(
            ("127.0.0.1", port), timeout=timeout, source_address=(source, 0)
        ) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            answer = sock.recv(20)
    except OSError:
        return None
    if not answer.startswith(b"HTTP/1.1 200"):
        return None
    return (time.perf_counter() - started) * 1000


def attack(port: int, clients: int, addresses: list[str], stack: ExitStack) -> threading.Event:
    """Open ``clients`` connections round the addresses; half idle, half dribbling a header."""
    slow: list[socket.socket] = []
    for n in range(clients):
        source = addresses[n % len(addresses)]
        sock = stack.enter_context(
            socket.create_connection(("127.0.0.1", port), timeout=2, source_address=(source, 0))
        )
        if n % 2:
            try:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            except OSError:
                continue
            slow.append(sock)
    stop = threading.Event()

    def dribble() -> None:
        while not stop.wait(0.5):
            for sock in slow:
                try:
                    sock.send(b"X")
                except OSError:
                    pass

    threading.Thread(target=dribble, daemon=True).start()
    return stop


def measure(tree: Path, sizes: list[int], timeout: float) -> list[tuple[str, list[float | None]]]:
    rows: list[tuple[str, list[float | None]]] = []
    with tempfile.TemporaryDirectory() as data:
        process, port = start(tree, Path(data))
        try:
            rows.append(
                ("nobody else (anchor)", [probe(port, "127.0.0.1", timeout) for _ in range(PROBES)])
            )
            plans = {"2 addresses": ["127.0.0.2", "127.0.0.3"]}
            plans["10 addresses"] = [f"127.0.0.{10 + n}" for n in range(10)]
            for clients in sizes:
                for plan, addresses in plans.items():
                    with ExitStack() as stack:
                        stop = attack(port, clients, addresses, stack)
                        time.sleep(0.5)
                        for source, who in (("127.0.0.1", "stranger"), (TRUSTED, "trusted")):
                            figures = [probe(port, source, timeout) for _ in range(PROBES)]
                            rows.append((f"{clients} from {plan}, {who}", figures))
                        stop.set()
                    time.sleep(1.5)  # the server lets the closed connections go
        finally:
            process.terminate()
            process.wait(timeout=10)
    return rows


def median(figures: list[float | None]) -> float | None:
    answered = [f for f in figures if f is not None]
    return statistics.median(answered) if answered else None


def shown(figures: list[float | None], anchor: float | None) -> str:
    """The median, its ratio to the anchor of the same server, and how many answered."""
    middle = median(figures)
    answered = sum(f is not None for f in figures)
    if middle is None or anchor is None:
        return f"{'none answered':>26}"
    return f"{middle:7.1f} ms (x{middle / anchor:5.1f}) {answered}/{len(figures)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help="the earlier git revision")
    parser.add_argument("--clients", type=int, nargs="+", default=[50, 150])
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds a probe may wait")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        old = Path(scratch) / "before"
        subprocess.run(
            ["git", "worktree", "add", "-q", "--detach", str(old), args.before],
            cwd=ROOT,
            check=True,
        )
        try:
            before = measure(old, args.clients, args.timeout)
            now = measure(ROOT, args.clients, args.timeout)
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=False
            )
    print(f"/healthz, median of the answered of {PROBES} probes (timeout {args.timeout} s),")
    print("x: the median over the anchor's on the same server")
    print(f"{'while':40} {'before ' + args.before:>26} {'now':>26}")
    anchors = (median(before[0][1]), median(now[0][1]))
    for (name, then), (_, current) in zip(before, now, strict=True):
        print(f"{name:40} {shown(then, anchors[0])} {shown(current, anchors[1])}")


if __name__ == "__main__":
    main()
