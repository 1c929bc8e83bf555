"""The history of memories: the change log, what was deleted and can come back, restore (a
deleted memory, or the state before a change), undoing a merge, and Delete forever."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ...text import normalize
from ..changes import Changed, Unchanged
from ..errors import ConflictError, NotFoundError
from ..origin import make_origin
from ..records import Memory
from ..secret_history import without_gone_secrets
from ..timefmt import now_iso, parse_ts
from .model import DeletedMemory, _later_than, _Step, _still_as_seen, _Written
from .writing import MemoryWrites


class MemoryHistory(MemoryWrites):
    """The history, restore and Delete forever of ``MemoryStore`` (restoring over its writes)."""

    def history(self, memory_id: str | None = None) -> list[dict[str, Any]]:
        """The change log (oldest first), optionally for one memory."""
        return self._history.read(memory_id)

    def change(self, hid: str) -> dict[str, Any] | None:
        """The history entry ``hid`` (its ``before`` and ``after`` records), or None."""
        return self._history.find(hid)

    def deleted(self, memory_id: str) -> Memory | None:
        """The last state of a memory that is deleted now (from the history log), else None."""
        if self.get(memory_id) is not None:
            return None
        entry = self._last_deletion(memory_id)
        before = entry.get("before") if entry else None
        try:
            return Memory.from_dict(before) if isinstance(before, dict) else None
        except (KeyError, TypeError, ValueError):
            return None

    def _last_deletion(self, memory_id: str) -> dict[str, Any] | None:
        deletions = [e for e in self._history.read(memory_id) if e.get("action") == "delete"]
        return deletions[-1] if deletions else None

    def recently_deleted(self) -> list[DeletedMemory]:
        """Deleted memories the history log can bring back, most recently deleted first.

        A memory counts when its last history entry is a deletion and it is not in the store;
        a purged memory has no entries left, so it is not listed.
        """
        entries = self._history.entries()
        present = self._index()
        cached = self._deleted_cache
        # Both are cached per file version; holding them keeps the identity test sound.
        if cached is not None and cached[0] is entries and cached[1] is present:
            return list(cached[2])
        found = _deleted_from(entries, present)
        self._deleted_cache = (entries, present, found)
        return list(found)

    def undo_merge(
        self, dropped_id: str, update_hid: str | None = None, *, actor: str | None = None
    ) -> list[Memory]:
        """Undo ``merge``: bring back the deleted memory and (with the ``update_hid`` of its
        MergeResult) the kept one's earlier text. KeyError when there is nothing to restore."""
        restored = [self.restore(dropped_id, actor=actor)]
        if update_hid:
            restored.insert(0, self.restore(update_hid, actor=actor))
        return restored

    def restore(
        self, ref: str, *, actor: str | None = None, expected: Memory | str | None = None
    ) -> Memory:
        """Bring back a deleted memory (by its id) or the state before a history entry (by its hid).

        Undoing a deletion (by id) never overwrites the memory when it is back already: it is
        returned as it is now, whatever it says. With ``expected`` (the memory as the caller
        saw it, or its ``version``) the earlier state is put back only while the memory is
        still so: ConflictError (with ``current``) when it changed since, NotFoundError
        (``memory_gone``) when it was deleted since. Raises KeyError when there is nothing to
        restore, MemoryFullError at the caps.
        """
        entry = self._history.find(ref)
        undelete = entry is None
        if entry is None:
            entry = self._last_deletion(ref)
            if entry is None:
                raise KeyError(f"Nothing to restore for {ref!r}: no such memory was deleted.")
        target = entry.get("before")
        if not isinstance(target, dict) or "id" not in target:
            raise KeyError(f"History entry {ref!r} created the memory; there is no earlier state.")

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[_Written[dict[str, Any]]] | Unchanged[_Written[dict[str, Any]]]:
            for index, record in enumerate(records):
                if record.get("id") == target["id"]:
                    # Never a secret the memory no longer holds: its words come back masked.
                    earlier = without_gone_secrets(target, record)
                    if expected is not None and not _still_as_seen(record, expected):
                        raise ConflictError(Memory.from_dict(record))
                    if undelete or (
                        record.get("content") == earlier.get("content")
                        and record.get("category") == earlier.get("category")
                        and record.get("person") == earlier.get("person")
                    ):
                        return Unchanged(_Written(record))
                    self._check_caps(records, 0, len(target["content"]) - len(record["content"]))
                    before = record
                    record = records[index] = dict(record)
                    record.update(
                        content=earlier["content"],
                        category=earlier.get("category", "general"),
                        updatedAt=_later_than(record.get("updatedAt")),
                    )
                    if earlier.get("person") is None:  # whose it was comes back too
                        record.pop("person", None)
                    else:
                        record["person"] = target["person"]
                    # Where the text came from comes back with it.
                    if isinstance(earlier.get("origin"), dict):
                        record["origin"] = dict(earlier["origin"])
                    else:
                        record.pop("origin", None)
                    return Changed(_Written(record, (_Step("restore", before, dict(record)),)))
            if expected is not None:
                raise NotFoundError(
                    f"The memory {target['id']!r} is gone: it was deleted elsewhere.",
                    code="memory_gone",
                    id=repr(target["id"]),
                )
            self._check_caps(records, 1, len(target.get("content", "")))
            restored = dict(without_gone_secrets(target, None))
            if "origin" not in restored:
                restored["origin"] = make_origin("restored", by=actor or self.actor, at=now_iso())
            created = parse_ts(restored.get("createdAt"))
            position = next(
                (i for i, r in enumerate(records) if parse_ts(r.get("createdAt")) > created),
                len(records),
            )
            records.insert(position, restored)
            return Changed(_Written(restored, (_Step("restore", None, restored),)))

        return Memory.from_dict(self._write(mutate, self._journal(actor)).answer)

    def purge(self, memory_id: str, *, actor: str | None = None) -> bool:
        """Delete a memory for good: it and every history entry about it are removed."""
        self.delete(memory_id, actor=actor)
        with self._file.locked():
            self._file.refresh_backup()
            return self._history.rewrite_without(memory_id) > 0

    def forget_text(
        self, memory_id: str, texts: Iterable[str], *, mask: Callable[[str], str] | None = None
    ) -> int:
        """Delete forever the words of a deleted memory: every history entry of ``memory_id``
        and every other entry whose record before or after held one of ``texts`` (by
        ``normalize``) is removed, and the backup refreshed; how many entries went. With
        ``mask``, the evidence of every other memory (in the file and in the log) is
        rewritten by it (the words said in the same message), without a history entry."""
        keys = {normalize(t) for t in texts} - {""}

        def holds(entry: dict[str, Any]) -> bool:
            if entry.get("id") == memory_id:
                return True
            sides = (entry.get("before"), entry.get("after"))
            return any(
                isinstance(r, dict) and normalize(str(r.get("content", ""))) in keys for r in sides
            )

        with self._file.locked():
            if mask is not None:
                self._file.update(_masking_evidence(mask))
            gone = self._history.rewrite_where(holds)
            if mask is not None:
                self._history.rewrite_each(_masking_entry_evidence(mask))
            self._file.refresh_backup()
            return gone


def _deleted_from(entries: list[dict[str, Any]], present: dict[str, Memory]) -> list[DeletedMemory]:
    """The memories whose last history entry is a deletion and that are not in ``present``,
    most recently deleted first (deletions stamped in the same millisecond: the later in the
    log first)."""
    last: dict[str, tuple[int, dict[str, Any]]] = {}
    for position, entry in enumerate(entries):
        record_id = entry.get("id")
        if isinstance(record_id, str):
            last[record_id] = (position, entry)
    found: list[tuple[int, DeletedMemory]] = []
    for record_id, (position, entry) in last.items():
        before = entry.get("before")
        if entry.get("action") != "delete" or record_id in present:
            continue
        if not isinstance(before, dict) or not isinstance(before.get("content"), str):
            continue
        deleted = DeletedMemory(
            memory=Memory.from_dict({**before, "id": record_id}),
            deleted_at=parse_ts(entry.get("ts")),
            deleted_by=str(entry.get("actor") or "unknown"),
            hid=str(entry.get("hid") or ""),
        )
        found.append((position, deleted))
    found.sort(key=lambda pair: (pair[1].deleted_at, pair[0]), reverse=True)
    return [deleted for _, deleted in found]


def _masked_evidence(record: Any, mask: Callable[[str], str]) -> Any:
    """``record`` with its origin's evidence rewritten by ``mask`` (itself when unchanged)."""
    origin = record.get("origin") if isinstance(record, dict) else None
    if not isinstance(origin, dict) or not isinstance(origin.get("evidence"), str):
        return record
    masked = mask(origin["evidence"])
    if masked == origin["evidence"]:
        return record
    return {**record, "origin": {**origin, "evidence": masked}}


def _masking_evidence(
    mask: Callable[[str], str],
) -> Callable[[list[dict[str, Any]]], Changed[int] | Unchanged[int]]:
    def mutate(records: list[dict[str, Any]]) -> Changed[int] | Unchanged[int]:
        changed = 0
        for index, record in enumerate(records):  # (copy on write: a record is replaced)
            masked = _masked_evidence(record, mask)
            if masked is not record:
                records[index] = masked
                changed += 1
        return Changed(changed) if changed else Unchanged(0)

    return mutate


def _masking_entry_evidence(
    mask: Callable[[str], str],
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def change(entry: dict[str, Any]) -> dict[str, Any]:
        before, after = entry.get("before"), entry.get("after")
        new_before, new_after = _masked_evidence(before, mask), _masked_evidence(after, mask)
        if new_before is before and new_after is after:
            return entry
        return {**entry, "before": new_before, "after": new_after}

    return change
