"""The review queue: the file of proposed changes to memory, and the decision on one item
(``claim`` an approval, ``settle`` or ``reopen`` it, ``reject``, ``undo``). Approving writes
memory, which is the curator's (``Curator.approve``, in ``curator.reviewing``): the queue
records the decision and what the write did, and writes no memory to approve; taking an approval back is
``applying``'s, what a proposal repeats ``repeats``'."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ...settings import DEFAULTS, Settings
from ...text import normalize
from ..changes import Changed, Unchanged
from ..document import FileBacked
from ..errors import NotFoundError
from ..jsonfile import JsonFile
from ..records import KEEP, Keep, check_category, check_length, check_person_id, clean_content
from ..timefmt import now_iso, parse_ts, to_iso
from . import memory
from .applying import revert_approval
from .items import (
    ACTIONS,
    MAX_DECIDED,
    Proposal,
    ReviewItem,
    _item_problem,
    _unreadable_times,
    _validate,
    new_record,
)
from .memory import MemoryBook
from .repeats import KnownIndex


def _about_memory(record: dict[str, Any], memory_id: str) -> bool:
    """The review item ``record`` is about the memory ``memory_id``: an update or forget of
    it, or an approval that wrote it (or found it kept already)."""
    return memory_id in (record.get("memoryId"), record.get("appliedMemoryId"))


def _find(records: list[dict[str, Any]], item_id: str) -> dict[str, Any]:
    for record in records:
        if record.get("id") == item_id:
            return record
    raise NotFoundError(
        f"No review item with id {item_id!r}.", code="review_item_not_found", id=repr(item_id)
    )


class ReviewQueue(FileBacked):
    """The review file, safe for several processes; decisions are applied to ``store``
    (the memory store: ``MemoryBook``)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        store: MemoryBook,
        *,
        lock_timeout: float = DEFAULTS["lock_timeout"],
    ) -> None:
        self.path = Path(path)
        self.store = store
        self._file = JsonFile(
            self.path,
            store="review",
            default=list,
            validate=_validate,
            item_problem=_item_problem,
            lock_timeout=lock_timeout,
            unreadable_times=_unreadable_times,
        )

    @classmethod
    def from_settings(
        cls, settings: Settings, store: MemoryBook | None = None, *, actor: str = "library"
    ) -> ReviewQueue:
        """The review queue ``settings`` describe, approving into ``store`` (by default the
        memory store of the same settings, writing as ``actor``)."""
        if store is None:
            if memory.default_memories is None:  # pragma: no cover - webapp.stores sets it
                raise TypeError("ReviewQueue.from_settings needs the memory store to approve into.")
            store = memory.default_memories(settings, actor)
        return cls(settings.review_file, store, lock_timeout=settings.lock_timeout)

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
            known = KnownIndex(records)
            for proposal in wanted:
                if known.holds(proposal):
                    continue
                record = new_record(proposal, conversation_id)
                records.append(record)
                known.add(record)
                added.append(record)
            return Changed(added) if added else Unchanged([])

        return [ReviewItem.from_dict(r) for r in self._file.update(mutate)]

    def forget_text(
        self,
        texts: Iterable[str],
        *,
        tombstone_id: str | None = None,
        mask: Callable[[str], str] | None = None,
        memory_id: str | None = None,
    ) -> int:
        """Delete forever the words of a deleted fact: items proposing one of ``texts`` (by
        ``normalize``), marked with ``tombstone_id`` or about the memory ``memory_id`` (an
        update or forget of it, an approval that added, edited or changed it: ``of_memory``)
        go, whatever their fields hold; another item's earlier or applied text that was one of
        them is blanked, and its evidence rewritten by ``mask`` (the words said in the same
        message). The backup is refreshed and unfinished writes a killed writer left beside
        the file are removed; how many items went."""
        keys = {normalize(t) for t in texts} - {""}

        def said(value: Any) -> bool:
            return isinstance(value, str) and normalize(value) in keys

        def mutate(records: list[dict[str, Any]]) -> Changed[int] | Unchanged[int]:
            kept: list[dict[str, Any]] = []
            changed = 0
            for record in records:
                if (
                    said(record.get("content"))
                    or (tombstone_id and record.get("tombstoneId") == tombstone_id)
                    or (memory_id and _about_memory(record, memory_id))
                ):
                    changed += 1
                    continue
                for name in ("currentContent", "appliedContent"):
                    if said(record.get(name)):
                        record[name] = None
                        changed += 1
                evidence = record.get("evidence")
                if mask is not None and isinstance(evidence, str) and mask(evidence) != evidence:
                    record["evidence"] = mask(evidence)
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

    def of_memory(self, memory_id: str) -> list[ReviewItem]:
        """The items about memory ``memory_id``: proposing to update or forget it, or approved
        into it (added, edited before approval, changed, or found already kept)."""
        return [
            ReviewItem.from_dict(r)
            for r in self._file.read()
            if isinstance(r, dict) and _about_memory(r, memory_id)
        ]

    # ----------------------------------------------------------------- deciding
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
        expires_at: datetime | None | Keep = KEEP,
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
            if expires_at is None:
                record.pop("expiresAt", None)
            elif isinstance(expires_at, datetime):
                record["expiresAt"] = to_iso(expires_at)
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
            revert_approval(self.store, decided, actor)
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
