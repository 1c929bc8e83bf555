"""How long the Needs attention page takes at 100, 1,000 and 10,000 memories, against the
Memories page in the same run (Flask test client, one app per size).

    .venv/bin/python benchmarks/bench_attention.py [--sizes 100 1000 10000] [--repeat 10]

For each size: the Memories page (first request, then warm median); the attention page's first
request (it waits at most half a second for the background scan, then answers with progress);
how long the whole scan took; the page once the scan is done (warm median); and, after another
process changes one memory, the rescan (earlier comparisons are cached). Prints figures and
ratios only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for _common, when imported
from _common import settings_for, settle  # noqa: E402

from webapp import create_app  # noqa: E402
from webapp.stores import CATEGORIES, MemoryStore  # noqa: E402
from webapp.stores.timefmt import to_iso  # noqa: E402

ROOMS = ["hallway", "kitchen", "bedroom", "office", "garage", "living room", "bathroom", "porch"]
DEVICES = ["lights", "thermostat", "speaker", "blinds", "fan", "heater", "camera", "lock"]
FOODS = ["green tea", "black coffee", "oat milk", "spicy food", "cilantro", "sushi", "pasta"]
PEOPLE = ["Marta", "Leo", "Ana", "Kenji", "Mei", "Tom", "Sara", "Ravi", "Lin", "Omar"]
TOOLS = ["neovim", "VS Code", "zsh", "tmux", "Docker", "Obsidian", "git", "Python", "YAML"]
ZH_PLACES = ["客廳", "臥室", "書房", "廚房", "陽台", "客厅", "卧室", "书房"]
ZH_THINGS = ["冷氣", "燈", "窗簾", "喇叭", "空调", "灯", "窗帘", "音箱"]
ZH_FOODS = ["無糖綠茶", "黑咖啡", "豆漿", "无糖绿茶", "豆浆", "辣的", "牛肉"]


def sentence(rng: random.Random, i: int) -> str:
    """A memory like the ones people keep, in English or Chinese: mostly different facts
    (names, numbers, places vary), with about one in twenty a rewording or a changed value of
    an earlier one, so the scan has real findings to report."""
    pick = rng.choice
    hour, minute = rng.randint(5, 23), pick(["00", "15", "30", "45"])
    syllables = ["ka", "lo", "mi", "ren", "to", "sa", "vi", "du", "ne", "ho", "ba", "ji"]
    name = "".join(rng.choice(syllables) for _ in range(3))  # a place, shop or pet's name
    person, n = f"{pick(PEOPLE)} {name.title()}", name
    forms = [
        lambda: (
            f"{pick(ROOMS).title()} {pick(DEVICES)} at {n}'s at {rng.randint(1, 10) * 10}% after {hour}:{minute}"
        ),
        lambda: f"Prefers {pick(FOODS)} from shop {n} in the {pick(['morning', 'evening'])}",
        lambda: (
            f"{person} is the user's {pick(['sister', 'colleague', 'neighbour', 'dentist', 'coach'])}"
        ),
        lambda: (
            f"Uses {pick(TOOLS)} for {pick(['editing', 'notes', 'deploys', 'scripts'])} in the {n} repo"
        ),
        lambda: (
            f"{pick(ZH_PLACES)}{pick(ZH_THINGS)}（{n}）晚上{rng.randint(7, 11)}點後調到{rng.randint(20, 28)}度"
        ),
        lambda: f"喜歡喝{pick(ZH_FOODS)}，在{person}的店買",
        lambda: f"Alarm for {person} at {hour:02d}:{minute} on {pick(['weekdays', 'weekends'])}",
        lambda: (
            f"Order for {person}: {pick(FOODS)} delivered to the {pick(ROOMS)} on {2025 + i % 3}-0{1 + i % 9}-1{i % 10}"
        ),
    ]
    return pick(forms)()


def varied(rng: random.Random, texts: list[str], i: int) -> str:
    """Now and then an earlier memory again, reworded or with another number."""
    if i < 20 or rng.random() > 0.05:
        return sentence(rng, i)
    earlier = rng.choice(texts)
    if rng.random() < 0.5:
        return "The user " + earlier[:1].lower() + earlier[1:]
    return earlier.replace("0", "5", 1) if "0" in earlier else earlier + "!"


def populate(path: Path, count: int) -> None:
    rng = random.Random(count)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    records: list[dict[str, str]] = []
    texts: list[str] = []
    for i in range(count):
        texts.append(varied(rng, texts, i))
        stamp = to_iso(start + timedelta(minutes=37 * i))
        records.append(
            {
                "id": f"m{i:06d}",
                "content": texts[-1],
                "createdAt": stamp,
                "updatedAt": stamp,
                "category": CATEGORIES[i % len(CATEGORIES)],
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    settle(path)


def timed(client, url: str) -> float:
    start = time.perf_counter()
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return time.perf_counter() - start


def warm(client, url: str, repeat: int) -> float:
    return statistics.median(timed(client, url) for _ in range(repeat))


def wait_for_scan(app) -> float:
    scanner = app.extensions["memory_curator"].attention
    start = time.perf_counter()
    while not scanner.report(wait=0.05)[1]:
        pass
    return time.perf_counter() - start


def wait_for_meaning(app) -> float:
    """Until the scan by meaning (not the rules' first report) of the file as it is now is in."""
    scanner = app.extensions["memory_curator"].attention
    start = time.perf_counter()
    while True:
        report, current = scanner.report(wait=0.05)
        if current and report is not None and not report.partial:
            return time.perf_counter() - start
        time.sleep(0.02)


def meaning(count: int) -> None:
    """The scan by meaning (webapp.similarity): cold (model loaded and every memory embedded),
    warm (a restarted process: vectors read from memories.vectors.npz) and after one memory
    changed, against the Memories page in the same run."""
    from webapp.attention import semantic
    from webapp.similarity.facts import analyse

    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_for(Path(tmp), count)
        populate(settings.memory_file, count)
        rows = []
        for label in ("cold cache (model loads, all embedded)", "warm cache (after a restart)"):
            semantic._indexes.clear()  # a new process: nothing loaded but the model itself
            analyse.cache_clear()
            app = create_app(settings)
            client = app.test_client()
            memories_first = timed(client, "/memories/")
            started = time.perf_counter()
            timed(client, "/attention/")
            wait_for_meaning(app)
            rows.append((label, time.perf_counter() - started, memories_first))
        other = MemoryStore(
            settings.memory_file, max_items=count * 2, max_chars=count * 200, lock_timeout=5
        )
        first = other.get_all()[0]
        other.update(first.id, first.content + " (changed)")
        settle(settings.memory_file)
        started = time.perf_counter()
        timed(client, "/attention/")
        wait_for_meaning(app)
        rows.append(("after one memory changed", time.perf_counter() - started, memories_first))
        memories_warm = warm(client, "/memories/", 5)
        report = app.extensions["memory_curator"].attention.report()[0]
        found = {kind: len(items) for kind, items in report.visible(frozenset()).items()}
        print(f"\n{count:,} memories, scan by meaning — findings: {found}")
        print(f"  {'Memories page, first / warm':34} {ms(memories_first)} / {ms(memories_warm)}")
        for label, seconds, anchor in rows:
            print(f"  {label:42} {ms(seconds)}   ({seconds / anchor:,.0f}× the Memories page)")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:9.1f} ms"


def run(count: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_for(Path(tmp), count)
        populate(settings.memory_file, count)
        app = create_app(settings)
        client = app.test_client()
        memories_first = timed(client, "/memories/")
        memories_warm = warm(client, "/memories/", repeat)
        started = time.perf_counter()
        attention_first = timed(client, "/attention/")
        scan = attention_first + wait_for_scan(app)
        scan_total = time.perf_counter() - started
        attention_warm = warm(client, "/attention/", repeat)
        report = app.extensions["memory_curator"].attention.report()[0]
        found = {kind: len(items) for kind, items in report.visible(frozenset()).items()}

        other = MemoryStore(
            settings.memory_file, max_items=count * 2, max_chars=count * 200, lock_timeout=5
        )
        first = other.get_all()[0]
        other.update(first.id, first.content + " (changed)")
        settle(settings.memory_file)
        after_change_page = timed(client, "/attention/")
        rescan = after_change_page + wait_for_scan(app)

        print(f"\n{count:,} memories — findings: {found}")
        print(f"  {'Memories page, first':34} {ms(memories_first)}")
        print(f"  {'Memories page, warm (median)':34} {ms(memories_warm)}")
        print(
            f"  {'Attention page, first request':34} {ms(attention_first)}"
            f"   ({attention_first / memories_first:.1f}× the Memories page's first)"
        )
        print(f"  {'whole first scan (background)':34} {ms(max(scan, scan_total))}")
        print(
            f"  {'Attention page, warm (median)':34} {ms(attention_warm)}"
            f"   ({attention_warm / memories_warm:.1f}× the Memories page, warm)"
        )
        print(f"  {'page right after a change':34} {ms(after_change_page)}")
        print(f"  {'rescan after one change':34} {ms(rescan)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument(
        "--meaning", type=int, nargs="*", default=[10_000], help="sizes for the meaning scan"
    )
    args = parser.parse_args()
    for count in args.sizes:
        run(count, args.repeat)
    for count in args.meaning:
        meaning(count)


if __name__ == "__main__":
    main()
