"""The skill document model: one skill or reference, its on-disk form, snippet and sort order."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...text import fold
from ..timefmt import parse_ts
from .errors import InvalidSkillDocumentError, SkillDocumentError
from .naming import content_hash, document_key
from .validation import validate_record

TYPES = ("skill", "reference")
SNIPPET_CHARS = 200
_KNOWN_KEYS = {
    "id",
    "createdAt",
    "updatedAt",
    "type",
    "skill",
    "skillDescription",
    "reference",
    "snippet",
    "content",
    "meta",
}


def derive_snippet(record: Mapping[str, Any]) -> str:
    """A short summary for listings: ``name — description`` for references, else the description."""
    found = record.get("meta")
    meta: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    name, description = meta.get("name"), meta.get("description")
    if record.get("type") == "reference" and name and description:
        return _shorten(f"{name} — {description}")
    description = record.get("skillDescription") or description
    if record.get("type") == "skill" and description:
        return _shorten(str(description))
    for line in str(record.get("content", "")).splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return _shorten(line)
    return ""


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…"


def to_ms(value: Any) -> int | None:
    """Unix ms from an int/float or an ISO string; None when absent or unreadable."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float):
        return int(value) if value >= 0 else None
    if isinstance(value, str) and value.strip():
        moment = parse_ts(value)
        return int(moment.timestamp() * 1000) if moment.year > 1970 else None
    return None


@dataclass(frozen=True)
class SkillDocument:
    """One skill or reference document as stored (timestamps in Unix ms).

    ``file_name`` and ``deprecated`` say where the store found it (None/False for runtime
    memories); ``extra`` holds fields this version does not know, kept on rewrite.
    """

    id: str
    type: str
    skill: str
    content: str
    snippet: str = ""
    skill_description: str = ""
    reference: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    created_at: int = 0
    updated_at: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    file_name: str | None = field(default=None, compare=False)
    deprecated: bool = field(default=False, compare=False)

    @classmethod
    def from_dict(
        cls, record: Mapping[str, Any], *, file_name: str | None = None, deprecated: bool = False
    ) -> SkillDocument:
        """Build from the on-disk camelCase form (assumed valid; see ``validate_record``)."""
        return cls(
            id=str(record["id"]),
            type=str(record["type"]),
            skill=str(record["skill"]),
            content=str(record["content"]),
            snippet=str(record.get("snippet", "")),
            skill_description=str(record.get("skillDescription", "")),
            reference=record.get("reference"),
            meta=dict(record.get("meta") or {}),
            created_at=int(record.get("createdAt", 0)),
            updated_at=int(record.get("updatedAt", 0)),
            extra={k: v for k, v in record.items() if k not in _KNOWN_KEYS},
            file_name=file_name,
            deprecated=deprecated,
        )

    def to_dict(self) -> dict[str, Any]:
        """The on-disk camelCase form, known fields first, unknown ones kept."""
        record: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "skill": self.skill,
            "skillDescription": self.skill_description,
        }
        if self.reference is not None:
            record["reference"] = self.reference
        record.update(
            snippet=self.snippet,
            content=self.content,
            meta=dict(self.meta),
            createdAt=self.created_at,
            updatedAt=self.updated_at,
        )
        for key, value in self.extra.items():
            record.setdefault(key, value)
        return record

    def __hash__(self) -> int:
        # The generated hash would fail on ``meta`` (a dict); these fields identify a version.
        return hash((self.id, self.type, self.skill, self.reference, self.content, self.updated_at))

    @functools.cached_property
    def key(self) -> tuple[str, str, str]:
        """(kebab skill, type, kebab reference or ""): one live document per key."""
        return document_key({"skill": self.skill, "type": self.type, "reference": self.reference})

    @property
    def hash(self) -> str:
        """The 8-hex content hash in the file name."""
        return content_hash(self.content)

    @property
    def title(self) -> str:
        """What to call it in a listing: the front matter name, else the skill or reference."""
        name = self.meta.get("name") if isinstance(self.meta, Mapping) else None
        return str(name or (self.reference if self.type == "reference" else self.skill))

    @functools.cached_property
    def search_fields(self) -> tuple[str, str, str]:
        """Folded (name, summary, content) texts for ranking, computed once per document."""
        meta = self.meta if isinstance(self.meta, Mapping) else {}
        names = " ".join(str(x) for x in (self.skill, meta.get("name"), self.reference) if x)
        summary = " ".join(
            str(x) for x in (self.snippet, self.skill_description, meta.get("description")) if x
        )
        return fold(names), fold(summary), fold(self.content)


def sort_key(doc: SkillDocument) -> tuple[Any, ...]:
    """Listing order: by skill, the skill before its references, then by reference and id."""
    skill, kind, ref = safe_key(doc)
    return (skill, TYPES.index(kind) if kind in TYPES else 9, ref, doc.id)


def safe_key(doc: SkillDocument) -> tuple[str, str, str]:
    """``doc.key``, or a folded stand-in when its names cannot be kebab-cased."""
    try:
        return doc.key
    except SkillDocumentError:
        return (fold(doc.skill), doc.type, fold(doc.reference or ""))


def as_document(
    item: SkillDocument | Mapping[str, Any], what: str = "A runtime memory"
) -> SkillDocument:
    """A ``SkillDocument`` from a runtime memory (dict or document), defaults filled, validated.

    Missing ``id`` becomes ``runtime:<skill>:<type>[:<reference>]``; missing timestamps 0 (so
    any document is newer); missing ``snippet`` is derived.
    """
    if isinstance(item, SkillDocument):
        return item
    if not isinstance(item, Mapping):
        raise InvalidSkillDocumentError([f"expected a mapping, found {type(item).__name__}"], what)
    record = dict(item)
    deprecated = bool(record.pop("deprecated", False))
    record.setdefault("skillDescription", "")
    record.setdefault("meta", {})
    if "snippet" not in record:
        record["snippet"] = derive_snippet(record)
    for stamp in ("createdAt", "updatedAt"):
        record[stamp] = to_ms(record.get(stamp)) or 0
    if not record.get("id") and isinstance(record.get("skill"), str):
        record["id"] = ":".join(
            [
                "runtime",
                record["skill"],
                str(record.get("type")),
                *([str(record["reference"])] if record.get("reference") else []),
            ]
        )
    return SkillDocument.from_dict(validate_record(record, what), deprecated=deprecated)
