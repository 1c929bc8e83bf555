"""``manage_memory``'s ``person`` argument through the MCP SDK's own client over stdio: each
call acts within one view (a person's own and the household's, or the household's), never
another person's, and says whose each memory is."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from anyio.from_thread import start_blocking_portal

from tests.support.data import on_disk
from tests.support.mcp_stdio import McpClient, connect
from tests.support.stores import memory_store
from webapp.stores import MemoryStore, PeopleStore

ID = re.compile(r"\[([0-9a-f]+)\]")


@pytest.fixture
def household(tmp_path: Path) -> tuple[Path, PeopleStore, MemoryStore]:
    data = tmp_path / "data"
    store = memory_store(data / "memories.json", max_items=50, max_chars=5000)
    store.init()
    people = PeopleStore(data / "people.json", lock_timeout=5)
    return data, people, store


@pytest.fixture
def client(household, tmp_path: Path) -> Iterator[McpClient]:
    with open(tmp_path / "stderr.txt", "w+", encoding="utf-8") as errlog:
        with start_blocking_portal(backend="asyncio") as portal:
            with portal.wrap_async_context_manager(connect(household[0], errlog)) as session:
                yield McpClient(portal, session)


def test_the_tool_announces_the_person_argument(client):
    [tool, *_] = client.list_tools().tools
    assert tool.input_schema["properties"]["person"]["type"] == "string"
    assert "person" not in tool.input_schema["required"]


def test_each_person_adds_and_lists_within_their_view(client, household):
    _, people, store = household
    ana = people.add("Ana")
    leo = people.add("Leo", identities=(("name", "Leonardo"),))
    shared = store.add("Our Wi-Fi is called Lighthouse.")

    added = client.ok(action="add", content="Likes tea.", person="Ana")
    assert added.splitlines()[0].endswith("Likes tea. — Ana's")
    client.ok(action="add", content="Doesn't drink tea.", person="Leonardo")  # an identity
    by_content = {r["content"]: r.get("person") for r in on_disk(store.path)}
    assert by_content == {shared.content: None, "Likes tea.": ana.id, "Doesn't drink tea.": leo.id}

    listed = client.ok(action="list", person=ana.id).splitlines()
    assert listed[0] == "2 memories:"
    assert listed[1].startswith(f"[{shared.id}] (general) {shared.content} — ")
    assert listed[1].endswith(" — the household's")
    assert listed[2].endswith("Likes tea. — told through manage_memory — Ana's")
    assert not any("Doesn't drink" in line for line in listed)

    found = client.ok(action="search", keyword="tea", person="Leo")
    assert "Doesn't drink tea. — told through manage_memory — Leo's" in found
    assert "Likes tea." not in found


def test_without_person_every_action_is_the_households(client, household):
    _, people, store = household
    ana = people.add("Ana")
    hers = store.add("Likes tea.", person=ana.id)
    client.ok(action="add", content="The bins go out on Tuesday.")
    assert [r.get("person") for r in on_disk(store.path)] == [ana.id, None]
    listed = client.ok(action="list")
    assert "The bins go out on Tuesday." in listed and "Likes tea." not in listed
    assert "No memory has the id" in client.error(action="delete", id=hers.id)
    assert "No memory has the id" in client.error(action="update", id=hers.id, content="x")
    assert store.get(hers.id) is not None


def test_delete_reaches_only_that_persons_view(client, household):
    _, people, store = household
    ana, leo = people.add("Ana"), people.add("Leo")
    hers = store.add("Likes tea.", person=ana.id)
    his = store.add("Doesn't drink tea.", person=leo.id)
    assert "No memory has the id" in client.error(action="delete", id=his.id, person="Ana")
    assert store.get(his.id) is not None
    gone = client.ok(action="delete", id=hers.id, person="Ana")
    assert gone.startswith(f"Deleted [{hers.id}] (general) Likes tea. — Ana's")
    assert store.get(hers.id) is None


def test_an_unknown_name_is_recorded_for_the_people_page_and_sees_the_household_only(
    client, household
):
    _, people, store = household
    ana = people.add("Ana")
    store.add("Likes tea.", person=ana.id)
    store.add("Our Wi-Fi is called Lighthouse.")
    listed = client.ok(action="list", person="Maya")
    assert "Lighthouse" in listed and "Likes tea." not in listed
    refused = client.error(action="add", content="Is allergic to cats.", person="Maya")
    assert 'No person "Maya" is known yet' in refused and "Nothing was changed" in refused
    assert "Refused (unknown_person)" in refused  # the same code every door gives
    assert len(on_disk(store.path)) == 2
    assert [(i.kind, i.value) for i in people.unlinked()] == [("name", "Maya")]


def test_recall_finds_a_person_by_first_name_and_names_nobody_for_a_shared_one(client, household):
    # Issue 42: recall said "No person "Ana" is known yet" of Ana Souza, and for a name two
    # people share listed both with their ids to whoever called.
    _, people, store = household
    souza = people.add("Ana Souza")
    store.add("Plays the cello.", person=souza.id)
    store.add("Our Wi-Fi is called Lighthouse.")
    theirs = client.ok("recall", person="ana")
    assert "Plays the cello." in theirs and "Lighthouse" in theirs
    lima = people.add("Ana Lima")
    shared = client.ok("recall", person="Ana")
    assert "Plays the cello." not in shared and "Lighthouse" in shared
    assert '2 people of the household go by "Ana"' in shared
    for private in ("Souza", "Lima", souza.id, lima.id):
        assert private not in shared
    assert people.unlinked() == []  # a name people answer to is no stranger
