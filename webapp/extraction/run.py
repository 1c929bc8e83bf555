"""Extraction as the CLI and the dashboard run it: one conversation, or every thread with news."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ..settings import Settings
from ..stores.conversations import ConversationStore, ConversationTurn
from ..stores.errors import NotFoundError
from ..stores.memories import Memory, MemoryStore
from ..stores.review import ReviewItem, ReviewQueue
from ..stores.timefmt import to_iso
from .backends import caller_from_settings
from .llm import LlmMemoryExtractor, MemoryLlmCaller
from .reconcile import Candidate, MemoryExtractor, ReconcileAction

FROM_SETTINGS: Any = object()


@dataclass
class ExtractionResult:
    """What one extraction run over a conversation found and did."""

    conversation_id: str
    new_messages: int
    ran: bool = False
    reason: str = ""  # why it did not run ("nothing new", "fewer than 4 new messages…")
    extractor: str = "regex"  # which extractor produced the facts: "llm" or "regex"
    fell_back: bool = False  # an LLM is configured but gave no facts, so the regex ran
    facts: list[Candidate] = field(default_factory=list)  # facts, operations, changes of mind
    actions: list[ReconcileAction] = field(default_factory=list)
    queued: list[ReviewItem] = field(default_factory=list)
    applied: list[Memory] = field(default_factory=list)
    skipped: int = 0  # actions left out as duplicates of pending or rejected items


def stores_for(
    settings: Settings, actor: str = "extractor"
) -> tuple[MemoryStore, ConversationStore, ReviewQueue]:
    """The memory store, conversation store and review queue the settings describe."""
    memories = MemoryStore.from_settings(settings, actor=actor)
    conversations = ConversationStore.from_settings(settings)
    queue = ReviewQueue.from_settings(settings, memories)
    return memories, conversations, queue


def build_extractor(
    settings: Settings, caller: MemoryLlmCaller | None = FROM_SETTINGS, actor: str = "extractor"
) -> MemoryExtractor:
    """A MemoryExtractor wired to the configured stores, LLM and review mode."""
    memories, _, queue = stores_for(settings, actor)
    if caller is FROM_SETTINGS:
        caller = caller_from_settings(settings)
    llm = LlmMemoryExtractor(caller, label=llm_label(settings)) if caller is not None else None
    return MemoryExtractor(
        memories, llm_extractor=llm, review_queue=queue, mode=settings.review_mode, actor=actor
    )


def llm_label(settings: Settings) -> str:
    """The configured LLM as "provider/model" ("claude-cli" when no model is named)."""
    model = settings.llm_model.strip()
    return f"{settings.llm_provider}/{model}" if model else settings.llm_provider


def evidence_time(evidence: str | None, turns: list[ConversationTurn]) -> str | None:
    """When the user message holding ``evidence`` was written (the latest such), or None."""
    if not evidence:
        return None
    wanted = " ".join(evidence.split()).casefold()
    for turn in reversed(turns):
        if turn.role == "user" and wanted in " ".join(turn.content.split()).casefold():
            return to_iso(turn.timestamp)
    return None


def extract_conversation(
    settings: Settings,
    conversation_id: str,
    *,
    force: bool = True,
    dry_run: bool = False,
    caller: MemoryLlmCaller | None = FROM_SETTINGS,
    actor: str = "extractor",
) -> ExtractionResult:
    """Extract facts from one conversation and submit them (queue or apply, by the review mode).

    With ``force`` every message of the thread is read, regardless of the pacing rules;
    without it only messages newer than the last extraction, and only when due.
    ``dry_run`` computes the proposals and saves nothing. Unknown thread → NotFoundError.
    """
    extractor = build_extractor(settings, caller, actor)
    _, conversations, _ = stores_for(settings, actor)
    turns = conversations.get_history(conversation_id)
    if not turns:
        raise NotFoundError(f"No conversation {conversation_id!r} (or it has no messages).")
    return _run(extractor, conversation_id, turns, force=force, dry_run=dry_run)


def extract_due(
    settings: Settings,
    *,
    all_threads: bool = False,
    dry_run: bool = False,
    caller: MemoryLlmCaller | None = FROM_SETTINGS,
    actor: str = "extractor",
) -> list[ExtractionResult]:
    """Extract from every thread that is due (or, with ``all_threads``, has any new message)."""
    extractor = build_extractor(settings, caller, actor)
    _, conversations, _ = stores_for(settings, actor)
    results = []
    for summary in conversations.list_conversations():
        turns = conversations.get_history(summary.id)
        if turns:
            results.append(
                _run(
                    extractor,
                    summary.id,
                    turns,
                    force=False,
                    dry_run=dry_run,
                    ignore_pacing=all_threads,
                )
            )
    return results


def _whole_ms(moment: datetime) -> datetime:
    """``moment`` cut to milliseconds, the precision ``lastTurnAt`` is stored with.

    Without this a message stamped with microseconds (Python's isoformat()) would look newer
    than the stored ``lastTurnAt`` forever and count as new on every run.
    """
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def _run(
    extractor: MemoryExtractor,
    conversation_id: str,
    turns: list[ConversationTurn],
    *,
    force: bool,
    dry_run: bool,
    ignore_pacing: bool = False,
) -> ExtractionResult:
    seen_until = extractor.state.last_turn_at(conversation_id)
    new = [turn for turn in turns if _whole_ms(turn.timestamp) > seen_until]
    result = ExtractionResult(conversation_id, new_messages=len(new))
    if not force:
        if not new:
            result.reason = "no new messages"
            return result
        if not ignore_pacing and not extractor.should_extract(conversation_id, len(new)):
            result.reason = "not due (needs 4 new messages and 60 s since the last run)"
            return result
    messages = turns if force else new
    result.ran = True
    result.facts = extractor.extract_candidates_smartly(messages)
    result.extractor = "llm" if any(f.extractor == "llm" for f in result.facts) else "regex"
    result.fell_back = extractor.llm_extractor is not None and result.extractor != "llm"
    result.actions = [
        replace(action, evidence_at=evidence_time(action.evidence, messages))
        for action in extractor.reconcile(result.facts)
    ]
    if dry_run:
        return result
    submitted = extractor.submit(result.actions, conversation_id=conversation_id)
    result.queued, result.applied, result.skipped = (
        submitted.queued,
        submitted.applied,
        submitted.skipped,
    )
    extractor.mark_extracted(conversation_id, last_turn_at=turns[-1].timestamp)
    return result
