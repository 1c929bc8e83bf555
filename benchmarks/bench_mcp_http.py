"""A tool call over MCP's streamable HTTP (a new session per call, as Home Assistant makes it)
against the same call over stdio (one session, as a desktop assistant keeps it) and a bare
HTTP route of the same server (/healthz), in one run, with the ratios.

    .venv/bin/python benchmarks/bench_mcp_http.py [--calls 50] [--memories 50]

Both servers are real processes on one data folder: ``memory-curator serve`` on 127.0.0.1
and ``memory-curator mcp`` over stdio. The call is ``recall`` (read-only, so every repeat
does the same work). Prints figures only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from webapp.stores import MemoryStore  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_env(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env.pop("SUPERVISOR_TOKEN", None)
    return env | {"MEMORY_DATA_DIR": str(data)}


def start_dashboard(
    data: Path, port: int, extra: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """``memory-curator serve`` on 127.0.0.1:``port`` over ``data`` (with ``extra`` settings
    in its environment), once it answers /healthz."""
    process = subprocess.Popen(
        [sys.executable, "-m", "webapp", "serve", "--port", str(port)],
        cwd=REPO,
        env=clean_env(data) | (extra or {}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return process
        except httpx2.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("the dashboard did not start")


def summary(label: str, seconds: list[float]) -> tuple[str, float]:
    median = statistics.median(seconds)
    p95 = sorted(seconds)[max(0, int(len(seconds) * 0.95) - 1)]
    return (
        f"{label:<46} median {median * 1000:8.2f} ms   p95 {p95 * 1000:8.2f} ms",
        median,
    )


async def http_calls(url: str, calls: int) -> tuple[list[float], list[float]]:
    """(whole call with its own session, the call alone inside it) for each call."""
    whole, inner = [], []
    async with httpx2.AsyncClient(timeout=30) as http:
        for _ in range(calls):
            started = time.perf_counter()
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    called = time.perf_counter()
                    await session.call_tool("recall", {})
                    inner.append(time.perf_counter() - called)
            whole.append(time.perf_counter() - started)
    return whole, inner


async def stdio_calls(data: Path, calls: int) -> list[float]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "webapp", "mcp"], env=clean_env(data), cwd=REPO
    )
    timings = []
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.call_tool("recall", {})  # warm
                for _ in range(calls):
                    started = time.perf_counter()
                    await session.call_tool("recall", {})
                    timings.append(time.perf_counter() - started)
    return timings


def raw_calls(base: str, calls: int) -> list[float]:
    """The same call as one plain JSON-RPC POST (no SDK client): the server's own share."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "recall", "arguments": {}},
    }
    headers = {"Accept": "application/json, text/event-stream"}
    timings = []
    with httpx2.Client(timeout=30) as client:
        for _ in range(calls):
            started = time.perf_counter()
            client.post(f"{base}/mcp", json=body, headers=headers).raise_for_status()
            timings.append(time.perf_counter() - started)
    return timings


def bare_route(base: str, calls: int) -> list[float]:
    timings = []
    with httpx2.Client(timeout=30) as client:
        for _ in range(calls):
            started = time.perf_counter()
            client.get(f"{base}/healthz")
            timings.append(time.perf_counter() - started)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--memories", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data"
        store = MemoryStore(data / "memories.json", max_items=args.memories * 2)
        for n in range(args.memories):
            store.add(f"Benchmark fact number {n}: the lamp in room {n} is called Lumi {n}.")
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        dashboard = start_dashboard(data, port)
        try:
            first_started = time.perf_counter()
            anyio.run(http_calls, f"{base}/mcp", 1)
            first = time.perf_counter() - first_started
            http_whole, http_inner = anyio.run(http_calls, f"{base}/mcp", args.calls)
            bare = bare_route(base, args.calls)
            raw = raw_calls(base, args.calls)
        finally:
            dashboard.terminate()
            dashboard.wait(timeout=10)
        stdio = anyio.run(stdio_calls, data, args.calls)
    lines = [
        summary("bare HTTP route (GET /healthz)", bare),
        summary("MCP over stdio: recall (one session)", stdio),
        summary("MCP over HTTP: recall as one plain POST", raw),
        summary("MCP over HTTP: recall inside its session", http_inner),
        summary("MCP over HTTP: new session + recall (as HA)", http_whole),
    ]
    print(
        f"{args.calls} calls each, {args.memories} memories, Python {sys.version.split()[0]}; "
        f"first HTTP call after start: {first * 1000:.0f} ms"
    )
    for line, _ in lines:
        print(line)
    bare_ms, stdio_ms, raw_ms, inner_ms, whole_ms = (median for _, median in lines)
    print(
        f"ratios (medians): HTTP new session / stdio {whole_ms / stdio_ms:.1f}x, "
        f"HTTP call in session / stdio {inner_ms / stdio_ms:.1f}x, "
        f"plain POST / stdio {raw_ms / stdio_ms:.1f}x, "
        f"HTTP new session / bare route {whole_ms / bare_ms:.1f}x, "
        f"plain POST / bare route {raw_ms / bare_ms:.1f}x"
    )


if __name__ == "__main__":
    main()
