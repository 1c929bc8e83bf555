"""From conversation to memory: extract candidates, compare them with what is remembered, submit."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any, overload

from ..attention.pairs import drops_information, restates
from ..attention.semantic import semantic_index
from ..language.framing import without_framing
from ..language.phrasing import as_user_fact, is_memory_instruction
from ..language.stance import stance
from ..language.word_likeness import VARIANT_THRESHOLD, similarity
from ..problems import CodedError
from ..sensitive.secrets import find_secrets, mask_secrets
from ..settings import DEFAULTS
from ..similarity import Judge
from ..stores.errors import ConflictError, DuplicateMemoryError, MemoryFullError
from ..stores.memories import CATEGORIES, Memory, MemoryStore
from ..stores.origin import make_origin
from ..stores.review import Proposal, ReviewItem, ReviewQueue
from ..stores.timefmt import now_iso, read_time
from ..stores.tombstones import TombstoneStore
from ..text import normalize
from .attribution import thread_view
from .change_targets import find_target, holds_already, replaced_content
from .changes import ChangeOfMind, find_changes
from .decided import already_decided
from .forgotten import (
    ANYONE,
    Owner,
    deleted_match,
    owned_by,
    settle_deletions,
    still_deciding,
    with_owners,
)
from .llm import FactExtractor, LlmCallError, LlmMemoryExtractor, StructuredFact, facts_from
from .rules import rule_facts, withheld_facts
from .slots import ANOTHER_ATTRIBUTE, ANOTHER_VALUE, settle
from .state import STATE_FILE_NAME, ExtractionState
from .sureness import assured

MODES = ("manual", "auto")
# How sure the rules are of a change of mind they matched to a memory.
CHANGE_CONFIDENCE = 0.85

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


class MemoryExtractor:
    """Finds durable facts in conversations and routes them to review (manual) or memory (auto).

    ``llm_extractor`` is an ``LlmMemoryExtractor`` or a host's own object implementing the
    seed's ``extract_facts(messages)`` (``FactExtractor``); None: the rules alone.
    """

    # The household's timezone (MEMORY_TIMEZONE), in which "until Friday" ends.
    timezone: str = "UTC"

    def __init__(
        self,
        store: MemoryStore,
        *,
        llm_extractor: FactExtractor | None = None,
        review_queue: ReviewQueue | None = None,
        mode: str = "manual",
        state: ExtractionState | None = None,
        actor: str = "extractor",
        max_facts: int = DEFAULTS["max_facts_per_thread"],
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"Unknown review mode {mode!r}; use manual or auto.")
        if max_facts < 1:
            raise ValueError("max_facts must be at least 1.")
        # The most candidates one conversation may give (MEMORY_MAX_FACTS_PER_THREAD): a
        # runaway reply cannot flood the review queue, or memory in auto mode.
        self.max_facts = max_facts
        self.store = store
        self.llm_extractor = llm_extractor
        self.review_queue = review_queue
        self.mode = mode
        self.actor = actor
        base = review_queue.path if review_queue is not None else Path(store.path)
        self.state = state or ExtractionState(base.with_name(STATE_FILE_NAME))
        self.tombstones = TombstoneStore.beside(store)

    # ----------------------------------------------------------------- extracting
    def extract_candidates(self, messages: Iterable[Any]) -> list[str]:
        """The rules' extraction (the seed's): the facts stated outright in the user messages,
        as text, in the order said; at most ``max_facts``. Never asks the LLM. A sentence
        holding a secret gives no candidate here (``extract`` proposes the fact without it)."""
        return [fact.content for fact in rule_facts(messages)][: self.max_facts]

    def extract_candidates_smartly(self, messages: Iterable[Any]) -> list[StructuredFact]:
        """The LLM's facts when it gives some; otherwise the rules' (the seed's).

        The injected LLM extractor is asked through ``extract_facts(messages)`` alone, so a
        host's own extractor that implements only that works (its dicts are read as the LLM's
        reply is, ``facts_from``); None or no usable fact runs the rules: the facts stated
        outright, and a fact said with a secret without it (marked ``withheld``). An
        extractor that raises raises here. A secret in an LLM fact is taken out the same
        way. At most ``max_facts``, the first ones. Changes of mind, and the LLM's updates
        and deletes of the memories it is shown, come from ``extract``.
        """
        messages = list(messages)
        if self.llm_extractor is not None:
            facts = facts_from(self.llm_extractor.extract_facts(messages))
            if facts:
                return [without_secret(fact) for fact in facts][: self.max_facts]
        return [*rule_facts(messages), *withheld_facts(messages)][: self.max_facts]

    def extract(self, messages: Iterable[Any]) -> Extracted:
        """One extraction run, as the dashboard, the CLI and the batch run it: the LLM's facts
        and operations, or when it gives none the rules' candidates; with why the LLM gave
        nothing and how many candidates were left out beyond ``max_facts``.

        ``LlmMemoryExtractor`` sees the stored memories with their ids — those the thread's
        speakers may see (``thread_view``), never another person's; a reply naming an id
        that is not among them is unusable, and the rules run instead. A host's own
        extractor is asked through ``extract_facts(messages)``. The rules' candidates are
        the changes of mind (forget, reversal, correction), the facts stated outright and
        the facts said with a secret, without it.

        ``LlmMemoryExtractor`` reads the messages window by window, oldest first, for at most
        its ``reads_at_most`` messages (``LlmMemoryExtractor.read``); the rest is left unread
        (``Extracted.unread``). When a call fails, the rules read what no call read; when the
        LLM gives nothing, the rules read what it read.
        """
        messages = list(messages)
        problem = None
        found: list[Candidate] = []
        read = len(messages)
        shown = self.store.get_all()
        seen = {memory.id: memory.version for memory in shown}
        if isinstance(self.llm_extractor, LlmMemoryExtractor):
            # Only what the thread's speakers may see: their memories and the household's.
            shown = thread_view(self.store.get_all(), messages)
            answer = self.llm_extractor.read(messages, memories=shown)
            problem = answer.problem
            found = [without_secret(fact) for fact in answer.facts or []]
            if problem is None:
                read = answer.read
            elif found:  # a later call failed: the rules read what no call did
                found += _rule_candidates(messages[answer.read :])
        elif self.llm_extractor is not None:
            facts = facts_from(self.llm_extractor.extract_facts(messages)) or []
            found = [without_secret(fact) for fact in facts]
        if not found:
            found = _rule_candidates(messages[:read])
        kept = found[: self.max_facts]
        return Extracted(
            kept, problem, cut=len(found) - len(kept), seen=seen, unread=len(messages) - read
        )

    @property
    def reads_at_most(self) -> int | None:
        """The most messages one ``extract`` reads (the LLM's calls), None: every one."""
        if isinstance(self.llm_extractor, LlmMemoryExtractor):
            return self.llm_extractor.reads_at_most
        return None

    # ----------------------------------------------------------------- reconciling
    def reconcile(
        self,
        candidates: Sequence[str | Candidate],
        categories: Sequence[str] | Mapping[str, str] | None = None,
        *,
        person: str | None | Everyone = EVERYONE,
        within: Callable[[str], bool] | None = None,
        seen: Mapping[str, str] | None = None,
    ) -> list[ReconcileAction]:
        """Compare candidates with the store: known → nothing, close variant → update, new → add.

        A change of mind becomes a ``delete`` of the memory it is about (or an ``update``
        when it states what replaces it); one whose memory is unclear becomes nothing. A
        switch ("… instead of …") whose memory is unclear is the fact it implies, compared as
        any fact. An LLM ``update``/``delete`` applies to the memory it names, if that memory
        still exists. At most one change per memory. Nothing already decided is proposed
        again (``already_decided``: memory says it, or Review holds it, approved, rejected or
        waiting).

        With ``person`` (a person's id, or None for the household) the candidates are that
        person's: they are compared with their view only (their memories and the
        household's, never another person's) and new facts are proposed as theirs; a change
        of the household's memory in their words is proposed as a new fact of theirs.
        ``within`` narrows what they are compared with further, to the memories, Review items
        and deleted facts whose text it accepts (an import's statements of someone nobody
        here is, compared only with what is kept of that name).

        An update or delete carries the version of its memory in ``seen`` (``Extracted.seen``:
        what the run read before the LLM was asked), else the version compared now.
        """
        scoped = not isinstance(person, Everyone)
        whose = None if isinstance(person, Everyone) else person
        memories = self.store.for_person(whose) if scoped else self.store.get_all()
        items = self._review_items()
        if scoped:  # another person's proposals are not this person's view
            items = [item for item in items if item.person in (None, whose)]
        # Facts deleted (and not restored since): proposed again by their owner, they are
        # marked so; another person's deletion says nothing of this person's fact.
        present = memories if not scoped else self.store.get_all()
        settle_deletions(self.store, self.tombstones)  # a host's deletions, however early
        tombstones = with_owners(self.tombstones.active(m.id for m in present), self.store)
        owner: Owner = ANYONE if not scoped else whose
        tombstones = [t for t in tombstones if owned_by(t, owner)]
        if within is not None:
            memories = [m for m in memories if within(m.content)]
            items = [item for item in items if within(item.content)]
            tombstones = [t for t in tombstones if t.content is None or within(t.content)]

        # By meaning as well as by words (the similarity layer; loads its model once per
        # process and embeds only memories it has no vector for yet).
        semantic = semantic_index(self.store.path) if memories or items or tombstones else None
        judge = semantic.judge() if semantic is not None else None

        def decided_by(action: ReconcileAction, seen: Sequence[ReviewItem]) -> bool:
            return already_decided(
                action.content,
                memories=memories,
                items=seen,
                action=action.action,
                memory_id=action.id,
                evidence=action.evidence,
                judge=judge,
            )

        def routed(action: ReconcileAction) -> ReconcileAction | None:
            """The action as proposed (marked when a person deleted its fact), or None when
            it is decided already or the person said not to propose it again."""
            if action.action != "delete" and tombstones:
                match = deleted_match(
                    action.content,
                    tombstones,
                    fingerprint=self.tombstones.fingerprint,
                    judge=judge,
                )
                if match is not None:
                    if match.no_propose or decided_by(action, still_deciding(items, match)):
                        return None
                    return replace(action, tombstone_id=match.id)
            return None if decided_by(action, items) else action

        # A memory is known as written and as the rules would phrase it ("My daughter's name
        # is Maya" / "Daughter's name is Maya"), so a restated fact is not proposed as a change.
        known = {normalize(m.content) for m in memories}
        known |= {normalize(as_user_fact(m.content)) for m in memories}
        actions: list[ReconcileAction] = []
        changed: set[str] = set()
        for index, candidate in enumerate(candidates):
            if isinstance(candidate, ChangeOfMind) or (
                isinstance(candidate, StructuredFact) and candidate.action != "add"
            ):
                change = _change_action(candidate, memories)
                if change is not None:
                    proposed = routed(change) if change.id not in changed else None
                    if proposed is not None:
                        changed.add(str(change.id))
                        actions.append(proposed)
                    continue
                implied = _implied_fact(candidate, memories)
                if implied is None:
                    continue
                candidate = implied
            fact = without_secret(_as_fact(candidate, _category_for(categories, index, candidate)))
            key = normalize(fact.content)
            # An instruction about memory itself ("Everything I said before is wrong") is never
            # a fact, whichever extractor read it as one.
            if not key or key in known or is_memory_instruction(fact.content):
                continue
            known.add(key)
            action = _action_for(fact, memories, judge)
            proposed = routed(action) if action is not None else None
            if proposed is not None:
                actions.append(proposed)
        if semantic is not None:
            semantic.save()
        if whose is not None:
            actions = [_own(a, whose, memories) for a in actions]
        versions = {m.id: m.version for m in memories} | dict(seen or {})
        actions = [
            replace(a, version=versions.get(a.id)) if a.id is not None else a for a in actions
        ]
        return assured(weighed(actions), memories, judge)

    def _review_items(self) -> list[ReviewItem]:
        """Every item in Review: waiting, approved and rejected."""
        if self.review_queue is None:
            return []
        return [*self.review_queue.pending(), *self.review_queue.decided()]

    # ----------------------------------------------------------------- writing
    @property
    def model(self) -> str | None:
        """The LLM's "provider/model" label, or None without an LLM."""
        label = getattr(self.llm_extractor, "label", None)  # a host's extractor may have none
        return label if isinstance(label, str) else None

    def apply(
        self, actions: Iterable[ReconcileAction], *, conversation_id: str | None = None
    ) -> list[Memory]:
        """Write the actions to the store; MemoryFullError stops at the first that does not fit."""
        written: list[Memory] = []
        for action in actions:
            memory = self._apply_one(action, conversation_id)
            if memory is not None:
                written.append(memory)
        return written

    def _origin(self, action: ReconcileAction, conversation_id: str | None) -> dict[str, Any]:
        """Where a memory written straight from extraction (auto mode) came from."""
        return make_origin(
            "extracted",
            conversationId=conversation_id,
            evidence=_masked(action.evidence),
            evidenceAt=action.evidence_at,
            extractor="llm" if action.extractor == "llm" else "rules",
            model=self.model if action.extractor == "llm" else None,
            by=self.actor,
            at=now_iso(),
            action="update" if action.action == "update" else None,
        )

    def _apply_one(
        self, action: ReconcileAction, conversation_id: str | None = None
    ) -> Memory | None:
        origin = self._origin(action, conversation_id)
        if action.action == "delete" and action.id:
            before = self.store.get(action.id)
            return before if self.store.delete(action.id, actor=self.actor) else None
        expires = read_time(action.expires_at)
        if action.action == "update" and action.id and self.store.get(action.id) is not None:
            # Raises ConflictError when the memory changed since the run read it.
            updated = self.store.update(
                action.id,
                action.content,
                actor=self.actor,
                origin=origin,
                expected_updated_at=action.version,
            )
            if updated is not None and updated.expires_at != expires:
                updated = self.store.set_expiry(updated.id, expires, actor=self.actor)
            return updated
        if action.action in ("add", "update"):
            try:
                # Checked under the lock: another run may have stored it since we reconciled.
                return self.store.add(
                    action.content,
                    category=action.category,
                    source="extracted",
                    actor=self.actor,
                    allow_duplicate=False,
                    origin=origin,
                    person=action.person,
                    expires_at=expires,
                )
            except DuplicateMemoryError:
                return None
        return None

    def submit(
        self,
        actions: Iterable[ReconcileAction],
        *,
        conversation_id: str | None = None,
        evidence: str | None = None,
    ) -> Submitted:
        """Queue the actions for review (manual mode) or write them to memory (auto mode).

        In auto mode, actions that do not fit a full store are queued for review instead
        when there is a queue, so nothing is lost.
        """
        actions = list(actions)
        if self.mode == "auto":
            return self._submit_auto(actions, conversation_id, evidence)
        if self.review_queue is None:
            raise ManualModeError("Manual review mode needs a review queue to put facts in.")
        queued = self.review_queue.submit(
            [_proposal(a, evidence, self.model) for a in actions], conversation_id=conversation_id
        )
        return Submitted(queued=queued, skipped=len(actions) - len(queued))

    def _submit_auto(
        self, actions: list[ReconcileAction], conversation_id: str | None, evidence: str | None
    ) -> Submitted:
        """Apply adds and updates; deletions, facts said with a secret (never saved without a
        person seeing them), facts a person deleted before, facts whose owner nobody could
        tell, facts said in doubt, second-hand or in a bulk instruction, or only close to a
        memory (``doubt``), and updates of a memory changed since the run read it
        (``ReconcileAction.version``) always wait in the review queue."""
        result = Submitted()

        def waits(action: ReconcileAction) -> bool:
            return action.action == "delete" or bool(
                action.withheld
                or action.tombstone_id
                or action.unsure
                or action.doubt
                or action.owner_undecided
            )

        deletions = [a for a in actions if waits(a)]
        actions = [a for a in actions if not waits(a)]
        if deletions:
            if self.review_queue is None:
                result.skipped += len(deletions)
            else:
                waiting = [_proposal(a, evidence, self.model) for a in deletions]
                result.queued = self.review_queue.submit(waiting, conversation_id=conversation_id)
                result.skipped += len(waiting) - len(result.queued)
        for index, action in enumerate(actions):
            try:
                memory = self._apply_one(action, conversation_id)
            except ConflictError as conflict:
                # Edited while the LLM was asked: a person decides, seeing the new text.
                if self.review_queue is None:
                    result.skipped += 1
                    continue
                now = conflict.current
                proposed = replace(
                    action,
                    current_content=getattr(now, "content", action.current_content),
                    version=getattr(now, "version", None),
                )
                queued = self.review_queue.submit(
                    [_proposal(proposed, evidence, self.model)], conversation_id=conversation_id
                )
                result.queued.extend(queued)
                result.skipped += 1 - len(queued)
                continue
            except MemoryFullError:
                if self.review_queue is None:
                    raise
                rest = [_proposal(a, evidence, self.model) for a in actions[index:]]
                queued = self.review_queue.submit(rest, conversation_id=conversation_id)
                result.queued.extend(queued)
                result.skipped += len(rest) - len(queued)
                return result
            if memory is not None:
                result.applied.append(memory)
            else:
                result.skipped += 1
        return result

    # ----------------------------------------------------------------- pacing
    def should_extract(self, conversation_id: str, new_message_count: int) -> bool:
        """At least 4 new messages and 60 s since this conversation was last extracted."""
        return self.state.should_extract(conversation_id, new_message_count)

    def mark_extracted(self, conversation_id: str, **kwargs: Any) -> None:
        """Record that extraction just ran on this conversation (in the shared state file)."""
        self.state.mark_extracted(conversation_id, **kwargs)


def _rule_candidates(messages: Sequence[Any]) -> list[Candidate]:
    """What the rules find: the changes of mind, the facts stated outright, the facts said
    with a secret (without it)."""
    return [*find_changes(messages), *rule_facts(messages), *withheld_facts(messages)]


def _own(action: ReconcileAction, whose: str, memories: Sequence[Memory]) -> ReconcileAction:
    """A person's action as theirs: a new fact is theirs, and a change to the household's
    memory in their words is a new fact of theirs instead (the household's memory is
    everyone's: a person's words never reach it by an update)."""
    if action.action == "update":
        target = next((m for m in memories if m.id == action.id), None)
        if target is None or target.person is not None:
            return action
        action = replace(action, action="add", id=None, current_content=None, unsure=False)
    return replace(action, person=whose) if action.action == "add" else action


def _change_action(candidate: Candidate, memories: list[Memory]) -> ReconcileAction | None:
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


def _implied_fact(candidate: Candidate, memories: list[Memory]) -> StructuredFact | None:
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


def _category_for(
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


def _as_fact(candidate: str | Candidate, category: str | None) -> StructuredFact:
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


def _action_for(
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


def _masked(text: str | None) -> str | None:
    return None if text is None else mask_secrets(text)


def _proposal(action: ReconcileAction, evidence: str | None, model: str | None) -> Proposal:
    return Proposal(
        action=action.action,
        content=action.content,
        category=action.category,
        memory_id=action.id,
        current_content=action.current_content,
        confidence=action.confidence,
        extractor=action.extractor,
        evidence=_masked(action.evidence or evidence),
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
