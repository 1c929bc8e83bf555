"""Writing memories: add, update, set when one expires, delete (also only while unchanged)
and merge two; each change one locked write, logged in the history log."""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ...problems import InputError
from ...text import same_fact_key
from ..changes import Changed, Unchanged, Undo
from ..errors import ConflictError, DuplicateMemoryError, NotFoundError
from ..origin import HOWS, edited_origin, make_origin
from ..records import KEEP, Keep, Memory, check_category, check_person_id, clean_content
from ..timefmt import to_iso
from .file import MemoryFile
from .model import (
    _ID,
    Deletion,
    MergeResult,
    _after_last,
    _aware,
    _in_view,
    _index_to_change,
    _later_than,
    _Step,
    _still_as_seen,
    _Written,
)


class MemoryWrites(MemoryFile):
    """The writes of ``MemoryStore``."""

    def set_expiry(
        self,
        memory_id: str,
        expires_at: datetime | None,
        *,
        expected_updated_at: Any = None,
        actor: str | None = None,
    ) -> Memory | None:
        """Set when a memory stops being true (None: never, which removes ``expiresAt``);
        None when the id is unknown. Logged like every change, so it can be undone; with
        ``expected_updated_at``, ConflictError if someone changed the memory meanwhile."""
        wanted = None if expires_at is None else to_iso(_aware(expires_at))

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[_Written[dict[str, Any]]] | Unchanged[_Written[dict[str, Any]] | None]:
            index = _index_to_change(records, memory_id, expected_updated_at)
            if index is None:
                return Unchanged(None)
            record = records[index]
            if record.get("expiresAt") == wanted:
                return Unchanged(_Written(record))
            before = record
            record = records[index] = dict(record)
            if wanted is None:
                record.pop("expiresAt", None)
            else:
                record["expiresAt"] = wanted
            record["updatedAt"] = _later_than(record.get("updatedAt"))
            return Changed(_Written(record, (_Step("update", before, dict(record)),)))

        written = self._write(mutate, self._journal(actor))
        return None if written is None else Memory.from_dict(written.answer)

    def add(
        self,
        content: str,
        *,
        category: str = "general",
        source: str | None = None,
        actor: str | None = None,
        allow_duplicate: bool = True,
        origin: dict[str, Any] | None = None,
        person: str | None = None,
        expires_at: datetime | None = None,
    ) -> Memory:
        """Remember a new fact; raises ValueError for empty content, MemoryFullError at the caps.

        ``person`` (a person's id, see people.py) makes it that person's; without it, it is the
        household's. A duplicate is looked for within that person's view (their own and the
        household's): two people may each hold the same fact.

        ``expires_at``: when the fact stops being true (stored as ``expiresAt``); None: never.

        ``origin`` (see origin.py) records where it came from; without it a ``source`` that
        names a way of making memories ("dashboard", "mcp", …) becomes a plain origin.

        With ``allow_duplicate=False`` a fact already stored (the same text up to case, width,
        Chinese script, spacing and punctuation at the ends: ``same_fact_key``) raises
        DuplicateMemoryError instead — checked under the lock, so a
        form submitted twice or a retried tool call adds it once.
        """
        content = clean_content(content)
        category = check_category(category)
        if person is not None:
            person = check_person_id(person)
        wanted = same_fact_key(content)
        if origin is None and source in HOWS:
            origin = make_origin(str(source))

        def mutate(records: list[dict[str, Any]]) -> Changed[_Written[dict[str, Any]]]:
            if not allow_duplicate:
                same = next(
                    (
                        r
                        for r in records
                        if same_fact_key(str(r.get("content", ""))) == wanted
                        and _in_view(r, person)
                    ),
                    None,
                )
                if same is not None:
                    raise DuplicateMemoryError(Memory.from_dict(same))
            self._check_caps(records, 1, len(content))
            taken = set(map(_ID, records))
            memory_id = secrets.token_hex(6)
            while memory_id in taken:
                memory_id = secrets.token_hex(6)
            stamp = _after_last(records)
            record: dict[str, Any] = {
                "id": memory_id,
                "content": content,
                "createdAt": stamp,
                "updatedAt": stamp,
                "category": category,
            }
            if source is not None:
                record["source"] = source
            if origin is not None:
                record["origin"] = dict(origin)
            if person is not None:
                record["person"] = person
            if expires_at is not None:
                record["expiresAt"] = to_iso(_aware(expires_at))
            records.append(record)
            return Changed(_Written(record, (_Step("add", None, record),)))

        return Memory.from_dict(self._write(mutate, self._journal(actor)).answer)

    def update(
        self,
        memory_id: str,
        content: str,
        *,
        expected_updated_at: Any = None,
        category: str | None = None,
        actor: str | None = None,
        origin: dict[str, Any] | None = None,
        person: str | None | Keep = KEEP,
        expires_at: datetime | None | Keep = KEEP,
    ) -> Memory | None:
        """Change a memory's content (and optionally category); None when the id is unknown.

        ``expires_at`` sets when it stops being true in the same change (None: never); left
        out, it keeps its expiry.

        ``person`` moves it to that person (a person's id) or, with None, to the household;
        left out, it stays whose it is.

        With ``expected_updated_at``, raise ConflictError if someone changed it meanwhile.
        With ``origin`` the change also records where the new content came from (an approved
        ``update`` proposal); otherwise the memory keeps its origin, which says who changed the
        words and when (``editedBy``, ``editedAt``) when the content changes.
        """
        content = clean_content(content)
        if category is not None:
            category = check_category(category)
        if isinstance(person, str):
            person = check_person_id(person)

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[_Written[dict[str, Any]]] | Unchanged[_Written[dict[str, Any]] | None]:
            index = _index_to_change(records, memory_id, expected_updated_at)
            if index is None:
                return Unchanged(None)
            record = records[index]
            new_category = category or record.get("category") or "general"
            new_person = record.get("person") if isinstance(person, Keep) else person
            new_expiry = (
                record.get("expiresAt")
                if isinstance(expires_at, Keep)
                else (None if expires_at is None else to_iso(_aware(expires_at)))
            )
            if (
                record.get("content") == content
                and record.get("category", "general") == new_category
                and record.get("person") == new_person
                and record.get("expiresAt") == new_expiry
            ):
                return Unchanged(_Written(record))
            growth = len(content) - len(record.get("content", ""))
            self._check_caps(records, 0, growth)
            before = record
            record = records[index] = dict(record)
            record.update(
                content=content,
                category=new_category,
                updatedAt=_later_than(record.get("updatedAt")),
            )
            if new_person is None:
                record.pop("person", None)
            else:
                record["person"] = new_person
            if new_expiry is None:
                record.pop("expiresAt", None)
            else:
                record["expiresAt"] = new_expiry
            if origin is not None:
                record["origin"] = dict(origin)
            elif before.get("content") != content:
                edited = edited_origin(
                    before.get("origin"), actor or self.actor, record["updatedAt"]
                )
                if edited is not None:
                    record["origin"] = edited
            return Changed(_Written(record, (_Step("update", before, dict(record)),)))

        written = self._write(mutate, self._journal(actor))
        return None if written is None else Memory.from_dict(written.answer)

    def delete(self, memory_id: str, *, actor: str | None = None) -> bool:
        """Forget a memory (it stays in the history log until purged); False if unknown."""
        return self.delete_many([memory_id], actor=actor) == 1

    def delete_many(self, memory_ids: Iterable[str], *, actor: str | None = None) -> int:
        """Forget several memories in one write; returns how many existed."""
        wanted = set(memory_ids)

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[_Written[int]] | Unchanged[_Written[int]]:
            removed = [r for r in records if r.get("id") in wanted]
            if not removed:
                return Unchanged(_Written(0))
            records[:] = [r for r in records if r.get("id") not in wanted]
            return Changed(_Written(len(removed), tuple(_Step("delete", r, None) for r in removed)))

        return self._write(mutate, self._journal(actor)).answer

    def delete_unchanged(
        self, seen: Mapping[str, Memory | str], *, actor: str | None = None
    ) -> Deletion:
        """Forget each memory of ``seen`` (id → the Memory as the caller saw it, or its
        ``version``) in one write, but only while it is still so: one changed since (by another
        process, a tab, the MCP server) is left alone and returned in ``left_alone``. Checked
        under the lock, so a change that was confirmed to its author is never deleted unseen."""

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[_Written[Deletion]] | Unchanged[_Written[Deletion]]:
            removed: list[dict[str, Any]] = []
            changed: list[dict[str, Any]] = []
            for record in records:
                wanted = seen.get(str(record.get("id")))
                if wanted is not None:
                    (removed if _still_as_seen(record, wanted) else changed).append(record)
            deletion = Deletion(
                [str(r["id"]) for r in removed], [Memory.from_dict(r) for r in changed]
            )
            if not removed:
                return Unchanged(_Written(deletion))
            gone = {id(r) for r in removed}
            records[:] = [r for r in records if id(r) not in gone]
            return Changed(_Written(deletion, tuple(_Step("delete", r, None) for r in removed)))

        return self._write(mutate, self._journal(actor)).answer

    def merge(
        self,
        keep_id: str,
        drop_id: str,
        content: str,
        *,
        actor: str | None = None,
        expected: Mapping[str, str] | None = None,
    ) -> MergeResult:
        """Keep ``keep_id`` with ``content`` and delete ``drop_id``, in one write.

        Both changes are in the history log (an ``update`` when the kept text changes, and a
        ``delete``), so ``undo_merge`` or ``restore`` bring both back. NotFoundError when
        either memory is gone, ValueError for one memory merged with itself or empty text.
        ``expected`` maps a memory's id to its version as the caller showed it: ConflictError
        (with ``current``) when either changed since, and nothing is written.
        """
        content = clean_content(content)
        if keep_id == drop_id:
            raise InputError("Choose two different memories to merge.", code="merge_same")

        def mutate(records: list[dict[str, Any]]) -> Changed[_Written[dict[str, Any]]]:
            by_id = {r.get("id"): r for r in records}
            keep, drop = by_id.get(keep_id), by_id.get(drop_id)
            if keep is None or drop is None:
                missing = keep_id if keep is None else drop_id
                raise NotFoundError(
                    f"The memory {missing!r} is gone: it was deleted elsewhere.",
                    code="memory_gone",
                    id=repr(missing),
                )
            for record in (keep, drop):
                seen = (expected or {}).get(str(record.get("id")))
                if seen and not _still_as_seen(record, seen):
                    raise ConflictError(Memory.from_dict(record))
            growth = len(content) - len(keep.get("content", "")) - len(drop.get("content", ""))
            self._check_caps(records, 0, growth)
            steps: list[_Step] = []
            if keep.get("content") != content:
                # A new dict, never the cached one changed in place: the file write reuses the
                # encoded line of every record it has seen before (one changed in place is
                # caught, and then every record is encoded again: see JsonFile.update).
                before, keep = keep, dict(keep)
                keep.update(content=content, updatedAt=_later_than(keep.get("updatedAt")))
                edited = edited_origin(before.get("origin"), actor or self.actor, keep["updatedAt"])
                if edited is not None:
                    keep["origin"] = edited
                records[records.index(before)] = keep
                steps.append(_Step("update", before, dict(keep)))
            records[:] = [r for r in records if r.get("id") != drop_id]
            steps.append(_Step("delete", drop, None))
            return Changed(_Written(dict(keep), tuple(steps)))

        entries: list[dict[str, Any]] = []

        def journal(written: _Written[dict[str, Any]]) -> Undo:
            entries[:] = self._entries(actor, written.steps)
            return self._append(entries)

        kept = self._write(mutate, journal).answer
        update = next((e["hid"] for e in entries if e["action"] == "update"), None)
        return MergeResult(Memory.from_dict(kept), drop_id, update)
