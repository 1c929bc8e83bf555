"""What reconciling proposes, and what a run did with it.

``ReconcileAction`` is one change to long-term memory (add a fact, update or delete a memory),
with where it came from and why it is not sure enough to apply on its own (``weighed``);
``Extracted`` is what one run found in a conversation, ``Submitted`` what it queued and wrote;
``proposal`` is an action as the review queue keeps it, its evidence masked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum

from ..language.stance import stance
from ..llm import LlmCallError
from ..problems import CodedError
from ..sensitive.secrets import mask_secrets
from ..stores.memories import Memory
from ..stores.review import Proposal, ReviewItem
from .changes import ChangeOfMind
from .llm import StructuredFact

# What extraction hands to reconcile: a fact (or an LLM operation), or a change of mind.
Candidate = StructuredFact | ChangeOfMind


@dataclass(frozen=True)
class ReconcileAction:
    """A change to long-term memory: ``add`` a fact, ``update`` memory ``id``, or ``delete`` it."""

    action: str
    id: str | None
    content: str
    category: str = "general"
    # Not part of equality: where it came from and, for update, what it replaces.
    confidence: float | None = field(default=None, compare=False)
    extractor: str = field(default="regex", compare=False)
    evidence: str | None = field(default=None, compare=False)
    current_content: str | None = field(default=None, compare=False)
    evidence_at: str | None = field(default=None, compare=False)
    # The kind of secret the fact was said with; the content says only that there is one.
    withheld: str | None = field(default=None, compare=False)
    # Whose a new fact would be (a person's id); None: the household's.
    person: str | None = field(default=None, compare=False)
    # A person deleted this fact before (its tombstone): it waits in Review, even in auto mode.
    tombstone_id: str | None = field(default=None, compare=False)
    # When the fact stops being true (ISO UTC), read from its sentence; None: never.
    expires_at: str | None = field(default=None, compare=False)
    # The judge found the memory close, not the same nor a clear change: a person decides,
    # so it waits in Review even in auto mode (an unsure update could overwrite another fact).
    unsure: bool = field(default=False, compare=False)
    # Nobody could tell whose the fact is: it waits in Review, even in auto mode, until a
    # person chooses (``attribution.UNDECIDED``).
    owner_undecided: bool = field(default=False, compare=False)
    # For update and delete: the version (``Memory.version``) of memory ``id`` the extraction
    # read; applied in auto mode only while the memory is still at it, so an edit saved while
    # the LLM was thinking is never overwritten (the change waits in Review instead).
    version: str | None = field(default=None, compare=False)
    # Why it is not sure enough to apply on its own: said in doubt ("hedged"), second-hand
    # ("hearsay"), in an instruction about all of memory ("bulk") or from a source the sentence
    # calls unreliable ("unreliable"; ``webapp.language.stance``), only close to a memory
    # ("unsure"), or not sure for ``sureness`` ("older", "unframed", "unplaced"). It waits in Review, even in auto mode, marked so;
    # ``doubt_words`` are the words that said so ("might", 聽說).
    doubt: str | None = field(default=None, compare=False)
    doubt_words: str | None = field(default=None, compare=False)
    # Why the judge chose its target (``Reconciled.reason``: "says_change", "different_values",
    # "close", "words" for a match by words alone): ``sureness`` reads it in auto mode.
    reason: str | None = field(default=None, compare=False)


def weighed(actions: Iterable[ReconcileAction]) -> list[ReconcileAction]:
    """The actions marked with why each is not sure (``doubt``), read from the sentence it came
    from and its own words; a bulk instruction ("forget everything", 全部刪掉) is no fact, so
    it is never proposed as one, and a change of a memory it asked for waits for a person."""
    kept = []
    for action in actions:
        # A delete's content is the memory's own text: only what was said counts.
        found = stance(action.content if action.action != "delete" else "", action.evidence)
        if found is not None and found.kind == "bulk" and action.action == "add":
            continue
        if found is not None:
            action = replace(action, doubt=found.kind, doubt_words=found.words)
        elif action.unsure:
            action = replace(action, doubt="unsure")
        kept.append(action)
    return kept


def undecided(actions: Iterable[ReconcileAction]) -> list[ReconcileAction]:
    """Actions on facts whose owner nobody could tell: each a new fact (never a change to
    the household's memory, which everyone sees) waiting for a person to say whose."""
    return [
        action
        if action.action == "delete"
        else replace(action, action="add", id=None, current_content=None, owner_undecided=True)
        for action in actions
    ]


@dataclass(frozen=True)
class Extracted:
    """The candidates extraction found in one conversation, and what it could not use."""

    candidates: list[Candidate]
    # Why the LLM gave nothing (a timeout, a reply too large, …): the rules ran instead.
    llm_problem: LlmCallError | None = None
    cut: int = 0  # candidates left out beyond the extractor's max_facts
    # Each memory's version when the run read them, before the LLM was asked: ``reconcile``'s
    # ``seen``, so an update carries the version its LLM (or rule) saw.
    seen: Mapping[str, str] = field(default_factory=dict)
    # The last messages nothing read (beyond what the LLM's calls of one run may read): they
    # stay unread, for the next run.
    unread: int = 0


@dataclass
class Submitted:
    """What ``submit`` did: items queued for review, memories written, actions left out."""

    queued: list[ReviewItem] = field(default_factory=list)
    applied: list[Memory] = field(default_factory=list)
    skipped: int = 0


class ManualModeError(CodedError, ValueError):
    """Manual mode was asked to queue facts but has no review queue."""

    code = "manual_mode_needs_queue"


class Everyone(Enum):
    """``reconcile``'s default: compare with every memory, whoever's it is."""

    EVERYONE = "everyone"


EVERYONE = Everyone.EVERYONE


def masked(text: str | None) -> str | None:
    return None if text is None else mask_secrets(text)


def proposal(action: ReconcileAction, evidence: str | None, model: str | None) -> Proposal:
    return Proposal(
        action=action.action,
        content=action.content,
        category=action.category,
        memory_id=action.id,
        current_content=action.current_content,
        confidence=action.confidence,
        extractor=action.extractor,
        evidence=masked(action.evidence or evidence),
        evidence_at=action.evidence_at,
        model=model if action.extractor == "llm" else None,
        withheld=action.withheld,
        person=action.person,
        tombstone_id=action.tombstone_id,
        expires_at=action.expires_at,
        owner_undecided=action.owner_undecided,
        doubt=action.doubt,
        doubt_words=action.doubt_words,
    )
