"""``Curator``: the stores of one data folder and every operation on them, each once."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from ..curation.semantic import SemanticIndex, semantic_index
from ..extraction.imports import ImportPlan, SourceDecision, approve_source
from ..extraction.run import ExtractionResult, extract_conversation, extract_due
from ..settings import Settings
from ..stores import (
    ConversationStore,
    Forgotten,
    ImportPreview,
    Memory,
    MemoryStore,
    PeopleStore,
    ReviewItem,
    ReviewQueue,
    forget_conversation,
    undo_forget,
)
from ..stores.dismissals import DismissalStore
from ..stores.skills import SkillDocumentStore
from ..stores.tombstones import TombstoneStore
from . import forgetting, household, importing, merging, remembering, reviewing, upkeep
from .errors import DeletedForeverError
from .people import EVERYONE, View, item_in_view, resolve_person


class Curator:
    """Every operation on the memory of one data folder, with one policy whatever the door.

    ``actor`` is who acts (written in every history entry), ``via`` the door ("dashboard",
    "cli", "mcp", "library"); each operation takes its own ``actor`` when a door acts for
    several people (the dashboard behind Home Assistant). Two curators of two data folders
    share nothing; the stores of one are built once and cached per file version.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        actor: str = "library",
        via: str | None = None,
        wait_gate: threading.Semaphore | None = None,
    ) -> None:
        self.settings = settings
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

    # ----------------------------------------------------------------- the stores
    def _gated(self, store: Any) -> Any:
        if self.wait_gate is not None:
            store.wait_gate = self.wait_gate
        return store

    @cached_property
    def memories(self) -> MemoryStore:
        store: MemoryStore = self._gated(MemoryStore.from_settings(self.settings, actor=self.actor))
        return store

    @cached_property
    def conversations(self) -> ConversationStore:
        store: ConversationStore = self._gated(ConversationStore.from_settings(self.settings))
        return store

    @cached_property
    def review(self) -> ReviewQueue:
        queue: ReviewQueue = self._gated(ReviewQueue.from_settings(self.settings, self.memories))
        return queue

    @cached_property
    def people(self) -> PeopleStore:
        store: PeopleStore = self._gated(PeopleStore.from_settings(self.settings, actor=self.actor))
        return store

    @cached_property
    def tombstones(self) -> TombstoneStore:
        store: TombstoneStore = self._gated(TombstoneStore.from_settings(self.settings))
        return store

    @cached_property
    def dismissals(self) -> DismissalStore:
        return DismissalStore.from_settings(self.settings)

    @cached_property
    def skills(self) -> SkillDocumentStore:
        store: SkillDocumentStore = self._gated(SkillDocumentStore.from_settings(self.settings))
        return store

    @property
    def semantic(self) -> SemanticIndex:
        """The similarity index of this folder's memory file."""
        return semantic_index(self.memories.path)

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

    # ----------------------------------------------------------------- forgetting
    forget = forgetting.forget
    forget_many = forgetting.forget_many

    def restore(
        self, ref: str, *, expected: Memory | str | None = None, actor: str | None = None
    ) -> Memory:
        """Bring back a deleted memory (by its id) or a memory's state before a history entry
        (by its hid); a memory back is no longer forgotten (its tombstone is lifted). KeyError
        when there is nothing to restore (``MemoryStore.restore``)."""
        if forgetting.deleted_forever(self, ref):
            raise DeletedForeverError(ref)
        memory = self.memories.restore(ref, actor=actor or self.actor, expected=expected)
        self.tombstones.lift([memory.id])
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
        if not dry_run:
            self.settle_deletions()
        mine = (self.memories, self.conversations, self.review)  # their caches are warm
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
        return self.memories.set_expiry(
            memory_id, expires, expected_updated_at=expected, actor=actor or self.actor
        )

    def undo_merge(
        self, dropped_id: str, update_hid: str | None = None, *, actor: str | None = None
    ) -> list[Memory]:
        """Bring back the memory a merge deleted and the kept one's earlier text (KeyError when
        there is nothing to undo)."""
        return self.memories.undo_merge(dropped_id, update_hid, actor=actor or self.actor)

    def forget_conversation(
        self,
        conversation_id: str,
        *,
        seen: Mapping[str, str] | None = None,
        actor: str | None = None,
    ) -> Forgotten:
        """Take back what a conversation added or changed, only as the person saw it
        (``stores.forget_conversation``)."""
        return forget_conversation(
            self.review, conversation_id, actor=actor or self.actor, seen=seen
        )

    def undo_forget_conversation(
        self,
        memory_ids: Iterable[str],
        rejected_ids: Iterable[str],
        reverted_hids: Iterable[str] = (),
        *,
        undeleted_ids: Iterable[str] = (),
        actor: str | None = None,
    ) -> tuple[int, int]:
        """Undo ``forget_conversation`` (``stores.undo_forget``)."""
        return undo_forget(
            self.review,
            memory_ids,
            rejected_ids,
            reverted_hids,
            actor=actor or self.actor,
            undeleted_ids=undeleted_ids,
        )

    def clear_conversation(self, conversation_id: str) -> bool:
        """Delete a thread's messages (the memories it gave stay); False when it had none."""
        return self.conversations.clear(conversation_id)

    def settle_deletions(self) -> int:
        """Tombstones for memories deleted without one (``forgetting.settle_deletions``)."""
        return forgetting.settle_deletions(self)

    # ----------------------------------------------------------------- review
    approve = reviewing.approve

    def pending(self, view: View = EVERYONE) -> list[ReviewItem]:
        """The proposals waiting in Review that ``view`` may see (``people.item_in_view``):
        a person's own and the household's, never another person's."""
        return [item for item in self.review.pending() if item_in_view(item, view)]

    def reject(self, item_id: str, *, actor: str | None = None) -> ReviewItem:
        """Mark a proposal rejected: it is not proposed again."""
        return self.review.reject(item_id, actor=actor or self.actor)

    def undo_decision(self, item_id: str, *, actor: str | None = None) -> ReviewItem:
        """Take a decision back (``reviewing.undo``)."""
        return reviewing.undo(self, item_id, actor=actor)

    def reject_source(self, source: str, *, actor: str | None = None) -> int:
        """Reject every proposal waiting from one import; how many."""
        return self.review.reject_source(source, actor=actor or self.actor)

    def approve_source(self, source: str, *, actor: str | None = None) -> SourceDecision:
        """Approve every proposal waiting from one import, oldest first, until memory is full."""
        who = actor or self.actor
        return approve_source(
            self.review, source, actor=who, approve=lambda item_id: self.approve(item_id, actor=who)
        )

    # ----------------------------------------------------------------- imports
    def export(self, fmt: str = "json", view: View = EVERYONE) -> bytes:
        """The memories ``view`` may see (``people.in_view``: a person's own and the
        household's, never another person's) in ``fmt`` (``importing.export_view``)."""
        return importing.export_view(self, fmt, view)

    def preview_export(self, content: str) -> tuple[list[dict[str, Any]], ImportPreview]:
        """This program's own export read and previewed (``importing.preview_own``)."""
        return importing.preview_own(self, content)

    def import_export(
        self,
        records: list[dict[str, Any]],
        *,
        source: str,
        confirm_secrets: bool = False,
        actor: str | None = None,
    ) -> dict[str, int]:
        """Import this program's own export; deleted facts stay forgotten (``importing``)."""
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
        its owner's view (``importing.plan_file``)."""
        return importing.plan_file(
            self, content, fmt=fmt, file_name=file_name, day=day, owner=owner, lines=lines
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
