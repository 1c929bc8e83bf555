"""Memories in and out of a file: the export, and an import planned, previewed and made in
one write (caps apply to the result; a line holding a secret is left out unless allowed)."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable
from typing import Any

from ...problems import InputError
from ...sensitive.secrets import find_secrets
from ...text import without_lone_surrogates
from ..changes import Changed, Unchanged
from ..jsonbytes import encode
from ..jsonparse import MAX_DEPTH, object_depth
from ..origin import imported_origin, read_origin
from ..records import Memory, check_category, clean_content
from ..timefmt import now_iso
from .file import MemoryFile
from .model import ImportPreview, _later_than, _Step, _Written

_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")  # URL-safe, like the ids add() makes
MAX_RECORD_DEPTH = MAX_DEPTH - 2  # a record sits inside the file's array


class MemoryImports(MemoryFile):
    """The export and imports of ``MemoryStore``."""

    def export(self) -> bytes:
        """Every memory as a JSON array in the on-disk form (UTF-8, extra fields kept), for a
        backup or ``import_records``; ``stores.write_atomic`` writes it as the stores do. A
        lone surrogate another program wrote into the file (UTF-8 cannot hold it) is exported
        as U+FFFD."""
        return encode(without_lone_surrogates([m.to_dict() for m in self._memories()]))

    def plan_import(
        self, records: Iterable[dict[str, Any]], *, allow_secrets: bool = False
    ) -> list[tuple[str, dict[str, Any], Memory | None]]:
        """What importing ``records`` would do: ('add' | 'update' | 'same' | 'secret', record,
        current); 'secret' is an add or update refused because its text holds a secret (unless
        ``allow_secrets``)."""
        index = self._index()
        plan: list[tuple[str, dict[str, Any], Memory | None]] = []
        for record in _clean_import(records):
            current = index.get(record["id"])
            if current is not None and (
                current.content == record["content"] and current.category == record["category"]
            ):
                plan.append(("same", record, current))
            elif not allow_secrets and find_secrets(record["content"]) is not None:
                plan.append(("secret", record, current))
            else:
                plan.append(("add" if current is None else "update", record, current))
        return plan

    def preview_import(self, records: Iterable[dict[str, Any]]) -> ImportPreview:
        """``plan_import`` summed up: the changes (and the lines refused for a secret), their
        counts, and whether the result fits (without the refused lines)."""
        plan = self.plan_import(records)
        counts = {
            kind: sum(1 for k, _, _ in plan if k == kind)
            for kind in ("add", "update", "same", "secret")
        }
        changes = [(k, r, c) for k, r, c in plan if k not in ("same", "secret")]
        added_chars = sum(len(r["content"]) - (len(c.content) if c else 0) for _, r, c in changes)
        used = self.stats()
        fits = self._fits(used["items"] + counts["add"], used["chars"] + added_chars)
        refused = [(k, r, c) for k, r, c in plan if k == "secret"]
        return ImportPreview(changes + refused, counts, added_chars, fits)

    def import_records(
        self,
        records: Iterable[dict[str, Any]],
        *,
        actor: str | None = None,
        source: str | None = None,
        allow_secrets: bool = False,
    ) -> dict[str, int]:
        """Add unknown ids and update changed ones in one write; caps apply to the result.

        Added memories record that they were imported (from ``source``, e.g. the file name);
        one that already says where it came from (an export of this program) keeps that.
        A record whose text holds a secret is left out (counted as ``refused``) unless
        ``allow_secrets``; one the store already holds word for word counts as unchanged.
        """
        plan = self.plan_import(records, allow_secrets=allow_secrets)
        refused = sum(1 for kind, _, _ in plan if kind == "secret")
        incoming = [record for kind, record, _ in plan if kind != "secret"]
        who = actor or self.actor
        for record in incoming:
            if read_origin(record.get("origin")) is not None or "origin" not in record:
                record["origin"] = imported_origin(record.get("origin"), source, who)

        def mutate(
            existing: list[dict[str, Any]],
        ) -> Changed[_Written[dict[str, int]]] | Unchanged[_Written[dict[str, int]]]:
            by_id = {r["id"]: r for r in existing}
            position = {r["id"]: i for i, r in enumerate(existing)}
            steps: list[_Step] = []
            counts = {"added": 0, "updated": 0, "unchanged": 0, "refused": refused}
            for record in incoming:
                current = by_id.get(record["id"])
                if current is None:
                    position[record["id"]] = len(existing)
                    existing.append(record)
                    by_id[record["id"]] = record
                    steps.append(_Step("import", None, record))
                    counts["added"] += 1
                elif (
                    current["content"] == record["content"]
                    and current.get("category", "general") == record["category"]
                ):
                    counts["unchanged"] += 1
                else:
                    before = current
                    current = existing[position[record["id"]]] = dict(current)
                    current.update(
                        content=record["content"],
                        category=record["category"],
                        updatedAt=_later_than(current.get("updatedAt")),
                    )
                    steps.append(_Step("import", before, dict(current)))
                    counts["updated"] += 1
            if not steps:
                return Unchanged(_Written(counts))
            items = len(existing)
            chars = sum(len(r["content"]) for r in existing)
            if not self._fits(items, chars):
                raise self._full(
                    f"Importing would leave {items} memories and {chars} characters; the caps are "
                    f"{self.max_items} memories and {self.max_chars} characters. Nothing was imported.",
                    items,
                    chars,
                    code="memory_import_full",
                )
            return Changed(_Written(counts, tuple(steps)))

        return self._write(mutate, self._journal(actor)).answer


def _clean_import(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Validate records from an export file; raise ValueError naming the first bad one."""
    if not isinstance(records, list):
        raise InputError(
            "An import file must hold a JSON array of memories.", code="import_not_a_list"
        )
    cleaned: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            raise InputError(
                f"Item {index + 1} is not a memory object.",
                code="import_item_not_object",
                item=index + 1,
            )
        if object_depth(record, MAX_RECORD_DEPTH) > MAX_RECORD_DEPTH:
            raise InputError(
                f"Item {index + 1} is nested too deep (more than {MAX_RECORD_DEPTH} levels of "
                f"lists and objects); a memory is a flat record.",
                code="import_item_too_deep",
                item=index + 1,
                most=MAX_RECORD_DEPTH,
            )
        memory_id = record.get("id") or secrets.token_hex(6)
        if not isinstance(memory_id, str) or not _SAFE_ID.fullmatch(memory_id):
            raise InputError(
                f"Item {index + 1} has an unusable id: ids are 1 to 100 letters, "
                f"digits, '-' or '_'.",
                code="import_item_bad_id",
                item=index + 1,
            )
        if memory_id in seen:
            raise InputError(
                f"Item {index + 1} repeats the id {memory_id!r}.",
                code="import_item_repeated_id",
                item=index + 1,
                id=repr(memory_id),
            )
        seen.add(memory_id)
        try:
            content = clean_content(record.get("content"))
            category = check_category(record.get("category"))
        except InputError as exc:
            raise InputError(
                f"Item {index + 1}: {exc}", code="import_item_problem", item=index + 1, problem=exc
            ) from None
        stamp = now_iso()
        clean = dict(record)
        clean.update(
            id=memory_id,
            content=content,
            category=category,
            # a time the file holds is kept as it is, even one that is no time (read as unknown)
            createdAt=stamp if record.get("createdAt") is None else record["createdAt"],
            updatedAt=stamp if record.get("updatedAt") is None else record["updatedAt"],
        )
        if not clean.get("source"):
            clean["source"] = "import"  # where it came from, shown in the dashboard's list
        cleaned.append(clean)
    return cleaned
