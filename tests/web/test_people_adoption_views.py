"""People that find themselves, and owners everywhere a fact enters, through the Flask test
client (issue 36): the import preview's owner (the Home Assistant user's person by default),
identities added and a person removed on the People page (never leaking their private
memories into the household), the first-visit prompt, and speakers named on a thread."""

from __future__ import annotations

import re

import pytest

from tests.support.people import LEO, MAYA, as_user
from webapp.stores import ConversationStore, MemoryStore, PeopleStore, ReviewQueue

NOTES = "Likes jazz on Sunday mornings.\nThe bins go out on Tuesday.\n"


@pytest.fixture
def people(settings) -> PeopleStore:
    return PeopleStore.from_settings(settings)


@pytest.fixture
def memories(settings) -> MemoryStore:
    return MemoryStore.from_settings(settings).init()


def selected(body: str, name: str) -> str:
    select = re.search(rf'<select[^>]*name="{name}"[^>]*>(.*?)</select>', body, re.S)
    assert select is not None, f"no select {name}"
    chosen = re.search(r'<option value="([^"]*)" selected', select.group(1))
    assert chosen is not None
    return chosen.group(1)


def test_an_import_is_the_signed_in_persons_by_default(client, people, memories, settings):
    maya = people.add("Maya", identities=(("ha", "u-maya"),))
    form = as_user(client, "get", "/memories/bring/", MAYA).get_data(as_text=True)
    assert selected(form, "owner") == maya.id
    assert selected(client.get("/memories/bring/").get_data(as_text=True), "owner") == "household"

    data = {"pasted": NOTES, "format": "text", "owner": maya.id}
    preview = as_user(client, "post", "/memories/bring/preview", MAYA, data=data)
    body = preview.get_data(as_text=True)
    assert selected(body, "owner") == maya.id
    assert selected(body, "owner-1") == maya.id and selected(body, "owner-2") == maya.id

    data |= {"owner-was": maya.id, "owner-2": "household"}
    assert as_user(client, "post", "/memories/bring/confirm", MAYA, data=data).status_code == 200
    whose = {i.content: i.person for i in ReviewQueue.from_settings(settings).pending()}
    assert whose == {"Likes jazz on Sunday mornings.": maya.id, "The bins go out on Tuesday.": None}


def test_changing_the_owner_for_all_resets_the_lines(client, people, memories):
    leo = people.add("Leo")
    data = {"pasted": NOTES, "format": "text", "owner": leo.id, "owner-was": "household"}
    data["owner-1"] = "household"  # chosen under the household: the new choice for all wins
    body = client.post("/memories/bring/preview", data=data).get_data(as_text=True)
    assert selected(body, "owner-1") == leo.id


def test_an_import_never_proposes_to_change_another_persons_memory(client, people, memories):
    maya = people.add("Maya")
    leo = people.add("Leo")
    memories.add("Likes jazz on Sunday mornings.", person=maya.id)
    data = {"pasted": NOTES, "format": "text", "owner": leo.id}
    body = client.post("/memories/bring/preview", data=data).get_data(as_text=True)
    assert "2 to add · 0 to update · 0 skipped as known" in body


def test_an_identity_is_added_and_removed_on_the_people_page(client, people):
    sam = people.add("Sam")
    answer = client.post("/people/link", data={"person": sam.id, "kind": "slack", "value": "U9"})
    assert answer.status_code == 303
    assert [i.key for i in people.get(sam.id).identities] == [("slack", "U9")]
    body = client.get("/people/").get_data(as_text=True)
    assert f'id="identity-kind-{sam.id}"' in body and "Add identity" in body
    client.post(f"/people/{sam.id}/unlink", data={"kind": "slack", "value": "U9"})
    assert people.get(sam.id).identities == ()


def test_a_person_who_owns_memories_is_not_removed_and_the_page_says_why(client, people, memories):
    sam = people.add("Sam")
    memories.add("Is allergic to penicillin.", person=sam.id)
    page = client.get("/people/").get_data(as_text=True)
    assert "Sam owns 1 private memory" in page
    answer = client.post(f"/people/{sam.id}/remove")
    assert answer.status_code == 422
    assert "still owns 1 private memories" in answer.get_data(as_text=True)
    assert people.get(sam.id) is not None
    assert [(m.content, m.person) for m in memories.get_all()] == [
        ("Is allergic to penicillin.", sam.id)
    ]


def test_a_person_is_removed_and_brought_back(client, people, memories):
    sam = people.add("Sam", identities=(("slack", "U1"),))
    answer = client.post(f"/people/{sam.id}/remove")
    assert answer.status_code == 303 and f"removed={sam.id}" in answer.headers["Location"]
    assert people.get(sam.id) is None
    page = client.get(f"/people/?removed={sam.id}").get_data(as_text=True)
    assert "Removed Sam from the household" in page and "Undo" in page
    assert client.post(f"/people/{sam.id}/restore").status_code == 303
    assert people.get(sam.id) == sam


def test_an_unlinked_home_assistant_user_links_themselves_from_memories(client, people):
    maya = people.add("Maya")
    page = as_user(client, "get", "/memories/", MAYA).get_data(as_text=True)
    assert "Is this you?" in page and "Link yourself" in page
    answer = as_user(
        client, "post", "/people/me/link", MAYA, data={"person": maya.id, "next": "memories"}
    )
    assert answer.status_code == 303
    assert people.resolve("ha", "u-maya") == people.get(maya.id)
    assert "Is this you?" not in as_user(client, "get", "/memories/", MAYA).get_data(as_text=True)
    # Leo cannot claim Maya, now linked to a Home Assistant user
    refused = as_user(client, "post", "/people/me/link", LEO, data={"person": maya.id})
    assert refused.status_code == 422
    assert people.resolve("ha", "u-leo") is None


def test_a_threads_messages_name_their_speaker(client, people, settings):
    maya = people.add("Maya", identities=(("ha", "u-maya"),))
    leo = people.add("Leo", identities=(("ha", "u-leo"),))
    threads = ConversationStore.from_settings(settings)
    threads.add_exchange("ha:kitchen", "I'm Maya, hello.", "Hi Maya.", person=maya.id)
    threads.add_exchange("ha:kitchen", "Leo here.", "Hi Leo.", person=leo.id)
    threads.add_exchange("ha:kitchen", "Who knows.", "Hello.")
    body = as_user(client, "get", "/conversations/thread/ha:kitchen", MAYA).get_data(as_text=True)
    speakers = re.findall(r'<span class="role speaker">([^<]*)</span>', body)
    assert speakers == ["You", "Leo", "User"]
