"""``Curator``: the stores of one data folder and every operation on them, each once."""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator, Mapping
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from ..attention.findings import Finding
from ..attention.llm_check import LlmPairChecker, pair_checker_from_settings
from ..attention.pair_verdicts import pair_verdicts
from ..attention.semantic import SemanticIndex, semantic_index
from ..extraction.run import ExtractionResult, extract_conversation, extract_due
from ..imports import ASK, ImportPlan
from ..settings import Settings
from ..stores import (
    ConversationStore,
    ConversationYield,
    ImportPreview,
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
from . import (
    forgetting,
    household,
    importing,
    merging,
    remembering,
    reviewing,
    threads,
    undoing,
    upkeep,
)
from .errors import DeletedForeverError
from .people import (
    EVERYONE,
    View,
    check_person,
    check_thread,
    in_view,
    item_in_view,
    person_in_view,
    ref_in_view,
    resolve_person,
    thread_in_view,
    visible_memory,
)


class Curator:
    """Every operation on the memory of one data folder, with one policy whatever the door.

    ``actor`` is who acts (written in every history entry), ``via`` the door ("dashboard",
    "cli", "mcp", "library"); each operation takes its own ``actor`` when a door acts for
    several people (the dashboard behind Home Assistant). ``view`` is whose data it may see
    and change (``people.View``): EVERYONE for the household's curator (the command line, the
    dashboard standalone), one person's id for that person (theirs and the household's), None
    for the household's alone; ``within(view)`` gives the same curator kept to a view, and
    every operation of it refuses another person's memory, proposal or thread as unknown.
    Two curators of two data folders share nothing; the stores of one are built once and
    cached per file version.
    """

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

    @classmethod
    def from_settings(
        cls, settings: Settings | None = None, *, actor: str = "library", via: str | None = None
    ) -> Curator:
        """The curator of the data folder ``settings`` name (read from the environment when
        None), acting as ``actor``. A Delete forever a killed process left half-way is
        finished first (``forgetting.finish_interrupted``)."""
        curator = cls(settings or Settings.from_env(), actor=actor, via=via)
        curator.finish_interrupted()
        return curator

    def within(self, view: View) -> Curator:
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

    add_person = household.add_person
    person_from = household.person_from
    rename_person = household.rename_person
    link_identity = household.link_identity
    unlink_identity = household.unlink_identity
    note_identity = household.note_identity
    choose_device = household.choose_device
    remove_person = household.remove_person
    restore_person = household.restore_person

    # ----------------------------------------------------------------- skills, findings
    save_skill = household.save_skill
    deprecate_skill = household.deprecate_skill
    restore_skill = household.restore_skill
    restore_skill_version = household.restore_skill_version
    import_staged_skills = household.import_staged_skills
    import_skills = household.import_skills
    dismiss_finding = household.dismiss_finding
    restore_finding = household.restore_finding

    # Each operation is written once, in its module, taking the curator first: bound here as
    # methods, so the signature and the docstring are the module function's own.

    # ----------------------------------------------------------------- memories
    remember = remembering.remember
    revise = remembering.revise
    move_to_household = merging.move_to_household
    merge = merging.merge
    require_versions = merging.require_versions

    # ----------------------------------------------------------------- undoing an attention fix
    undoable_edit = undoing.undoable_edit
    undo_rewrite = undoing.undo_rewrite
    undo_extend = undoing.undo_extend

    # ----------------------------------------------------------------- forgetting
    forget = forgetting.forget
    forget_many = forgetting.forget_many

    def restore(
        self, ref: str, *, expected: Memory | str | None = None, actor: str | None = None
    ) -> Memory:
        """Bring back a deleted memory (by its id) or a memory's state before a history entry
        (by its hid); a memory back is no longer forgotten (its tombstone is lifted). KeyError
        when there is nothing to restore (``MemoryStore.restore``), or the memory is outside
        this curator's view (as if it did not exist)."""
        if not ref_in_view(self, ref):
            raise KeyError(f"Nothing to restore for {ref!r}: no such memory was deleted.")
        if forgetting.deleted_forever(self, ref):
            raise DeletedForeverError(ref)
        memory = self._memory_store.restore(ref, actor=actor or self.actor, expected=expected)
        self._tombstone_store.lift([memory.id])
        return memory

    def finish_forgetting(self) -> int:
        """Finish the Delete forever runs a killed process left half-way (for ``repair``)."""
        return forgetting.finish_forgetting(self)

    def finish_interrupted(self) -> int:
        """Finish them when the marker says one may wait (``forgetting.finish_interrupted``):
        what a start does."""
        return forgetting.finish_interrupted(self)

    def extract(
        self,
        conversation_id: str | None = None,
        *,
        all_threads: bool = False,
        dry_run: bool = False,
        actor: str | None = None,
        force: bool = True,
    ) -> list[ExtractionResult]:
        """Extract facts from one conversation (every message of it; without ``force``, only
        its new messages and only when due) or from every thread that is due (``all_threads``:
        that has any new message), queued or applied by the review mode. First, a memory a
        host program deleted without a tombstone gets one, so its fact is not proposed again
        as new. ``dry_run`` decides everything and saves nothing."""
        who = actor or self.actor
        if conversation_id is not None:
            check_thread(self, conversation_id)
        elif self.view is not EVERYONE:  # a person's: their threads' new messages, one by one
            threads = [
                s.id
                for s in self._conversation_store.list_conversations()
                if self.sees_thread(s.speakers)
            ]
            return [
                found
                for thread in threads
                for found in self.extract(thread, dry_run=dry_run, actor=actor, force=False)
            ]
        if not dry_run:
            self.settle_deletions()
        mine = (
            self._memory_store,
            self._conversation_store,
            self._review_queue,
        )  # their caches are warm
        if conversation_id is not None:
            return [
                extract_conversation(
                    self.settings,
                    conversation_id,
                    force=force,
                    dry_run=dry_run,
                    actor=who,
                    stores=mine,
                )
            ]
        return extract_due(
            self.settings, all_threads=all_threads, dry_run=dry_run, actor=who, stores=mine
        )

    def set_expiry(
        self,
        memory_id: str,
        expires: datetime | None,
        *,
        expected: str | None = None,
        actor: str | None = None,
    ) -> Memory | None:
        """When a memory stops being true (None: never), while it is at version ``expected``
        (ConflictError otherwise); None when it is gone."""
        return self._memory_store.set_expiry(
            memory_id, expires, expected_updated_at=expected, actor=actor or self.actor
        )

    def undo_merge(
        self, dropped_id: str, update_hid: str | None = None, *, actor: str | None = None
    ) -> list[Memory]:
        """Bring back the memory a merge deleted and the kept one's earlier text (KeyError when
        there is nothing to undo, or it is outside this curator's view)."""
        for ref in (dropped_id, update_hid):
            if ref and not ref_in_view(self, ref):
                raise KeyError(f"Nothing to restore for {ref!r}.")
        return self._memory_store.undo_merge(dropped_id, update_hid, actor=actor or self.actor)

    forget_conversation = threads.forget_thread
    undo_forget_conversation = threads.undo_forget_thread
    keep_exchange = threads.keep_exchange

    def clear_conversation(self, conversation_id: str) -> bool:
        """Delete a thread's messages (the memories it gave stay); False when it had none;
        another person's thread is unknown (``conversation_not_found``)."""
        check_thread(self, conversation_id)
        return self._conversation_store.clear(conversation_id)

    def settle_deletions(self) -> int:
        """Tombstones for memories deleted without one (``forgetting.settle_deletions``)."""
        return forgetting.settle_deletions(self)

    # ----------------------------------------------------------------- review
    approve = reviewing.approve
    propose = reviewing.propose

    def pending(self, view: View = EVERYONE) -> list[ReviewItem]:
        """The proposals waiting in Review that ``view`` (else this curator's) may see
        (``people.item_in_view``): a person's own and the household's, never another
        person's."""
        view = view if view is not EVERYONE else self.view
        return [item for item in self._review_queue.pending() if item_in_view(item, view)]

    def reject(self, item_id: str, *, actor: str | None = None) -> ReviewItem:
        """Mark a proposal rejected: it is not proposed again (``review_item_not_found``
        outside this curator's view)."""
        reviewing.visible_item(self, item_id)
        return self._review_queue.reject(item_id, actor=actor or self.actor)

    def undo_decision(self, item_id: str, *, actor: str | None = None) -> ReviewItem:
        """Take a decision back (``reviewing.undo``)."""
        return reviewing.undo(self, item_id, actor=actor)

    def reject_source(self, source: str, *, actor: str | None = None) -> int:
        """Reject every proposal waiting from one import that this curator's view may see;
        how many."""
        if self.view is not EVERYONE:
            mine = [
                i
                for i in self._review_queue.pending_from(source)
                if self.sees_item(self._review_queue.get(i))
            ]
            return sum(1 for i in mine if self.reject(i, actor=actor).status == "rejected")
        return self._review_queue.reject_source(source, actor=actor or self.actor)

    approve_source = importing.approve_source

    # ----------------------------------------------------------------- imports
    def export(self, fmt: str = "json", view: View = EVERYONE) -> bytes:
        """The memories ``view`` (else this curator's) may see (``people.in_view``: a
        person's own and the household's, never another person's) in ``fmt``
        (``importing.export_view``)."""
        return importing.export_view(self, fmt, view if view is not EVERYONE else self.view)

    def preview_export(self, content: str) -> tuple[list[dict[str, Any]], ImportPreview]:
        """This program's own export read and previewed (``importing.preview_own``)."""
        return importing.preview_own(self, content)

    def check_import(self, records: list[dict[str, Any]]) -> None:
        """Within a view, an own export may hold only the viewer's memories and the
        household's, and change no memory outside the view: ``person_unknown`` or
        ``memory_gone`` otherwise, as if that person or memory did not exist."""
        if self.view is EVERYONE:
            return
        for record in records:
            if not isinstance(record, dict):
                continue
            person = record.get("person")
            check_person(person if isinstance(person, str) and person else None, self.view)
            memory_id = record.get("id")
            if isinstance(memory_id, str) and memory_id:
                existing = self._memory_store.get(memory_id) or self._memory_store.deleted(
                    memory_id
                )
                if existing is not None and not self.visible(existing):
                    visible_memory(self, memory_id)  # raises memory_gone

    def import_export(
        self,
        records: list[dict[str, Any]],
        *,
        source: str,
        confirm_secrets: bool = False,
        actor: str | None = None,
    ) -> dict[str, int]:
        """Import this program's own export; deleted facts stay forgotten (``importing``);
        within a view only as ``check_import`` allows."""
        self.check_import(records)
        return importing.import_own(
            self, records, source=source, confirm_secrets=confirm_secrets, actor=actor
        )

    def plan_import(
        self,
        content: str,
        *,
        fmt: str = "auto",
        file_name: str | None = None,
        day: str | None = None,
        owner: str | None = None,
        lines: Mapping[int, str | None] | None = None,
    ) -> ImportPlan:
        """Another system's file reconciled with memory and Review, each statement within
        its owner's view (``importing.plan_file``); within a person's view, every owner is
        that person or the household (``person_unknown`` otherwise)."""
        for person in {owner, *(lines or {}).values()}:
            check_person(person, self.view)
        plan = importing.plan_file(
            self, content, fmt=fmt, file_name=file_name, day=day, owner=owner, lines=lines
        )
        # A line the file says is another person's is the importer's own within a view:
        # nobody imports as someone else, nor is it compared with their memories.
        outside = {
            line: owner
            for line, whose in plan.owners.items()
            if whose != ASK and not person_in_view(whose, self.view)
        }
        if not outside:
            return plan
        return importing.plan_file(
            self,
            content,
            fmt=fmt,
            file_name=file_name,
            day=day,
            owner=owner,
            lines={**(lines or {}), **outside},
        )

    def queue_import(self, plan: ImportPlan) -> list[ReviewItem]:
        """Queue a plan's proposals in Review."""
        return importing.queue_plan(self, plan)

    # ----------------------------------------------------------------- upkeep
    def data_files(self) -> list[upkeep.DataFile]:
        """Every JSON file the program keeps in the data folder, and its store
        (``upkeep.data_files``)."""
        return upkeep.data_files(self)

    def folder_files(self) -> dict[Path, str]:
        """Every file in the data and skills folders and what it is, "" for a file the
        program does not write (``upkeep.folder_files``)."""
        return upkeep.folder_files(self)

    def stats(self) -> upkeep.Stats:
        """Where the stores are, how full, and which file cannot be used (``upkeep.stats``)."""
        return upkeep.stats(self)

    def repair(self) -> Iterator[upkeep.RepairStep]:
        """Set damaged files aside and start again from their backups, step by step
        (``upkeep.repair``)."""
        return upkeep.repair(self)
