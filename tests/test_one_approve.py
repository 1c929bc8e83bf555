"""One approve: every flow that turns a proposal into a memory, or takes an approval back, does it
through the curator's approve and undo (``Curator.approve``, ``Curator.undo_decision``), so the
tombstone, the secrets check and Delete forever hold in each: forgetting a conversation and
undoing that, and approving a whole import."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.data import make_settings
from tests.support.review import queue_fact
from webapp.curator import Curator
from webapp.stores import NotFoundError, SecretInputError

THREAD = "slack:C01:1700"


@pytest.fixture
def curator(tmp_path: Path) -> Curator:
    return Curator.from_settings(make_settings(tmp_path), actor="alice")


def _deleted_by_the_conversation(curator: Curator) -> tuple[str, str]:
    """A memory from before the conversation, deleted by approving its change of mind:
    (memory id, review item id)."""
    memory = curator.remember("Has a cat called Mochi")
    item = queue_fact(
        curator.settings,
        "Has a cat called Mochi",
        action="delete",
        memory_id=memory.id,
        conversation_id=THREAD,
    )
    assert curator.approve(item.id).applied_action == "delete"
    assert curator.tombstones.for_memory(memory.id) is not None  # remembered as forgotten
    return memory.id, item.id


def test_forgetting_the_conversation_brings_its_deletion_back_no_longer_forgotten(curator):
    memory_id, item_id = _deleted_by_the_conversation(curator)
    done = curator.forget_conversation(THREAD)
    assert done.undeleted_ids == [item_id]
    assert curator.memories.get(memory_id) is not None
    # The memory is back, so it is no longer remembered as forgotten (the curator's undo lifts
    # the tombstone): a later proposal of the same fact is not marked "you deleted this".
    assert curator.tombstones.for_memory(memory_id) is None


def test_undoing_the_forget_approves_the_deletion_again_with_its_tombstone(curator):
    memory_id, _ = _deleted_by_the_conversation(curator)
    done = curator.forget_conversation(THREAD)
    restored, _ = curator.undo_forget_conversation(
        memory_ids=done.memory_ids,
        rejected_ids=done.rejected_ids,
        reverted_hids=done.reverted_hids,
        undeleted_ids=done.undeleted_ids,
        actor="bob",
    )
    assert restored == 1 and curator.memories.get(memory_id) is None
    # Deleted again through the curator's approve: remembered as forgotten, as the first time,
    # by who deleted it this time.
    tombstone = curator.tombstones.for_memory(memory_id)
    assert tombstone is not None
    assert (tombstone.deleted_by, tombstone.conversation_id) == ("bob", THREAD)


def test_undoing_the_forget_leaves_a_fact_deleted_forever_since_alone(curator):
    memory_id, item_id = _deleted_by_the_conversation(curator)
    done = curator.forget_conversation(THREAD)
    curator.forget(memory_id, forever=True)
    restored, _ = curator.undo_forget_conversation(
        memory_ids=done.memory_ids,
        rejected_ids=done.rejected_ids,
        reverted_hids=done.reverted_hids,
        undeleted_ids=done.undeleted_ids,
    )
    assert restored == 0
    assert curator.memories.get(memory_id) is None and curator.review.get(item_id) is None
    assert curator.tombstones.for_memory(memory_id).forever


def test_approving_an_import_keeps_a_secret_pending_and_passes_over_a_fact_deleted_forever(
    curator,
):
    gone = curator.remember("Takes the 8:15 train to work")
    curator.forget(gone.id, forever=True)
    forever = curator.tombstones.for_memory(gone.id)
    source = "mem0, export.json, 2026-11-01"
    secret = queue_fact(
        curator.settings, "The alarm code is 4721", imported_from=source, conversation_id=None
    )
    again = queue_fact(
        curator.settings,
        "Takes the 8:15 train to work",
        imported_from=source,
        tombstone_id=forever.id,
        conversation_id=None,
    )
    plain = queue_fact(curator.settings, "Likes oolong tea", imported_from=source)
    decision = curator.approve_source(source)
    assert (decision.approved, decision.secrets) == (1, 1)
    assert curator.review.get(secret.id).status == "pending"
    assert curator.review.get(again.id).status == "pending"
    assert curator.review.get(plain.id).status == "approved"
    # The way Curator.approve refuses each one by one.
    with pytest.raises(SecretInputError):
        curator.approve(secret.id)
    assert [m.content for m in curator.memories.get_all()] == ["Likes oolong tea"]


def test_a_proposal_is_not_approved_as_someone_nobody_is(curator):
    """Whose a fact is, chosen on approval, names a person of the household: the curator
    refuses anyone else (``person_unknown``) for every door, not the dashboard's form alone."""
    item = queue_fact(curator.settings, "Likes oolong tea")
    with pytest.raises(NotFoundError) as refused:
        curator.approve(item.id, person="nobody")
    assert refused.value.code == "person_unknown"
    assert curator.review.get(item.id).status == "pending" and curator.memories.get_all() == []
    leo = curator.add_person("Leo")
    assert curator.approve(item.id, person=leo.id).status == "approved"
    assert [m.person for m in curator.memories.get_all()] == [leo.id]
