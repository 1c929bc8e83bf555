"""Where each memory came from (``origin``), recently deleted memories, and forgetting what a
conversation left behind — through the real stores and extraction over a data folder."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tests.support.llm import FakeLlmServer, openai_body
from tests.support.review import approve
from tests.support.stores import memory_store
from webapp.extraction import extract_conversation
from webapp.settings import Settings
from webapp.stores import (
    ConversationStore,
    MemoryStore,
    Proposal,
    ReviewQueue,
    derived_from,
    describe_origin,
    forget_conversation,
    undo_forget,
)
from webapp.stores.origin import MAX_EVIDENCE_CHARS, make_origin
from webapp.stores.timefmt import to_iso

THREAD = "slack:C1:1732240000.000100"


@pytest.fixture
def store(data_dir: Path) -> MemoryStore:
    return memory_store(data_dir / "memories.json", max_items=50)


@pytest.fixture
def queue(data_dir: Path, store: MemoryStore) -> ReviewQueue:
    return ReviewQueue(data_dir / "review.json", store)


def on_disk(store: MemoryStore) -> list[dict]:
    return json.loads(store.path.read_text(encoding="utf-8"))


def test_each_way_of_adding_records_how(store):
    typed = store.add("Prefers tea", source="dashboard")
    told = store.add("Has a cat", source="mcp")
    plain = store.add("Likes jazz")
    assert typed.origin == {"how": "dashboard"} and told.origin == {"how": "mcp"}
    assert plain.origin is None
    assert describe_origin(typed.origin) == "typed in the dashboard"
    assert describe_origin(told.origin) == "told through manage_memory"
    assert describe_origin(plain.origin) == "origin not recorded"


def test_records_without_origin_or_with_a_foreign_one_keep_working(store):
    store.path.parent.mkdir(parents=True, exist_ok=True)
    foreign = {"how": "telepathy", "by": "another program"}
    store.path.write_text(
        json.dumps(
            [
                {"id": "a1", "content": "Old fact", "createdAt": 1700000000000},
                {"id": "b2", "content": "Foreign", "createdAt": 1700000000000, "origin": foreign},
                {"id": "c3", "content": "Odd", "createdAt": 1700000000000, "origin": "a string"},
            ]
        ),
        encoding="utf-8",
    )
    assert [m.origin for m in store.get_all()] == [None, None, None]
    store.update("b2", "Foreign, edited")
    store.update("c3", "Odd, edited")
    records = {r["id"]: r for r in on_disk(store)}
    assert "origin" not in records["a1"]
    assert records["b2"]["origin"] == foreign and records["c3"]["origin"] == "a string"


def test_approving_records_conversation_evidence_extractor_and_approver(queue, store):
    [item] = queue.submit(
        [
            Proposal(
                "add",
                "Prefers oolong tea",
                "preference",
                extractor="llm",
                model="openai/gpt-4o-mini",
                evidence="I really prefer oolong tea",
                evidence_at="2026-11-20T08:00:00.000Z",
            )
        ],
        conversation_id=THREAD,
    )
    approved = approve(queue, item.id, actor="alice")
    memory = store.get(approved.applied_memory_id)
    origin = memory.origin
    assert {k: origin[k] for k in origin if k != "approvedAt"} == {
        "how": "extracted",
        "conversationId": THREAD,
        "evidence": "I really prefer oolong tea",
        "evidenceAt": "2026-11-20T08:00:00.000Z",
        "extractor": "llm",
        "model": "openai/gpt-4o-mini",
        "reviewId": item.id,
        "approvedBy": "alice",
    }
    assert origin["approvedAt"].endswith("Z")
    assert describe_origin(origin) == (
        f"extracted by LLM openai/gpt-4o-mini from conversation {THREAD}, approved by alice"
    )
    assert store.history(memory.id)[-1]["actor"] == "alice"


def test_an_extracted_memory_edited_afterwards_says_so_and_by_whom(queue, store):
    [item] = queue.submit(
        [Proposal("add", "Prefers oolong tea", "preference", extractor="llm", model="openai/x")],
        conversation_id=THREAD,
    )
    memory = store.get(approve(queue, item.id, actor="alice").applied_memory_id)
    store.update(memory.id, memory.content, category="general", actor="carol")
    assert "editedBy" not in store.get(memory.id).origin  # a new category keeps the words

    edited = store.update(memory.id, "Prefers green tea, not oolong", actor="bob")
    origin = edited.origin
    assert (origin["how"], origin["approvedBy"], origin["editedBy"]) == (
        "extracted",
        "alice",
        "bob",
    )
    assert origin["editedAt"] == to_iso(edited.updated_at)
    assert describe_origin(origin) == (
        f"extracted by LLM openai/x from conversation {THREAD}, approved by alice, "
        "then edited by bob"
    )
    # The version before the edit comes back with the origin it had.
    [*_, change] = store.history(memory.id)
    assert "editedBy" not in store.restore(change["hid"], actor="bob").origin


def test_a_kept_memory_merged_with_new_words_says_who_edited_it(store):
    keep = store.add("Prefers tea", source="mcp")
    drop = store.add("Likes green tea", source="mcp")
    kept = store.merge(keep.id, drop.id, "Prefers green tea", actor="alice").kept
    assert describe_origin(kept.origin) == "told through manage_memory, then edited by alice"


def test_approving_an_update_records_it_too(queue, store):
    old = store.add("Alarm at 06:45", source="dashboard")
    [item] = queue.submit(
        [Proposal("update", "Alarm at 07:00", memory_id=old.id, current_content=old.content)],
        conversation_id=THREAD,
    )
    approve(queue, item.id, actor="bob")
    origin = store.get(old.id).origin
    assert (origin["how"], origin["action"], origin["approvedBy"], origin["extractor"]) == (
        "extracted",
        "update",
        "bob",
        "rules",
    )
    # The history keeps the origin it had before.
    assert store.history(old.id)[-1]["before"]["origin"] == {"how": "dashboard"}


def test_evidence_is_capped_and_control_characters_dropped():
    origin = make_origin("extracted", evidence="x\x00y" + "z" * 2000, conversationId=["no"])
    assert origin["evidence"].startswith("xyz") and len(origin["evidence"]) == MAX_EVIDENCE_CHARS
    assert "conversationId" not in origin
    with pytest.raises(ValueError, match="Unknown origin"):
        make_origin("magic")


def test_extraction_records_evidence_time_and_rules(settings: Settings):
    conversations = ConversationStore.from_settings(settings)
    conversations.add_exchange(THREAD, "I always water the balcony plants on Sundays.", "Noted.")
    turn = conversations.get_history(THREAD)[0]
    result = extract_conversation(settings, THREAD, caller=None)
    [item] = result.queued
    assert item.extractor == "regex" and item.model is None
    assert item.evidence_at == to_iso(turn.timestamp)
    assert item.conversation_id == THREAD


def test_extraction_by_an_llm_records_provider_and_model(data_dir, tmp_path):
    reply = json.dumps(
        [
            {
                "content": "Waters the plants on Sundays.",
                "category": "workflow",
                "confidence": 0.9,
                "evidence": "water the balcony plants",
            }
        ]
    )
    with FakeLlmServer(openai_body, reply=reply) as llm:
        settings = Settings.from_env(
            environ={
                "MEMORY_DATA_DIR": str(data_dir),
                "MEMORY_LLM_PROVIDER": "openai",
                "MEMORY_LLM_MODEL": "test-model",
                "MEMORY_LLM_BASE_URL": llm.url + "/v1",
                "MEMORY_LLM_API_KEY": "sk-test",
            },
            options_file=tmp_path / "none.json",
        )
        conversations = ConversationStore.from_settings(settings)
        conversations.add_exchange(THREAD, "I water the balcony plants on Sundays.", "Ok.")
        [item] = extract_conversation(settings, THREAD).queued
    assert (item.extractor, item.model) == ("llm", "openai/test-model")
    assert item.evidence_at == to_iso(conversations.get_history(THREAD)[0].timestamp)


def test_auto_mode_records_an_unapproved_extraction(settings: Settings):
    settings = dataclasses.replace(settings, review_mode="auto")
    conversations = ConversationStore.from_settings(settings)
    conversations.add_exchange(THREAD, "I always water the balcony plants on Sundays.", "Noted.")
    [memory] = extract_conversation(settings, THREAD, caller=None).applied
    assert memory.origin["conversationId"] == THREAD and "approvedBy" not in memory.origin
    assert describe_origin(memory.origin).endswith("(auto mode)")


def test_import_records_the_source_and_keeps_an_exported_origin(store):
    exported = {"id": "e1", "content": "From export", "origin": {"how": "mcp"}}
    store.import_records(
        [exported, {"id": "n1", "content": "New"}], actor="carol", source="backup.json"
    )
    assert store.get("e1").origin == {"how": "mcp", "importedFrom": "backup.json"}
    fresh = store.get("n1").origin
    assert (fresh["how"], fresh["importedFrom"], fresh["by"]) == (
        "imported",
        "backup.json",
        "carol",
    )
    assert describe_origin(fresh) == "imported from backup.json"


def test_restore_keeps_the_origin_or_says_restored(store):
    kept = store.add("Prefers tea", source="mcp")
    store.path.write_text(
        json.dumps(on_disk(store) + [{"id": "x9", "content": "No origin", "createdAt": 1}]),
        encoding="utf-8",
    )
    store.delete_many([kept.id, "x9"], actor="dave")
    assert store.restore(kept.id).origin == {"how": "mcp"}
    bare = store.restore("x9", actor="erin").origin
    assert (bare["how"], bare["by"]) == ("restored", "erin")


def test_recently_deleted_lists_deletions_newest_first_until_restored_or_purged(store):
    first, second, third = (store.add(t) for t in ("one", "two", "three"))
    store.delete(first.id, actor="alice")
    store.delete(second.id, actor="bob")
    store.delete(third.id, actor="carol")
    gone = store.recently_deleted()
    assert [(d.memory.content, d.deleted_by) for d in gone] == [
        ("three", "carol"),
        ("two", "bob"),
        ("one", "alice"),
    ]
    store.restore(second.id)
    store.purge(third.id)
    assert [d.memory.id for d in store.recently_deleted()] == [first.id]
    assert store.get(second.id) is not None and not store.history(third.id)


def test_forget_a_conversation_and_undo(queue, store):
    kept = store.add("Typed by hand", source="dashboard")
    a, b, other, waiting = queue.submit(
        [
            Proposal("add", "Fact A"),
            Proposal("add", "Fact B"),
        ],
        conversation_id=THREAD,
    ) + queue.submit(
        [Proposal("add", "Other thread fact"), Proposal("add", "Still waiting")],
        conversation_id="cli:1",
    )
    [pending] = queue.submit([Proposal("add", "Pending from thread")], conversation_id=THREAD)
    for item in (a, b, other):
        approve(queue, item.id)
    found = derived_from(queue, THREAD)
    assert sorted(m.content for m in found.memories) == ["Fact A", "Fact B"]
    assert [i.id for i in found.pending] == [pending.id]

    done = forget_conversation(queue, THREAD, actor="alice")
    assert len(done.memory_ids) == 2 and done.rejected_ids == [pending.id]
    assert sorted(m.content for m in store.get_all()) == ["Other thread fact", kept.content]
    assert queue.get(pending.id).status == "rejected"
    assert queue.get(waiting.id).status == "pending"
    assert derived_from(queue, THREAD).empty

    assert undo_forget(queue, done.memory_ids, done.rejected_ids, actor="alice") == (2, 1)
    assert sorted(m.content for m in derived_from(queue, THREAD).memories) == ["Fact A", "Fact B"]
    assert queue.get(pending.id).status == "pending"
    # Undoing twice finds nothing left to undo.
    assert undo_forget(queue, done.memory_ids, done.rejected_ids, actor="alice") == (0, 0)


def test_forgetting_a_conversation_puts_back_what_a_memory_it_changed_said_before(queue, store):
    """A memory typed by hand and then changed by an approved proposal is not deleted when the
    conversation is forgotten: its earlier text (and origin) come back; Undo re-applies the
    change. One edited by someone since is left alone."""
    alarm = store.add("Alarm at 06:45", source="dashboard")
    coffee = store.add("Drinks two coffees a day", source="dashboard")
    change, other, added = queue.submit(
        [
            Proposal("update", "Alarm at 07:00", memory_id=alarm.id),
            Proposal("update", "Drinks one coffee a day", memory_id=coffee.id),
            Proposal("add", "Walks the dog at 18:00"),
        ],
        conversation_id=THREAD,
    )
    for item in (change, other, added):
        approve(queue, item.id)
    store.update(coffee.id, "Drinks one coffee a day, none after 15:00")  # edited since

    found = derived_from(queue, THREAD)
    assert [m.content for m in found.memories] == ["Walks the dog at 18:00"]
    assert [(r.memory.id, r.before) for r in found.reverted] == [(alarm.id, "Alarm at 06:45")]
    assert [m.id for m in found.kept] == [coffee.id]

    done = forget_conversation(queue, THREAD, actor="alice")
    now = {m.id: m for m in store.get_all()}
    assert now[alarm.id].content == "Alarm at 06:45"
    assert now[alarm.id].origin == {"how": "dashboard"}
    assert now[coffee.id].content == "Drinks one coffee a day, none after 15:00"
    assert "Walks the dog at 18:00" not in [m.content for m in now.values()]
    assert derived_from(queue, THREAD).empty

    assert undo_forget(
        queue, done.memory_ids, done.rejected_ids, done.reverted_hids, actor="alice"
    ) == (2, 0)
    assert store.get(alarm.id).content == "Alarm at 07:00"
    assert store.get(alarm.id).origin["conversationId"] == THREAD
    assert [r.memory.id for r in derived_from(queue, THREAD).reverted] == [alarm.id]
    # Undoing twice changes nothing more.
    assert undo_forget(
        queue, done.memory_ids, done.rejected_ids, done.reverted_hids, actor="alice"
    ) == (0, 0)


def test_restoring_an_earlier_version_brings_back_where_its_text_came_from(store):
    memory = store.add("Prefers tea", source="mcp")
    store.update(memory.id, "Prefers green tea", origin=make_origin("dashboard"))
    [_, change] = store.history(memory.id)
    assert store.restore(change["hid"]).origin == {"how": "mcp"}


def test_memories_from_before_origins_are_found_through_the_review_queue(queue, store):
    [item] = queue.submit([Proposal("add", "Legacy fact")], conversation_id=THREAD)
    approved = approve(queue, item.id)
    records = on_disk(store)
    for record in records:
        record.pop("origin", None)
    store.path.write_text(json.dumps(records), encoding="utf-8")
    assert [m.id for m in derived_from(queue, THREAD).memories] == [approved.applied_memory_id]


def test_deletions_in_the_same_millisecond_list_the_later_first():
    """Two memories deleted within one millisecond (a bulk delete, a fast machine): Recently
    deleted still lists the one deleted last first, by its place in the history log."""
    from webapp.stores.memories import _deleted_from

    ts = "2026-11-25T07:00:00.000Z"
    entries = [
        {"hid": "h1", "id": "keep", "action": "add", "ts": ts, "after": {"content": "Keep me"}},
        {"hid": "h2", "id": "drop", "action": "add", "ts": ts, "after": {"content": "Drop me"}},
        {"hid": "h3", "id": "keep", "action": "delete", "ts": ts, "before": {"content": "Keep me"}},
        {"hid": "h4", "id": "drop", "action": "delete", "ts": ts, "before": {"content": "Drop me"}},
    ]
    listed = [d.memory.content for d in _deleted_from(entries, {})]
    assert listed == ["Drop me", "Keep me"]
