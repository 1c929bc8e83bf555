"""Forget what a conversation gave, and undo that: the stores' part (``stores.forget_conversation``,
``stores.undo_forget``) and the decisions it takes back or makes again, through the curator's one
undo and one approve (``reviewing``), so a deletion brought back is no longer remembered as
forgotten and one approved again is, and nothing is approved past the tombstone or the secrets
check."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from ..stores import (
    Forgotten,
    MemoryFullError,
    NotFoundError,
    derived_from,
    forget_conversation,
    undo_forget,
)
from ..stores.conversations import Stored
from . import reviewing
from .people import EVERYONE, check_person, check_thread, ref_in_view

if TYPE_CHECKING:
    from .core import Curator


def forget_thread(
    curator: Curator,
    conversation_id: str,
    *,
    seen: Mapping[str, str] | None = None,
    actor: str | None = None,
) -> Forgotten:
    """Take back what a conversation added or changed, only as the person saw it
    (``stores.forget_conversation``), and what its approved deletions took: each decision
    undone (``reviewing.undo``: the memory back, its tombstone lifted), then rejected.
    Another person's thread is unknown, and so, within a view, is one that left anything
    outside it (``conversation_not_found``)."""
    curator.check_thread(conversation_id)
    who = actor or curator.actor
    deleted = derived_from(curator._review_queue, conversation_id).deleted
    done = forget_conversation(curator._review_queue, conversation_id, actor=who, seen=seen)
    undeleted = []
    for gone in deleted:
        try:
            reviewing.undo(curator, gone.item_id, actor=who)
            curator._review_queue.reject(gone.item_id, actor=who)
        except (NotFoundError, MemoryFullError):
            continue  # pruned or deleted forever meanwhile, or no room: it stays deleted
        undeleted.append(gone.item_id)
    return replace(done, undeleted_ids=undeleted)


def undo_forget_thread(
    curator: Curator,
    memory_ids: Iterable[str],
    rejected_ids: Iterable[str],
    reverted_hids: Iterable[str] = (),
    *,
    undeleted_ids: Iterable[str] = (),
    actor: str | None = None,
) -> tuple[int, int]:
    """Undo ``forget_thread``, of the memories and proposals this curator's view may see:
    the stores' part (``stores.undo_forget``), and the conversation's deletions approved
    again through the curator's approve (``reviewing.approve``: remembered as forgotten,
    refused when the fact was deleted forever meanwhile). (memories restored, proposals
    pending again)."""
    who = actor or curator.actor
    queue = curator._review_queue
    if curator.view is not EVERYONE:
        memory_ids = [i for i in memory_ids if ref_in_view(curator, i)]
        undeleted_ids = [i for i in undeleted_ids if curator.sees_item(queue.get(i))]
        reverted_hids = [h for h in reverted_hids if ref_in_view(curator, h)]
        rejected_ids = [i for i in rejected_ids if curator.sees_item(queue.get(i))]
    restored, reopened = undo_forget(queue, memory_ids, rejected_ids, reverted_hids, actor=who)
    for item_id in undeleted_ids:
        item = queue.get(item_id)
        if item is None or item.status != "rejected" or item.action != "delete":
            continue
        try:
            reviewing.refuse_forgotten(curator, item)
        except NotFoundError:
            continue  # deleted forever meanwhile: it stays rejected
        queue.undo(item_id, actor=who)  # a rejection: the record only
        if reviewing.approve(curator, item_id, actor=who).applied_action == "delete":
            restored += 1
    return restored, reopened


def keep_exchange(
    curator: Curator,
    *,
    conversation_id: str,
    said: str,
    reply: str,
    person: str | None = None,
) -> Stored:
    """Keep what was said and the assistant's reply at the end of the thread
    ``conversation_id``, stamped now, as said by ``person`` (None: nobody known), for
    extraction to read (``ConversationStore.add_exchange``). Another person's thread is
    unknown (``conversation_not_found``), and nothing is kept as said by a person outside the
    curator's view (``person_unknown``)."""
    check_person(person, curator.view)
    check_thread(curator, conversation_id)
    return curator._conversation_store.add_exchange(conversation_id, said, reply, person=person)
