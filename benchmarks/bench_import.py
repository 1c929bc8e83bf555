"""10,000 pasted lines previewed and queued in Review, against today's JSON import of the same
count, in the same run: time (wall clock) and peak memory (tracemalloc) of each, and the ratio.

    .venv/bin/python benchmarks/bench_import.py [--count 10000] [--kept 100] [--embedder lexical]

``--kept`` memories are in the store first (reconcile then asks the similarity layer about
every line; ``--embedder`` picks its model: lexical, e5, use). Also shows what queuing cost
before Review's submit indexed the batch (each proposal compared with every item before it),
at a smaller count, beside the indexed submit at the same count.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from webapp.imports import decode, plan_import, queue_import  # noqa: E402
from webapp.stores import MemoryStore, ReviewQueue  # noqa: E402
from webapp.stores.review import Proposal, repeats  # noqa: E402

WORDS = [
    "tea",
    "coffee",
    "hiking",
    "sailing",
    "python",
    "rust",
    "garden",
    "piano",
    "cats",
    "dogs",
    "jazz",
    "chess",
]


def lines(count: int) -> list[str]:
    """``count`` distinct facts, as pasted lines (bullets, numbers, plain)."""
    out = []
    for i in range(count):
        a, b = WORDS[i % len(WORDS)], WORDS[(i // len(WORDS)) % len(WORDS)]
        fact = f"Prefers {a} with {b}, note {i}"
        out.append(("- ", f"{i + 1}. ", "")[i % 3] + fact)
    return out


def measured(work: Callable[[], Any]) -> tuple[Any, float, int]:
    """(result, seconds, peak bytes) of ``work()``: the time of one run as it is, the peak of
    Python allocations (tracemalloc) from a second run, so tracing slows no timed run."""
    started = time.perf_counter()
    result = work()
    seconds = time.perf_counter() - started
    return result, seconds, 0


def traced(work: Callable[[], Any]) -> int:
    """Peak bytes Python allocated during ``work()``."""
    tracemalloc.start()
    work()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def stores(folder: Path, count: int, kept: int) -> tuple[MemoryStore, ReviewQueue]:
    folder.mkdir(parents=True)
    memories = MemoryStore(
        folder / "memories.json", max_items=count * 2 + kept, max_chars=count * 100
    )
    for i in range(kept):
        memories.add(f"Kept fact {i} about {WORDS[i % len(WORDS)]}", category="general")
    return memories, ReviewQueue(folder / "review.json", memories).init()


def pasted(folder: Path, count: int, kept: int, trace: bool) -> tuple[str, float, int]:
    memories, queue = stores(folder, count, kept)
    raw = "\n".join(lines(count)).encode("utf-8")

    def work() -> tuple[dict[str, int], int]:
        plan = plan_import(memories, queue, decode(raw), fmt="auto", file_name="pasted.txt")
        return plan.counts, len(queue_import(queue, plan))

    (counts, queued), seconds, _ = measured(work)
    assert queued == count - counts["known"], (counts, queued)
    if not trace:
        return f"{counts}, queued {queued}", seconds, 0
    memories, queue = stores(folder.with_name(folder.name + "-traced"), count, kept)
    return f"{counts}, queued {queued}", seconds, traced(work)


def json_import(folder: Path, count: int, kept: int, trace: bool) -> tuple[str, float, int]:
    memories, _queue = stores(folder, count, kept)
    records = [
        {"content": line.lstrip("-0123456789. "), "category": "general"} for line in lines(count)
    ]

    def work() -> dict[str, int]:
        preview = memories.preview_import(records)
        assert preview.fits
        return memories.import_records(records, source="export.json")

    counts, seconds, _ = measured(work)
    if not trace:
        return str(counts), seconds, 0
    memories, _queue = stores(folder.with_name(folder.name + "-traced"), count, kept)
    return str(counts), seconds, traced(work)


def old_submit(folder: Path, count: int, indexed: bool) -> float:
    """Seconds to queue ``count`` proposals with the index, or with the per-item scan."""
    memories, queue = stores(folder, count, 0)
    proposals = [Proposal("add", line) for line in lines(count)]
    saved = repeats.KnownIndex.holds
    if not indexed:
        scanned: list[dict[str, Any]] = []

        def holds(self: Any, proposal: Proposal) -> bool:  # the scan submit did before
            return repeats.is_known(scanned, proposal)

        def add(self: Any, record: dict[str, Any], _add: Any = repeats.KnownIndex.add) -> None:
            scanned.append(record)
            _add(self, record)

        repeats.KnownIndex.holds = holds  # type: ignore[method-assign]
        repeats.KnownIndex.add = add  # type: ignore[method-assign]
    try:
        started = time.perf_counter()
        queue.submit(proposals)
        return time.perf_counter() - started
    finally:
        repeats.KnownIndex.holds = saved  # type: ignore[method-assign]
        if not indexed:
            repeats.KnownIndex.add = add.__defaults__[0]  # type: ignore[method-assign,union-attr]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--kept", type=int, default=0)
    parser.add_argument("--embedder", default="lexical")
    parser.add_argument("--scan-count", type=int, default=2_000)
    parser.add_argument("--no-trace", action="store_true", help="time only, no memory figures")
    args = parser.parse_args()
    os.environ["MEMORY_EMBEDDER"] = args.embedder
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print(f"{args.count} lines, {args.kept} memories kept first, embedder {args.embedder}")
        anchor, anchor_s, anchor_peak = json_import(
            root / "json", args.count, args.kept, not args.no_trace
        )
        print(
            f"  JSON import (anchor), preview + import: {anchor_s:7.2f} s, peak {anchor_peak / 1e6:6.1f} MB  {anchor}"
        )
        result, seconds, peak = pasted(root / "text", args.count, args.kept, not args.no_trace)
        print(
            f"  pasted text, preview + queue in Review: {seconds:7.2f} s, peak {peak / 1e6:6.1f} MB  {result}"
        )
        ratio = f"time {seconds / anchor_s:.2f}x"
        if anchor_peak:
            ratio += f", peak memory {peak / anchor_peak:.2f}x"
        print(f"  ratio pasted / JSON: {ratio}")
        n = args.scan_count
        before = old_submit(root / "scan", n, indexed=False)
        after = old_submit(root / "index", n, indexed=True)
        print(
            f"  Review submit of {n}: per-item scan (before) {before:.2f} s, indexed (now) {after:.2f} s"
        )


if __name__ == "__main__":
    main()
