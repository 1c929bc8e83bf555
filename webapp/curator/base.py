"""``CuratorBase``: what every operation of the curator shares: the stores of one data folder
(each built once, cached per file version), who acts and through which door, the view it keeps
to, and the read-only views the doors get. Each group of operations is a class of its own module
on top of it (``Remembering``, ``Forgetting``, ``Reviewing``, ...), and ``Curator`` (``core``)
is all of them: an operation is a method, written once, where "go to definition" finds it."""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from functools import cached_property
from typing import Any, Self

from ..attention.findings import Finding
from ..attention.llm_check import LlmPairChecker, pair_checker_from_settings
from ..attention.pair_verdicts import pair_verdicts
from ..attention.semantic import SemanticIndex, semantic_index
from ..settings import Settings
from ..stores import (
    ConversationStore,
    ConversationYield,
    Memory,
    MemoryStore,
    NotFoundError,
    PeopleStore,
    ReviewItem,
    ReviewQueue,
    derived_from,
)
from ..stores.dismissals import DismissalStore
from ..stores.exchanges import ExchangeKeyStore
from ..stores.readers import (
    ConversationReader,
    DismissalReader,
    MemoryReader,
    PeopleReader,
    ReviewReader,
    SkillReader,
    TombstoneReader,
)
from ..stores.skills import SkillDocumentStore
from ..stores.tombstones import TombstoneStore
from .people import (
    EVERYONE,
    View,
    check_thread,
    in_view,
    item_in_view,
    ref_in_view,
    resolve_person,
    thread_in_view,
    visible_memory,
)


class CuratorBase:
    """The stores of one data folder, who acts (``actor``, written in every history entry)
    through which door (``via``), and whose data it may see and change (``view``,
    ``people.View``); the operations are the methods of the classes built on it, and
    ``Curator`` is all of them (its docstring says more)."""

    def __init__(
        self,
        settings: Settings,
        *,
        actor: str = "library",
        via: str | None = None,
        wait_gate: threading.Semaphore | None = None,
        view: View = EVERYONE,
    ) -> None:
        self.settings = settings
        self.view = view
        self.actor = actor
        self.via = via or actor
        self.wait_gate = wait_gate
        # How far ``settle_deletions`` has read the memories' history log: (inode, size).
        self.history_seen: tuple[int, int] | None = None

    def within(self, view: View) -> Self:
        """This curator kept to ``view`` (``people.View``), sharing its stores and their
        caches: what a request of one person uses."""
        if view == self.view:
            return self
        for store in (
            "_memory_store",
            "_conversation_store",
            "_review_queue",
            "_people_store",
            "_tombstone_store",
            "_exchange_key_store",
        ):
            getattr(self, store)  # built once, here, so both share them
        scoped = copy.copy(self)
        scoped.view = view
        return scoped

    def memory(self, memory_id: str) -> Memory:
        """The memory ``memory_id`` when this curator's view may see it; NotFoundError
        (``memory_gone``) otherwise (``people.visible_memory``)."""
        return visible_memory(self, memory_id)

    def visible(self, memory: Memory | None) -> bool:
        """Whether this curator's view may see ``memory`` (``people.in_view``)."""
        return in_view(memory, self.view)

    def sees_ref(self, ref: str) -> bool:
        """Whether this curator's view may see the memory a memory id or history id names,
        as it is, was when deleted, and in that change (``people.ref_in_view``)."""
        return ref_in_view(self, ref)

    def check_thread(self, conversation_id: str) -> None:
        """Refuse (``conversation_not_found``) another person's thread, or, within a view,
        one that left anything outside it (what ``forget_conversation`` would touch)."""
        check_thread(self, conversation_id)
        if self.view is not EVERYONE:
            found = derived_from(self._review_queue, conversation_id)
            memories = [*found.memories, *found.kept, *(c.memory for c in found.reverted)]
            if not all(map(self.visible, memories)) or not all(map(self.sees_item, found.pending)):
                raise NotFoundError(
                    f"No conversation {conversation_id!r}.",
                    code="conversation_not_found",
                    id=repr(conversation_id),
                )

    def conversation_yield(self, conversation_id: str) -> ConversationYield:
        """What the conversation ``conversation_id`` gave: the memories it added or changed and
        its pending proposals (``stores.derived_from``)."""
        return derived_from(self._review_queue, conversation_id)

    def pair_checker(self) -> LlmPairChecker | None:
        """Needs attention's LLM tier for this data folder (``attention.llm_check``; None
        without a model), its verdicts kept in the file beside the memories
        (``curation.pair_verdicts``), which only the curator's checker writes."""
        return pair_checker_from_settings(
            self.settings, memory=pair_verdicts(self._memory_store.path)
        )

    def init_files(self) -> None:
        """Create the memory and conversation files when they are missing."""
        self._memory_store.init()
        self._conversation_store.init()

    def findings_in_view(self, groups: Mapping[str, list[Finding]]) -> dict[str, list[Finding]]:
        """Needs attention's findings (by kind) this curator's view may see: those whose
        every memory it may see, so no finding compares with, or counts, another person's."""
        if self.view is EVERYONE:
            return dict(groups)
        return {
            kind: [f for f in found if all(map(self.visible, f.memories))]
            for kind, found in groups.items()
        }

    def sees_thread(self, speakers: tuple[str, ...]) -> bool:
        """Whether this curator's view may see a thread whose messages name ``speakers``."""
        return thread_in_view(speakers, self.view)

    def sees_item(self, item: ReviewItem | None) -> bool:
        """Whether this curator's view may see the proposal ``item``."""
        return item is not None and item_in_view(item, self.view)

    # ----------------------------------------------------------------- the stores
    def _gated(self, store: Any) -> Any:
        if self.wait_gate is not None:
            store.wait_gate = self.wait_gate
        return store

    @cached_property
    def _memory_store(self) -> MemoryStore:
        store: MemoryStore = self._gated(MemoryStore.from_settings(self.settings, actor=self.actor))
        return store

    @cached_property
    def _conversation_store(self) -> ConversationStore:
        store: ConversationStore = self._gated(ConversationStore.from_settings(self.settings))
        return store

    @cached_property
    def _review_queue(self) -> ReviewQueue:
        queue: ReviewQueue = self._gated(
            ReviewQueue.from_settings(self.settings, self._memory_store)
        )
        return queue

    @cached_property
    def _people_store(self) -> PeopleStore:
        store: PeopleStore = self._gated(PeopleStore.from_settings(self.settings, actor=self.actor))
        return store

    @cached_property
    def _tombstone_store(self) -> TombstoneStore:
        store: TombstoneStore = self._gated(TombstoneStore.from_settings(self.settings))
        return store

    @cached_property
    def _dismissal_store(self) -> DismissalStore:
        return DismissalStore.from_settings(self.settings)

    @cached_property
    def _exchange_key_store(self) -> ExchangeKeyStore:
        """The keys of the exchanges Home Assistant's Assist sent (``curator.assist``)."""
        store: ExchangeKeyStore = self._gated(ExchangeKeyStore.from_settings(self.settings))
        return store

    @cached_property
    def _skill_store(self) -> SkillDocumentStore:
        store: SkillDocumentStore = self._gated(SkillDocumentStore.from_settings(self.settings))
        return store

    # ----------------------------------------------------------------- what doors read
    # The doors get each store read-only (``readers``): a door that writes one is a type error.
    @property
    def memories(self) -> MemoryReader:
        return self._memory_store

    @property
    def conversations(self) -> ConversationReader:
        return self._conversation_store

    @property
    def review(self) -> ReviewReader:
        return self._review_queue

    @property
    def people(self) -> PeopleReader:
        return self._people_store

    @property
    def tombstones(self) -> TombstoneReader:
        return self._tombstone_store

    @property
    def dismissals(self) -> DismissalReader:
        return self._dismissal_store

    @property
    def skills(self) -> SkillReader:
        return self._skill_store

    @property
    def semantic(self) -> SemanticIndex:
        """The similarity index of this folder's memory file."""
        return semantic_index(self._memory_store.path)

    # ----------------------------------------------------------------- people
    def person(
        self, ref: str | None, *, reading: bool = False, record_unknown: bool = True
    ) -> str | None:
        """The id of the person ``ref`` names (``people.resolve_person``)."""
        return resolve_person(self, ref, reading=reading, record_unknown=record_unknown)
