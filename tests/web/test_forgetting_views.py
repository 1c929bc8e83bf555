"""Issue 23 in the dashboard: a deleted memory is remembered as deleted; its row offers "Don't
propose this again" and "Delete forever"; Review marks a fact a person deleted before."""

from __future__ import annotations

import re

from webapp.stores import MemoryStore, Proposal, ReviewQueue
from webapp.stores.tombstones import TombstoneStore


def text(response) -> str:
    return response.get_data(as_text=True)


def words(response) -> str:
    """The page's text without its tags."""
    return re.sub(r"<[^>]+>", "", text(response))


def test_delete_remembers_who_deleted_it_and_offers_both_choices(client, settings):
    store = MemoryStore.from_settings(settings)
    memory = store.add("Drinks green tea without sugar", category="preference")
    html = text(client.post(f"/memories/{memory.id}/delete", htmx=True))
    assert "t propose this again" in html and "Delete forever" in html
    tombstone = TombstoneStore.from_settings(settings).for_memory(memory.id)
    assert tombstone is not None and tombstone.deleted_by == "dashboard"
    assert tombstone.via == "dashboard" and not tombstone.no_propose

    answer = client.post(f"/memories/{memory.id}/forget", htmx=True, data={"no_propose": "1"})
    assert answer.status_code == 200 and "will not be proposed again" in text(answer)
    assert TombstoneStore.from_settings(settings).for_memory(memory.id).no_propose


def test_delete_forever_leaves_no_file_holding_the_words(client, settings, data_dir):
    store = MemoryStore.from_settings(settings)
    memory = store.add("Drinks green tea without sugar", category="preference")
    client.post(f"/memories/{memory.id}/delete", htmx=True)
    answer = client.post(f"/memories/{memory.id}/forget", htmx=True, data={"forever": "1"})
    assert answer.status_code == 200 and "Deleted forever" in text(answer)
    holding = [
        p for p in data_dir.rglob("*") if p.is_file() and b"green tea without" in p.read_bytes()
    ]
    assert holding == []
    tombstone = TombstoneStore.from_settings(settings).for_memory(memory.id)
    assert tombstone.forever and tombstone.no_propose and tombstone.fingerprints
    # nothing is left to restore
    client.post("/memories/restore", data={"ref": memory.id})
    assert store.get(memory.id) is None


def test_review_marks_a_fact_deleted_before_with_when_who_and_the_words(client, settings):
    store = MemoryStore.from_settings(settings)
    memory = store.add("Goes to bed around 23:00")
    client.post(f"/memories/{memory.id}/delete", htmx=True)
    tombstone = TombstoneStore.from_settings(settings).for_memory(memory.id)
    ReviewQueue.from_settings(settings, store).submit(
        [Proposal("add", "Usually goes to sleep by eleven", tombstone_id=tombstone.id)]
    )
    html = text(client.get("/review/"))
    assert "You deleted this on" in html
    assert "Goes to bed around 23:00" in html and "by dashboard" in html


def _deleted_by_a_change_of_mind(settings):
    from webapp.curator import Curator
    from webapp.stores import ConversationStore

    store = MemoryStore.from_settings(settings)
    memory = store.add("Drinks oolong tea every morning", category="preference")
    ConversationStore.from_settings(settings).add_exchange(
        "slack:C1:17.1", "I don't drink oolong tea anymore.", "Noted."
    )
    queue = ReviewQueue.from_settings(settings, store)
    (item,) = queue.submit(
        [Proposal("delete", memory.content, memory_id=memory.id, evidence="no oolong")],
        conversation_id="slack:C1:17.1",
    )
    Curator.from_settings(settings).approve(item.id, actor="alice")
    return store, queue, memory, item


def test_a_conversation_lists_what_its_change_of_mind_deleted_and_forgetting_brings_it_back(
    client, settings
):
    store, queue, memory, item = _deleted_by_a_change_of_mind(settings)
    html = words(client.get("/conversations/derived/slack:C1:17.1"))
    assert "1 memory deleted by this conversation" in html
    assert "Drinks oolong tea every morning" in html and "deletion approved by alice" in html
    preview = text(client.get("/conversations/forget/slack:C1:17.1"))
    assert "1 memory it deleted comes back" in preview

    done = client.post("/conversations/forget/slack:C1:17.1")
    assert done.status_code == 303 and f"undeleted={item.id}" in done.headers["Location"]
    assert store.get(memory.id) is not None
    assert queue.get(item.id).status == "rejected"
    assert TombstoneStore.from_settings(settings).active(m.id for m in store.get_all()) == []

    undo = client.post("/conversations/unforget/slack:C1:17.1", data={"undeleted_id": item.id})
    assert undo.status_code == 303
    assert store.get(memory.id) is None and queue.get(item.id).status == "approved"


def test_recently_deleted_names_the_conversation_and_the_approver(client, settings):
    _deleted_by_a_change_of_mind(settings)
    html = text(client.get("/memories/deleted"))
    assert "Approved by alice" in words(client.get("/memories/deleted"))
    assert "a change of mind in" in html and "/conversations/thread/slack:C1:17.1" in html


def test_importing_an_export_that_holds_a_deleted_fact_sends_it_to_review_marked(client, settings):
    import json

    store = MemoryStore.from_settings(settings)
    memory = store.add("Drinks green tea without sugar", category="preference")
    exported = store.export().decode("utf-8")
    client.post(f"/memories/{memory.id}/delete", htmx=True)
    answer = client.post("/memories/import/confirm", htmx=True, data={"payload": exported})
    assert "1 not imported: you deleted it before." in text(answer)
    assert store.get_all() == []
    (item,) = ReviewQueue.from_settings(settings, store).pending()
    tombstone = TombstoneStore.from_settings(settings).for_memory(memory.id)
    assert item.tombstone_id == tombstone.id and item.content == memory.content
    other = [{"content": "Speaks Dutch"}]
    client.post("/memories/import/confirm", htmx=True, data={"payload": json.dumps(other)})
    assert [m.content for m in store.get_all()] == ["Speaks Dutch"]
