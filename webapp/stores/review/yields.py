"""What a conversation left in memory (``derived_from``), and forgetting it: its memories deleted
or put back, its proposals rejected (``forget_conversation``), and that undone (``undo_forget``).
Memory is written through the queue's memory store, only while a memory is as it was seen."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConflictError, NotFoundError
from ..records import Memory
from .items import ReviewItem
from .memory import MemoryBook
from .queue import ReviewQueue


@dataclass(frozen=True)
class Reverted:
    """A memory that existed before the conversation and was changed by one of its proposals:
    forgetting the conversation puts back what it said before (``before``, from the history
    entry ``hid``) instead of deleting it."""

    memory: Memory
    before: str  # its text before the conversation changed it
    hid: str  # the history entry of that change


@dataclass(frozen=True)
class DeletedByIt:
    """A memory a change of mind in the conversation deleted (an approved ``delete``
    proposal): forgetting the conversation brings it back."""

    memory: Memory  # as it was before the deletion
    item_id: str  # the approved review item
    approved_by: str | None


@dataclass(frozen=True)
class ConversationYield:
    """What a conversation left behind: memories it added, memories it changed (and whether
    they were edited since), and proposals still pending."""

    conversation_id: str
    memories: list[Memory]  # added from the conversation: forgetting deletes them
    pending: list[ReviewItem]
    reverted: list[Reverted] = field(default_factory=list)  # changed by it: put back
    kept: list[Memory] = field(default_factory=list)  # changed by it, then edited: left alone
    deleted: list[DeletedByIt] = field(default_factory=list)  # deleted by it: brought back

    @property
    def empty(self) -> bool:
        return not self.memories and not self.pending and not self.reverted and not self.deleted

    @property
    def count(self) -> int:
        """How many things forgetting would do."""
        return len(self.memories) + len(self.pending) + len(self.reverted) + len(self.deleted)

    def versions(self) -> dict[str, str]:
        """Each memory forgetting would delete or put back, and its version as seen now: what
        ``forget_conversation(seen=…)`` is told, so it touches nothing that changed since."""
        shown = [*self.memories, *(change.memory for change in self.reverted)]
        return {memory.id: memory.version for memory in shown}


@dataclass(frozen=True)
class Forgotten:
    """What ``forget_conversation`` did, enough to undo it."""

    conversation_id: str
    memory_ids: list[str]  # deleted (restorable from the history log)
    rejected_ids: list[str]  # review items rejected
    reverted_hids: list[str] = field(default_factory=list)  # changes taken back
    # Changed since they were seen (edited elsewhere meanwhile), so left as they are now.
    left_alone: list[Memory] = field(default_factory=list)
    # Approved deletions taken back (the memory is back; the item is rejected now).
    undeleted_ids: list[str] = field(default_factory=list)


def _change_by(store: MemoryBook, memory: Memory, conversation_id: str) -> dict[str, Any] | None:
    """The history entry in which the conversation changed a memory that was there before it
    (None: the conversation added the memory, or its history is gone)."""
    entries: list[dict[str, Any]] = store.history(memory.id)
    for entry in reversed(entries):
        after, before = entry.get("after"), entry.get("before")
        if (
            not isinstance(after, dict)
            or (after.get("origin") or {}).get("conversationId") != conversation_id
        ):
            continue
        if entry.get("action") != "update" or not isinstance(before, dict):
            return None
        if (before.get("origin") or {}).get("conversationId") == conversation_id:
            continue  # an earlier change from the same conversation: look further back
        found: dict[str, Any] = entry
        return found
    return None


def derived_from(queue: ReviewQueue, conversation_id: str) -> ConversationYield:
    """The memories whose origin names this conversation (or that an approval of one of its
    proposals added, for memories from before origins were recorded) and its pending items.

    A memory the conversation only changed is told apart from one it added: forgetting puts
    the earlier text back (or, if someone edited it since, leaves it alone)."""
    applied = {
        item.applied_memory_id
        for item in queue.decided()
        if item.conversation_id == conversation_id
        and item.status == "approved"
        and item.applied_action == "add"
        and item.applied_memory_id
    }
    memories: list[Memory] = []
    reverted: list[Reverted] = []
    kept: list[Memory] = []
    for memory in queue.store.get_all():
        origin = memory.origin or {}
        if origin.get("conversationId") == conversation_id:
            change = (
                _change_by(queue.store, memory, conversation_id)
                if origin.get("action") == "update"
                else None
            )
            if change is None:
                memories.append(memory)
            elif change["after"].get("content") == memory.content:
                reverted.append(
                    Reverted(memory, str(change["before"].get("content")), change["hid"])
                )
            else:
                kept.append(memory)
        elif memory.id in applied and "conversationId" not in origin:
            memories.append(memory)
    pending = [item for item in queue.pending() if item.conversation_id == conversation_id]
    deleted = []
    for item in queue.decided():
        if (
            item.conversation_id == conversation_id
            and item.status == "approved"
            and item.applied_action == "delete"
            and item.applied_memory_id
        ):
            gone = queue.store.deleted(item.applied_memory_id)
            if gone is not None:
                deleted.append(DeletedByIt(gone, item.id, item.decided_by))
    return ConversationYield(conversation_id, memories, pending, reverted, kept, deleted)


def forget_conversation(
    queue: ReviewQueue,
    conversation_id: str,
    *,
    actor: str = "review",
    seen: Mapping[str, str] | None = None,
) -> Forgotten:
    """Delete every memory the conversation added, put back what the memories it changed said
    before, and reject its pending proposals. Bringing back what its approved deletions took
    is a decision undone in two stores, the curator's (``curator.threads``).

    A memory is deleted or put back only while it is as it was seen: as ``derived_from``
    finds it when this starts, and, with ``seen`` (``ConversationYield.versions()`` of what
    the person was shown), at that version — checked under the file's lock at the write. One
    changed since (by another process, the MCP server, another tab) is left as it is and
    listed in ``left_alone``; with ``seen``, so is one the person was not shown.
    """
    found = derived_from(queue, conversation_id)
    store = queue.store
    left_alone: list[Memory] = []

    def as_shown(memory: Memory) -> bool:
        if seen is None or seen.get(memory.id) == memory.version:
            return True
        left_alone.append(memory)
        return False

    if seen is not None:  # shown as going, edited since: now among the memories that stay
        left_alone.extend(m for m in found.kept if m.id in seen)
    deletion = store.delete_unchanged({m.id: m for m in found.memories if as_shown(m)}, actor=actor)
    left_alone.extend(deletion.left_alone)
    reverted = []
    for change in found.reverted:
        if not as_shown(change.memory):
            continue
        try:
            store.restore(change.hid, actor=actor, expected=change.memory)
        except ConflictError as exc:
            left_alone.append(exc.current)
            continue
        except KeyError:
            continue  # deleted meanwhile, or its history was purged
        reverted.append(change.hid)
    rejected = []
    for item in found.pending:
        try:
            if queue.reject(item.id, actor=actor).status == "rejected":
                rejected.append(item.id)
        except NotFoundError:
            continue  # decided and pruned elsewhere meanwhile
    return Forgotten(conversation_id, deletion.deleted, rejected, reverted, left_alone)


def undo_forget(
    queue: ReviewQueue,
    memory_ids: Iterable[str],
    rejected_ids: Iterable[str],
    reverted_hids: Iterable[str] = (),
    *,
    actor: str,
) -> tuple[int, int]:
    """Bring back forgotten memories (and the conversation's changes taken back) and make the
    rejected proposals pending again.

    Returns (memories restored, proposals pending again); ids with nothing to undo are skipped,
    and a change is re-applied only while the memory still says what forgetting put back.
    Approving the conversation's deletions again is the curator's (``curator.threads``).
    """
    restored = 0
    for memory_id in memory_ids:
        if queue.store.get(memory_id) is not None:
            continue
        try:
            queue.store.restore(memory_id, actor=actor)
        except KeyError:
            continue
        restored += 1
    for hid in reverted_hids:
        entry = queue.store.change(hid)
        if entry is None or not isinstance(entry.get("before"), dict):
            continue
        before, after = entry["before"], entry["after"]
        current = queue.store.get(str(after.get("id")))
        if current is None or current.content != before.get("content"):
            continue
        try:
            reapplied = queue.store.update(
                current.id,
                str(after.get("content")),
                expected_updated_at=current.version,
                category=after.get("category") or None,
                actor=actor,
                origin=after.get("origin") if isinstance(after.get("origin"), dict) else None,
            )
        except ConflictError:
            continue  # edited meanwhile: that edit stays
        if reapplied is not None:
            restored += 1
    reopened = 0
    for item_id in rejected_ids:
        item = queue.get(item_id)
        if item is None or item.status != "rejected":
            continue
        queue.undo(item_id, actor=actor)
        reopened += 1
    return restored, reopened
