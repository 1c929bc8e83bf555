"""The review queue: facts the extractor proposes, waiting for a person to approve, edit or reject.

On disk (``data/review.json``, add-on ``/data/memories/review.json``): a JSON array of items
``{"id", "action", "content", "category", "confidence", "extractor", "conversationId",
"evidence", "memoryId", "currentContent", "status", "createdAt", "decidedAt", "decidedBy"}``
(and, when known, ``evidenceAt``: the message's timestamp, ``extractorModel``: the LLM's
provider/model); approved items also record what was applied so the decision can be undone,
and the memory they wrote records its ``origin``. Rejected items stay in the file: a rejected
fact is not proposed again.
"""

from __future__ import annotations

import math
import os
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..settings import DEFAULTS, Settings
from ..text import near_identical, normalize
from .changes import Changed, Unchanged
from .document import FileBacked
from .errors import ConflictError, DuplicateMemoryError, MemoryFullError, NotFoundError
from .jsonfile import JsonFile
from .memories import (
    KEEP,
    Keep,
    Memory,
    MemoryStore,
    check_category,
    check_length,
    clean_content,
)
from .origin import make_origin
from .people import check_person_id
from .timefmt import now_iso, parse_ts, read_time, to_iso, unreadable_record_times

ACTIONS = ("add", "update", "delete")
STATUSES = ("pending", "approved", "rejected")
EXTRACTORS = ("llm", "regex", "import")
# Decided items kept for undo and for remembering rejections; the oldest go first.
MAX_DECIDED = 2000


@dataclass(frozen=True)
class ReviewItem:
    """One proposed change to long-term memory and what became of it."""

    id: str
    action: str
    content: str
    category: str
    confidence: float | None
    extractor: str
    conversation_id: str | None
    evidence: str | None
    memory_id: str | None
    current_content: str | None
    status: str
    created_at: str
    decided_at: str | None = None
    decided_by: str | None = None
    applied_memory_id: str | None = None
    applied_content: str | None = None
    evidence_at: str | None = None  # when the evidence's message was written
    model: str | None = None  # the LLM's "provider/model" for extractor "llm"
    applied_action: str | None = None  # what approving did: add, update, delete or none
    withheld: str | None = None  # the kind of secret the fact was said with, left out of it
    person: str | None = None  # whose the fact would be (a person's id); None: the household's
    tombstone_id: str | None = None  # a person deleted this fact before (stores.tombstones)
    expires_at: str | None = None  # when the fact stops being true (ISO UTC); None: never
    # For a proposal read from a file: "<format>, <file name>, <date>" (the memory's origin
    # then says "imported from …").
    imported_from: str | None = None
    # Nobody could tell whose the fact is (its words match no one speaker's, a file named
    # someone nobody is): it waits until a person chooses (``Curator.approve``).
    owner_undecided: bool = False

    @property
    def edited(self) -> bool:
        """True for an item approved with other text than proposed."""
        return (
            self.status == "approved"
            and self.applied_content is not None
            and self.applied_content != self.content
        )

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> ReviewItem:
        """Read the on-disk camelCase form (an item ``_item_problem`` accepts); each time in
        the on-disk ISO form, or empty (None) when it cannot be read."""
        confidence = record.get("confidence")
        return cls(
            id=str(record["id"]),
            action=str(record.get("action", "add")),
            content=str(record.get("content", "")),
            category=str(record.get("category") or "general"),
            confidence=float(confidence)
            if isinstance(confidence, (int, float)) and not isinstance(confidence, bool)
            else None,
            extractor=str(record.get("extractor") or "regex"),
            conversation_id=_text(record.get("conversationId")),
            evidence=_text(record.get("evidence")),
            memory_id=_text(record.get("memoryId")),
            current_content=_text(record.get("currentContent")),
            status=str(record.get("status", "pending")),
            created_at=_time(record.get("createdAt")) or "",
            decided_at=_time(record.get("decidedAt")),
            decided_by=_text(record.get("decidedBy")),
            applied_memory_id=_text(record.get("appliedMemoryId")),
            applied_content=_text(record.get("appliedContent")),
            evidence_at=_time(record.get("evidenceAt")),
            model=_str_or_none(record.get("extractorModel")),
            applied_action=_str_or_none(record.get("appliedAction")),
            withheld=_str_or_none(record.get("withheld")),
            person=_str_or_none(record.get("person")),
            tombstone_id=_str_or_none(record.get("tombstoneId")),
            expires_at=_time(record.get("expiresAt")),
            imported_from=_str_or_none(record.get("importedFrom")),
            owner_undecided=record.get("ownerUndecided") is True,
        )


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _time(value: Any) -> str | None:
    """A time of the file in the on-disk ISO form; None when it holds no usable time."""
    moment = read_time(value)
    return None if moment is None else to_iso(moment)


@dataclass(frozen=True)
class Proposal:
    """What an extractor submits: a change to memory and where it came from."""

    action: str
    content: str
    category: str = "general"
    memory_id: str | None = None
    current_content: str | None = None
    confidence: float | None = None
    extractor: str = "regex"
    evidence: str | None = None
    evidence_at: str | None = None  # ISO timestamp of the message the evidence is from
    model: str | None = None  # "provider/model" of the LLM that proposed it
    withheld: str | None = None  # the kind of secret the content leaves out (webapp.sensitive)
    person: str | None = None  # whose it would be (a person's id); None: the household's
    tombstone_id: str | None = None  # the tombstone of the same fact, deleted before
    expires_at: str | None = None  # ISO UTC: when the fact stops being true; None: never
    imported_from: str | None = None  # "<format>, <file name>, <date>" of an imported fact
    owner_undecided: bool = False  # whose it is waits for a person's choice


def _validate(data: Any) -> str | None:
    if not isinstance(data, list):
        return f"expected a JSON array of review items, found a JSON {type(data).__name__}"
    return None


# Fields of a review item holding text or null (absent is null).
TEXT_FIELDS = (
    "category",
    "extractor",
    "conversationId",
    "evidence",
    "memoryId",
    "currentContent",
    "decidedBy",
    "appliedMemoryId",
    "appliedContent",
    "extractorModel",
    "replacedInstead",
    "tombstoneId",
    "importedFrom",
)
# Its times: one that cannot be read counts as unknown and the item is kept (repair says so).
TIME_FIELDS = ("createdAt", "decidedAt", "evidenceAt", "expiresAt")
APPLIED_ACTIONS = (*ACTIONS, "none")


def _item_problem(record: Any) -> str | None:
    """Why one item of the review file cannot be used, or None: checked field by field, so
    no value of a type the item never holds reaches a page (its times excepted: see
    ``TIME_FIELDS``)."""
    if not isinstance(record, dict) or not isinstance(record.get("id"), str) or not record["id"]:
        return "is not a review item with a string id"
    problem = _field_problem(record)
    return f"(id {record['id']!r}) {problem}" if problem else None


def _field_problem(record: dict[str, Any]) -> str | None:
    if record.get("status") not in STATUSES:
        return f"has an unknown status {_shown(record.get('status'))}"
    if record.get("action") not in ACTIONS or not isinstance(record.get("content"), str):
        return "has no valid action and content"
    for name in TEXT_FIELDS:
        value = record.get(name)
        if value is not None and not isinstance(value, str):
            return f"has a {name} that is not text: {_shown(value)}"
    confidence = record.get("confidence")
    if confidence is not None and (
        isinstance(confidence, bool)
        or not isinstance(confidence, (int, float))
        or not math.isfinite(confidence)
    ):
        return f"has a confidence that is not a number: {_shown(confidence)}"
    if record.get("appliedAction") not in (None, *APPLIED_ACTIONS):
        return f"has an unknown appliedAction {_shown(record.get('appliedAction'))}"
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _unreadable_times(records: Any) -> list[tuple[str, str]]:
    """Each time of a review item that cannot be read (the item is kept; the time unknown)."""
    return unreadable_record_times(records, TIME_FIELDS)


def review_origin(record: dict[str, Any], actor: str) -> dict[str, Any]:
    """The ``origin`` of a memory written by approving the review item ``record``."""
    if record.get("importedFrom"):
        return make_origin(
            "imported",
            importedFrom=record.get("importedFrom"),
            evidence=record.get("evidence"),
            reviewId=record.get("id"),
            approvedBy=actor,
            approvedAt=now_iso(),
            action="update" if record.get("action") == "update" else None,
        )
    return make_origin(
        "extracted",
        conversationId=record.get("conversationId"),
        evidence=record.get("evidence"),
        evidenceAt=record.get("evidenceAt"),
        extractor="llm" if record.get("extractor") == "llm" else "rules",
        model=record.get("extractorModel"),
        reviewId=record.get("id"),
        approvedBy=actor,
        approvedAt=now_iso(),
        action="update" if record.get("action") == "update" else None,
    )


class _KnownIndex:
    """``ReviewQueue._is_known`` over a whole batch in one pass: pending and approved items by
    (action, memory, normalised text), rejected ones by (action, memory), so queuing ten
    thousand imported facts does not compare each with every item before it."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.exact: set[tuple[Any, Any, str]] = set()
        self.rejected: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
        for record in records:
            self.add(record)

    @staticmethod
    def _where(action: Any, memory_id: Any) -> tuple[Any, Any]:
        return action, (None if action == "add" else memory_id)

    def add(self, record: dict[str, Any]) -> None:
        where = self._where(record.get("action"), record.get("memoryId"))
        status = record.get("status")
        if status in ("pending", "approved"):
            self.exact.add((*where, normalize(record.get("content", ""))))
        elif status == "rejected":
            self.rejected.setdefault(where, []).append(record)

    def holds(self, proposal: Proposal) -> bool:
        where = self._where(proposal.action, proposal.memory_id)
        if (*where, normalize(proposal.content)) in self.exact:
            return True
        return ReviewQueue._is_known(self.rejected.get(where, []), proposal)


def _find(records: list[dict[str, Any]], item_id: str) -> dict[str, Any]:
    for record in records:
        if record.get("id") == item_id:
            return record
    raise NotFoundError(
        f"No review item with id {item_id!r}.", code="review_item_not_found", id=repr(item_id)
    )


class ReviewQueue(FileBacked):
    """The review file, safe for several processes; decisions are applied through MemoryStore."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        store: MemoryStore,
        *,
        lock_timeout: float = DEFAULTS["lock_timeout"],
    ) -> None:
        self.path = Path(path)
        self.store = store
        self._file = JsonFile(
            self.path,
            default=list,
            validate=_validate,
            item_problem=_item_problem,
            lock_timeout=lock_timeout,
            unreadable_times=_unreadable_times,
        )

    @classmethod
    def from_settings(
        cls, settings: Settings, store: MemoryStore | None = None, *, actor: str = "library"
    ) -> ReviewQueue:
        """The review queue ``settings`` describe, approving into ``store`` (by default the
        memory store of the same settings, writing as ``actor``)."""
        memories = store if store is not None else MemoryStore.from_settings(settings, actor=actor)
        return cls(settings.review_file, memories, lock_timeout=settings.lock_timeout)

    def init(self) -> ReviewQueue:
        """Create the file if missing; fail loudly if it is damaged."""
        self._file.ensure()
        return self

    # ----------------------------------------------------------------- reading
    def _items(self) -> tuple[ReviewItem, ...]:
        return self._file.view("items", lambda data: tuple(ReviewItem.from_dict(r) for r in data))

    def get(self, item_id: str) -> ReviewItem | None:
        """The item with that id, or None."""
        return next((item for item in self._items() if item.id == item_id), None)

    def pending(self) -> list[ReviewItem]:
        """Items waiting for a decision, newest first."""
        items = [item for item in reversed(self._items()) if item.status == "pending"]
        # Stable sort over the file's order reversed: items queued within one millisecond
        # still come out newest first.
        return sorted(items, key=lambda item: parse_ts(item.created_at), reverse=True)

    def pending_count(self) -> int:
        """How many items wait for a decision (cached until the file changes)."""
        return self._file.view(
            "pending_count", lambda data: sum(1 for r in data if r.get("status") == "pending")
        )

    def pending_sources(self) -> list[tuple[str, int]]:
        """Each file proposals wait from ("<format>, <file name>, <date>") and how many,
        most first (cached until the file changes)."""

        def count(data: Any) -> list[tuple[str, int]]:
            found: dict[str, int] = {}
            for record in data:
                source = record.get("importedFrom")
                if record.get("status") == "pending" and isinstance(source, str) and source:
                    found[source] = found.get(source, 0) + 1
            return sorted(found.items(), key=lambda pair: (-pair[1], pair[0]))

        result: list[tuple[str, int]] = self._file.view("pending_sources", count)
        return result

    def pending_from(self, source: str) -> list[str]:
        """The ids of the proposals waiting from ``source``, oldest first."""
        return [
            item.id for item in reversed(self.pending()) if item.imported_from == source and source
        ]

    def reject_source(self, source: str, *, actor: str = "review") -> int:
        """Reject every proposal waiting from ``source`` in one write; how many."""

        def mutate(records: list[dict[str, Any]]) -> Changed[int] | Unchanged[int]:
            done = 0
            for record in records:
                if record.get("status") == "pending" and record.get("importedFrom") == source:
                    self._decide(record, "rejected", actor)
                    done += 1
            if not done:
                return Unchanged(0)
            self._prune(records)
            return Changed(done)

        return self._file.update(mutate)

    def decided(self) -> list[ReviewItem]:
        """Approved and rejected items, most recently decided first."""
        items = [item for item in reversed(self._items()) if item.status != "pending"]
        return sorted(items, key=lambda item: parse_ts(item.decided_at), reverse=True)

    # ----------------------------------------------------------------- proposing
    def submit(
        self, proposals: Iterable[Proposal], *, conversation_id: str | None = None
    ) -> list[ReviewItem]:
        """Queue proposals; duplicates of pending items and of rejected facts are left out."""
        wanted = [p for p in proposals if p.action in ACTIONS and p.content.strip()]
        if not wanted:
            return []

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[list[dict[str, Any]]] | Unchanged[list[dict[str, Any]]]:
            added: list[dict[str, Any]] = []
            known = _KnownIndex(records)
            for proposal in wanted:
                if known.holds(proposal):
                    continue
                record = self._record(proposal, conversation_id)
                records.append(record)
                known.add(record)
                added.append(record)
            return Changed(added) if added else Unchanged([])

        return [ReviewItem.from_dict(r) for r in self._file.update(mutate)]

    @staticmethod
    def _is_known(records: list[dict[str, Any]], proposal: Proposal) -> bool:
        """True when the proposal repeats a pending item, an approved one or a rejected one.

        An update or delete repeats another only on the same memory. A rejected delete (a
        "forget" the person turned down) is not proposed again for the same memory and
        evidence; a rejected add or update not for a near-identical text.
        """
        key = normalize(proposal.content)
        for record in records:
            if record.get("action") != proposal.action:
                continue
            if proposal.action != "add" and record.get("memoryId") != proposal.memory_id:
                continue
            if proposal.action == "add" and _str_or_none(record.get("person")) != proposal.person:
                continue  # two people may each say the same thing
            status = record.get("status")
            if status in ("pending", "approved") and normalize(record.get("content", "")) == key:
                return True
            if status != "rejected":
                continue
            if proposal.action == "delete":
                if normalize(record.get("evidence") or "") == normalize(proposal.evidence or ""):
                    return True
            elif near_identical(record.get("content", ""), proposal.content):
                return True
        return False

    @staticmethod
    def _record(proposal: Proposal, conversation_id: str | None) -> dict[str, Any]:
        return (
            {
                "id": secrets.token_hex(6),
                "action": proposal.action,
                "content": clean_content(proposal.content),
                "category": check_category(proposal.category),
                "confidence": proposal.confidence,
                "extractor": proposal.extractor if proposal.extractor in EXTRACTORS else "regex",
                "conversationId": conversation_id,
                "evidence": proposal.evidence,
                "evidenceAt": proposal.evidence_at,
                "extractorModel": proposal.model if proposal.extractor == "llm" else None,
                "memoryId": proposal.memory_id,
                "currentContent": proposal.current_content,
                "status": "pending",
                "createdAt": now_iso(),
                "decidedAt": None,
                "decidedBy": None,
            }
            | ({"withheld": proposal.withheld} if proposal.withheld else {})
            | ({"person": check_person_id(proposal.person)} if proposal.person else {})
            | ({"tombstoneId": proposal.tombstone_id} if proposal.tombstone_id else {})
            | ({"expiresAt": proposal.expires_at} if proposal.expires_at else {})
            | ({"importedFrom": proposal.imported_from} if proposal.imported_from else {})
            | ({"ownerUndecided": True} if proposal.owner_undecided else {})
        )

    def forget_text(self, texts: Iterable[str], *, tombstone_id: str | None = None) -> int:
        """Delete forever the words of a deleted fact: items proposing one of ``texts`` (by
        ``normalize``) or marked with ``tombstone_id`` go; another item's earlier or applied
        text that was one of them is blanked. The backup is refreshed; how many items went."""
        keys = {normalize(t) for t in texts} - {""}

        def said(value: Any) -> bool:
            return isinstance(value, str) and normalize(value) in keys

        def mutate(records: list[dict[str, Any]]) -> Changed[int] | Unchanged[int]:
            kept: list[dict[str, Any]] = []
            changed = 0
            for record in records:
                if said(record.get("content")) or (
                    tombstone_id and record.get("tombstoneId") == tombstone_id
                ):
                    changed += 1
                    continue
                for name in ("currentContent", "appliedContent"):
                    if said(record.get(name)):
                        record[name] = None
                        changed += 1
                kept.append(record)
            if not changed:
                return Unchanged(0)
            gone = len(records) - len(kept)
            records[:] = kept
            return Changed(gone)

        with self._file.locked():
            gone = self._file.update(mutate)
            self._file.refresh_backup()
        return gone

    # ----------------------------------------------------------------- deciding
    def approve(
        self,
        item_id: str,
        *,
        content: str | None = None,
        actor: str = "review",
        category: str | None = None,
        as_new: bool = False,
        expected: str | None = None,
        person: str | None | Keep = KEEP,
    ) -> ReviewItem:
        """Apply the item to long-term memory (optionally with edited content) and mark it approved.

        ``category`` replaces the proposed one; ``as_new`` adds an ``update`` proposal as a
        memory of its own instead of replacing the memory it names (when replacing would lose
        what that memory says). ``expected`` is the version (``Memory.version``) of the memory
        an ``update`` replaces as the person saw it: when it was changed since, ConflictError
        (its ``current`` the memory as it is now) and nothing changes, the item stays pending.
        Approving an approved item does nothing. A full store raises MemoryFullError and the
        item stays pending; a fact longer than one memory may be raises MemoryTooLongError.
        ``person`` changes whose a new memory is before it is added (a person's id, or None
        for the household's); left out, it is whose the item proposes.
        """
        claimed = self.claim(
            item_id, content=content, category=category, as_new=as_new, person=person, actor=actor
        )
        if claimed is None:
            return self._item(item_id)
        try:
            applied = self.apply(claimed.record, claimed.edited, actor, expected)
        except BaseException:
            self.reopen(claimed)
            raise
        return self.settle(item_id, applied)

    def _item(self, item_id: str) -> ReviewItem:
        found = self.get(item_id)
        if found is None:
            _find([], item_id)  # raises the not-found error
        assert found is not None
        return found

    def claim(
        self,
        item_id: str,
        *,
        content: str | None = None,
        category: str | None = None,
        as_new: bool = False,
        person: str | None | Keep = KEEP,
        actor: str = "review",
    ) -> Claim | None:
        """Decide a pending item as approved (with the person's edits), before memory changes:
        the item as decided, as it was and its edited text, or None when it is no longer pending (someone
        decided it meanwhile). The memory write follows (``apply``), then ``settle`` records
        what it did, or ``reopen`` puts the item back when it failed."""
        if isinstance(person, str):
            person = check_person_id(person)
        edited = clean_content(content) if content is not None else None
        if edited is not None:
            check_length(edited, self.store.max_chars)
        chosen = check_category(category) if category else None

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[tuple[dict[str, Any], dict[str, Any]]] | Unchanged[None]:
            record = _find(records, item_id)
            if record["status"] != "pending":
                return Unchanged(None)
            before = dict(record)
            if chosen:
                record["category"] = chosen
            if isinstance(person, str):
                record["person"] = person
            elif person is None:
                record.pop("person", None)
            if as_new and record["action"] == "update":
                record.update(action="add", replacedInstead=record.get("memoryId"), memoryId=None)
            self._decide(record, "approved", actor)
            record["applying"] = True
            self._prune(records)
            return Changed((record, before))

        claimed = self._file.update(mutate)
        if claimed is None:
            return None
        record, before = claimed
        return Claim(dict(record), before, edited)

    def settle(self, item_id: str, applied: Mapping[str, Any]) -> ReviewItem:
        """Record what an approval did in memory (``apply``'s answer), for undo."""

        def mutate(records: list[dict[str, Any]]) -> Changed[dict[str, Any]]:
            record = _find(records, item_id)
            record.pop("applying", None)
            record.update(applied)
            return Changed(record)

        return ReviewItem.from_dict(self._file.update(mutate))

    def reopen(self, claim: Claim) -> None:
        """Put an item claimed for approval back as it was (its memory write failed)."""

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[dict[str, Any]] | Unchanged[None]:
            for index, record in enumerate(records):
                if record.get("id") == claim.before.get("id") and record.get("applying"):
                    records[index] = dict(claim.before)
                    return Changed(records[index])
            return Unchanged(None)

        self._file.update(mutate)

    def apply(
        self, record: dict[str, Any], edited: str | None, actor: str, expected: str | None = None
    ) -> dict[str, Any]:
        """Make an approved item's change in MemoryStore; return what to record for undo. An
        ``update`` replaces the memory only while it is still at version ``expected`` (when
        given). Remembering a deleted fact as forgotten is the curator's (``Curator.approve``)."""
        text = edited or record["content"]
        action, memory_id = record["action"], record.get("memoryId")
        if action == "delete" and memory_id:
            if not self.store.delete(memory_id, actor=actor):
                # Gone already (deleted elsewhere meanwhile): undo must not bring it back.
                return {
                    "appliedMemoryId": memory_id,
                    "appliedContent": None,
                    "appliedAction": "none",
                }
            return {"appliedMemoryId": memory_id, "appliedContent": None, "appliedAction": "delete"}
        origin = review_origin(record, actor)
        before = self.store.get(memory_id) if action == "update" and memory_id else None
        expires = read_time(record.get("expiresAt"))
        if before is not None:
            memory = self.store.update(
                before.id,
                text,
                expected_updated_at=expected or None,
                category=record.get("category") or None,
                actor=actor,
                origin=origin,
            )
            if memory is not None and memory.expires_at != expires:
                # The fact as now stated ends when it says (or never).
                memory = self.store.set_expiry(memory.id, expires, actor=actor) or memory
            if memory is not None:
                return {
                    "appliedMemoryId": memory.id,
                    "appliedContent": text,
                    "appliedAction": "update",
                    "currentContent": before.content,
                }
        try:
            memory = self.store.add(
                text,
                category=record.get("category") or "general",
                source="extracted",
                actor=actor,
                allow_duplicate=False,
                origin=origin,
                person=_str_or_none(record.get("person")),
                expires_at=expires,
            )
        except DuplicateMemoryError as exc:
            # Someone (the assistant, the dashboard) stored it while it waited: no copy, and
            # undo must leave their memory alone.
            return {
                "appliedMemoryId": exc.existing.id,
                "appliedContent": text,
                "appliedAction": "none",
            }
        return {"appliedMemoryId": memory.id, "appliedContent": text, "appliedAction": "add"}

    def reject(self, item_id: str, *, actor: str = "review") -> ReviewItem:
        """Mark the item rejected; the fact will not be proposed again. Rejecting twice does nothing."""

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[dict[str, Any]] | Unchanged[dict[str, Any]]:
            record = _find(records, item_id)
            if record["status"] != "pending":
                return Unchanged(record)
            self._decide(record, "rejected", actor)
            self._prune(records)
            return Changed(record)

        return ReviewItem.from_dict(self._file.update(mutate))

    def undo(self, item_id: str, *, actor: str = "review") -> ReviewItem:
        """Take a decision back: an approved change is reverted in memory, then the item is
        pending again (the memory first, outside the queue's change: a revert that cannot be
        made changes nothing).

        Raises ConflictError when the memory was changed since the approval.
        """
        item = self._item(item_id)
        if item.status == "pending":
            return item
        decided = next(
            (dict(r) for r in self._file.read() if isinstance(r, dict) and r.get("id") == item_id),
            None,
        )
        if decided is not None and decided.get("status") == "approved":
            self.revert(decided, actor)
        decided_at = decided.get("decidedAt") if decided else None

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[dict[str, Any]] | Unchanged[dict[str, Any]]:
            record = _find(records, item_id)
            if record["status"] == "pending" or record.get("decidedAt") != decided_at:
                return Unchanged(record)
            for key in (
                "decidedAt",
                "decidedBy",
                "appliedMemoryId",
                "appliedContent",
                "appliedAction",
                "applying",
            ):
                record.pop(key, None)
            if record.get("replacedInstead"):
                record.update(action="update", memoryId=record.pop("replacedInstead"))
            record.update(status="pending", decidedAt=None, decidedBy=None)
            return Changed(record)

        return ReviewItem.from_dict(self._file.update(mutate))

    def revert(self, record: Mapping[str, Any], actor: str) -> None:
        """Undo in memory what an approved item did (``appliedAction``); lifting the tombstone
        of an approved forget is the curator's."""
        memory_id = record.get("appliedMemoryId")
        if not memory_id:
            return
        applied = record.get("appliedAction") or record["action"]
        if applied == "none":
            return
        if applied == "delete":
            if self.store.get(memory_id) is None:
                self.store.restore(memory_id, actor=actor)
        elif applied == "update":
            memory = self.store.get(memory_id)
            if memory is None or not record.get("currentContent"):
                return
            if memory.content != record.get("appliedContent"):
                raise ConflictError(memory)
            self.store.update(
                memory_id,
                record["currentContent"],
                expected_updated_at=memory.updated_at,
                actor=actor,
            )
        else:
            self.store.delete(memory_id, actor=actor)

    @staticmethod
    def _decide(record: dict[str, Any], status: str, actor: str) -> None:
        record.update(status=status, decidedAt=now_iso(), decidedBy=actor)

    @staticmethod
    def _prune(records: list[dict[str, Any]]) -> None:
        decided = [r for r in records if r.get("status") != "pending"]
        if len(decided) <= MAX_DECIDED:
            return
        decided.sort(key=lambda r: parse_ts(r.get("decidedAt")))
        stale = {id(r) for r in decided[: len(decided) - MAX_DECIDED]}
        records[:] = [r for r in records if id(r) not in stale]


@dataclass(frozen=True)
class Claim:
    """An item decided as approved whose memory write is still to be made."""

    record: dict[str, Any]  # the item as decided (with the person's edits)
    before: dict[str, Any]  # the item as it was, to put back when the write fails
    edited: str | None  # the text the person edited, or None


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


def _change_by(store: MemoryStore, memory: Memory, conversation_id: str) -> dict[str, Any] | None:
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
    before, and reject its pending proposals.

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
    undeleted = []
    for gone in found.deleted:
        try:  # the deletion undone (the memory back, its tombstone lifted), then rejected
            queue.undo(gone.item_id, actor=actor)
            queue.reject(gone.item_id, actor=actor)
        except (NotFoundError, MemoryFullError):
            continue  # pruned meanwhile, or no room: it stays deleted
        undeleted.append(gone.item_id)
    rejected = []
    for item in found.pending:
        try:
            if queue.reject(item.id, actor=actor).status == "rejected":
                rejected.append(item.id)
        except NotFoundError:
            continue  # decided and pruned elsewhere meanwhile
    return Forgotten(conversation_id, deletion.deleted, rejected, reverted, left_alone, undeleted)


def undo_forget(
    queue: ReviewQueue,
    memory_ids: Iterable[str],
    rejected_ids: Iterable[str],
    reverted_hids: Iterable[str] = (),
    *,
    actor: str,
    undeleted_ids: Iterable[str] = (),
) -> tuple[int, int]:
    """Bring back forgotten memories (and the conversation's changes taken back) and make the
    rejected proposals pending again.

    Returns (memories restored, proposals pending again); ids with nothing to undo are skipped,
    and a change is re-applied only while the memory still says what forgetting put back.
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
    for item_id in undeleted_ids:  # the conversation's deletions, approved again
        item = queue.get(item_id)
        if item is None or item.status != "rejected" or item.action != "delete":
            continue
        queue.undo(item_id, actor=actor)
        if queue.approve(item_id, actor=actor).applied_action == "delete":
            restored += 1
    reopened = 0
    for item_id in rejected_ids:
        item = queue.get(item_id)
        if item is None or item.status != "rejected":
            continue
        queue.undo(item_id, actor=actor)
        reopened += 1
    return restored, reopened
