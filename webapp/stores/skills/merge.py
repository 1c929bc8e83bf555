"""Merging documents with runtime memories: one entry per key, the newer one wins."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from .documents import SkillDocument, as_document, safe_key, sort_key

Origin = Literal["document", "runtime"]
RuntimeSource = Iterable[Any] | Callable[[], Iterable[Any]] | None


@dataclass(frozen=True)
class MergedMemory:
    """One entry of the merged view: the winning ``document``, where it came from, what it beat."""

    document: SkillDocument
    origin: Origin
    overridden: SkillDocument | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return safe_key(self.document)

    def to_dict(self) -> dict[str, Any]:
        """The document's on-disk form plus ``origin`` ("document" or "runtime")."""
        return {**self.document.to_dict(), "origin": self.origin}


def merge_memories(
    documented: Iterable[SkillDocument | Mapping[str, Any]],
    runtime: Iterable[SkillDocument | Mapping[str, Any]],
) -> list[MergedMemory]:
    """One entry per key (skill, type, reference): the documented one wins unless it is older.

    A runtime memory replaces the document only when the document's ``updatedAt`` is strictly
    older; on a tie the document wins. Deprecated documents never take part (so a runtime memory
    of the same key is used). Sorted by skill, then the skill before its references.
    """
    winners: dict[tuple[str, str, str], MergedMemory] = {}
    for item in documented:
        doc = as_document(item, "A documented memory")
        if doc.deprecated:
            continue
        current = winners.get(doc.key)
        if current is None or current.document.updated_at < doc.updated_at:
            winners[doc.key] = MergedMemory(doc, "document")
    for item in runtime:
        mem = as_document(item)
        if mem.deprecated:
            continue
        current = winners.get(mem.key)
        if current is None:
            winners[mem.key] = MergedMemory(mem, "runtime")
        elif current.origin == "document":
            if current.document.updated_at < mem.updated_at:
                winners[mem.key] = MergedMemory(mem, "runtime", current.document)
            else:
                winners[mem.key] = replace(current, overridden=mem)
        elif current.document.updated_at < mem.updated_at:
            winners[mem.key] = MergedMemory(mem, "runtime", current.overridden)
    return sorted(winners.values(), key=lambda m: sort_key(m.document))
