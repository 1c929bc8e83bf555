"""Needs attention, rules only: near-duplicates and contradictions on a hand-labelled set of
pairs (English, 繁體, 简体) with precision and recall, then stale and hard-to-use memories."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.stores import memory_store
from webapp.attention.most_similar import SimilarityIndex
from webapp.attention.one_memory import hard_to_use_reason, stale_reason
from webapp.attention.pair_findings import candidate_pairs
from webapp.attention.pairs import (
    SIMILAR_ENOUGH,
    compare,
    drops_information,
    features,
    similarity_of,
)
from webapp.attention.scanner import scan
from webapp.stores import Memory

LABELLED = Path(__file__).parent / "data" / "curation_pairs.json"
PRECISION_FLOOR = 0.9
RECALL_FLOOR = 0.8
TODAY = date(2026, 11, 22)


def _pairs() -> list[dict]:
    return json.loads(LABELLED.read_text("utf-8"))["pairs"]


def memory(content: str, id: str | None = None, days_old: int = 0) -> Memory:
    stamp = datetime(2026, 11, 22, 9, 0, tzinfo=UTC) - timedelta(days=days_old)
    return Memory(id or f"m{abs(hash(content)) % 10**8}", content, stamp, stamp)


def test_the_labelled_set_is_big_and_mixed_enough():
    pairs = _pairs()
    assert len(pairs) >= 30
    for lang in ("en", "zh-Hant", "zh-Hans"):
        labels = {p["label"] for p in pairs if p["lang"] == lang}
        assert labels == {"duplicate", "contradiction", "distinct"}, lang


@pytest.mark.parametrize("kind", ["duplicate", "contradiction"])
def test_precision_and_recall_on_the_labelled_pairs(kind, record_property):
    true_pos = false_pos = false_neg = 0
    wrong, missed = [], []
    for pair in _pairs():
        verdict = compare(pair["a"], pair["b"])
        said = verdict is not None and verdict.kind == kind
        if said and pair["label"] == kind:
            true_pos += 1
        elif said:
            false_pos += 1
            wrong.append((pair["a"], pair["b"], pair["label"]))
        elif pair["label"] == kind:
            false_neg += 1
            missed.append((pair["a"], pair["b"]))
    precision = true_pos / max(1, true_pos + false_pos)
    recall = true_pos / max(1, true_pos + false_neg)
    record_property(f"{kind}_precision", round(precision, 3))
    record_property(f"{kind}_recall", round(recall, 3))
    print(
        f"\n{kind}: precision {precision:.2%} recall {recall:.2%} "
        f"({true_pos} found, {false_pos} wrong, {false_neg} missed)"
    )
    assert true_pos >= 10, "the set has enough positives of this kind to measure"
    assert precision >= PRECISION_FLOOR, wrong
    assert recall >= RECALL_FLOOR, missed


def test_a_verdict_does_not_depend_on_the_order():
    for pair in _pairs():
        one, other = compare(pair["a"], pair["b"]), compare(pair["b"], pair["a"])
        assert (one and one.kind) == (other and other.kind), pair


@pytest.mark.parametrize(
    "text, kind, amount",
    [
        ("Alarm at 06:45", "time", 405),
        ("Wakes at 7 pm", "time", 19 * 60),
        ("晚上十點後不要開燈", "time", 22 * 60),
        ("习惯早上六点半起床", "time", 6 * 60 + 30),
        ("Lights at 30% after dark", "%", 30),
        ("Thermostat at 21°C", "degrees", 21),
        ("有两只猫", "只", 2),
        ("Office on the 3rd floor", "ordinal", 3),
    ],
)
def test_values_are_read_in_english_and_chinese(text, kind, amount):
    assert (kind, amount) in [(v.kind, v.amount) for v in features(text).values]


def test_contradiction_says_which_values_differ():
    verdict = compare("Alarm at 06:45", "Alarm at 07:00")
    assert verdict.kind == "contradiction"
    assert "06:45" in str(verdict.reason) and "07:00" in str(verdict.reason)
    assert verdict.reason.value("left") == ("06:45",) and verdict.reason.value("right") == (
        "07:00",
    )


@pytest.mark.parametrize(
    "a, b, subject, left, right",
    [
        (
            "Bedroom at 24°C at night",
            "Bedroom at 22°C at night",
            ("Bedroom", "night"),
            "24°C",
            "22°C",
        ),
        (
            "Dinner at 7 PM on Fridays",
            "Dinner at 8 PM on Fridays",
            ("Dinner", "Fridays"),
            "7 PM",
            "8 PM",
        ),
        ("臥室晚上十點關燈", "臥室晚上十一點關燈", ("臥室", "關燈"), "晚上十點", "晚上十一點"),
        (
            "Hallway lights at ３０％",
            "Hallway lights at 50%",
            ("Hallway", "lights"),
            "３０％",
            "50%",
        ),
    ],
)
def test_a_contradiction_names_subject_and_values_as_the_memories_write_them(
    a, b, subject, left, right
):
    """The rules compare folded text (lower case, 简体, stems); a person reads the memories'
    own spelling: "24°C", not "24°c"; 晚上十點, not 晚上十点; "lights", not "light"."""
    verdict = compare(a, b)
    assert verdict is not None and verdict.kind == "contradiction"
    assert verdict.reason.value("subject") == subject
    assert (verdict.reason.value("left"), verdict.reason.value("right")) == ((left,), (right,))


def test_what_an_update_would_drop_is_said_as_the_memory_writes_it():
    lost = drops_information("Weekday alarm is 06:45 AM; Weekends 09:00 AM", "alarm at 07:00")
    assert lost == ["Weekday", "Weekends", "06:45 AM", "09:00 AM"]
    assert drops_information("客廳冷氣26度，臥室24度，書房28度", "冷氣25度") == [
        "客廳",
        "臥室",
        "書房",
        "26度",
        "24度",
        "28度",
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Dentist appointment until 2026-11-01", "Mentions 2026-11-01, which is past."),
        ("Visiting Tokyo this week", "Says “this week”"),
        ("下週要出差", "Says “下週”"),
        ("Alarm at 06:45", "Nothing has changed it in 200 days"),
    ],
)
def test_stale_memories_say_why(text, expected):
    reason = stale_reason(memory(text, days_old=200), TODAY, 180)
    assert reason is not None and expected in str(reason)


@pytest.mark.parametrize(
    "text",
    [
        "Dentist appointment until 2026-12-24",
        "Born on 1990-05-01",
        "Visiting Tokyo this week",
        "下週要出差",
        "Alarm at 06:45",
    ],
)
def test_fresh_and_lasting_memories_are_not_stale(text):
    assert stale_reason(memory(text, days_old=2), TODAY, 180) is None


@pytest.mark.parametrize(
    "text, why, suggestion",
    [
        ("I prefer the hallway lights at 30%", "own sentence", "Prefers the hallway lights at 30%"),
        ("我喜歡喝無糖綠茶", "own sentence", "喜歡喝無糖綠茶"),
        ("Notes: " + "a very long memory " * 20, "characters long", None),
        ("https://example.com/some/very/long/path?query=1", "Mostly a link", None),
        ("def alarm(): return {'time': '06:45'}", "Looks like code", None),
    ],
)
def test_hard_to_use_memories_say_why_and_how_to_fix(text, why, suggestion):
    found = hard_to_use_reason(memory(text))
    assert found is not None
    reason, fix = found
    assert why in str(reason)
    assert fix == suggestion


@pytest.mark.parametrize(
    "text", ["Prefers tea", "喜歡喝無糖綠茶", "Uses https://ha.local for Home Assistant"]
)
def test_plain_facts_are_not_hard_to_use(text):
    assert hard_to_use_reason(memory(text)) is None


def test_scan_finds_each_kind_and_names_findings_stably():
    memories = [
        memory("Prefers tea", "a"),
        memory("The user likes tea", "b"),
        memory("Alarm at 06:45", "c"),
        memory("Alarm at 07:00", "d"),
        memory("I use zsh", "e"),
        memory("Trip to Kyoto until 2026-10-01", "f"),
    ]
    found = scan(memories, today=TODAY, stale_days=180)
    kinds = {(f.kind, tuple(m.id for m in f.memories)) for f in found}
    assert kinds == {
        ("duplicate", ("a", "b")),
        ("contradiction", ("c", "d")),
        ("hard", ("e",)),
        ("stale", ("f",)),
    }
    again = scan(list(reversed(memories)), today=TODAY, stale_days=180)
    assert {f.key for f in found} == {f.key for f in again}


def test_pairs_come_from_an_index_not_from_all_pairs():
    topics = ["tea", "coffee", "jazz", "vim", "taipei", "docker", "cats", "hiking", "chess", "yaml"]
    memories = [
        memory(f"Likes {t} number{i} variant{i % 7}", f"m{i}") for i, t in enumerate(topics * 30)
    ]
    pairs = candidate_pairs(memories)
    all_pairs = len(memories) * (len(memories) - 1) // 2
    assert len(pairs) < all_pairs / 5
    assert (0, 10) in pairs  # both about tea


def test_most_similar_memories_come_first_with_their_similarity():
    memories = [
        memory("Prefers green tea", "a"),
        memory("Alarm at 06:45", "b"),
        memory("Drinks black coffee", "c"),
        memory("喜歡喝無糖綠茶", "d"),
    ]
    index = SimilarityIndex(memories)
    top = index.most_similar("Likes green tea in the morning")
    assert [s.memory.id for s in top][:1] == ["a"]
    assert 0 < top[0].similarity <= 1
    assert [s.memory.id for s in index.most_similar("我喜欢喝无糖绿茶")][:1] == ["d"]
    assert index.most_similar("Completely unrelated words") == []


def test_a_memory_that_only_shares_a_word_or_a_day_is_not_offered_as_similar():
    """Review lists the memories most like a proposal so a person spots the one it repeats or
    contradicts; one that only shares "Fridays" or "train" (25–35 %) is not such a memory."""
    index = SimilarityIndex(
        [
            memory("Works from home on Fridays", "home"),
            memory("Takes the 8:10 train to work", "train"),
            memory("Plays tennis every Friday", "tennis"),
        ]
    )
    assert [s.memory.id for s in index.most_similar("Plays tennis on Fridays")] == ["tennis"]
    assert index.most_similar("Prefers window seats on trains") == []
    assert index.most_similar("每週五晚上打網球") == []


def test_every_labelled_duplicate_and_contradiction_counts_as_similar():
    """The "most similar" threshold keeps every pair a person must act on (labelled duplicate
    or contradiction); a lower similarity is a pair that shares a word, not a fact."""
    must_act = [p for p in _pairs() if p["label"] in ("duplicate", "contradiction")]
    missed = [
        (p["a"], p["b"], similarity_of(p["a"], p["b"]))
        for p in must_act
        if similarity_of(p["a"], p["b"]) < SIMILAR_ENOUGH
    ]
    assert missed == []
    loose = [p for p in _pairs() if similarity_of(p["a"], p["b"]) < SIMILAR_ENOUGH]
    assert loose and all(p["label"] == "distinct" for p in loose)


@pytest.mark.parametrize(
    "current, new, lost",
    [
        ("Weekday alarm is 06:45; on weekends not before 09:00", "alarm at 07:00", True),
        ("Prefers vim", "Prefers neovim instead of vim", False),
        ("Hallway lights at 50% after 22:00", "Hallway lights at 30% after 22:00", False),
        ("客廳冷氣設定26度，臥室24度", "客廳冷氣設定25度", True),
    ],
)
def test_an_update_that_would_drop_information_is_recognised(current, new, lost):
    assert bool(drops_information(current, new)) is lost


def test_the_scanner_answers_at_once_and_scans_in_the_background(tmp_path):
    from webapp.attention.scanner import AttentionScanner

    store = memory_store(tmp_path / "memories.json", max_items=5000, max_chars=10**6)
    rooms = ["hallway", "kitchen", "bedroom", "office", "garage"]

    def name(i: int) -> str:  # a different word for each memory: aa, ab, ac…
        return "".join("abcdefghijklmnopqrstuvwxyz"[int(d, 26)] for d in _base26(i))

    records = [
        {
            "id": f"m{i}",
            "content": f"{rooms[i % 5].title()} lights of the {name(i)} flat at {i % 9}0%",
        }
        for i in range(1500)
    ]
    store.import_records(records)
    scanner = AttentionScanner(store, 180, today=lambda: TODAY)
    report, current = scanner.report(wait=0)
    assert (report, current) == (None, False)  # the first scan is still running
    report, current = scanner.report(wait=60)
    assert current and report.checked == 1500
    assert scanner.report(wait=0) == (report, True)  # the same version is not scanned again
    store.add("Prefers tea")
    stale, current = scanner.report(wait=0)
    assert stale is report and not current  # the last results, while the new version is scanned
    newer, current = scanner.report(wait=60)
    assert current and newer.checked == 1501


def _base26(i: int) -> str:
    digits = "0123456789abcdefghijklmnop"
    out = ""
    while True:
        i, rest = divmod(i, 26)
        out = digits[rest] + out
        if not i:
            return out.rjust(3, "0")
