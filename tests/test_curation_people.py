"""Needs attention across people: pairs within one person, or a person and the household,
never two people; the same fact kept by every person is offered as the household's."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from webapp.attention.scanner import scan
from webapp.attention.semantic import semantic_index
from webapp.stores.memories import Memory

TODAY = date(2026, 11, 25)


def memory(memory_id: str, content: str, person: str | None = None) -> Memory:
    record = {"id": memory_id, "content": content, "createdAt": "2026-11-01T00:00:00.000Z"}
    if person:
        record["person"] = person
    return Memory.from_dict(record)


def kinds(memories, **kw) -> list[tuple[str, str]]:
    return [(f.kind, f.reason.code) for f in scan(memories, today=TODAY, stale_days=90, **kw)]


def test_two_people_may_like_different_things_by_meaning(tmp_path: Path):
    index = semantic_index(tmp_path / "memories.json")
    ana_tea, leo_tea = memory("a", "Likes tea.", "ana"), memory("b", "Doesn't drink tea.", "leo")
    assert kinds([ana_tea, leo_tea], semantic=index) == []
    ana_no_tea = memory("c", "Doesn't drink tea.", "ana")
    assert ("contradiction", "yes_and_no") in kinds([ana_tea, ana_no_tea], semantic=index)


@pytest.mark.parametrize(
    ("left", "right", "flagged"),
    [
        ("ana", "leo", False),  # two people: never compared
        ("ana", "ana", True),  # within one person
        ("ana", None, True),  # a person and the household
        (None, None, True),  # the household (every record of other programs)
    ],
)
def test_pairs_by_the_rules_are_within_one_persons_view(left, right, flagged):
    found = kinds([memory("a", "Likes tea.", left), memory("b", "Doesn't like tea.", right)])
    assert (("contradiction", "yes_and_no") in found) is flagged


def test_the_same_fact_kept_by_every_person_is_offered_as_the_households():
    memories = [
        memory("a", "The bins go out on Tuesday.", "ana"),
        memory("b", "the bins go out on tuesday", "leo"),
        memory("c", "Likes tea.", "ana"),
    ]
    [finding] = [
        f for f in scan(memories, today=TODAY, stale_days=90) if f.reason.code == "held_by_everyone"
    ]
    assert [m.id for m in finding.memories] == ["a", "b"]
    # Not when the household keeps it already, or only some of the people do.
    assert "held_by_everyone" not in {
        c for _, c in kinds([*memories, memory("d", "The bins go out on Tuesday.")])
    }
    three = [*memories, memory("e", "Walks the dog.", "mia")]
    assert "held_by_everyone" not in {c for _, c in kinds(three)}
