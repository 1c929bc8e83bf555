"""A review item and a proposal: their fields, the record a proposal is queued as, the checks of
the review file's records, and the ``origin`` a memory approved from one records."""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass
from typing import Any

from ..origin import make_origin
from ..records import check_category, check_person_id, clean_content
from ..timefmt import now_iso, read_time, to_iso, unreadable_record_times

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
    # Why it waits for a person even in auto mode: "hedged", "hearsay", "bulk", "unreliable",
    # "unsure", "older", "unframed" or "unplaced" (``extraction.actions.ReconcileAction.doubt``,
    # ``extraction.sureness``), and the words that said so ("might", 聽說, "as of 2019").
    doubt: str | None = None
    doubt_words: str | None = None

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
            doubt=_str_or_none(record.get("doubt")),
            doubt_words=_str_or_none(record.get("doubtWords")),
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
    withheld: str | None = (
        None  # the kind of secret the content leaves out (webapp.sensitive.secrets)
    )
    person: str | None = None  # whose it would be (a person's id); None: the household's
    tombstone_id: str | None = None  # the tombstone of the same fact, deleted before
    expires_at: str | None = None  # ISO UTC: when the fact stops being true; None: never
    imported_from: str | None = None  # "<format>, <file name>, <date>" of an imported fact
    owner_undecided: bool = False  # whose it is waits for a person's choice
    doubt: str | None = None  # why it waits even in auto mode (hedged, hearsay, bulk, older, …)
    doubt_words: str | None = None  # the words that said so


def new_record(proposal: Proposal, conversation_id: str | None) -> dict[str, Any]:
    """The review file's record of a new, pending proposal (its text cleaned, its category
    and person checked)."""
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
        | ({"doubt": proposal.doubt} if proposal.doubt else {})
        | ({"doubtWords": proposal.doubt_words} if proposal.doubt_words else {})
    )


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
    "doubt",
    "doubtWords",
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
