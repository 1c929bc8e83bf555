"""The store calls curation relies on: MemoryStore.merge and its undo, the dismissal file,
and ReviewQueue.approve with another category or as a new memory."""

from __future__ import annotations

import json
import threading

import pytest

from tests.support.review import approve
from tests.support.stores import memory_store
from webapp.stores import MemoryFullError, MemoryStore, NotFoundError, ReviewQueue
from webapp.stores.dismissals import DismissalStore
from webapp.stores.review import Proposal


@pytest.fixture
def store(tmp_path) -> MemoryStore:
    return memory_store(tmp_path / "memories.json", max_items=10, max_chars=200)


def test_merge_keeps_one_deletes_the_other_and_logs_both(store):
    keep = store.add("Prefers tea", category="preference")
    drop = store.add("The user likes tea")
    result = store.merge(keep.id, drop.id, "Prefers green tea", actor="curator")
    assert [(m.id, m.content, m.category) for m in store.get_all()] == [
        (keep.id, "Prefers green tea", "preference")
    ]
    entries = store.history()[-2:]
    assert [(e["action"], e["id"], e["actor"]) for e in entries] == [
        ("update", keep.id, "curator"),
        ("delete", drop.id, "curator"),
    ]
    assert result.update_hid == entries[0]["hid"] and result.dropped_id == drop.id


def test_undo_merge_restores_both_as_they_were(store):
    keep = store.add("Prefers tea")
    drop = store.add("The user likes tea")
    result = store.merge(keep.id, drop.id, "Prefers green tea")
    store.undo_merge(result.dropped_id, result.update_hid)
    assert sorted(m.content for m in store.get_all()) == ["Prefers tea", "The user likes tea"]
    assert [m.id for m in store.get_all()] == [keep.id, drop.id]


def test_keeping_one_text_as_is_logs_only_the_delete(store):
    keep = store.add("Alarm at 07:00")
    drop = store.add("Alarm at 06:45")
    result = store.merge(keep.id, drop.id, "Alarm at 07:00")
    assert result.update_hid is None
    assert [e["action"] for e in store.history()[-1:]] == ["delete"]
    store.undo_merge(result.dropped_id, result.update_hid)
    assert len(store.get_all()) == 2


def test_merge_refuses_gone_memories_the_same_memory_and_empty_text(store):
    keep = store.add("Prefers tea")
    drop = store.add("The user likes tea")
    with pytest.raises(NotFoundError):
        store.merge(keep.id, "nope", "x")
    with pytest.raises(ValueError):
        store.merge(keep.id, keep.id, "x")
    with pytest.raises(ValueError):
        store.merge(keep.id, drop.id, "   ")
    assert len(store.get_all()) == 2 and len(store.history()) == 2


def test_merged_text_counts_against_the_caps_without_the_deleted_one(store):
    keep = store.add("a" * 90)
    drop = store.add("b" * 90)
    store.merge(keep.id, drop.id, "c" * 180)  # 180 of 200: fits once the other is gone
    with pytest.raises(MemoryFullError):
        other = store.add("d" * 10)
        store.merge(other.id, store.get_all()[0].id, "e" * 201)
    assert sum(len(m.content) for m in store.get_all()) == 190


def test_dismissals_persist_and_are_shared(tmp_path):
    first = DismissalStore(tmp_path / "attention-dismissed.json", lock_timeout=5)
    second = DismissalStore(tmp_path / "attention-dismissed.json", lock_timeout=5)
    assert first.dismiss("duplicate:a+b:123", actor="me") is True
    assert first.dismiss("duplicate:a+b:123") is False
    assert second.keys() == {"duplicate:a+b:123"}
    assert second.restore("duplicate:a+b:123") and first.keys() == frozenset()
    with pytest.raises(ValueError):
        first.dismiss("")


def test_dismissing_from_many_threads_loses_none(tmp_path):
    dismissals = DismissalStore(tmp_path / "attention-dismissed.json", lock_timeout=10)
    threads = [
        threading.Thread(target=dismissals.dismiss, args=(f"stale:m{i}:x",)) for i in range(20)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    saved = json.loads((tmp_path / "attention-dismissed.json").read_text())
    assert len(saved) == 20


@pytest.fixture
def queue(tmp_path, store) -> ReviewQueue:
    return ReviewQueue(tmp_path / "review.json", store, lock_timeout=5)


def test_approve_with_another_category(queue, store):
    [item] = queue.submit([Proposal("add", "Uses neovim", "general")])
    approve(queue, item.id, category="tool")
    assert [(m.content, m.category) for m in store.get_all()] == [("Uses neovim", "tool")]
    with pytest.raises(ValueError):
        [other] = queue.submit([Proposal("add", "Uses tmux", "general")])
        approve(queue, other.id, category="nonsense")
    assert queue.get(other.id).status == "pending"


def test_an_update_approved_as_new_keeps_the_memory_and_undo_puts_it_back(queue, store):
    alarm = store.add("Weekday alarm is 06:45; on weekends not before 09:00")
    [item] = queue.submit(
        [Proposal("update", "Alarm at 07:00", memory_id=alarm.id, current_content=alarm.content)]
    )
    approve(queue, item.id, as_new=True)
    assert sorted(m.content for m in store.get_all()) == [
        "Alarm at 07:00",
        "Weekday alarm is 06:45; on weekends not before 09:00",
    ]
    queue.undo(item.id)
    again = queue.get(item.id)
    assert (again.status, again.action, again.memory_id) == ("pending", "update", alarm.id)
    assert [m.content for m in store.get_all()] == [alarm.content]
