"""Owners everywhere a fact enters (issue 36): an import's statements are the person
importing's (or the household's, or a line's chosen owner's), each reconciled within that
owner's view; and a person leaves the household without their private memories leaking into
it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import make_settings
from webapp.curator import Curator
from webapp.extraction.imports import ASK
from webapp.problems import CodedError
from webapp.stores import MemoryStore

FILE = "Likes jazz on Sunday mornings.\nThe bins go out on Tuesday.\n"


@pytest.fixture
def curator(tmp_path: Path) -> Curator:
    settings = make_settings(tmp_path)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    MemoryStore.from_settings(settings).init()
    return Curator.from_settings(settings)


def test_an_import_is_the_importers_and_never_touches_another_persons_memory(
    curator: Curator,
) -> None:
    maya = curator.people.add("Maya")
    leo = curator.people.add("Leo")
    mine = curator.remember("Likes jazz on Sunday mornings.", person=maya.id)
    plan = curator.plan_import(FILE, fmt="text", owner=leo.id)
    assert sorted((a.action, a.person, a.id) for a in plan.actions) == [
        ("add", leo.id, None),
        ("add", leo.id, None),
    ]
    assert set(plan.owners.values()) == {leo.id}
    curator.queue_import(plan)
    assert {item.person for item in curator.review.pending()} == {leo.id}
    assert curator.memories.get(mine.id) == mine  # Maya's memory is as it was


def test_maya_importing_her_own_fact_finds_it_known(curator: Curator) -> None:
    maya = curator.people.add("Maya")
    curator.remember("Likes jazz on Sunday mornings.", person=maya.id)
    plan = curator.plan_import(FILE, fmt="text", owner=maya.id)
    assert [(a.action, a.content) for a in plan.actions] == [("add", "The bins go out on Tuesday.")]


def test_without_an_owner_an_import_is_the_households_and_within_its_view(
    curator: Curator,
) -> None:
    maya = curator.people.add("Maya")
    curator.remember("Likes jazz on Sunday mornings.", person=maya.id)
    plan = curator.plan_import(FILE, fmt="text")
    assert sorted((a.action, a.person) for a in plan.actions) == [("add", None), ("add", None)]
    assert set(plan.owners.values()) == {None}


def test_a_line_has_an_owner_of_its_own(curator: Curator) -> None:
    leo = curator.people.add("Leo")
    plan = curator.plan_import(FILE, fmt="text", owner=leo.id, lines={2: None})
    whose = {a.content: a.person for a in plan.actions}
    assert whose == {"Likes jazz on Sunday mornings.": leo.id, "The bins go out on Tuesday.": None}
    assert plan.owners == {1: leo.id, 2: None}
    assert {plan.line_of(a) for a in plan.actions} == {1, 2}


def test_a_stranger_named_in_the_file_waits_for_a_person_unless_a_line_says(
    curator: Curator,
) -> None:
    leo = curator.people.add("Leo")
    mem0 = '[{"memory": "Likes jazz", "user_id": "sam"}]'
    plan = curator.plan_import(mem0, fmt="mem0", owner=leo.id)
    assert plan.owners == {1: ASK}
    assert [a.owner_undecided for a in plan.actions] == [True]
    chosen = curator.plan_import(mem0, fmt="mem0", owner=leo.id, lines={1: leo.id})
    assert [(a.person, a.owner_undecided) for a in chosen.actions] == [(leo.id, False)]


def test_an_owner_nobody_is_is_refused(curator: Curator) -> None:
    with pytest.raises(CodedError) as refused:
        curator.plan_import(FILE, fmt="text", owner="nobody")
    assert refused.value.code == "person_unknown"


# ------------------------------------------------------------------ removing a person
def test_a_person_who_owns_memories_is_not_removed(curator: Curator) -> None:
    sam = curator.people.add("Sam", identities=(("slack", "U1"),))
    curator.remember("Is allergic to penicillin.", person=sam.id)
    with pytest.raises(CodedError) as refused:
        curator.remove_person(sam.id)
    assert refused.value.code == "person_owns_memories"
    assert curator.people.get(sam.id) == sam
    assert [(m.content, m.person) for m in curator.memories.get_all()] == [
        ("Is allergic to penicillin.", sam.id)
    ]


def test_a_person_with_a_proposal_waiting_is_not_removed(curator: Curator) -> None:
    sam = curator.people.add("Sam")
    leo = curator.people.add("Leo")
    curator.queue_import(curator.plan_import(FILE, fmt="text", owner=sam.id))
    with pytest.raises(CodedError) as refused:
        curator.remove_person(sam.id)
    assert refused.value.code == "person_owns_memories"
    assert curator.remove_person(leo.id).name == "Leo"


def test_removing_a_person_is_logged_and_undone(curator: Curator) -> None:
    sam = curator.people.add("Sam", identities=(("slack", "U1"), ("ha", "u-sam")))
    assert curator.remove_person(sam.id) == sam
    assert curator.people.get(sam.id) is None
    assert {i.key for i in curator.people.unlinked()} == {("slack", "U1"), ("ha", "u-sam")}
    assert curator.memories.get_all() == []  # nothing of theirs became the household's
    assert curator.people.removed(sam.id) == sam
    assert curator.restore_person(sam.id) == sam
    assert curator.people.unlinked() == []
    actions = [e["action"] for e in curator.people._history.read(sam.id)]
    assert actions == ["add", "remove", "restore"]


def test_undoing_a_removal_refuses_a_name_taken_since(curator: Curator) -> None:
    sam = curator.people.add("Sam")
    curator.remove_person(sam.id)
    curator.add_person("SAM")
    with pytest.raises(CodedError) as refused:
        curator.restore_person(sam.id)
    assert refused.value.code == "person_name_taken"
