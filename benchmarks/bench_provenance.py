"""How long the provenance pages take next to the Memories page, at 100, 1,000 and 10,000 memories.

    .venv/bin/python benchmarks/bench_provenance.py [--sizes 100 1000 10000] [--repeat 10]

Every memory was extracted from one of 50 threads (so each row shows its origin and a
thread page lists size/50 memories), and as many memories again were deleted (so Recently
deleted has that many entries to read from the history log). Each page is timed warm (median
of the repeats, Flask test client) and divided by the Memories page in the same run.
Prints figures only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_dashboard import settings_for, settle  # noqa: E402
from webapp import create_app  # noqa: E402
from webapp.stores import ConversationStore, MemoryStore  # noqa: E402
from webapp.stores.history import HistoryLog  # noqa: E402
from webapp.stores.timefmt import to_iso  # noqa: E402

THREADS = 50


def thread_id(n: int) -> str:
    return f"slack:C0BENCH:{1732240000 + n}.000100"


def record(i: int, start: datetime) -> dict:
    stamp = to_iso(start + timedelta(minutes=i))
    return {
        "id": f"m{i:06d}",
        "content": f"Memory {i}: likes tea number {i % 97}",
        "createdAt": stamp,
        "updatedAt": stamp,
        "category": "preference",
        "origin": {
            "how": "extracted",
            "conversationId": thread_id(i % THREADS),
            "evidence": f"I really like tea number {i % 97}, remember that.",
            "evidenceAt": stamp,
            "extractor": "llm",
            "model": "openai/gpt-4o-mini",
            "approvedBy": "alice",
            "approvedAt": stamp,
        },
    }


def populate(settings, size: int) -> None:
    """``size`` kept memories, ``size`` deleted ones in the history log, 50 threads."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    kept = [record(i, start) for i in range(size)]
    settings.memory_file.parent.mkdir(parents=True, exist_ok=True)
    settings.memory_file.write_text(json.dumps(kept, ensure_ascii=False), encoding="utf-8")
    deleted = [record(size + i, start) for i in range(size)]
    log = HistoryLog(settings.memory_file)
    log.append([HistoryLog.entry("bench", "delete", r["id"], r, None) for r in deleted])
    conversations = ConversationStore.from_settings(settings)
    for n in range(THREADS):
        conversations.add_exchange(thread_id(n), "I really like tea, remember that.", "Noted.")
    settle(settings.memory_file)
    settle(settings.conversation_file)


def warm(client, url: str, repeat: int) -> float:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        client.get(url)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    pages = [
        ("Memories page (anchor)", "/memories/"),
        ("a thread with its memories", f"/conversations/thread/{thread_id(7)}"),
        ("Forget preview", f"/conversations/forget/{thread_id(7)}"),
        ("Recently deleted", "/memories/deleted"),
        ("a memory's history", "/memories/m000007/history"),
        ("Review with approval rates", "/review/"),
    ]
    print(f"warm = median of {args.repeat}; ratio = page time / Memories page time, same run")
    print(f"{'memories':>9}  {'page':30} {'warm':>10} {'ratio':>7}")
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            settings = settings_for(Path(tmp), size)
            populate(settings, size)
            MemoryStore.from_settings(settings).init()
            client = create_app(settings).test_client()
            anchor = None
            for label, url in pages:
                took = warm(client, url, args.repeat)
                anchor = anchor or took
                print(f"{size:>9,}  {label:30} {took * 1000:8.1f} ms {took / anchor:6.2f}x")


if __name__ == "__main__":
    main()
