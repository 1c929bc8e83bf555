"""Issue 23 in the dashboard: a deleted memory is remembered as deleted; its row offers "Don't
propose this again" and "Delete forever"; Review marks a fact a person deleted before."""

from __future__ import annotations

from webapp.stores import MemoryStore, Proposal, ReviewQueue
from webapp.stores.tombstones import TombstoneStore


def text(response) -> str:
    return response.get_data(as_text=True)


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
