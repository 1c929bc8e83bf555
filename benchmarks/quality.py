"""How well and how fast the similarity layer judges (issue 22).

    python benchmarks/quality.py                       # held-out, then dev, then speed
    python benchmarks/quality.py --split dev --sizes 1000   # while developing: dev only

Quality: precision and recall (with counts) of near-duplicates and contradictions, per language
and overall, and for reconcile the share of paraphrased known facts that do not become ``add``
(plus all known facts, and the accuracy of action and target), on the judgement sets in
tests/data/judgement. The HELD-OUT figures come first; they were never used to tune anything
(see the README there), and this script is the only code that reads them.

Speed: embeddings per second, and a full near-duplicate scan over N synthetic memories
(vectors, the numpy block shortlist, the judgements on it) with a cold cache (nothing embedded
yet), a warm one (vectors loaded from the file a previous process saved, as after a restart) and
after one memory changed; each against an anchor measured in the same run, the time to fold()
the same N texts, so the ratios mean the same on a faster or a busier machine.
Exit status 0 (it reports; the floors are asserted by the test suite).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import _judgement as J

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from webapp.similarity import Judge, VectorCache, load_embedder  # noqa: E402
from webapp.similarity.facts import analyse  # noqa: E402
from webapp.similarity.scan import PairScanner, candidate_pairs  # noqa: E402
from webapp.text import fold  # noqa: E402


def quality(judges: list[Judge], splits: list[str]) -> None:
    """Each split for each judge, the split first: all held-out figures come before dev ones."""
    for judge in judges:
        judge.cache.vectors([t for split in splits for t in J.all_texts(split)])
    title = {"heldout": "HELD-OUT (never tuned on)", "dev": "DEV (thresholds chosen here)"}
    for split in splits:
        for judge in judges:
            report = J.evaluate(split, *J.judge_callables(judge))
            print("\n".join(J.format_report(f"{title[split]}: {judge.embedder.name}", report)))
            print()


# ------------------------------------------------------------------ synthetic memories
_EN = [
    "{who} alarm is {h:02d}:{m:02d}",
    "{who} likes {food} with {extra}",
    "Goes to {place} every {day}",
    "{who} is allergic to {thing}",
    "Keeps the {room} at {n}°C in {season}",
    "Walks the dog at {h}:{m:02d} on {day}s",
    "Favourite {cat} is {name}",
    "Takes the {vehicle} to {place} on {day}s",
    "Wants {style} answers about {topic}",
    "Waters the {plant} every {n} days",
]
_HANT = [
    "{who_zh}的鬧鐘設在早上{h}點{m}分",
    "喜歡喝{drink}，不加{extra_zh}",
    "每週{dow}去{place_zh}",
    "{who_zh}對{thing_zh}過敏",
    "{room_zh}冷氣設定{n}度",
    "每天{h}點帶狗去{place_zh}散步",
    "最喜歡的{cat_zh}是{name_zh}",
]
_HANS = [
    "{who_zh}每天{h}点起床",
    "喜欢吃{food_zh}，不要{extra_zh}",
    "每周{dow}晚上去{place_zh}",
    "{room_zh}空调开{n}度",
    "{who_zh}对{thing_zh}过敏",
    "每个月给{who_zh}买{n}本{cat_zh}",
    "周末和{who_zh}去{place_zh}",
]
_WORDS = {
    "who": ["Weekday", "Weekend", "Daughter's", "Son's", "Partner's", "Mum's", "My"],
    "food": ["green tea", "oat milk", "curry", "pasta", "sushi", "tacos", "ramen", "salad"],
    "extra": ["lemon", "honey", "extra cheese", "no onions", "chili", "ice"],
    "place": ["the gym", "the office", "the market", "the park", "school", "the library"],
    "day": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "thing": ["peanuts", "shellfish", "penicillin", "cats", "pollen", "dust", "latex"],
    "room": ["living room", "bedroom", "office", "kitchen", "nursery"],
    "season": ["winter", "summer", "spring", "autumn"],
    "cat": ["band", "film", "book", "painter", "team", "podcast"],
    "name": ["Radiohead", "Totoro", "Dune", "Monet", "Arsenal", "Serial", "Maya", "Leo"],
    "vehicle": ["train", "bus", "MRT", "ferry", "tram"],
    "style": ["short", "detailed", "bullet-point", "friendly", "formal"],
    "topic": ["cooking", "code", "travel", "finance", "gardening", "health"],
    "plant": ["fern", "basil", "orchid", "cactus", "lemon tree"],
    "who_zh": ["我", "老公", "女兒", "兒子", "媽媽", "爸爸", "奶奶"],
    "drink": ["烏龍茶", "綠茶", "咖啡", "豆漿", "紅茶", "奶茶"],
    "extra_zh": ["糖", "冰", "香菜", "辣", "葱", "蒜"],
    "place_zh": ["公園", "市場", "健身房", "圖書館", "游泳池", "公司"],
    "dow": ["一", "二", "三", "四", "五", "六", "日"],
    "thing_zh": ["花生", "海鮮", "芒果", "花粉", "盤尼西林", "貓毛"],
    "room_zh": ["客廳", "臥室", "書房", "主臥", "兒童房"],
    "cat_zh": ["樂團", "電影", "書", "球隊", "歌手"],
    "name_zh": ["五月天", "周杰倫", "蘇打綠", "林俊傑", "陳綺貞"],
    "food_zh": ["火锅", "饺子", "面条", "米饭", "烧烤", "沙拉"],
}


def synthetic_memories(count: int, seed: int = 22) -> list[str]:
    """``count`` distinct facts in the three languages; about 2% are reworded near-duplicates."""
    rng = random.Random(seed)
    memories: list[str] = []
    seen: set[str] = set()
    templates = [*_EN, *_HANT, *_HANS]
    while len(memories) < count:
        if memories and rng.random() < 0.02:
            base = rng.choice(memories)
            text = base.replace("every", "each").replace("每天", "天天").rstrip("。") + "。"
        else:
            fields = {k: rng.choice(v) for k, v in _WORDS.items()}
            fields.update(h=rng.randint(5, 11), m=rng.choice([0, 15, 30, 45]), n=rng.randint(2, 28))
            text = rng.choice(templates).format(**fields)
            text += f" (#{len(memories) % 97})" if rng.random() < 0.3 else ""
        if text not in seen:
            seen.add(text)
            memories.append(text)
    return memories


def timed(action) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def speed(family: str | None, sizes: list[int]) -> None:
    embedder = load_embedder(family)
    print(f"SPEED: {embedder.name}")
    sample = synthetic_memories(200, seed=7)
    seconds, _ = timed(lambda: VectorCache(embedder).vectors(sample))
    print(f"  embeddings: {len(sample) / seconds:,.0f} a second ({len(sample)} texts, batched)")
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            texts = synthetic_memories(size)
            path = Path(folder) / f"memories-{size}.vectors.npz"
            anchor, _ = timed(lambda texts=texts: [fold(t) for t in texts])

            # cold: nothing embedded, nothing analysed, nothing judged yet
            analyse.cache_clear()
            cold_cache = VectorCache(embedder, path)
            cold_scanner = PairScanner(Judge(cache=cold_cache))
            cold, found = timed(lambda s=cold_scanner, t=texts: s.scan(t))
            embedded_cold = cold_cache.computed
            cold_cache.save()

            # warm: a restarted process; the vectors come from the file (loading is timed too)
            analyse.cache_clear()
            start = time.perf_counter()
            warm_cache = VectorCache(embedder, path)
            warm_scanner = PairScanner(Judge(cache=warm_cache))
            warm_scanner.scan(texts)
            warm = time.perf_counter() - start
            embedded_warm = warm_cache.computed

            # one memory edited since the last scan: an incremental rescan
            changed = [*texts[:-1], texts[-1] + " (edited)"]
            one, _ = timed(lambda s=warm_scanner, c=changed: s.scan(c))
            mode = warm_scanner.last_scan

            matrix = warm_cache.vectors(texts)
            floor = warm_scanner.floor
            shortlist, pairs = timed(lambda m=matrix, f=floor: candidate_pairs(m, f))
            print(
                f"  N={size:,}: anchor fold() of all texts {anchor * 1000:.1f} ms\n"
                f"    full scan, cold cache  {cold:7.2f} s = {cold / anchor:9,.0f}× anchor"
                f" ({embedded_cold:,} texts embedded)\n"
                f"    full scan, warm cache  {warm:7.2f} s = {warm / anchor:9,.0f}× anchor"
                f" ({warm_cache.loaded:,} vectors read from the file, {embedded_warm} embedded;"
                f" after a restart)\n"
                f"    one memory changed     {one:7.2f} s = {one / anchor:9,.0f}× anchor ({mode})\n"
                f"    shortlist alone        {shortlist:7.2f} s for {len(pairs):,} candidate pairs"
                f" (top {warm_scanner.top_k} per memory, cosine ≥ {warm_scanner.floor:.3f});"
                f" {len(found):,} pairs flagged"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["both", "dev", "heldout"], default="both")
    parser.add_argument(
        "--embedder",
        default="e5,use",
        help="embedder families, comma-separated: quality for each, speed for the first"
        " (default: e5, the model, then use, its fallback)",
    )
    parser.add_argument("--sizes", default="1000,10000", help="N for the speed figures")
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--no-quality", action="store_true")
    args = parser.parse_args()
    splits = {"both": ["heldout", "dev"], "dev": ["dev"], "heldout": ["heldout"]}[args.split]
    families = [f for f in args.embedder.split(",") if f]
    if not args.no_quality:
        quality([Judge(load_embedder(family)) for family in families], splits)
    if not args.no_speed:
        speed(families[0], [int(n) for n in args.sizes.split(",") if n])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
