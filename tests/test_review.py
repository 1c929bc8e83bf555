"""ReviewQueue: submit, dedupe, approve (with edits), reject, undo, and remembered rejections."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.review import approve
from tests.support.stores import memory_store
from webapp.stores import (
    ConflictError,
    MemoryFullError,
    MemoryStore,
    NotFoundError,
    Proposal,
    ReviewQueue,
    StoreCorruptError,
)


@pytest.fixture
def store(data_dir: Path) -> MemoryStore:
    return memory_store(data_dir / "memories.json", max_items=3)


@pytest.fixture
def queue(data_dir: Path, store: MemoryStore) -> ReviewQueue:
    return ReviewQueue(data_dir / "review.json", store)


def _add(content: str, **kw) -> Proposal:
    return Proposal(
        "add",
        content,
        kw.pop("category", "preference"),
        confidence=0.9,
        extractor="llm",
        evidence=f"said: {content}",
        **kw,
    )


def test_submitted_item_holds_everything_a_reviewer_needs(queue):
    [item] = queue.submit([_add("Prefers tea")], conversation_id="slack:1")
    assert (
        item.action,
        item.content,
        item.category,
        item.confidence,
        item.extractor,
        item.conversation_id,
        item.evidence,
        item.status,
    ) == ("add", "Prefers tea", "preference", 0.9, "llm", "slack:1", "said: Prefers tea", "pending")
    assert item.created_at.endswith("Z") and item.decided_at is None
    assert queue.get(item.id) == item and queue.get("nope") is None


def test_pending_is_newest_first_and_counted(queue):
    for text in ("one", "two", "three"):
        queue.submit([_add(text)])
    assert [i.content for i in queue.pending()] == ["three", "two", "one"]
    assert queue.pending_count() == 3


def test_the_same_pending_candidate_twice_is_one_item(queue):
    queue.submit([_add("Prefers tea")])
    assert queue.submit([_add("prefers TEA."), _add("Prefers tea")]) == []
    assert queue.pending_count() == 1


def test_approve_add_writes_the_memory_once(queue, store):
    [item] = queue.submit([_add("Prefers tea")])
    approved = approve(queue, item.id, actor="dashboard")
    assert approved.status == "approved" and approved.decided_by == "dashboard"
    assert approve(queue, item.id).status == "approved"
    [memory] = store.get_all()
    assert (memory.content, memory.category, memory.source) == (
        "Prefers tea",
        "preference",
        "extracted",
    )
    assert queue.pending() == [] and queue.decided()[0].id == item.id


def test_approve_with_edited_content(queue, store):
    [item] = queue.submit([_add("Prefers tea")])
    approve(queue, item.id, content="  Prefers green tea without sugar  ")
    assert [m.content for m in store.get_all()] == ["Prefers green tea without sugar"]


def test_approve_with_empty_edit_is_refused_and_item_stays_pending(queue):
    [item] = queue.submit([_add("Prefers tea")])
    with pytest.raises(ValueError):
        approve(queue, item.id, content="   ")
    assert queue.get(item.id).status == "pending"


def test_approve_update_changes_that_memory(queue, store):
    memory = store.add("User prefers vim", category="tool")
    [item] = queue.submit(
        [
            Proposal(
                "update",
                "User prefers neovim",
                "tool",
                memory_id=memory.id,
                current_content=memory.content,
            )
        ]
    )
    assert (item.memory_id, item.current_content) == (memory.id, "User prefers vim")
    approve(queue, item.id)
    assert store.get(memory.id).content == "User prefers neovim"


def test_approve_delete_removes_that_memory(queue, store):
    memory = store.add("Old fact")
    [item] = queue.submit([Proposal("delete", "Old fact", memory_id=memory.id)])
    approve(queue, item.id)
    assert store.get(memory.id) is None


def test_full_store_keeps_the_item_pending(queue, store):
    for text in ("a", "b", "c"):
        store.add(f"fact {text}")
    [item] = queue.submit([_add("Prefers tea")])
    with pytest.raises(MemoryFullError):
        approve(queue, item.id)
    assert queue.get(item.id).status == "pending" and len(store.get_all()) == 3


def test_reject_is_idempotent_and_remembered(queue, store):
    [item] = queue.submit([_add("Prefers hallway lights at 30% after 22:00")])
    assert queue.reject(item.id).status == "rejected"
    assert queue.reject(item.id).status == "rejected"
    assert approve(queue, item.id).status == "rejected"
    assert store.get_all() == []
    assert queue.submit([_add("prefers the hallway lights at 30% after 22:00!")]) == []
    [different] = queue.submit([_add("Prefers hallway lights at 50% after 22:00")])
    assert different.status == "pending"


def test_rejected_chinese_fact_is_not_proposed_again(queue):
    [item] = queue.submit([_add("我喜歡喝無糖綠茶")])
    queue.reject(item.id)
    assert queue.submit([_add("我喜歡喝無糖綠茶。")]) == []


def test_unknown_item_is_not_found(queue):
    for decide in (lambda item_id: approve(queue, item_id), queue.reject, queue.undo):
        with pytest.raises(NotFoundError):
            decide("missing")


def test_undo_approved_add_deletes_the_memory_and_reopens(queue, store):
    [item] = queue.submit([_add("Prefers tea")])
    approve(queue, item.id)
    reopened = queue.undo(item.id)
    assert reopened.status == "pending" and reopened.decided_at is None
    assert store.get_all() == []
    approve(queue, item.id)
    assert [m.content for m in store.get_all()] == ["Prefers tea"]


def test_undo_approved_update_restores_the_old_content(queue, store):
    memory = store.add("User prefers vim", category="tool")
    [item] = queue.submit(
        [
            Proposal(
                "update",
                "User prefers neovim",
                "tool",
                memory_id=memory.id,
                current_content=memory.content,
            )
        ]
    )
    approve(queue, item.id)
    queue.undo(item.id)
    assert store.get(memory.id).content == "User prefers vim"


def test_undo_approved_update_refuses_to_clobber_a_later_edit(queue, store):
    memory = store.add("User prefers vim")
    [item] = queue.submit(
        [
            Proposal(
                "update", "User prefers neovim", memory_id=memory.id, current_content=memory.content
            )
        ]
    )
    approve(queue, item.id)
    store.update(memory.id, "User prefers helix")
    with pytest.raises(ConflictError):
        queue.undo(item.id)
    assert queue.get(item.id).status == "approved"


def test_undo_approved_delete_restores_the_memory(queue, store):
    memory = store.add("Old fact")
    [item] = queue.submit([Proposal("delete", "Old fact", memory_id=memory.id)])
    approve(queue, item.id)
    queue.undo(item.id)
    assert store.get(memory.id).content == "Old fact"


def test_undo_reject_returns_to_pending_and_allows_resubmission_dedupe(queue):
    [item] = queue.submit([_add("Prefers tea")])
    queue.reject(item.id)
    assert queue.undo(item.id).status == "pending"
    assert queue.undo(item.id).status == "pending"
    assert queue.submit([_add("Prefers tea")]) == []


def test_file_is_a_json_array_in_camel_case(queue, data_dir):
    import json

    queue.submit([_add("Prefers tea")], conversation_id="slack:1")
    [record] = json.loads((data_dir / "review.json").read_text("utf-8"))
    assert {
        "id",
        "action",
        "content",
        "category",
        "confidence",
        "extractor",
        "conversationId",
        "evidence",
        "memoryId",
        "currentContent",
        "status",
        "createdAt",
        "decidedAt",
        "decidedBy",
    } <= set(record)


def test_damaged_file_is_never_overwritten(queue, data_dir):
    path = data_dir / "review.json"
    path.write_bytes(b"[{broken")
    with pytest.raises(StoreCorruptError):
        queue.submit([_add("Prefers tea")])
    assert path.read_bytes() == b"[{broken"


def test_two_queue_objects_see_each_others_decisions(data_dir, store):
    first = ReviewQueue(data_dir / "review.json", store)
    second = ReviewQueue(data_dir / "review.json", store)
    [item] = first.submit([_add("Prefers tea")])
    approve(second, item.id)
    assert approve(first, item.id).status == "approved"
    assert len(store.get_all()) == 1


def test_approving_a_fact_someone_stored_meanwhile_adds_no_copy_and_undo_keeps_theirs(queue, store):
    """The assistant (MCP) remembered the fact while it waited for review."""
    [item] = queue.submit([_add("Prefers tea")])
    theirs = store.add("Prefers tea", source="mcp")
    approved = approve(queue, item.id)
    assert approved.status == "approved" and approved.applied_memory_id == theirs.id
    assert [m.id for m in store.get_all()] == [theirs.id]
    queue.undo(item.id)
    assert [m.id for m in store.get_all()] == [theirs.id]
    assert queue.get(item.id).status == "pending"


def _update_item(queue, store, old="User prefers vim", new="User prefers neovim"):
    memory = store.add(old, category="tool")
    [item] = queue.submit(
        [Proposal("update", new, "tool", memory_id=memory.id, current_content=memory.content)]
    )
    return memory, item


def test_approve_with_the_seen_version_refuses_when_the_memory_changed_since(queue, store):
    memory, item = _update_item(queue, store)
    seen = store.get(memory.id).version  # what the Review page showed
    store.update(memory.id, "User prefers helix")  # another tab, an MCP client
    with pytest.raises(ConflictError) as caught:
        approve(queue, item.id, expected=seen)
    assert caught.value.code == "conflict"
    assert caught.value.current.content == "User prefers helix"
    assert store.get(memory.id).content == "User prefers helix"
    assert queue.get(item.id).status == "pending"


def test_approve_with_an_unchanged_version_replaces_and_without_one_as_before(queue, store):
    memory, item = _update_item(queue, store)
    approve(queue, item.id, expected=store.get(memory.id).version)
    assert store.get(memory.id).content == "User prefers neovim"
    other, later = _update_item(queue, store, "User lives in Taipei", "User lives in Tainan")
    store.update(other.id, "User lives in Kaohsiung")
    approve(queue, later.id)  # CLI, MCP, host programs: no version, today's behaviour
    assert store.get(other.id).content == "User lives in Tainan"
