"""From conversation to memory: extract candidates, compare them with what is remembered, submit."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..attention.semantic import semantic_index
from ..language.phrasing import as_user_fact, is_memory_instruction
from ..settings import DEFAULTS
from ..stores.errors import ConflictError, DuplicateMemoryError, MemoryFullError
from ..stores.memories import Memory, MemoryStore
from ..stores.origin import make_origin
from ..stores.review import ReviewItem, ReviewQueue
from ..stores.timefmt import now_iso, read_time
from ..stores.tombstones import TombstoneStore
from ..text import normalize
from .actions import (
    EVERYONE,
    Candidate,
    Everyone,
    Extracted,
    ManualModeError,
    ReconcileAction,
    Submitted,
    masked,
    proposal,
    weighed,
)
from .attribution import thread_view
from .candidates import (
    action_for,
    as_fact,
    as_theirs,
    category_for,
    change_action,
    implied_fact,
    rule_candidates,
    without_secret,
)
from .changes import ChangeOfMind
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
from .llm import FactExtractor, LlmMemoryExtractor, StructuredFact, facts_from
from .rules import rule_facts, withheld_facts
from .state import STATE_FILE_NAME, ExtractionState
from .sureness import assured

MODES = ("manual", "auto")


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
                found += rule_candidates(messages[answer.read :])
        elif self.llm_extractor is not None:
            facts = facts_from(self.llm_extractor.extract_facts(messages)) or []
            found = [without_secret(fact) for fact in facts]
        if not found:
            found = rule_candidates(messages[:read])
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
                change = change_action(candidate, memories)
                if change is not None:
                    proposed = routed(change) if change.id not in changed else None
                    if proposed is not None:
                        changed.add(str(change.id))
                        actions.append(proposed)
                    continue
                implied = implied_fact(candidate, memories)
                if implied is None:
                    continue
                candidate = implied
            fact = without_secret(as_fact(candidate, category_for(categories, index, candidate)))
            key = normalize(fact.content)
            # An instruction about memory itself ("Everything I said before is wrong") is never
            # a fact, whichever extractor read it as one.
            if not key or key in known or is_memory_instruction(fact.content):
                continue
            known.add(key)
            action = action_for(fact, memories, judge)
            proposed = routed(action) if action is not None else None
            if proposed is not None:
                actions.append(proposed)
        if semantic is not None:
            semantic.save()
        if whose is not None:
            actions = [as_theirs(a, whose, memories) for a in actions]
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
            evidence=masked(action.evidence),
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
            [proposal(a, evidence, self.model) for a in actions], conversation_id=conversation_id
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
                waiting = [proposal(a, evidence, self.model) for a in deletions]
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
                    [proposal(proposed, evidence, self.model)], conversation_id=conversation_id
                )
                result.queued.extend(queued)
                result.skipped += 1 - len(queued)
                continue
            except MemoryFullError:
                if self.review_queue is None:
                    raise
                rest = [proposal(a, evidence, self.model) for a in actions[index:]]
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
