"""What a door may do with a store: read it. The curator hands the doors (the dashboard, the
command line, the MCP server, Assist, the demo, the public library) these read-only views of
its stores (``Curator.memories``, ``Curator.review``, ...); none has a write method, so a door
that writes a store directly is a type error under the project's strict mypy, and every write
goes through one curator operation. The writable stores are the curator's own
(``Curator.memory_store``, ...), used by its operation modules only.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol, TypeVar

from .tombstones import Tombstone  # a value the doors show (a deleted fact), not its store

if TYPE_CHECKING:  # types only: no store is imported by reading this module
    from .conversations import ConversationSummary, ConversationTurn
    from .document import Signature
    from .memories import DeletedMemory, ImportPreview, Memory, MemoryPage, MemoryUsage
    from .people import Device, Identity, Person
    from .review import ReviewItem
    from .setaside import RepairReport, SetAside
    from .skills import SearchHit, SkillDocument, SkillDocumentProblem, StagedImport
    from .skills.importing import ImportPlan

T = TypeVar("T")

__all__ = [
    "ConversationReader",
    "DismissalReader",
    "FileReader",
    "MemoryReader",
    "PeopleReader",
    "ReviewReader",
    "SkillReader",
    "Tombstone",
    "TombstoneReader",
]


class FileReader(Protocol):
    """What every store of one file answers about its file."""

    @property
    def path(self) -> Path: ...

    def status(self) -> str: ...

    def repair_report(self) -> RepairReport: ...

    def signature(self) -> Signature | None: ...

    def cached(self, name: str, build: Callable[[], T]) -> T: ...

    def set_aside(self) -> list[SetAside]: ...


class MemoryReader(FileReader, Protocol):
    """The memories, read."""

    @property
    def max_chars(self) -> int: ...

    @property
    def max_items(self) -> int: ...

    @property
    def history_path(self) -> Path: ...

    def get(self, memory_id: str) -> Memory | None: ...

    def contents(self) -> dict[str, str]: ...

    def get_all(self, *, person: str | None = None) -> list[Memory]: ...

    def for_person(self, person_id: str | None) -> list[Memory]: ...

    def search(self, keyword: str, *, person: str | None = None) -> list[Memory]: ...

    def query(
        self,
        q: str = "",
        *,
        category: str | None = None,
        person: str | None = None,
        sort: str = ...,
        page: int = 1,
        per_page: int | None = ...,
        whose: str | None = None,
        expiry: str | None = None,
        now: datetime | None = None,
    ) -> MemoryPage: ...

    def owners(self) -> dict[str | None, tuple[int, int]]: ...

    def active(self, now: datetime | None = None) -> list[Memory]: ...

    def expired(self, now: datetime | None = None) -> list[Memory]: ...

    def usage(self) -> MemoryUsage: ...

    def stats(self) -> dict[str, int]: ...

    def export(self) -> bytes: ...

    def history(self, memory_id: str | None = None) -> list[dict[str, Any]]: ...

    def change(self, hid: str) -> dict[str, Any] | None: ...

    def deleted(self, memory_id: str) -> Memory | None: ...

    def recently_deleted(self) -> list[DeletedMemory]: ...

    def preview_import(self, records: Iterable[dict[str, Any]]) -> ImportPreview: ...


class ConversationReader(FileReader, Protocol):
    """The conversations, read."""

    @property
    def max_age_days(self) -> int: ...

    def get_history(self, conversation_id: str) -> list[ConversationTurn]: ...

    def turns_to_read(self, conversation_id: str) -> list[ConversationTurn]: ...

    def list_conversations(self) -> list[ConversationSummary]: ...

    def search(self, query: str) -> list[ConversationSummary]: ...


class ReviewReader(FileReader, Protocol):
    """The review queue, read."""

    def get(self, item_id: str) -> ReviewItem | None: ...

    def pending(self) -> list[ReviewItem]: ...

    def pending_count(self) -> int: ...

    def pending_sources(self) -> list[tuple[str, int]]: ...

    def pending_from(self, source: str) -> list[str]: ...

    def decided(self) -> list[ReviewItem]: ...


class PeopleReader(FileReader, Protocol):
    """The household's people and devices, read."""

    def people(self) -> list[Person]: ...

    def get(self, person_id: str | None) -> Person | None: ...

    def names(self) -> dict[str, str]: ...

    def resolve(self, kind: str, value: str) -> Person | None: ...

    def matching(self, ref: str) -> list[Person]: ...

    def devices(self) -> list[Device]: ...

    def device(self, device_id: str) -> Device | None: ...

    def as_of(self, moment: datetime) -> tuple[tuple[Person, ...], tuple[Device, ...]]: ...

    def removed(self, person_id: str) -> Person | None: ...

    def unlinked(self) -> list[Identity]: ...


class TombstoneReader(Protocol):
    """The facts people deleted, read."""

    def all(self) -> list[Tombstone]: ...

    def active(self, present: Iterable[str] = ()) -> list[Tombstone]: ...

    def get(self, tombstone_id: str) -> Tombstone | None: ...

    def for_memory(self, memory_id: str) -> Tombstone | None: ...

    def took_out(self, item_id: str) -> Tombstone | None: ...


class DismissalReader(Protocol):
    """The findings a person dismissed, read."""

    def keys(self) -> frozenset[str]: ...


class SkillReader(Protocol):
    """The skill documents, read."""

    def get(self, doc_id: str) -> SkillDocument | None: ...

    def history(self, doc_id: str | None = None) -> list[dict[str, Any]]: ...

    def search(
        self, query: str, *, runtime: Any = None, limit: int | None = 20
    ) -> list[SearchHit]: ...

    def list(self, include_deprecated: bool = False) -> list[SkillDocument]: ...

    def problems(self) -> builtins.list[SkillDocumentProblem]: ...

    def preview_import_zip(self, data: bytes) -> StagedImport: ...

    @property
    def directory(self) -> Path: ...

    def by_skill(
        self, include_deprecated: bool = False
    ) -> dict[str, builtins.list[SkillDocument]]: ...

    def plan_import(self, folder: str | os.PathLike[str]) -> ImportPlan: ...

    def plan_import_zip(self, source: bytes | BinaryIO | str | os.PathLike[str]) -> ImportPlan: ...
