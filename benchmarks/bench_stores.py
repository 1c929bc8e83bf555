"""Figures for the stores: write throughput, cached vs cold reads, search. Prints, asserts nothing.

.venv/bin/python benchmarks/bench_stores.py [--memories 10000] [--adds 200] [--processes 4]
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from webapp.stores import ConversationStore, MemoryStore  # noqa: E402
from webapp.stores.jsonbytes import encode  # noqa: E402
from webapp.stores.timefmt import now_iso  # noqa: E402

BIG = {"max_items": 10_000_000, "max_chars": 10_000_000_000, "lock_timeout": 60}


def timed(func, repeat: int = 1) -> float:
    """Seconds per call, best of three rounds of ``repeat`` calls."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeat):
            func()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best


def report(label: str, seconds: float, per: str = "call") -> None:
    print(f"  {label:<52} {seconds * 1000:9.3f} ms/{per}  ({1 / seconds:,.0f}/s)")


def bench_writes(folder: Path, adds: int) -> None:
    store = MemoryStore(folder / "writes.json", **BIG).init()
    start = time.perf_counter()
    for n in range(adds):
        store.add(f"fact number {n}: prefers tea over coffee in the afternoon")
    report(
        f"add (one process, {adds} adds, file grows to {adds})",
        (time.perf_counter() - start) / adds,
        "add",
    )
    conversations = ConversationStore(
        folder / "conversations.json", max_turns=20, max_chars=8000, max_age_days=7, lock_timeout=60
    ).init()
    start = time.perf_counter()
    for n in range(adds):
        conversations.add_exchange(f"slack:{n % 10}", f"question {n}", f"answer {n}")
    report(
        f"add_exchange ({adds} calls over 10 conversations)",
        (time.perf_counter() - start) / adds,
        "call",
    )


WORKER = textwrap.dedent("""
    import sys
    from webapp.stores import MemoryStore
    store = MemoryStore(sys.argv[1], max_items=10**7, max_chars=10**10, lock_timeout=120)
    for n in range(int(sys.argv[2])):
        store.add(f"worker fact {n}")
""")


def bench_processes(folder: Path, processes: int, adds: int) -> None:
    path = folder / "shared.json"
    MemoryStore(path, **BIG).init()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    start = time.perf_counter()
    workers = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(path), str(adds)], env=env)
        for _ in range(processes)
    ]
    for worker in workers:
        worker.wait()
    elapsed = time.perf_counter() - start
    total = len(MemoryStore(path, **BIG).get_all())
    report(
        f"add ({processes} processes x {adds}, incl. start-up; {total} stored)",
        elapsed / (processes * adds),
        "add",
    )


def bench_reads(folder: Path, count: int) -> None:
    path = folder / "big.json"
    stamp = now_iso()
    path.write_bytes(
        encode(
            [
                {
                    "id": f"m{n:06d}",
                    "content": f"memory {n}: the user likes topic {n % 97} and 咖啡 {n}",
                    "createdAt": stamp,
                    "updatedAt": stamp,
                    "category": "general",
                }
                for n in range(count)
            ]
        )
    )
    old = time.time_ns() - 60 * 10**9  # past the racy window, as a file at rest would be
    os.utime(path, ns=(old, old))
    print(f"  (file of {count:,} memories, {path.stat().st_size / 1e6:.1f} MB)")

    store = MemoryStore(path, **BIG)
    store.get_all()
    report(f"get_all on {count:,}, cached", timed(store.get_all, 200))
    report(
        f"get_all on {count:,}, cold (new store object each time)",
        timed(lambda: MemoryStore(path, **BIG).get_all(), 3),
    )
    store.search("topic")
    report(f"search on {count:,}, cached (matches all)", timed(lambda: store.search("TOPIC"), 20))
    report(
        f"search on {count:,}, cached (matches one)", timed(lambda: store.search("咖啡 9999"), 20)
    )
    fresh = MemoryStore(path, **BIG)
    report(f"get on {count:,}, cached", timed(lambda: fresh.get(f"m{count // 2:06d}"), 1000))
    start = time.perf_counter()
    store.add("one more")
    report(f"add to a file of {count:,}", time.perf_counter() - start, "add")
    # Writes in a row, as a busy dashboard makes them: each reuses the encoded records the
    # last one left (only the new or replaced record is encoded and validated).
    serial = itertools.count()
    report(
        f"add to a file of {count:,}, one after another",
        timed(lambda: store.add(f"another fact {next(serial)}"), 20),
        "add",
    )
    ids = [memory.id for memory in store.get_all()[:50]]
    report(
        f"update in a file of {count:,}, one after another",
        timed(lambda: store.update(ids[next(serial) % len(ids)], f"edited {next(serial)}"), 20),
        "update",
    )
    report(f"get_all on {count:,} right after a change (byte compare)", timed(store.get_all, 20))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--adds", type=int, default=200)
    parser.add_argument("--processes", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-stores-") as tmp:
        folder = Path(tmp)
        print(f"Stores benchmark in {folder} (Python {sys.version.split()[0]})")
        print("Writes:")
        bench_writes(folder, args.adds)
        bench_processes(folder, args.processes, args.adds // 2)
        print("Reads:")
        bench_reads(folder, args.memories)


if __name__ == "__main__":
    main()
