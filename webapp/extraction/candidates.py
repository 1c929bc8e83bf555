"""Each candidate against what is remembered: the action it asks for, or nothing.

A change of mind (the rules') or an LLM operation becomes the ``delete`` or ``update`` of the
memory it is about (``change_action``); a fact becomes an ``add``, the ``update`` of the
memory it changes, or nothing when memory already says it (``action_for``, by the similarity
layer's judge and by words). Whatever is proposed is first made storable: without the
characters memory refuses (``storable``) and without a secret (``without_secret``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, overload

from ..attention.pairs import drops_information, restates
from ..language.framing import without_framing
from ..language.word_likeness import VARIANT_THRESHOLD, similarity
from ..sensitive.secrets import find_secrets
from ..similarity import Judge
from ..stores.memories import CATEGORIES, Memory
from ..text import normalize
from .actions import Candidate, ReconcileAction
from .change_targets import find_target, holds_already, replaced_content
from .changes import ChangeOfMind, find_changes
from .llm import StructuredFact
from .rules import rule_facts, withheld_facts
from .slots import ANOTHER_ATTRIBUTE, ANOTHER_VALUE, settle

# How sure the rules are of a change of mind they matched to a memory.
CHANGE_CONFIDENCE = 0.85


def rule_candidates(messages: Sequence[Any]) -> list[Candidate]:
    """What the rules find: the changes of mind, the facts stated outright, the facts said
    with a secret (without it)."""
    return [*find_changes(messages), *rule_facts(messages), *withheld_facts(messages)]


def as_theirs(action: ReconcileAction, whose: str, memories: Sequence[Memory]) -> ReconcileAction:
    """A person's action as theirs: a new fact is theirs, and a change to the household's
    memory in their words is a new fact of theirs instead (the household's memory is
    everyone's: a person's words never reach it by an update)."""
    if action.action == "update":
        target = next((m for m in memories if m.id == action.id), None)
        if target is None or target.person is not None:
            return action
        action = replace(action, action="add", id=None, current_content=None, unsure=False)
    return replace(action, person=whose) if action.action == "add" else action


def change_action(candidate: Candidate, memories: list[Memory]) -> ReconcileAction | None:
    """The delete or update a change of mind (rules) or an LLM operation asks for, or None."""
    if isinstance(candidate, StructuredFact):
        target = next((m for m in memories if m.id == candidate.memory_id), None)
        content = storable(candidate.content) or ""
        if candidate.action == "update":
            content = content.strip()
    else:
        target = find_target(candidate, memories)
        content = ""
        if target is not None and candidate.kind != "forget" and candidate.replaces:
            content = storable(replaced_content(candidate, target)) or ""
            if not content:
                # No clean content (never the user's sentence as it was said): a switch is
                # the fact it implies, as new; anything else proposes nothing.
                return None
    if target is None:
        return None
    confidence = (
        candidate.confidence if isinstance(candidate, StructuredFact) else CHANGE_CONFIDENCE
    )
    withheld = candidate.withheld if isinstance(candidate, StructuredFact) else None
    finding = find_secrets(content) if content else None
    if finding is not None:
        content, withheld = finding.fact, finding.kind
    if content and normalize(content) != normalize(target.content):
        action, text = "update", content
    elif isinstance(candidate, StructuredFact) and candidate.action == "update":
        return None  # an "update" to the same text changes nothing
    else:
        action, text = "delete", target.content
    return ReconcileAction(
        action,
        target.id,
        text,
        target.category,
        confidence=confidence,
        extractor=candidate.extractor,
        evidence=storable(candidate.evidence),
        current_content=target.content,
        withheld=withheld if action == "update" else None,
        reason="llm_operation" if isinstance(candidate, StructuredFact) else "change",
    )


def implied_fact(candidate: Candidate, memories: list[Memory]) -> StructuredFact | None:
    """For a switch that edits no memory, the fact it implies ("Morning routine at 07:00"),
    unless a memory about the same thing already says the new value."""
    if not isinstance(candidate, ChangeOfMind) or not candidate.fact:
        return None
    if holds_already(candidate, memories):
        return None
    return StructuredFact(
        candidate.fact,
        "preference",
        CHANGE_CONFIDENCE,
        evidence=candidate.evidence,
        extractor=candidate.extractor,
    )


def category_for(
    categories: Sequence[str] | Mapping[str, str] | None,
    index: int,
    candidate: str | Candidate,
) -> str | None:
    if categories is None:
        return None
    if isinstance(categories, Mapping):
        content = candidate.content if isinstance(candidate, StructuredFact) else str(candidate)
        return categories.get(content)
    return categories[index] if index < len(categories) else None


# Characters a message may carry (pasted binary, a lone surrogate from another program's
# JSON) that memory cannot store: NUL and other C0 controls except tab and newlines; and
# U+FFFD, which the stores read a lone surrogate in a file as: no part of any fact.
_UNSTORABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffd]")


@overload
def storable(text: str) -> str: ...
@overload
def storable(text: None) -> None: ...
def storable(text: str | None) -> str | None:
    """``text`` without the characters memory refuses, so one odd message cannot stop a run."""
    return None if text is None else _UNSTORABLE.sub("", text)


def as_fact(candidate: str | Candidate, category: str | None) -> StructuredFact:
    if isinstance(candidate, StructuredFact):
        chosen = category or candidate.category
        return StructuredFact(
            without_framing((storable(candidate.content) or "").strip()),
            chosen if chosen in CATEGORIES else "general",
            candidate.confidence,
            evidence=storable(candidate.evidence),
            extractor=candidate.extractor,
            withheld=candidate.withheld,
        )
    chosen = category if category in CATEGORIES else "general"
    text = without_framing((storable(str(candidate)) or "").strip())
    return StructuredFact(text, chosen, 1.0, extractor="regex")


def action_for(
    fact: StructuredFact, memories: list[Memory], judge: Judge | None = None
) -> ReconcileAction | None:
    """None when a memory already says the fact (in any words the similarity layer
    recognises: ``judge``), ``update`` of the memory it changes or is a close variant of,
    else ``add``; None too when that memory says all the fact says (an update would only
    lose words)."""
    target: Memory | None = None
    unsure = False
    settled = False
    reason = "new"
    if judge is not None:
        texts = [m.content for m in memories]
        verdict = judge.reconcile(fact.content, texts)
        verdict = settle(fact.content, texts, verdict, judge, fact.evidence)
        if verdict.action == "skip":
            return None
        if verdict.action == "update" and verdict.target is not None:
            target = memories[verdict.target]
            unsure = verdict.reason == "close"
        reason = verdict.reason
        settled = verdict.reason in (ANOTHER_VALUE, ANOTHER_ATTRIBUTE, "says_change")
    if target is None and not settled:
        best, score = None, 0.0
        for memory in memories:
            value = similarity(fact.content, memory.content)
            if value > score:
                best, score = memory, value
        target = best if best is not None and score >= VARIANT_THRESHOLD else None
        reason = "words" if target is not None else reason
    if target is not None and restates(target.content, fact.content):
        return None
    if target is not None and not settled and drops_information(target.content, fact.content):
        target = None  # replacing the memory would lose what it says: a fact of its own
    return ReconcileAction(
        "add" if target is None else "update",
        None if target is None else target.id,
        fact.content,
        fact.category if target is None else target.category,
        confidence=fact.confidence,
        extractor=fact.extractor,
        evidence=fact.evidence,
        current_content=None if target is None else target.content,
        withheld=fact.withheld,
        unsure=unsure and target is not None,
        reason=reason,
    )


def without_secret(fact: StructuredFact) -> StructuredFact:
    """``fact``, or when it holds a secret the fact without it ("Has a garage door code (not
    kept in memory).") marked ``withheld`` with the secret's kind; the evidence masked."""
    finding = find_secrets(fact.content)
    if finding is None:
        return fact
    return StructuredFact(
        finding.fact,
        fact.category,
        fact.confidence,
        evidence=fact.evidence,
        extractor=fact.extractor,
        action=fact.action,
        memory_id=fact.memory_id,
        withheld=finding.kind,
    )
