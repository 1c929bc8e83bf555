"""Approve, reject and undo proposals: the queue's decision first, then the memory write."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..extraction.attribution import OwnerUndecidedError
from ..stores import DuplicateMemoryError, NotFoundError, ReviewItem, check_secret
from ..stores.memories import KEEP, Keep
from ..stores.review import Proposal, review_origin
from ..stores.timefmt import read_time
from .base import CuratorBase
from .errors import DeletedForeverError
from .people import EVERYONE, View, check_person, item_in_view, unknown_person


def refuse_forgotten(curator: CuratorBase, item: ReviewItem) -> None:
    """DeletedForeverError when ``item`` is about a memory deleted forever (the approval
    that added it, an update or forget of it, a proposal marked with its tombstone): undoing
    or approving it would bring the fact back. Only a run killed before it took the item out
    leaves one (the next start finishes it)."""
    tombstones = curator._tombstone_store
    for memory_id in (item.applied_memory_id, item.memory_id):
        if tombstones.forever_of(memory_id) is not None:
            raise DeletedForeverError(str(memory_id))
    marked = tombstones.get(item.tombstone_id) if item.tombstone_id else None
    if marked is not None and marked.forever:
        raise DeletedForeverError(marked.memory_id)


def visible_item(curator: CuratorBase, item_id: str) -> ReviewItem:
    """The proposal ``item_id`` when the curator's view may see it (``item_in_view``);
    NotFoundError (``review_item_not_found``) otherwise: another person's proposal is as
    unknown as one that does not exist. One that Delete forever took out of the queue is
    DeletedForeverError, within the view of whose the forgotten memory was."""
    item = curator._review_queue.get(item_id)
    if item is None:
        took = curator._tombstone_store.took_out(item_id)
        view = curator.view
        if took is not None and (view is EVERYONE or took.person in (None, view)):
            raise DeletedForeverError(took.memory_id)
    if item is None or not item_in_view(item, curator.view):
        raise NotFoundError(
            f"No review item with id {item_id!r}.",
            code="review_item_not_found",
            id=repr(item_id),
        )
    return item


def _write_memory(
    curator: CuratorBase,
    record: dict[str, Any],
    edited: str | None,
    *,
    actor: str,
    expected: str | None,
) -> dict[str, Any]:
    """Make an approved item's change in memory; return what the queue records for undo
    (``ReviewQueue.settle``). An ``update`` replaces the memory only while it is still at
    version ``expected`` (when given)."""
    store = curator._memory_store
    text = edited or record["content"]
    action, memory_id = record["action"], record.get("memoryId")
    if action == "delete" and memory_id:
        if not store.delete(memory_id, actor=actor):
            # Gone already (deleted elsewhere meanwhile): undo must not bring it back.
            return {"appliedMemoryId": memory_id, "appliedContent": None, "appliedAction": "none"}
        return {"appliedMemoryId": memory_id, "appliedContent": None, "appliedAction": "delete"}
    origin = review_origin(record, actor)
    before = store.get(memory_id) if action == "update" and memory_id else None
    expires = read_time(record.get("expiresAt"))
    if before is not None:
        memory = store.update(
            before.id,
            text,
            expected_updated_at=expected or None,
            category=record.get("category") or None,
            actor=actor,
            origin=origin,
        )
        if memory is not None and memory.expires_at != expires:
            # The fact as now stated ends when it says (or never).
            memory = store.set_expiry(memory.id, expires, actor=actor) or memory
        if memory is not None:
            return {
                "appliedMemoryId": memory.id,
                "appliedContent": text,
                "appliedAction": "update",
                "currentContent": before.content,
            }
    person = record.get("person")
    try:
        memory = store.add(
            text,
            category=record.get("category") or "general",
            source="extracted",
            actor=actor,
            allow_duplicate=False,
            origin=origin,
            person=person if isinstance(person, str) and person else None,
            expires_at=expires,
        )
    except DuplicateMemoryError as exc:
        # Someone (the assistant, the dashboard) stored it while it waited: no copy, and
        # undo must leave their memory alone.
        return {"appliedMemoryId": exc.existing.id, "appliedContent": text, "appliedAction": "none"}
    return {"appliedMemoryId": memory.id, "appliedContent": text, "appliedAction": "add"}


class Reviewing(CuratorBase):
    """Review: the proposals waiting, and approving, rejecting and undoing them."""

    def propose(
        self,
        *,
        action: str,
        content: str,
        category: str = "general",
        memory_id: str | None = None,
        conversation_id: str | None = None,
        evidence: str | None = None,
        confidence: float | None = None,
        extractor: str = "regex",
        person: str | None = None,
    ) -> ReviewItem | None:
        """Queue a change to memory (``action``: add, update or delete) for a person to decide
        in Review, as extraction proposes one: an update or a delete names the memory it
        changes (``memory_id``) and shows it as it is now (``memory_gone`` when it is gone or
        outside the curator's view). None when the same proposal waits already or was rejected
        (``ReviewQueue.submit``); nothing is proposed as a person outside the view
        (``person_unknown``)."""
        check_person(person, self.view)
        current = self.memory(memory_id).content if memory_id else None
        proposal = Proposal(
            action=action,
            content=content,
            category=category,
            memory_id=memory_id,
            current_content=current,
            confidence=confidence,
            extractor=extractor,
            evidence=evidence,
            person=person,
        )
        queued = self._review_queue.submit([proposal], conversation_id=conversation_id)
        return queued[0] if queued else None

    def pending(self, view: View = EVERYONE) -> list[ReviewItem]:
        """The proposals waiting in Review that ``view`` (else this curator's) may see
        (``people.item_in_view``): a person's own and the household's, never another
        person's."""
        view = view if view is not EVERYONE else self.view
        return [item for item in self._review_queue.pending() if item_in_view(item, view)]

    def approve(
        self,
        item_id: str,
        *,
        content: str | None = None,
        category: str | None = None,
        person: str | None | Keep = KEEP,
        as_new: bool = False,
        expected: str | None = None,
        expires_at: datetime | None | Keep = KEEP,
        confirm_secret: bool = False,
        actor: str | None = None,
    ) -> ReviewItem:
        """Apply a proposal to memory, as proposed or as the person edited it.

        The text kept is checked for secrets like any other (SecretInputError unless
        ``confirm_secret``). The queue's decision is committed first; the memory is written after
        it, outside the queue's change (``ReviewQueue.claim`` / ``apply`` / ``settle``), and when
        the write fails (memory full, changed since ``expected``) the item is pending again. An
        approved forget is remembered as forgotten (a tombstone with its conversation). A fact
        whose owner nobody could tell is approved only with ``person`` said (OwnerUndecidedError):
        it never becomes the household's by default. ``expires_at`` sets when the fact stops being
        true (None: never); left out, the proposal's own expiry. Another person's proposal,
        outside the curator's view, is unknown (``review_item_not_found``), and none is approved
        as a person outside it or as nobody of the household (``person_unknown``)."""
        actor = actor or self.actor
        item = visible_item(self, item_id)
        if item.status != "pending":
            return item
        refuse_forgotten(self, item)
        if not isinstance(person, Keep):
            check_person(person, self.view)  # never approved as someone else's
            if person is not None and self._people_store.get(person) is None:
                raise unknown_person(person)  # nor as nobody of the household
        if item.owner_undecided and item.action != "delete" and isinstance(person, Keep):
            raise OwnerUndecidedError()
        if item.action != "delete":
            check_secret(content if content is not None else item.content, confirmed=confirm_secret)
        queue = self._review_queue
        claim = queue.claim(
            item_id,
            content=content,
            category=category,
            as_new=as_new,
            person=person,
            expires_at=expires_at,
            actor=actor,
        )
        if claim is None:
            return visible_item(self, item_id)
        gone = None
        if claim.record.get("action") == "delete" and claim.record.get("memoryId"):
            gone = self._memory_store.get(str(claim.record["memoryId"]))
        try:
            applied = _write_memory(
                self, claim.record, claim.edited, actor=actor, expected=expected
            )
        except BaseException:
            queue.reopen(claim)
            raise
        decided = queue.settle(item_id, applied)
        if gone is not None and applied.get("appliedAction") == "delete":
            self._tombstone_store.record(
                gone, by=actor, via="review", conversation_id=item.conversation_id
            )
        return decided

    def undo_decision(self, item_id: str, *, actor: str | None = None) -> ReviewItem:
        """Take a decision back: the memory as it was before the approval (ConflictError when it
        changed since), the item pending again, and an approved forget no longer remembered.
        DeletedForeverError when the fact was deleted forever (``refuse_forgotten``): the item
        stays as it is."""
        item = visible_item(self, item_id)
        if item.status != "pending":
            refuse_forgotten(self, item)
        undone = self._review_queue.undo(item_id, actor=actor or self.actor)
        if item.status == "approved" and item.applied_action == "delete" and item.applied_memory_id:
            self._tombstone_store.lift([item.applied_memory_id])
        return undone

    def reject(self, item_id: str, *, actor: str | None = None) -> ReviewItem:
        """Mark a proposal rejected: it is not proposed again (``review_item_not_found``
        outside this curator's view)."""
        visible_item(self, item_id)
        return self._review_queue.reject(item_id, actor=actor or self.actor)

    def reject_source(self, source: str, *, actor: str | None = None) -> int:
        """Reject every proposal waiting from one import that this curator's view may see;
        how many."""
        if self.view is not EVERYONE:
            mine = [
                i
                for i in self._review_queue.pending_from(source)
                if self.sees_item(self._review_queue.get(i))
            ]
            return sum(1 for i in mine if self.reject(i, actor=actor).status == "rejected")
        return self._review_queue.reject_source(source, actor=actor or self.actor)
