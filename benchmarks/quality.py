"""Quality figures measured on labelled data, held-out first, then development.

    .venv/bin/python benchmarks/quality.py                   # every section, then speed
    .venv/bin/python benchmarks/quality.py --split dev --no-speed --show-dev-misses

Sections, each printed for the HELD-OUT files first (written before the code and never used to
tune it; this script only counts them and never prints one of their cases), then for the DEV
files (where rules and thresholds were chosen):

- Judgement (issue 22, ``webapp.similarity`` over ``tests/data/judgement``): precision and
  recall with counts of near-duplicates and contradictions, and for reconcile the share of
  paraphrased known facts that do not become ``add`` (plus all known facts, and the accuracy
  of action and target); overall and per language, for each embedder asked for (the model
  first, then its fallback).
- Secrets (``webapp.sensitive.secrets.find_secrets`` over ``tests/data/secrets``, and for the
  dialogues ``webapp.sensitive.dialogue.find_secrets_in_reply`` over the last turn given the
  turns before it): per language, how
  many sentences, recall on the secrets (found / secrets) and the false refusal rate on the
  look-alikes (flagged / look-alikes).
- Auto mode (issue 34, ``_applying`` over ``tests/data/judgement/attributes.*.json`` and
  ``hedged.*.json``): one extracted fact, with the sentence it came from, reconciled and
  submitted in auto mode over the case's memories; counted per kind and language: a value
  change updates its memory, another attribute is added with every memory intact, hedged,
  second-hand and bulk statements change nothing, their plain look-alikes apply.
- Precise when it acts (issue 44, ``_precise`` over ``auto.*``, ``fact_form.*`` and
  ``near_duplicates.heldout-h2.json``): per language with counts, the precision of what auto
  mode applies by itself, true memories overwritten, held and older statements never applied
  (per ``why``), the share of value changes and new attributes applied; the share of messages
  whose proposed fact is in an acceptable fact form (folded as the product folds; nothing for
  an instruction about memory); near-duplicate precision and recall.
- Time phrases (issue 23, ``webapp.language.validity.expires_at`` over ``tests/data/time``):
  per language, the share of messages whose ``expiresAt`` (or none) comes out exactly as
  labelled, with counts; and (issue 36, ``time/time-phrases.*-h2.json``) per language the
  share of temporary situations given an expiry whose last local day is the labelled date
  ("expiry found") and of permanent rules given none ("given none").

``--show-dev-misses`` lists the development cases each gets wrong (never the held-out ones).

Speed (the similarity layer alone; ``bench_attention.py`` times the dashboard's scan):
embeddings per second, and a full near-duplicate scan over N synthetic memories with a cold
cache, a warm one (read from the file a previous process saved) and after one memory changed,
each against an anchor measured in the same run (fold() of the same N texts).

Asserts nothing (exit status 0): tests/test_secrets_quality.py, tests/test_similarity_model.py
and tests/test_validity_quality.py hold the floors.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import _applying as A
import _judgement as J
import _precise as P

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from webapp.language.validity import expires_at, stated_end  # noqa: E402
from webapp.sensitive.dialogue import find_secrets_in_reply  # noqa: E402
from webapp.sensitive.secrets import find_secrets  # noqa: E402
from webapp.similarity import Judge, VectorCache, load_embedder  # noqa: E402
from webapp.similarity.facts import analyse  # noqa: E402
from webapp.similarity.scan import PairScanner, candidate_pairs  # noqa: E402
from webapp.stores.timefmt import parse_ts, to_iso  # noqa: E402
from webapp.text import fold  # noqa: E402

SECRETS_DATA = ROOT / "tests" / "data" / "secrets"
TIME_DATA = ROOT / "tests" / "data" / "time"
LANGUAGES = ("en", "zh-Hant", "zh-Hans")
TITLES = {
    "heldout": "HELD-OUT (written before the code, never tuned on)",
    "dev": "DEV (rules and thresholds chosen here)",
}


# ------------------------------------------------------------------ secrets
@dataclass
class Tally:
    """Secrets found and look-alikes flagged, out of how many."""

    secrets: int = 0
    found: int = 0
    lookalikes: int = 0
    flagged: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)

    def add(self, case: dict[str, Any], flagged: bool) -> None:
        if case["secret"]:
            self.secrets += 1
            self.found += flagged
        else:
            self.lookalikes += 1
            self.flagged += flagged
        if flagged != case["secret"]:
            self.misses.append(case)

    @property
    def recall(self) -> float:
        return self.found / self.secrets if self.secrets else 1.0

    @property
    def false_refusals(self) -> float:
        return self.flagged / self.lookalikes if self.lookalikes else 0.0

    def line(self, name: str) -> str:
        return (
            f"  {name:<8} {self.secrets + self.lookalikes:>4} sentences  "
            f"recall {self.recall:6.1%} ({self.found}/{self.secrets})  "
            f"false refusals {self.false_refusals:6.1%} ({self.flagged}/{self.lookalikes})"
        )


def score(cases: list[dict[str, Any]]) -> dict[str, Tally]:
    """Tallies over ``cases``: "all" and one per language."""
    tallies = {"all": Tally(), **{lang: Tally() for lang in LANGUAGES}}
    for case in cases:
        flagged = find_secrets(case["text"]) is not None
        tallies["all"].add(case, flagged)
        tallies[case["lang"]].add(case, flagged)
    return tallies


def load(name: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads((SECRETS_DATA / name).read_text("utf-8"))
    return cases


def secrets_files(split: str) -> list[str]:
    """The labelled files of one split: ``secrets.dev.json``, or every held-out file
    (``secrets.heldout.json``, ``secrets.heldout-h5.json``, … in name order)."""
    if split == "dev":
        return ["secrets.dev.json"]
    return sorted(path.name for path in SECRETS_DATA.glob("secrets.heldout*.json"))


def secrets_lines(title: str, cases: list[dict[str, Any]], show_misses: bool) -> list[str]:
    """The figures over ``cases``, overall and per language (and the misses when asked)."""
    started = time.perf_counter()
    tallies = score(cases)
    took = (time.perf_counter() - started) / max(1, len(cases)) * 1e6
    lines = [f"Secrets are not memories: find_secrets ({title}, {took:.0f} µs per sentence)"]
    lines += [tallies[key].line(key) for key in ("all", *LANGUAGES)]
    if show_misses:
        for case in tallies["all"].misses:
            what = "missed" if case["secret"] else "flagged"
            lines.append(f"    {what} [{case['lang']}, {case['kind']}] {case['text']}")
    return lines


def secrets_section(split: str, show_misses: bool = False) -> list[str]:
    """The secrets figures of one split (``heldout`` or ``dev``), overall and per language:
    for the held-out split each file on its own, then all of them together."""
    names = secrets_files(split)
    loaded = {name: load(name) for name in names}
    lines: list[str] = []
    for name in names:
        lines += secrets_lines(name, loaded[name], show_misses and split == "dev")
    if len(names) > 1:
        together = [case for name in names for case in loaded[name]]
        lines += secrets_lines(" + ".join(names), together, False)
    return lines + dialogue_lines(split, show_misses and split == "dev")


def dialogue_lines(split: str, show_misses: bool) -> list[str]:
    """The dialogues of one split: is the user's last turn a secret, given the turns before
    it (``webapp.sensitive.dialogue.find_secrets_in_reply``)? Per language, as above."""
    pattern = "secrets-dialogues.dev.json" if split == "dev" else "secrets-dialogues.heldout*.json"
    lines: list[str] = []
    for path in sorted(SECRETS_DATA.glob(pattern)):
        dialogues = load(path.name)
        tallies = {"all": Tally(), **{lang: Tally() for lang in LANGUAGES}}
        for case in dialogues:
            turns = [(turn["role"], turn["content"]) for turn in case["turns"]]
            flagged = find_secrets_in_reply(turns[-1][1], turns[:-1]) is not None
            tallies["all"].add(case, flagged)
            tallies[case["lang"]].add(case, flagged)
        lines.append(
            f"Secrets known by the question before them: find_secrets_in_reply ({path.name})"
        )
        lines += [
            tallies[key].line(key).replace("sentences", "dialogues") for key in ("all", *LANGUAGES)
        ]
        for case in tallies["all"].misses if show_misses else ():
            what = "missed" if case["secret"] else "flagged"
            lines.append(f"    {what} [{case['lang']}, {case['kind']}] {case['turns']}")
    return lines


def secrets_report(show_dev_misses: bool = False) -> list[str]:
    """The secrets section: held-out first, then dev, each overall and per language."""
    return [*secrets_section("heldout"), *secrets_section("dev", show_dev_misses)]


# ------------------------------------------------------------------ time phrases
def time_answer(case: dict[str, Any]) -> str | None:
    """The ``expiresAt`` the parser gives a labelled case, in the on-disk form (or None)."""
    moment = expires_at(case["text"], parse_ts(case["sentAt"]), case["timezone"])
    return None if moment is None else to_iso(moment)


def time_section(split: str, show_misses: bool = False) -> list[str]:
    """Time-phrase accuracy of one split (``heldout`` or ``dev``), overall and per language."""
    name = f"{split}.json"
    cases: list[dict[str, Any]] = json.loads((TIME_DATA / name).read_text("utf-8"))
    started = time.perf_counter()
    right = dict.fromkeys(("all", *LANGUAGES), 0)
    total = dict(right)
    misses = []
    for case in cases:
        correct = time_answer(case) == case["expiresAt"]
        for key in ("all", case["lang"]):
            total[key] += 1
            right[key] += correct
        if not correct:
            misses.append(case)
    took = (time.perf_counter() - started) / max(1, len(cases)) * 1e6
    lines = [f"Time phrases: expires_at (time/{name}, {took:.0f} µs per message)"]
    for key in ("all", *LANGUAGES):
        share = right[key] / total[key] if total[key] else 0.0
        lines.append(f"  {key:8} accuracy {share:.3f} ({right[key]}/{total[key]})")
    if show_misses and split == "dev":
        for case in misses:
            lines.append(
                f"    [{case['lang']}] {case['text']} @ {case['sentAt']} {case['timezone']}:"
                f" want {case['expiresAt']}, got {time_answer(case)}"
            )
    return lines


# ------------------------------------------------------------------ situations and rules
# ``time-phrases.*-h2.json`` (issue 36): {"description", "cases": [{"id", "kind": "temporary" |
# "permanent", "language", "said_at", "timezone", "text", "expected_expiry_date"}]}. A temporary
# case is right when the parser gives an expiry whose last day, read in the case's timezone,
# is ``expected_expiry_date``: the instant is converted to the timezone and the last day it
# holds is the local date of the instant just before it (so an expiry at 00:00 local on the
# 6th means "through the 5th", one at 17:00 on the 5th also the 5th). A permanent case is
# right when the parser gives no expiry at all.
SITUATION_FILES = {"heldout": "time-phrases.heldout-h3.json", "dev": "time-phrases.dev-h2.json"}


def last_day_held(case: dict[str, Any], reader: Any = None) -> str | None:
    """The local date (ISO) of the last day the parser's expiry for ``case`` holds, or None
    (``reader``: ``expires_at`` unless another reading is asked for, e.g. ``stated_end``)."""
    moment = (reader or expires_at)(case["text"], parse_ts(case["said_at"]), case["timezone"])
    if moment is None:
        return None
    local = moment.astimezone(ZoneInfo(case["timezone"])) - timedelta(microseconds=1)
    return local.date().isoformat()


def situation_right(case: dict[str, Any], reader: Any = None) -> bool:
    """Whether the parser reads ``case`` as labelled (see above)."""
    found = last_day_held(case, reader)
    if case["kind"] == "permanent":
        return found is None
    return found is not None and found == case["expected_expiry_date"]


def situations_section(split: str, show_misses: bool = False) -> list[str]:
    """Expiry found (temporary) and none given (permanent), per language, with counts."""
    name = SITUATION_FILES[split]
    path = TIME_DATA / name
    if not path.exists():
        return [f"Situations and rules: time/{name} missing"]
    cases: list[dict[str, Any]] = json.loads(path.read_text("utf-8"))["cases"]
    lines = [f"Situations and rules: expires_at (time/{name})"]
    for kind, label in (("temporary", "expiry found"), ("permanent", "given none")):
        for lang in ("all", *LANGUAGES):
            mine = [c for c in cases if c["kind"] == kind and lang in ("all", c["language"])]
            right = sum(situation_right(c) for c in mine)
            share = right / len(mine) if mine else 0.0
            lines.append(f"  {kind:9} {lang:8} {label} {share:.3f} ({right}/{len(mine)})")
    # The reading of a fact typed or told as it is (forms, manage_memory, the CLI): bounded
    # ends only, so fewer situations get theirs and no habit does.
    for kind, label in (("temporary", "expiry found"), ("permanent", "given none")):
        mine = [c for c in cases if c["kind"] == kind]
        right = sum(situation_right(c, stated_end) for c in mine)
        share = right / len(mine) if mine else 0.0
        lines.append(f"  typed: stated_end {kind:9} {label} {share:.3f} ({right}/{len(mine)})")
    if show_misses and split == "dev":
        for case in cases:
            if not situation_right(case):
                lines.append(
                    f"    [{case['language']} {case['kind']}] {case['text']} @ {case['said_at']}"
                    f" {case['timezone']}: want {case['expected_expiry_date']},"
                    f" got {last_day_held(case)}"
                )
    return lines


# ------------------------------------------------------------------ judgement
def judgement_section(judge: Judge, split: str, show_misses: bool = False) -> list[str]:
    """The similarity layer's figures on one split with one embedder."""
    report = J.evaluate(split, *J.judge_callables(judge))
    lines = J.format_report(f"Judgement: {judge.embedder.name}", report)
    if show_misses and split == "dev":
        for name, table in (("near-dup", report.duplicates), ("contra", report.contradictions)):
            lines += [f"    {name} {miss}" for miss in table["all"].misses]
        lines += [f"    reconcile {miss}" for miss in report.reconcile["all"].misses]
    return lines


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


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def speed(family: str | None, sizes: list[int]) -> list[str]:
    embedder = load_embedder(family)
    lines = [f"SPEED of the similarity layer: {embedder.name}"]
    sample = synthetic_memories(200, seed=7)
    seconds, _ = timed(lambda: VectorCache(embedder).vectors(sample))
    lines.append(f"  embeddings: {len(sample) / seconds:,.0f} a second ({len(sample)} texts)")
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            texts = synthetic_memories(size)
            path = Path(folder) / f"memories-{size}.vectors.npz"
            anchor, _ = timed(lambda texts=texts: [fold(t) for t in texts])
            analyse.cache_clear()
            cold_cache = VectorCache(embedder, path)
            cold_scanner = PairScanner(Judge(cache=cold_cache))
            cold, found = timed(lambda s=cold_scanner, t=texts: s.scan(t))
            embedded_cold = cold_cache.computed
            cold_cache.save()
            analyse.cache_clear()
            start = time.perf_counter()
            warm_cache = VectorCache(embedder, path)
            warm_scanner = PairScanner(Judge(cache=warm_cache))
            warm_scanner.scan(texts)
            warm = time.perf_counter() - start
            changed = [*texts[:-1], texts[-1] + " (edited)"]
            one, _ = timed(lambda s=warm_scanner, c=changed: s.scan(c))
            matrix = warm_cache.vectors(texts)
            shortlist, pairs = timed(lambda m=matrix, f=warm_scanner.floor: candidate_pairs(m, f))
            lines += [
                f"  N={size:,}: anchor fold() of all texts {anchor * 1000:.1f} ms",
                f"    full scan, cold cache  {cold:7.2f} s = {cold / anchor:9,.0f}× anchor"
                f" ({embedded_cold:,} texts embedded)",
                f"    full scan, warm cache  {warm:7.2f} s = {warm / anchor:9,.0f}× anchor"
                f" ({warm_cache.loaded:,} vectors read from the file,"
                f" {warm_cache.computed} embedded)",
                f"    one memory changed     {one:7.2f} s = {one / anchor:9,.0f}× anchor"
                f" ({warm_scanner.last_scan})",
                f"    shortlist alone        {shortlist:7.2f} s for {len(pairs):,} candidate pairs;"
                f" {len(found):,} pairs flagged",
            ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=["both", "dev", "heldout"], default="both")
    parser.add_argument(
        "--embedder",
        default="e5,e5+use",
        help="embedder families, comma-separated: quality for each, speed for the first",
    )
    parser.add_argument("--sizes", default="1000,10000", help="N for the speed figures")
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--no-quality", action="store_true")
    parser.add_argument("--show-dev-misses", action="store_true")
    parser.add_argument(
        "--section",
        choices=["all", "judgement", "applying", "precise", "secrets", "time"],
        default="all",
        help="one quality section only (all by default)",
    )
    args = parser.parse_args(argv)
    wanted = {"all": {"judgement", "applying", "precise", "secrets", "time"}}.get(
        args.section, {args.section}
    )
    splits = {"both": ["heldout", "dev"], "dev": ["dev"], "heldout": ["heldout"]}[args.split]
    families = [f for f in args.embedder.split(",") if f]
    sections: list[list[str]] = []
    if not args.no_quality:
        judges = (
            [Judge(load_embedder(family)) for family in families] if "judgement" in wanted else []
        )
        for judge in judges:
            judge.cache.vectors([t for split in splits for t in J.all_texts(split)])
        for split in splits:
            sections.append([f"===== {TITLES[split]} ====="])
            for judge in judges:
                sections.append(judgement_section(judge, split, args.show_dev_misses))
            if "applying" in wanted:
                sections.append(A.section(split, TITLES[split], args.show_dev_misses))
                sections.append(A.auto_update_lines(split))
            if "precise" in wanted:
                sections.append(P.section(split, args.show_dev_misses))
            if "secrets" in wanted:
                sections.append(secrets_section(split, args.show_dev_misses))
            if "time" in wanted:
                sections.append(time_section(split, args.show_dev_misses))
                sections.append(situations_section(split, args.show_dev_misses))
    if not args.no_speed:
        sections.append(speed(families[0], [int(n) for n in args.sizes.split(",") if n]))
    print("\n\n".join("\n".join(section) for section in sections), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
