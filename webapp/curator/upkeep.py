"""Upkeep of one data folder: what ``stats`` shows and what ``repair`` does.

Every store names its own files (``FileBacked.own_files``, ``SkillDocumentStore.own_files``,
the similarity index's ``cache_files``, the dashboard's ``secret_key_files``); here they are
gathered, checked and repaired, so no door spells out a file name the file layer makes
(``.bak``, ``.lock``, ``.rejected-…``, temp names). The doors word the results.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..attention.pair_verdicts import verdict_files
from ..attention.semantic import CacheState, cache_files, describe_cache, drop_damaged_cache
from ..extraction import ExtractionState
from ..extraction.approval import ApprovalStats, extraction_quality
from ..extraction.batch import job_document
from ..settings import ADDON_OPTIONS_FILE, MOVE_LOCK, MOVE_MARKER
from ..stores import FileBacked, MemoryUsage, RepairReport, StoreError
from ..stores.dashboard_files import (
    ATTEMPTS_FILE,
    SESSIONS_FILE,
    attempts_document,
    secret_key_files,
    sessions_document,
)
from ..stores.document import FormatState
from ..stores.owned import DATA, LOCK, MOVE_RECORD, OPTIONS, OwnFile, existing
from .base import CuratorBase
from .forgetting import Forgetting


@dataclass(frozen=True)
class DataFile:
    """A JSON file the program keeps in the data folder: its name (``memories``,
    ``conversations``, ``review``, ``extraction_state``, ``extraction_job``, ``dismissals``,
    ``people``, ``login_sessions``, ``login_attempts``, ``tombstones``,
    ``assist_exchanges``) and its store."""

    name: str
    store: FileBacked


def own_files(curator: Upkeep) -> list[OwnFile]:
    """Every file the program keeps in the data folder and the skills folder, that is there."""
    settings = curator.settings
    data_dir = Path(settings.data_dir)
    found: list[OwnFile] = []
    for data_file in curator.data_files():
        found += data_file.store.own_files()
    found += cache_files(settings.memory_file)
    found += verdict_files(settings.memory_file)
    found += curator._skill_store.own_files()
    found += secret_key_files(data_dir)
    found += existing(data_dir / ADDON_OPTIONS_FILE.name, OPTIONS)
    found += existing(data_dir / MOVE_MARKER, MOVE_RECORD)
    found += existing(data_dir / MOVE_LOCK, LOCK)
    return found


@dataclass(frozen=True)
class FolderSummary:
    """What else the data folder holds (how many files of each kind, the stores' own JSON files
    left out), and the files in it the program did not write (left alone)."""

    kinds: dict[str, int]
    strangers: list[Path]


def folder_summary(curator: Upkeep) -> FolderSummary:
    """``folder_files`` counted by kind, and the files of nobody."""
    found = curator.folder_files()
    kinds = Counter(kind for kind in found.values() if kind and kind != DATA)
    return FolderSummary(dict(kinds), [path for path, kind in found.items() if not kind])


# ------------------------------------------------------------------ stats
@dataclass(frozen=True)
class FileCheck:
    """One data file as ``stats`` found it: its status ('ok', 'missing', 'corrupt',
    'unreadable') and, when it cannot be used, why."""

    name: str
    path: Path
    status: str
    problem: Exception | None = None


@dataclass(frozen=True)
class FormatCheck:
    """One data file's format version, as its sidecar says (``stores.formats``): ``state``
    (None when the sidecar cannot be read) and, when this release may not write the file
    (newer format, unreadable sidecar), why."""

    name: str
    path: Path
    state: FormatState | None
    problem: StoreError | None = None


@dataclass(frozen=True)
class SkillsCheck:
    """The skills folder: how many documents it holds, how many files cannot be read."""

    folder: Path
    documents: int
    unreadable: int


@dataclass(frozen=True)
class Stats:
    """Where the stores are and how full they are (``Curator.stats``)."""

    memories: FileCheck
    usage: MemoryUsage | None
    conversations: FileCheck
    threads: int | None
    turns: int | None
    review: FileCheck | None  # None while there is no review file
    pending: int | None
    quality: list[ApprovalStats] | None
    others: list[FileCheck]  # the other data files that exist
    skills: SkillsCheck | None  # None while there is no skills folder
    vectors: CacheState | None  # None while there is no vector file
    folder: FolderSummary
    problems: list[Exception] = field(default_factory=list)  # of the data files, in order
    formats: list[FormatCheck] = field(default_factory=list)  # of the data files there


def _status(store: FileBacked) -> str:
    """``status()`` of a store's file, or 'unreadable' when it cannot even be opened."""
    try:
        return store.status()
    except OSError:
        return "unreadable"


def _formats(curator: Upkeep, problems: list[Exception]) -> list[FormatCheck]:
    """The format of each data file there; a file this release may not write is a problem."""
    found = []
    for data_file in curator.data_files():
        store = data_file.store
        if not store.path.exists():
            continue
        state = None
        try:
            state = store.format_state()
            store.check_format()
        except StoreError as exc:
            problems.append(exc)
            found.append(FormatCheck(data_file.name, store.path, state, exc))
        else:
            found.append(FormatCheck(data_file.name, store.path, state))
    return found


def _skills_check(curator: CuratorBase) -> SkillsCheck | None:
    folder = Path(curator.settings.skills_dir)
    if not folder.is_dir():
        return None
    store = curator._skill_store
    count = len(store.list(include_deprecated=True))
    return SkillsCheck(folder, count, len(store.problems()))


# ------------------------------------------------------------------ repair
@dataclass(frozen=True)
class Settled:
    """The forgotten facts checked against the memories: how many were dropped because their
    memory is back (``dropped``), or why they could not be checked (``problem``)."""

    path: Path
    dropped: int = 0
    problem: StoreError | None = None
    finished: int = 0  # Delete forever runs left half-way (a kill) that were finished now


RepairStep = RepairReport | Settled | SkillsCheck | CacheState | FolderSummary


class Upkeep(Forgetting):
    """The data folder's files: what they are, how full, and their repair."""

    def data_files(self) -> list[DataFile]:
        """Every JSON file the program keeps (whether it exists yet or not), in the order ``stats``
        and ``repair`` go through them: the stores, the extraction state and job, the dismissed
        findings and the dashboard's logins."""
        data_dir = Path(self.settings.data_dir)
        return [
            DataFile("memories", self._memory_store),
            DataFile("conversations", self._conversation_store),
            DataFile("review", self._review_queue),
            DataFile("extraction_state", ExtractionState.from_settings(self.settings)),
            DataFile("extraction_job", job_document(self.settings)),
            DataFile("dismissals", self._dismissal_store),
            DataFile("people", self._people_store),
            DataFile("login_sessions", sessions_document(data_dir / SESSIONS_FILE)),
            DataFile("login_attempts", attempts_document(data_dir / ATTEMPTS_FILE)),
            DataFile("tombstones", self._tombstone_store),
            DataFile("assist_exchanges", self._exchange_key_store),
        ]

    def folder_files(self) -> dict[Path, str]:
        """Every file in the data folder (and the skills folder), and what it is: ``"data"`` for a
        store's own JSON file, another kind of ``stores.owned`` ("backup", "lock", "history",
        ...), or "" for a file the program does not write."""
        settings = self.settings
        kinds = {owned.path: owned.kind for owned in own_files(self)}
        found: dict[Path, str] = {}
        for folder in (Path(settings.data_dir), Path(settings.skills_dir)):
            if not folder.is_dir():
                continue
            for path in sorted(folder.rglob("*")):
                if path in found or not (path.is_file() or path.is_symlink()):
                    continue
                found[path] = kinds.get(path, "")
        return found

    def stats(self) -> Stats:
        """Read every data file, saying how full each is and which cannot be used."""
        problems: list[Exception] = []
        memories = FileCheck("memories", self._memory_store.path, _status(self._memory_store))
        usage = None
        try:
            usage = self._memory_store.usage()
        except (StoreError, OSError) as exc:
            problems.append(exc)
            memories = FileCheck(memories.name, memories.path, memories.status, exc)
        store = self._conversation_store
        conversations = FileCheck("conversations", store.path, _status(store))
        threads = turns = None
        try:
            listed = store.list_conversations()
            threads, turns = len(listed), sum(t.turn_count for t in listed)
        except (StoreError, OSError) as exc:
            problems.append(exc)
            conversations = FileCheck(conversations.name, store.path, conversations.status, exc)
        review, pending, quality = None, None, None
        queue = self._review_queue
        if queue.path.exists():
            review = FileCheck("review", queue.path, _status(queue))
            try:
                pending = queue.pending_count()
                quality = extraction_quality(queue)
            except (StoreError, OSError) as exc:
                problems.append(exc)
                review = FileCheck(review.name, queue.path, review.status, exc)
        others = []
        for data_file in self.data_files()[3:]:
            other = data_file.store
            if other.path.exists():
                check = FileCheck(data_file.name, other.path, _status(other))
                try:
                    other.check_readable()
                except (StoreError, OSError) as exc:
                    problems.append(exc)
                    check = FileCheck(check.name, check.path, check.status, exc)
                others.append(check)
        return Stats(
            memories=memories,
            usage=usage,
            conversations=conversations,
            threads=threads,
            turns=turns,
            review=review,
            pending=pending,
            quality=quality,
            others=others,
            skills=_skills_check(self),
            vectors=describe_cache(self.settings.memory_file),
            folder=folder_summary(self),
            problems=problems,
            formats=_formats(self, problems),
        )

    def repair(self) -> Iterator[RepairStep]:
        """Repair the data folder, one step at a time (each is done when it is asked for, so a
        door can show it at once): each data file there (``RepairReport``), the forgotten facts
        settled against the memories, the skills folder checked, a damaged vector file deleted
        (it is computed again), and last what else the folder holds."""
        for data_file in self.data_files():
            if data_file.store.path.exists():
                yield data_file.store.repair_report()
        tombstones = self._tombstone_store
        if tombstones.path.exists():
            try:
                finished = self.finish_forgetting()
                dropped = tombstones.settle(m.id for m in self._memory_store.get_all())
            except StoreError as exc:
                yield Settled(tombstones.path, problem=exc)
            else:
                yield Settled(tombstones.path, dropped=dropped, finished=finished)
        skills = _skills_check(self)
        if skills is not None:
            yield skills
        vectors = drop_damaged_cache(self.settings.memory_file)
        if vectors is not None:
            yield vectors
        yield folder_summary(self)
