"""Each store file's format version, kept beside it without changing the file's shape.

Other programs on a shared folder read ``memories.json`` as a bare array, so the version does
not go inside the file: it lives in ``<file>.format`` (``memories.json.format``,
``conversations.json.format``, ``review.json.format``, ...), a small JSON object the store
owns: ``{"store": "memories", "format": 1, "writtenBy": "memory-curator 0.6.0"}``. A release
that does not know about it reads and writes the store file as before.

- **No sidecar** is format 1 (``FIRST``): the seed's format, and every release's before
  sidecars existed (the record shapes did not change between them).
- **Read first**: every write, under the store's lock, reads the sidecar before it reads the
  data. A store file in a format newer than this release knows is never written
  (``StoreFormatNewerError``: no silent downgrade); it is still read (readers keep what they
  do not know), so a downgrade leaves the assistant its memory, read-only. A sidecar that
  cannot be read stops writes the same way (``StoreFormatUnreadableError``).
- **Migrations**: ``MIGRATIONS[store][n - 1]`` turns format n into n + 1: a function over
  the parsed data (given a copy it may change) that returns the new data. The first write of a
  release that knows more formats than the sidecar names, or ``init``/``repair``, runs the
  missing ones in order, writes the result through the store's own locked atomic write, makes
  the backup a copy of it (so ``repair`` never restores the old format under the new
  sidecar) and only then writes the sidecar. A migration must be idempotent (run on data it
  already migrated, it changes nothing): a writer killed after the data write and before the
  sidecar write leaves the data migrated under the old sidecar, and the next writer runs the
  migration again, then writes the sidecar. A store file that does not exist yet is born in
  the newest format: its sidecar is written first.
- A process that only reads does not migrate: until a writer of this release has opened the
  store, readers see the file as it is, so a migration keeps every form this release's readers
  read (they read the older forms too).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..plainfiles import read_regular
from ..settings import VERSION
from .atomic import write_atomic
from .errors import StoreCorruptError, StoreFormatNewerError, StoreFormatUnreadableError
from .jsonbytes import encode
from .jsonparse import parse_bytes

__all__ = [
    "FIRST",
    "FORMAT_SUFFIX",
    "MIGRATIONS",
    "STEPS",
    "FormatFile",
    "FormatState",
    "Migration",
    "format_path",
    "known_format",
    "reached",
]

FORMAT_SUFFIX = ".format"
FIRST = 1  # the format of a store file without a sidecar


def writer() -> str:
    """This release, as a sidecar names who wrote it: ``memory-curator <webapp.__version__>``."""
    return f"memory-curator {VERSION}"


Migration = Callable[[Any], Any]
# Per store (the name a store gives its file layer: "memories", "conversations", "review",
# "people", "tombstones", "dismissals", "assist_exchanges", or a document's file name), its
# migrations in order: the n-th turns format n into n + 1. None yet: every store is in format 1.
MIGRATIONS: dict[str, list[Migration]] = {}

# The points between the steps of a migration, where every file is whole (the crash tests kill
# a writer at each): the data written in the new format, the backup made a copy of it, the
# sidecar written.
STEPS = ("data migrated", "backup migrated", "format written")


def reached(step: str, store: str) -> None:
    """A point between two steps of ``store``'s migration (``STEPS``); the crash tests stop
    here."""


def known_format(store: str) -> int:
    """The newest format of ``store`` this release knows (and writes)."""
    return FIRST + len(MIGRATIONS.get(store, ()))


def format_path(path: Path) -> Path:
    """The sidecar of the store file ``path``: ``<file>.format``."""
    return path.with_name(path.name + FORMAT_SUFFIX)


@dataclass(frozen=True)
class FormatState:
    """A store file's format as its sidecar says: ``version`` (FIRST without a sidecar),
    whether the sidecar exists, which release wrote it, and the newest format this release
    knows for the store."""

    store: str
    path: Path  # the sidecar
    version: int
    written: bool
    written_by: str | None
    known: int

    @property
    def pending(self) -> bool:
        """Older than this release's format: the next write migrates it."""
        return self.version < self.known

    @property
    def newer(self) -> bool:
        """Newer than this release knows: it is read, never written."""
        return self.version > self.known

    def describe(self) -> str:
        """'format 1'; 'format 1, upgraded to 2 at the next write'; or, for a newer one,
        'format 3 (written by …), newer than this release knows (1): read only'."""
        if self.newer:
            by = f" (written by {self.written_by})" if self.written_by else ""
            return (
                f"format {self.version}{by}, newer than this release knows ({self.known}): "
                "read only"
            )
        if self.pending:
            return f"format {self.version}, upgraded to {self.known} at the next write"
        return f"format {self.version}"


class FormatFile:
    """The sidecar ``<file>.format`` of one store file (read cached until it changes)."""

    def __init__(self, data_path: Path, store: str) -> None:
        self.data_path = data_path
        self.store = store
        self.path = format_path(data_path)
        self._cached: tuple[tuple[int, int, int], FormatState] | None = None

    @property
    def known(self) -> int:
        return known_format(self.store)

    def state(self) -> FormatState:
        """What the sidecar says; StoreFormatUnreadableError when it cannot be read."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return FormatState(self.store, self.path, FIRST, False, None, self.known)
        except OSError as exc:
            raise StoreFormatUnreadableError(self.path, self.data_path, str(exc)) from exc
        sig = (st.st_ino, st.st_mtime_ns, st.st_size)
        cached = self._cached
        if cached is not None and cached[0] == sig and cached[1].known == self.known:
            return cached[1]
        version, written_by = self._parse()
        state = FormatState(self.store, self.path, version, True, written_by, self.known)
        self._cached = (sig, state)
        return state

    def _parse(self) -> tuple[int, str | None]:
        try:
            data = parse_bytes(read_regular(self.path), self.path)
        except StoreCorruptError as exc:
            raise StoreFormatUnreadableError(self.path, self.data_path, exc.reason) from exc
        except OSError as exc:
            raise StoreFormatUnreadableError(self.path, self.data_path, str(exc)) from exc
        version = data.get("format") if isinstance(data, dict) else None
        if type(version) is not int or version < FIRST:
            raise StoreFormatUnreadableError(
                self.path, self.data_path, 'it has no "format" that is a whole number from 1'
            )
        written_by = data.get("writtenBy")
        return version, written_by if isinstance(written_by, str) else None

    def writable(self) -> FormatState:
        """The state, when this release may write the store file; else the refusal."""
        state = self.state()
        if state.newer:
            raise StoreFormatNewerError(
                self.data_path,
                version=state.version,
                known=state.known,
                written_by=state.written_by or "a newer release",
                release=writer(),
            )
        return state

    def settled(self) -> bool:
        """The sidecar is there and names this release's format (nothing to do)."""
        try:
            state = self.state()
        except StoreFormatUnreadableError:
            return True  # (left for a write to refuse)
        return state.written and not state.pending and not state.newer

    def migrate(self, data: Any, version: int) -> Any:
        """``data`` (in format ``version``) brought to this release's format, as a new copy."""
        steps = MIGRATIONS.get(self.store, [])[version - FIRST :]
        if not steps:
            return data
        migrated = copy.deepcopy(data)
        for step in steps:
            migrated = step(migrated)
        return migrated

    def write(self) -> None:
        """Write the sidecar naming this release's format (atomically)."""
        body = {"store": self.store, "format": self.known, "writtenBy": writer()}
        write_atomic(self.path, encode(body))


def upgrade(
    sidecar: FormatFile,
    *,
    read: Callable[[], Any],
    write: Callable[[Any], None],
    refresh_backup: Callable[[], None],
) -> bool:
    """Under the store's lock: refuse a newer format; bring an older file to this release's
    format (``read`` the data afresh, ``write`` it migrated, ``refresh_backup``, then the
    sidecar). Whether the data was migrated."""
    state = sidecar.writable()
    if state.written and not state.pending:
        return False
    migrated = False
    if state.pending and sidecar.data_path.exists():
        write(sidecar.migrate(read(), state.version))
        reached(STEPS[0], sidecar.store)
        refresh_backup()
        reached(STEPS[1], sidecar.store)
        migrated = True
    sidecar.write()
    reached(STEPS[2], sidecar.store)
    return migrated
