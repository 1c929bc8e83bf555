"""An LLM's parallel tool calls as Home Assistant makes them (each in a session of its own:
initialize, call, close; httpx's 5 s read timeout; an error on a failed POST), 8 and 16 at
once, against ``memory-curator serve`` of this checkout and of an earlier commit, in one run.

    .venv/bin/python benchmarks/bench_mcp_burst.py [--base COMMIT] [--rounds 3] [--memories 40]

``--base`` is checked out in a temporary git worktree and served from there, a process of its
own, beside this checkout's, on data folders made alike. Before the bursts each server answers
one call of every kind (the similarity model loaded), then one call alone, the anchor: a
burst's latencies are given as median, p95 and max, and the median's ratio to that anchor.
The versions take turns burst by burst, so load on a shared machine hits both. A call that
fails (503, a timeout past 5 s, any error) counts as failed, not in the latencies. /healthz
is asked once during every burst. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.mcp_http import free_port, home_assistant_call  # noqa: E402
from webapp.stores import MemoryStore  # noqa: E402

KINDS: list[tuple[str, dict[str, Any]]] = [
    ("recall", {}),
    ("manage_memory", {"action": "search", "keyword": "plant"}),
    ("recall", {"query": "plant"}),
    ("review_memory", {}),
]


@contextmanager
def checkout(base: str) -> Iterator[Path]:
    where = Path(tempfile.mkdtemp(prefix="bench-base-")) / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(where), base],
        check=True,
    )
    try:
        yield where
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)], check=False
        )


@contextmanager
def serve(tree: Path, memories: int) -> Iterator[str]:
    """``memory-curator serve`` of the code in ``tree`` on a fresh data folder: its base URL."""
    data = Path(tempfile.mkdtemp(prefix="bench-burst-")) / "data"
    store = MemoryStore(data / "memories.json")
    for n in range(memories):
        store.add(f"Waters plant number {n} on Sundays.")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env.pop("SUPERVISOR_TOKEN", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "webapp", "serve", "--port", str(port)],
        cwd=tree,  # python -m imports the package from the working directory first
        env=env | {"MEMORY_DATA_DIR": str(data)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx2.get(base + "/healthz", timeout=2)
                break
            except httpx2.HTTPError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise SystemExit(f"the server in {tree} did not start") from None
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=20)


async def timed(url: str, name: str, arguments: dict[str, Any]) -> float | None:
    started = time.perf_counter()
    try:
        is_error, _ = await home_assistant_call(url, name, arguments)
    except Exception:  # noqa: BLE001 - a failed call is a figure here
        return None
    return None if is_error else time.perf_counter() - started


async def burst(base: str, size: int, tag: str) -> tuple[list[float | None], float]:
    url = base + "/mcp"
    results: list[float | None] = []
    health: list[float] = []
    calls = [KINDS[n % len(KINDS)] for n in range(size)]
    calls[-1] = ("manage_memory", {"action": "add", "content": f"Burst {tag}."})

    async def one(name: str, arguments: dict[str, Any]) -> None:
        results.append(await timed(url, name, arguments))

    async def probe() -> None:
        await anyio.sleep(0.2)
        started = time.perf_counter()
        async with httpx2.AsyncClient(timeout=30) as http:
            await http.get(base + "/healthz")
        health.append(time.perf_counter() - started)

    async with anyio.create_task_group() as group:
        for name, arguments in calls:
            group.start_soon(one, name, arguments)
        group.start_soon(probe)
    return results, health[0]


def summary(latencies: list[float]) -> str:
    if not latencies:
        return "no call answered"
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"median {statistics.median(ordered) * 1000:6.0f} ms  p95 {p95 * 1000:6.0f} ms  "
        f"max {ordered[-1] * 1000:6.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--base", default="", help="a commit (default: where this branch left main)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--memories", type=int, default=40)
    parser.add_argument("--sizes", default="8,16")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    logging.getLogger("mcp").setLevel(logging.CRITICAL)  # a failed call's traceback, counted
    if not args.base:
        found = subprocess.run(
            ["git", "-C", str(ROOT), "merge-base", "HEAD", "main"],
            capture_output=True,
            text=True,
            check=True,
        )
        args.base = found.stdout.strip()[:10]
    with ExitStack() as stack:
        trees = {args.base: stack.enter_context(checkout(args.base)), "this checkout": ROOT}
        bases = {
            name: stack.enter_context(serve(tree, args.memories)) for name, tree in trees.items()
        }
        anchors: dict[str, float] = {}
        for name, base in bases.items():
            for kind, arguments in KINDS:  # everything loaded once
                anyio.run(timed, base + "/mcp", kind, arguments)
            anyio.run(timed, base + "/mcp", "manage_memory", {"action": "add", "content": "Warm."})
            alone = [anyio.run(timed, base + "/mcp", "recall", {}) for _ in range(5)]
            anchors[name] = statistics.median(t for t in alone if t is not None)
        figures: dict[tuple[str, int], tuple[list[float | None], list[float]]] = {
            (name, size): ([], []) for name in bases for size in sizes
        }
        for round_no in range(args.rounds):
            for size in sizes:
                for name, base in bases.items():
                    results, health = anyio.run(burst, base, size, f"{size}-{round_no}")
                    figures[name, size][0].extend(results)
                    figures[name, size][1].append(health)
    print(
        f"Home Assistant's one-session calls at once, {args.rounds} rounds, "
        f"{args.memories} memories"
    )
    for name in bases:
        print(f"\n{name}: one call alone (the anchor) {anchors[name] * 1000:.0f} ms")
        for size in sizes:
            results, health = figures[name, size]
            answered = [t for t in results if t is not None]
            failed = len(results) - len(answered)
            ratio = statistics.median(answered) / anchors[name] if answered else float("nan")
            print(
                f"  {size:>2} at once: {len(answered):>2}/{len(results)} answered, {failed} failed; "
                f"{summary(answered)}  (median x{ratio:.1f} the anchor); "
                f"/healthz max {max(health) * 1000:.0f} ms"
            )


if __name__ == "__main__":
    main()
