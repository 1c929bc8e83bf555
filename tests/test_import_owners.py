"""Owners everywhere a fact enters (issue 36): an import's statements are the person
importing's (or the household's, or a line's chosen owner's), each reconciled within that
owner's view; and a person leaves the household without their private memories leaking into
it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.data import make_settings
from webapp.curator import Curator
from webapp.imports import ASK, ImportPlan
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


GRAPH = "\n".join(
    json.dumps(line)
    for line in (
        {"type": "entity", "name": "Biscuit", "entityType": "dog", "observations": ["Is a beagle"]},
        {
            "type": "entity",
            "name": "default_user",
            "entityType": "person",
            "observations": ["Prefers tea"],
        },
        {
            "type": "entity",
            "name": "Ben",
            "entityType": "person",
            "observations": ["Is allergic to cats"],
        },
        {
            "type": "entity",
            "name": "Maya",
            "entityType": "person",
            "observations": ["Plays the cello"],
        },
        {"type": "relation", "from": "Ben", "to": "Biscuit", "relationType": "walks"},
        {"type": "relation", "from": "Maya", "to": "Biscuit", "relationType": "feeds"},
    )
)


def _kept(curator: Curator, plan: ImportPlan) -> list[tuple[str, str | None]]:
    names = curator.people.names()
    return sorted((a.content, names.get(a.person or "")) for a in plan.actions)


def test_an_owned_import_keeps_what_each_fact_is_about(curator: Curator) -> None:
    # Issue 42: imported as Ben's, the dog's "Is a beagle" became a private fact of Ben's.
    ben = curator.people.add("Ben Okafor")
    curator.people.add("Maya")
    assert _kept(curator, curator.plan_import(GRAPH, fmt="mcp-jsonl", owner=ben.id)) == [
        ("Biscuit: Is a beagle", "Ben Okafor"),
        ("Is allergic to cats", "Ben Okafor"),  # the entity "Ben" is Ben: his own
        ("Maya feeds Biscuit", "Ben Okafor"),
        ("Plays the cello", "Maya"),  # the file says whose: Maya's, as before
        ("Prefers tea", "Ben Okafor"),  # the user, as the MCP memory server calls them
        ("Walks Biscuit", "Ben Okafor"),
    ]
    assert _kept(curator, curator.plan_import(GRAPH, fmt="mcp-jsonl")) == [
        ("Ben walks Biscuit", None),
        ("Biscuit: Is a beagle", None),
        ("Is allergic to cats", "Ben Okafor"),
        ("Maya feeds Biscuit", None),
        ("Plays the cello", "Maya"),
        ("Prefers tea", None),
    ]


def test_a_line_given_to_someone_keeps_its_subject_unless_it_is_them(curator: Curator) -> None:
    leo = curator.people.add("Leo")
    mem0 = json.dumps(
        [
            {"memory": "Likes jazz", "user_id": "sam"},
            {"memory": "Prefers tea", "user_id": "user"},  # mem0's default user
            {"memory": "Walks to work", "user_id": "leo"},
        ]
    )
    plan = curator.plan_import(mem0, fmt="mem0", owner=leo.id, lines={1: leo.id})
    assert _kept(curator, plan) == [
        ("Prefers tea", "Leo"),
        ("Walks to work", "Leo"),
        ("sam: Likes jazz", "Leo"),
    ]


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
