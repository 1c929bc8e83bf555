"""What the stores offer about their files, and a small JSON document for callers' own state.

``jsonfile.JsonFile`` (the lock, the atomic write, the per-version caches) is private to the
stores. Every store built on one JSON file answers through ``FileBacked`` instead: its status,
a repair, a cache helper keyed by the file's version, the file's signature. ``JsonDocument`` is
the same machinery for a program's own small JSON files (login sessions, extraction state):
read, update under the lock, repair; nothing else of the file layer shows.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..settings import DEFAULTS
from .atomic import fsync_dir, write_atomic
from .changes import Changed, Unchanged
from .formats import FormatState
from .jsonfile import JsonFile
from .jsonparse import MAX_DEPTH, loads_bounded, nesting_depth
from .jsonread import Signature, TimeCheck
from .locking import Gated, SidecarLock
from .owned import HISTORY, OwnFile, json_file_files, written_with_temps
from .setaside import RepairReport, SetAside, free_path

__all__ = [
    "MAX_DEPTH",
    "Changed",
    "FileBacked",
    "FormatState",
    "JsonDocument",
    "OwnFile",
    "RepairReport",
    "SetAside",
    "Signature",
    "TimeCheck",
    "Unchanged",
    "free_path",
    "fsync_dir",
    "loads_bounded",
    "nesting_depth",
    "write_atomic",
]

T = TypeVar("T")
R = TypeVar("R")
V = TypeVar("V")


class FileBacked(Gated):
    """What a store kept in one JSON file says about that file (the file itself stays private)."""

    path: Path  # the file
    _file: JsonFile

    def status(self) -> str:
        """'ok', 'missing', 'corrupt' or 'unreadable' (permissions, a folder in its place)."""
        return self._file.status()

    def format_state(self) -> FormatState:
        """The file's format as its sidecar ``<file>.format`` says (``formats``);
        StoreFormatUnreadableError when the sidecar cannot be read."""
        return self._file.format.state()

    def check_format(self) -> FormatState:
        """``format_state`` when this release may write the file; StoreFormatNewerError when
        it is in a newer format, StoreFormatUnreadableError when its sidecar cannot be read."""
        return self._file.format.writable()

    def check_readable(self) -> None:
        """Read the file now: raises StoreCorruptError (or OSError) when it cannot be used."""
        self._file.read()

    def repair_report(self) -> RepairReport:
        """Set a damaged file (or its unusable records) aside and start again from the last good
        backup with the history log's newer changes; says what was done."""
        return self._file.repair_report()

    def repair(self) -> Path | None:
        """``repair_report``, returning where the damaged file went (None when it stayed)."""
        return self._file.repair()

    def signature(self) -> Signature | None:
        """(inode, mtime_ns, size) of the file, or None when there is none: changes with it."""
        return self._file.signature()

    @property
    def history_path(self) -> Path | None:
        """The store's history log (``<name>.history.jsonl``), or None when it keeps none."""
        return None

    def own_files(self) -> list[OwnFile]:
        """Every file this store keeps that is there now, each with what it is
        (``stores.owned``): its JSON file, the backup, the lock, records or a damaged file set
        aside, unfinished writes and, when it keeps one, its history log."""
        found = json_file_files(self.path, self._file.lock_path, self._file.backup_path)
        if self.history_path is not None:
            found += written_with_temps(self.history_path, HISTORY)
        return found

    def set_aside(self) -> list[SetAside]:
        """The files of unusable records set aside beside this one, oldest first."""
        return self._file.set_aside()

    def cached(self, name: str, build: Callable[[], T]) -> T:
        """``build()``, made once per version of the file and kept until the file changes
        (e.g. a cache of rendered rows: ``store.cached("rows", dict)``)."""
        return self._file.view(f"cached.{name}", lambda _data: build())

    def wipe(self, mutate: Callable[[Any], Changed[R] | Unchanged[V]]) -> R | V:
        """Delete forever in this file: ``mutate`` applied as by an update, then the backup made
        a copy of the file as it is now (even when nothing changed), so words taken out of the
        file do not live on in ``<file>.bak``."""
        with self._file.locked():
            result = self._file.update(mutate)
            self._file.refresh_backup()
        return result

    @property
    def lock_timeout(self) -> float:
        """Seconds a write waits for another process's lock before StoreBusyError."""
        return self._file.lock_timeout

    def locked(self) -> SidecarLock:
        """The file's sidecar lock (what ``wait_gate`` bounds)."""
        return self._file.locked()


class JsonDocument(FileBacked):
    """One JSON document on disk that several processes read and change safely.

    ``default`` makes the empty document; ``validate`` says what is wrong with a parsed one
    (None when nothing), which makes the file damaged; ``unreadable_times`` lists its times
    that cannot be read, (where, why) each, for ``repair`` to report. Reads are cached until
    the file changes. Its format sidecar is named after the file (``formats``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        default: Callable[[], Any],
        validate: Callable[[Any], str | None] | None = None,
        lock_timeout: float = DEFAULTS["lock_timeout"],
        unreadable_times: TimeCheck | None = None,
    ) -> None:
        self.path = Path(path)
        self._file = JsonFile(
            self.path,
            default=default,
            validate=validate,
            lock_timeout=lock_timeout,
            unreadable_times=unreadable_times,
        )

    def read(self) -> Any:
        """The parsed document, shared and cached: callers must not change it."""
        return self._file.read()

    def update(self, mutate: Callable[[Any], Changed[R] | Unchanged[V]]) -> R | V:
        """Apply ``mutate`` to a fresh copy of the document under the lock and save it.

        ``mutate`` changes the document in place and returns ``Changed(result)``, or
        ``Unchanged(result)`` to skip the write; the result is returned. StoreBusyError when
        the lock stays taken.
        """
        return self._file.update(mutate)
