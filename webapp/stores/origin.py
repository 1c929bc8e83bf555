"""Where a memory came from: the optional ``origin`` field of a memory record.

On disk (camelCase, all keys optional except ``how``)::

    {"how": "extracted", "conversationId": "slack:C1:17.1", "evidence": "I prefer tea",
     "evidenceAt": "2026-11-20T08:00:00.000Z", "extractor": "llm", "model": "openai/gpt-4o",
     "reviewId": "ab12cd34ef56", "approvedBy": "alice", "approvedAt": "2026-11-21T…Z",
     "action": "update", "importedFrom": "memories-20261120.json", "at": "…Z", "by": "alice",
     "editedBy": "bob", "editedAt": "…Z"}

``how`` is one of HOWS; ``editedBy`` and ``editedAt`` say who last changed the words since
(``edited_origin``), so a fact extracted and then rewritten by hand is not passed off as the
extractor's. Records written by other programs may lack the field, or hold one this
version does not understand: readers then treat the origin as unknown and keep the value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .timefmt import now_iso

HOWS = ("dashboard", "mcp", "extracted", "imported", "restored", "library", "cli")
MAX_EVIDENCE_CHARS = 500
MAX_FIELD_CHARS = 300
_TEXT_KEYS = (
    "conversationId",
    "evidenceAt",
    "extractor",
    "model",
    "reviewId",
    "approvedBy",
    "approvedAt",
    "action",
    "importedFrom",
    "at",
    "by",
    "editedBy",
    "editedAt",
)


def _text(value: Any, limit: int) -> str | None:
    """``value`` as storable text cut to ``limit`` characters, or None when it is not text."""
    if not isinstance(value, str):
        return None
    cleaned = "".join(c for c in value if c == "\n" or c == "\t" or ord(c) >= 32)
    cleaned = cleaned.encode("utf-8", "replace").decode("utf-8").strip()
    if not cleaned:
        return None
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1].rstrip() + "…"


def make_origin(how: str, **fields: Any) -> dict[str, Any]:
    """An origin record: ``how`` (one of HOWS) and the given fields, cleaned and capped.

    Unknown keys and empty values are left out; the evidence is cut to MAX_EVIDENCE_CHARS.
    """
    if how not in HOWS:
        raise ValueError(f"Unknown origin {how!r}; use one of: {', '.join(HOWS)}.")
    origin: dict[str, Any] = {"how": how}
    evidence = _text(fields.get("evidence"), MAX_EVIDENCE_CHARS)
    if evidence:
        origin["evidence"] = evidence
    for key in _TEXT_KEYS:
        value = _text(fields.get(key), MAX_FIELD_CHARS)
        if value:
            origin[key] = value
    return origin


def read_origin(raw: Any) -> dict[str, Any] | None:
    """The origin of a record as this version understands it, or None (missing or unknown)."""
    if not isinstance(raw, Mapping) or raw.get("how") not in HOWS:
        return None
    return dict(raw)


def edited_origin(raw: Any, actor: str, at: str) -> dict[str, Any] | None:
    """The origin of a memory whose words ``actor`` changed at ``at``: its own, saying so; None
    when it has no origin this version understands (that one is kept as it is)."""
    known = read_origin(raw)
    if known is None:
        return None
    known["editedBy"] = _text(actor, MAX_FIELD_CHARS) or "library"
    known["editedAt"] = at
    return known


def imported_origin(raw: Any, source: str | None, actor: str) -> dict[str, Any]:
    """The origin of an imported record: its own (from an export) with the file added, or new."""
    known = read_origin(raw)
    if known is not None:
        if source and "importedFrom" not in known:
            known["importedFrom"] = _text(source, MAX_FIELD_CHARS)
        return known
    return make_origin("imported", importedFrom=source, by=actor, at=now_iso())


def extractor_label(extractor: str | None, model: str | None = None) -> str:
    """'rules', 'LLM openai/gpt-4o' or 'LLM' for a review item's or origin's extractor."""
    if extractor in (None, "", "regex", "rules"):
        return "rules"
    if extractor == "import":
        return "import"
    return f"LLM {model}" if model else "LLM"


def describe_origin(origin: Mapping[str, Any] | None) -> str:
    """One short phrase on where a memory came from, for a person or an assistant."""
    phrase = _how_phrase(origin)
    if origin is not None and origin.get("editedBy"):
        return f"{phrase}, then edited by {origin['editedBy']}"
    return phrase


def _how_phrase(origin: Mapping[str, Any] | None) -> str:
    if origin is None:
        return "origin not recorded"
    how = origin.get("how")
    if how == "extracted":
        by = extractor_label(origin.get("extractor"), origin.get("model"))
        where = (
            f" from conversation {origin['conversationId']}" if "conversationId" in origin else ""
        )
        approved = (
            f", approved by {origin['approvedBy']}" if "approvedBy" in origin else " (auto mode)"
        )
        return f"extracted by {by}{where}{approved}"
    if how == "imported":
        source = origin.get("importedFrom")
        return f"imported from {source}" if source else "imported"
    return {
        "dashboard": "typed in the dashboard",
        "mcp": "told through manage_memory",
        "restored": "restored from history",
        "library": "added by a program",
        "cli": "added on the command line",
    }.get(str(how), "origin not recorded")
