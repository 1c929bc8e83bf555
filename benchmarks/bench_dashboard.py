"""How long the Memories page and its search partial take at 10,000 memories (Flask test client).

    .venv/bin/python benchmarks/bench_dashboard.py [--memories 10000] [--repeat 20]

Cold = a new app's first request (the file is parsed and the sorted view built); warm = the same
request again (cached views, only one page of rows rendered); "after a change" = the first
request after another process wrote the file. Prints figures only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from datetime import UTC

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for _common, when imported
from _common import settings_for, settle  # noqa: E402

from webapp import create_app  # noqa: E402
from webapp.stores import CATEGORIES, MemoryStore  # noqa: E402
from webapp.stores.timefmt import to_iso  # noqa: E402

WORDS = ["coffee", "tea", "project", "deadline", "Python", "咖啡", "會議", "週末", "vim", "Taipei"]


def populate(path: Path, count: int) -> None:
    """Write ``count`` memories straight into the file (the format MemoryStore reads)."""
    from datetime import datetime, timedelta

    start = datetime(2025, 1, 1, tzinfo=UTC)
    records = []
    for i in range(count):
        stamp = to_iso(start + timedelta(minutes=i))
        records.append(
            {
                "id": f"m{i:06d}",
                "content": f"Memory {i}: likes {WORDS[i % len(WORDS)]} "
                f"and {WORDS[(i * 7) % len(WORDS)]} on day {i % 365}",
                "createdAt": stamp,
                "updatedAt": stamp,
                "category": CATEGORIES[i % len(CATEGORIES)],
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    settle(path)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def measure(client, url: str, htmx: bool, repeat: int) -> tuple[float, float, float]:
    headers = {"HX-Request": "true"} if htmx else {}
    start = time.perf_counter()
    response = client.get(url, headers=headers)
    cold = time.perf_counter() - start
    assert response.status_code == 200, (url, response.status_code)
    warm = []
    for _ in range(repeat):
        start = time.perf_counter()
        client.get(url, headers=headers)
        warm.append(time.perf_counter() - start)
    return cold, statistics.median(warm), max(warm)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    cases = [
        ("full page, newest first", "/memories/", False),
        (
            "full page, page 100, A–Z",
            "/memories/?" + urlencode({"sort": "alpha", "page": 100}),
            False,
        ),
        ("search partial 'coffee'", "/memories/?" + urlencode({"q": "coffee"}), True),
        ("search partial '咖啡'", "/memories/?" + urlencode({"q": "咖啡"}), True),
        ("search partial, no match", "/memories/?" + urlencode({"q": "zzzz-nothing"}), True),
        ("category partial 'tool'", "/memories/?" + urlencode({"category": "tool"}), True),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_for(Path(tmp), args.memories)
        populate(settings.memory_file, args.memories)
        print(
            f"{args.memories:,} memories, {settings.memory_file.stat().st_size / 1e6:.1f} MB; "
            f"warm = median of {args.repeat}"
        )
        print(f"{'request':32} {'cold':>11} {'warm':>11} {'warm max':>11}")
        for label, url, htmx in cases:
            app = create_app(settings)  # a new app: nothing cached yet
            cold, warm, worst = measure(app.test_client(), url, htmx, args.repeat)
            print(f"{label:32} {ms(cold)} {ms(warm)} {ms(worst)}")

        app = create_app(settings)
        client = app.test_client()
        client.get("/memories/")
        other = MemoryStore(
            settings.memory_file,
            max_items=args.memories * 2,
            max_chars=args.memories * 200,
            actor="bench",
            lock_timeout=5,
        )
        other.add("A change from another process")
        settle(settings.memory_file)
        start = time.perf_counter()
        client.get("/memories/")
        print(f"{'full page after a change':32} {ms(time.perf_counter() - start)}")


if __name__ == "__main__":
    main()
