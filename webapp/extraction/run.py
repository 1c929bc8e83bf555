"""Extraction as the CLI and the dashboard run it: one conversation, or every thread with news."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..language.validity import expires_at
from ..llm import LlmCallError, MemoryLlmCaller, caller_from_settings
from ..settings import Settings
from ..stores.conversations import ConversationStore, ConversationTurn
from ..stores.errors import NotFoundError
from ..stores.memories import Memory, MemoryStore
from ..stores.people import PeopleStore, Person
from ..stores.review import ReviewItem, ReviewQueue
from ..stores.timefmt import parse_ts, to_iso
from ..stores.tombstones import key_path, tombstone_path
from .actions import Candidate, Extracted, ReconcileAction, undecided
from .attribution import Undecided, group_by_person, thread_view
from .llm import FACTS_REPLY, LlmMemoryExtractor
from .reconcile import MemoryExtractor
from .state import STATE_FILE_NAME, ExtractionState

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
    dry_run: bool = False  # queued/applied/skipped say what a real run would have done
    # Why the LLM gave nothing (it did not answer in time, its reply was too large, …).
    llm_problem: LlmCallError | None = None
    cut: int = 0  # facts left out: the conversation gave more than max_facts
    max_facts: int = 0  # the most facts one conversation may give (MEMORY_MAX_FACTS_PER_THREAD)
    names: dict[str, str] = field(default_factory=dict)  # person id → name, for whose a fact is
    # Messages left unread: more than the LLM's calls of one run read (the next run reads them).
    left_unread: int = 0
    # The newest message the run read (and every one before it); None: it read none.
    read_until: datetime | None = None


Stores = tuple[MemoryStore, ConversationStore, ReviewQueue]


def stores_for(settings: Settings, actor: str = "extractor", given: Stores | None = None) -> Stores:
    """The memory store, conversation store and review queue the settings describe (``given``:
    a caller's own, already open on those files, e.g. the curator's, whose caches are warm)."""
    if given is not None:
        return given
    memories = MemoryStore.from_settings(settings, actor=actor)
    conversations = ConversationStore.from_settings(settings)
    queue = ReviewQueue.from_settings(settings, memories)
    return memories, conversations, queue


def build_extractor(
    settings: Settings,
    caller: MemoryLlmCaller | None = FROM_SETTINGS,
    actor: str = "extractor",
    stores: Stores | None = None,
) -> MemoryExtractor:
    """A MemoryExtractor wired to the configured stores, LLM and review mode."""
    memories, _, queue = stores_for(settings, actor, stores)
    if caller is FROM_SETTINGS:
        caller = caller_from_settings(settings, shape=FACTS_REPLY)
    llm = LlmMemoryExtractor(caller, label=llm_label(settings)) if caller is not None else None
    extractor = MemoryExtractor(
        memories,
        llm_extractor=llm,
        review_queue=queue,
        mode=settings.review_mode,
        actor=actor,
        max_facts=settings.max_facts_per_thread,
    )
    extractor.timezone = settings.timezone
    return extractor


def llm_label(settings: Settings) -> str:
    """The configured LLM as "provider/model" ("claude-cli" when no model is named;
    "homeassistant/<the AI Task entity>")."""
    model = settings.llm_model.strip()
    if settings.llm_provider == "homeassistant":  # the model is the entity's
        model = settings.ha_ai_task_entity.strip()
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


def timed(action: ReconcileAction, turns: list[ConversationTurn], zone: str) -> ReconcileAction:
    """``action`` with the time of its evidence's message and, for a fact (add or update),
    when it stops being true: read from the sentence it came from ("until Friday", 下周五之前),
    relative to that message's time in the household's timezone ``zone``."""
    said = evidence_time(action.evidence, turns)
    if action.action == "delete":
        return replace(action, evidence_at=said)
    at = parse_ts(said) if said else (turns[-1].timestamp if turns else datetime.now(UTC))
    # The sentence it came from first; the fact's own words when an LLM quoted too little.
    moment = expires_at(action.evidence or action.content, at, zone)
    if moment is None and action.evidence:
        moment = expires_at(action.content, at, zone)
    expiry = to_iso(moment) if moment is not None else action.expires_at
    return replace(action, evidence_at=said, expires_at=expiry)


def extract_conversation(
    settings: Settings,
    conversation_id: str,
    *,
    force: bool = True,
    dry_run: bool = False,
    caller: MemoryLlmCaller | None = FROM_SETTINGS,
    actor: str = "extractor",
    stores: Stores | None = None,
) -> ExtractionResult:
    """Extract facts from one conversation and submit them (queue or apply, by the review mode).

    With ``force`` every message of the thread is read, regardless of the pacing rules;
    without it only messages newer than the last extraction, and only when due.
    ``dry_run`` makes every decision of the real run (see ``rehearsal``) and saves nothing.
    Unknown thread → NotFoundError. ``stores``: the caller's own open stores (a real run
    uses them; a dry run its copies).
    """
    _, conversations, _ = stores_for(settings, actor, stores)
    turns = conversations.turns_to_read(conversation_id)  # what trimming kept aside too
    if not turns:
        raise NotFoundError(
            f"No conversation {conversation_id!r} (or it has no messages).",
            code="conversation_not_found",
            id=repr(conversation_id),
        )
    people = PeopleStore.from_settings(settings).people()
    with _stores_to_use(settings, dry_run) as used:
        extractor = build_extractor(used, caller, actor, None if dry_run else stores)
        result = _run(
            extractor, conversation_id, turns, force=force, dry_run=dry_run, people=people
        )
    _mark_read(conversations, result, turns)
    return result


def extract_due(
    settings: Settings,
    *,
    all_threads: bool = False,
    dry_run: bool = False,
    caller: MemoryLlmCaller | None = FROM_SETTINGS,
    actor: str = "extractor",
    stores: Stores | None = None,
) -> list[ExtractionResult]:
    """Extract from every thread that is due (or, with ``all_threads``, has any new message).

    ``dry_run`` makes every decision of the real run (see ``rehearsal``) and saves nothing.
    """
    _, conversations, _ = stores_for(settings, actor, stores)
    people = PeopleStore.from_settings(settings).people()
    results = []
    with _stores_to_use(settings, dry_run) as used:
        extractor = build_extractor(used, caller, actor, None if dry_run else stores)
        for summary in conversations.list_conversations():
            turns = conversations.turns_to_read(summary.id)
            if turns:
                result = _run(
                    extractor,
                    summary.id,
                    turns,
                    force=False,
                    dry_run=dry_run,
                    ignore_pacing=all_threads,
                    people=people,
                )
                _mark_read(conversations, result, turns)
                results.append(result)
    return results


def _mark_read(
    conversations: ConversationStore, result: ExtractionResult, turns: list[ConversationTurn]
) -> None:
    """Tell the thread what a real run has read (every message up to the newest it read,
    when it ran; every one when it found nothing new): trimming may drop those, and what it
    kept aside of them goes. What the run left unread stays."""
    if result.dry_run or not turns or not (result.ran or result.new_messages == 0):
        return
    until = result.read_until if result.ran else turns[-1].timestamp
    if until is not None:
        conversations.mark_read(result.conversation_id, until)


@contextmanager
def rehearsal(settings: Settings) -> Iterator[Settings]:
    """Settings whose memory file, review queue and extraction state are throwaway copies.

    A dry run is the real run over these copies: the same code decides what is queued,
    applied or skipped (a fact proposed by an earlier run, or by an earlier thread of the same
    run, a full store), and the real files are left exactly as they were. Each file is read
    first, so a damaged one is reported under its own name, as the real run would.
    """
    state = ExtractionState.from_settings(settings)
    memories = MemoryStore.from_settings(settings)
    queue = ReviewQueue.from_settings(settings, memories)
    for store in (memories, queue, state):
        store.check_readable()
    with tempfile.TemporaryDirectory(prefix="memory-curator-dry-run-") as folder:
        copy = replace(
            settings,
            memory_file=Path(folder) / "memories.json",
            review_file=Path(folder) / "review.json",
        )
        targets = (copy.memory_file, copy.review_file, copy.review_file.with_name(STATE_FILE_NAME))
        for source, target in zip((memories.path, queue.path, state.path), targets, strict=True):
            if source.exists():
                shutil.copyfile(source, target)
        # The facts a person deleted (and the key of their fingerprints) are read, not written.
        for source in (tombstone_path(memories.path), key_path(memories.path)):
            if source.exists():
                shutil.copyfile(
                    source, Path(folder) / f"memories{source.name[len(memories.path.stem) :]}"
                )
        yield copy


@contextmanager
def _stores_to_use(settings: Settings, dry_run: bool) -> Iterator[Settings]:
    if dry_run:
        with rehearsal(settings) as copy:
            yield copy
    else:
        yield settings


def whole_ms(moment: datetime) -> datetime:
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
    people: list[Person] | None = None,
) -> ExtractionResult:
    seen_until = extractor.state.last_turn_at(conversation_id)
    new = [turn for turn in turns if whole_ms(turn.timestamp) > seen_until]
    result = ExtractionResult(conversation_id, new_messages=len(new), dry_run=dry_run)
    result.names = {person.id: person.name for person in people or []}
    if not force:
        if not new:
            result.reason = "no new messages"
            return result
        if not ignore_pacing and not extractor.should_extract(conversation_id, len(new)):
            result.reason = "not due (needs 4 new messages and 60 s since the last run)"
            return result
    messages = _to_read(turns, new, force, extractor.reads_at_most)
    result.ran = True
    extracted = extractor.extract(messages)
    read = messages[: len(messages) - extracted.unread]
    result.left_unread = len(new) - sum(1 for t in read if whole_ms(t.timestamp) > seen_until)
    result.read_until = read[-1].timestamp if read else None
    result.facts = extracted.candidates
    result.llm_problem, result.cut = extracted.llm_problem, extracted.cut
    result.max_facts = extractor.max_facts
    result.extractor = "llm" if any(f.extractor == "llm" for f in result.facts) else "regex"
    result.fell_back = extractor.llm_extractor is not None and result.extractor != "llm"
    result.actions = [
        timed(action, messages, extractor.timezone)
        for action in _reconciled(extractor, extracted, messages, people or [])
    ]
    submitted = extractor.submit(result.actions, conversation_id=conversation_id)
    result.queued, result.applied, result.skipped = (
        submitted.queued,
        submitted.applied,
        submitted.skipped,
    )
    if result.read_until is not None and whole_ms(result.read_until) > seen_until:
        extractor.mark_extracted(
            conversation_id, last_turn_at=result.read_until, behind=result.left_unread > 0
        )
    else:  # it read only messages read before: they stay read, and the rest unread
        extractor.mark_extracted(conversation_id, last_turn_at=seen_until, behind=bool(new))
    return result


def _to_read(
    turns: list[ConversationTurn], new: list[ConversationTurn], force: bool, most: int | None
) -> list[ConversationTurn]:
    """The messages a run reads: the new ones (with ``force``, every one), oldest first. When
    the LLM's calls read at most ``most``, a forced run reads the new ones with as many read
    ones before them as fit, or the oldest new ones when they alone are more."""
    if not force:
        return new
    if most is None or len(turns) <= most:
        return turns
    return new if len(new) >= most else turns[-most:]


def _reconciled(
    extractor: MemoryExtractor,
    extracted: Extracted,
    messages: list[ConversationTurn],
    people: list[Person],
) -> list[ReconcileAction]:
    """The facts reconciled as before while nobody of the thread is known and no person is
    named; otherwise each person's facts within their own view, the household's within the
    household's (``attribution``); a fact nobody could be told the owner of is compared with
    the household's and waits in Review for a person to say whose (``undecided``). Each update
    carries the version the run read."""
    facts, seen = extracted.candidates, extracted.seen
    if not people and not any(turn.person for turn in messages):
        return extractor.reconcile(facts, seen=seen)
    actions: list[ReconcileAction] = []
    owners = {m.id: m.person for m in thread_view(extractor.store.get_all(), messages)}
    for whose, group in group_by_person(facts, messages, people, owners).items():
        if isinstance(whose, Undecided):
            actions += undecided(extractor.reconcile(group, person=None, seen=seen))
        else:
            actions += extractor.reconcile(group, person=whose, seen=seen)
    return actions
