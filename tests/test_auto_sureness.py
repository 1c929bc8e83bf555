"""Issue 44: auto mode applies by itself only what it is sure of.

Each case runs the real path an extraction run takes in auto mode (a memory file, a review
queue, ``MemoryExtractor.reconcile`` then ``submit``) and reads the files afterwards: a change
the sentence frames is applied; a statement from a source the sentence calls unreliable, one
dated before the memory it would replace, an update nobody framed as a change and a change of
a memory the judge could not place all wait in Review, marked with why, and no memory changes.
Approved, an older statement is kept beside the newer memory with its date.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import make_settings
from webapp.curator import Curator
from webapp.extraction import MemoryExtractor, StructuredFact
from webapp.language.dating import dated, older
from webapp.language.stance import stance
from webapp.stores import MemoryStore, ReviewQueue


def _run(data_dir: Path, kept: list[str], statement: str, evidence: str):
    """Keep ``kept``, run the statement (with the sentence it came from) through auto mode:
    the memories before, after, and what waits in Review."""
    store = MemoryStore(data_dir / "memories.json", lock_timeout=5)
    queue = ReviewQueue(data_dir / "review.json", store)
    before = {m.id: m.content for m in (store.add(text, source="manual") for text in kept)}
    extractor = MemoryExtractor(store, review_queue=queue, mode="auto")
    fact = StructuredFact(statement, "general", 0.9, evidence=evidence, extractor="llm")
    extractor.submit(extractor.reconcile([fact]))
    after = {m.id: m.content for m in store.get_all()}
    return before, after, queue.pending()


UNRELIABLE = [
    (
        ["The plumber is Joe's Plumbing"],
        "The plumber is FlowRight",
        "An unverified text from an unknown number says the plumber is FlowRight now.",
    ),
    (["保母是小芳"], "保母是小玲", "有傳言說保母換成小玲了。"),
    (["热水器是60升的"], "热水器是80升的", "扫描识别出来是80升，但置信度很低。"),
    (
        ["Book club meets on Fridays"],
        "Book club meets on Tuesdays",
        "An old archived note says book club meets on Tuesdays.",
    ),
]


@pytest.mark.parametrize(("kept", "statement", "evidence"), UNRELIABLE)
def test_a_source_the_sentence_calls_unreliable_waits_and_changes_nothing(
    data_dir, kept, statement, evidence
):
    before, after, waiting = _run(data_dir, kept, statement, evidence)
    assert after == before
    assert [item.doubt for item in waiting] == ["unreliable"]
    assert waiting[0].doubt_words and waiting[0].doubt_words in evidence


OLDER = [
    (
        "As of 2026, the family car is a Honda Civic",
        "As of 2019, the family car is a Ford Focus",
        "As of 2019, the family car was a Ford Focus.",
    ),
    (
        "The rent is $2,100 a month as of January 2026",
        "The rent was $1,800 a month in 2022",
        "In 2022 the rent was $1,800 a month.",
    ),
    ("瑜伽課一堂600元（2026年）", "去年瑜伽課一堂450元", "去年瑜伽課一堂450元。"),
    ("2024年起在腾讯上班", "2020年在阿里上班", "2020年我在阿里上班。"),
]


@pytest.mark.parametrize(("kept", "statement", "evidence"), OLDER)
def test_an_older_statement_never_replaces_the_newer_memory_and_is_kept_beside_it(
    data_dir, kept, statement, evidence
):
    before, after, waiting = _run(data_dir, [kept], statement, evidence)
    assert after == before
    assert [(item.action, item.doubt, item.current_content) for item in waiting] == [
        ("add", "older", kept)
    ]
    curator = Curator(make_settings(data_dir.parent), via="dashboard")
    curator.approve(waiting[0].id)
    kept_now = sorted(m.content for m in curator.memories.get_all())
    assert kept_now == sorted([kept, statement])  # beside it, with its date; never in its place


def test_an_update_nobody_framed_as_a_change_waits_instead_of_overwriting(data_dir):
    """The judge matched "renews in March" to the insurer by words alone: before issue 44
    auto mode overwrote "The car insurance is with Geico" with it."""
    kept = "The car insurance is with Geico"
    before, after, waiting = _run(
        data_dir, [kept], "The car insurance renews in March", "Heads up, it renews in March."
    )
    assert after == before
    assert [(item.action, item.doubt) for item in waiting] == [("update", "unframed")]


def test_a_change_of_a_memory_the_judge_cannot_place_is_not_added_beside_it(data_dir):
    kept = "The spare key is kept under the flower pot"
    before, after, waiting = _run(
        data_dir,
        [kept],
        "The spare key is kept in the lockbox by the garage",
        "We moved the spare key to the lockbox by the garage.",
    )
    assert after == before
    assert [item.doubt for item in waiting] == ["unplaced"]


SURE = [
    (
        "The internet provider is Comcast",
        "The internet provider is Sonic now",
        "We switched the internet provider to Sonic last week.",
    ),
    ("牙醫是林醫師", "牙醫換成黃醫師", "我的牙醫換成黃醫師了。"),
    ("倒垃圾的日子是星期一", "倒垃圾的日子改到星期三", "以后倒垃圾改到星期三。"),
]


@pytest.mark.parametrize(("kept", "statement", "evidence"), SURE)
def test_a_change_the_sentence_frames_is_still_applied_by_itself(
    data_dir, kept, statement, evidence
):
    before, after, waiting = _run(data_dir, [kept], statement, evidence)
    assert list(after.values()) == [statement] and list(after) == list(before)
    assert waiting == []


def test_a_new_fact_close_to_no_memory_is_still_added_by_itself(data_dir):
    kept = "Likes oat milk in coffee"
    before, after, waiting = _run(
        data_dir, [kept], "The printer is in the study", "The printer is in the study."
    )
    assert sorted(after.values()) == sorted([kept, "The printer is in the study"])
    assert waiting == []


def test_dates_read_in_every_language():
    assert dated("As of 2019, the car was a Ford", 2026).year == 2019
    assert dated("Last year the class was $15", 2026).year == 2025
    assert dated("去年瑜伽課一堂450元", 2026).year == 2025
    assert dated("2019年的时候家里的车是福特", 2026).year == 2019
    assert dated("Drives a 2023 Kia", 2026) is None  # a model year, not a date
    assert (
        older(
            "The dishwasher was bought in 2021", "The dishwasher is a Bosch", 2026, replacing=False
        )
        is None
    )
    assert older("Used to work at Intel", "Works at Google", 2026) == "used to"


def test_a_firm_statement_has_no_unreliable_source():
    for said in (
        "The router is in the hallway",
        "We archive photos every Sunday",
        "讀書會在星期五",
        "草莓季在三月",
    ):
        found = stance(said)
        assert found is None or found.kind != "unreliable", said
