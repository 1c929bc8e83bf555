"""The memory file itself: ``MemoryFile`` builds it, reads it through the cached views every
part of ``MemoryStore`` shares, and writes it (caps, the history log, backups)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Self, TypeVar

from ...settings import Settings
from ...text import fold
from ..changes import Changed, Unchanged, Undo
from ..document import FileBacked
from ..errors import MemoryFullError
from ..history import HistoryLog
from ..jsonfile import JsonFile
from ..records import Memory
from ..secret_history import gone_secrets, scrubbed
from .model import (
    _CONTENT,
    DeletedMemory,
    MemoryUsage,
    _check_new_record,
    _entry_ms,
    _Step,
    _unreadable_times,
    _validate_records,
    _Written,
    record_problem,
    replay_history,
)

_R = TypeVar("_R")
_V = TypeVar("_V")


class MemoryFile(FileBacked):
    """The long-term memory file (a JSON array) and what every part of ``MemoryStore`` shares:
    its cached views, its caps and its one way to write (``_write``, logged in history)."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        max_items: int | None = None,
        max_chars: int | None = None,
        actor: str = "library",
        lock_timeout: float | None = None,
    ) -> None:
        settings = Settings.from_env() if path is None else Settings()
        self.path = Path(path) if path is not None else settings.memory_file
        self.max_items = max_items if max_items is not None else settings.memory_max_items
        self.max_chars = max_chars if max_chars is not None else settings.memory_max_chars
        self.actor = actor
        timeout = lock_timeout if lock_timeout is not None else settings.lock_timeout
        self._history = HistoryLog(self.path)
        self._secrets_gone = threading.local()  # set by _append when a change took one out
        self._file = JsonFile(
            self.path,
            store="memories",
            default=list,
            validate=_validate_records,
            item_problem=record_problem,
            replay=self._replay,
            lock_timeout=timeout,
            # Mutations replace a record they change (copy on write), so a write can share,
            # and neither re-encode nor re-validate, every record it leaves alone.
            copy=list,
            validate_item=_check_new_record,
            unreadable_times=_unreadable_times,
            beside=(self._history.path,),
        )
        self._deleted_cache: (
            tuple[list[dict[str, Any]], dict[str, Memory], list[DeletedMemory]] | None
        ) = None

    @classmethod
    def from_settings(cls, settings: Settings, *, actor: str = "library") -> Self:
        """The memory store ``settings`` describe: its file, caps and lock timeout."""
        return cls(
            settings.memory_file,
            max_items=settings.memory_max_items,
            max_chars=settings.memory_max_chars,
            actor=actor,
            lock_timeout=settings.lock_timeout,
        )

    @property
    def history_path(self) -> Path:
        return self._history.path

    def _replay(self, records: list[dict[str, Any]], since_ns: int | None) -> int:
        """For ``repair``: re-apply the history entries newer than ``since_ns`` (all when None)."""
        entries = self._history.read()
        if since_ns is not None:
            since = since_ns // 1_000_000
            entries = [e for e in entries if _entry_ms(e) >= since]
        return replay_history(records, entries)

    def init(self) -> Self:
        """Create the folder and an empty file if missing; fail loudly if the file is damaged."""
        self._file.ensure()
        return self

    def _memories(self) -> tuple[Memory, ...]:
        # After a write of this process only the records it changed are read anew.
        return self._file.item_view("memories", Memory.from_dict)

    def _index(self) -> dict[str, Memory]:
        return self._file.view("by_id", lambda _data: {m.id: m for m in self._memories()})

    def _folded(self) -> tuple[tuple[str, Memory], ...]:
        return self._file.view(
            "folded",
            lambda _data: tuple(
                zip(self._file.item_view("folded", _folded_content), self._memories(), strict=True)
            ),
        )

    def contents(self) -> dict[str, str]:
        """Each memory's id and text, cached until the file changes (quick: builds no Memory
        objects). Shared between callers: do not change it."""
        return self._file.view(
            "contents", lambda data: {str(r.get("id")): str(r.get("content", "")) for r in data}
        )

    def get(self, memory_id: str) -> Memory | None:
        """The memory with that id, or None."""
        return self._index().get(memory_id)

    def stats(self) -> dict[str, int]:
        """Items and characters used, and the caps."""
        items, chars = self._file.view("totals", _totals)
        return {
            "items": items,
            "chars": chars,
            "max_items": self.max_items,
            "max_chars": self.max_chars,
        }

    def usage(self) -> MemoryUsage:
        """``stats`` with flags: full (a cap is reached) and warn (90% of a cap), per cap."""
        used = self.stats()
        return MemoryUsage(used["items"], used["chars"], self.max_items, self.max_chars)

    # ----------------------------------------------------------------- writing
    def _check_caps(
        self, records: list[dict[str, Any]], added_items: int, added_chars: int
    ) -> None:
        items = len(records)
        chars = sum(map(len, map(_CONTENT, records)))  # validated: every record has its text
        if added_items and items + added_items > self.max_items:
            raise self._full(
                f"The memory store is full: {items} of {self.max_items} memories are used. "
                f"Delete or update a memory before adding another.",
                items,
                chars,
                code="memory_full",
            )
        if added_chars > 0 and chars + added_chars > self.max_chars:
            raise self._full(
                f"The memory store is full: {chars} of {self.max_chars} characters are used and "
                f"this needs {added_chars} more. Shorten, delete or update memories first.",
                items,
                chars,
                code="memory_full_chars",
                needed=added_chars,
            )

    def _full(
        self, message: str, items: int, chars: int, *, code: str, needed: int = 0
    ) -> MemoryFullError:
        return MemoryFullError(
            message,
            items=items,
            max_items=self.max_items,
            chars=chars,
            max_chars=self.max_chars,
            needed=needed,
            code=code,
        )

    def _append(self, entries: list[dict[str, Any]]) -> Callable[[], None]:
        """Append ``entries`` to the history log (under the lock). When their change takes a
        secret out of its memories (rewritten without it, deleted, merged away), the secret
        goes from the log too: masked in every entry of those memories, the new ones included."""
        gone = gone_secrets(entries)
        if gone:
            ids = {entry.get("id") for entry in entries}
            self._history.rewrite_each(
                lambda entry: scrubbed(entry, gone) if entry.get("id") in ids else entry
            )
            entries[:] = [scrubbed(entry, gone) for entry in entries]
            self._secrets_gone.now = True
        return self._history.append(entries)

    def _write(
        self,
        mutate: Callable[[Any], Changed[_R] | Unchanged[_V]],
        journal: Callable[[_R], Undo | None],
    ) -> _R | _V:
        """``JsonFile.update``; when the change took a secret out of memory, the backup
        (the file as it was) is made a copy of the file as it is now."""
        self._secrets_gone.now = False
        result = self._file.update(mutate, journal)
        if self._secrets_gone.now:
            self._secrets_gone.now = False
            with self._file.locked():
                self._file.refresh_backup()
        return result

    def _journal(self, actor: str | None) -> Callable[[_Written[Any]], Undo]:
        """The history log's entries for a write's steps, written before the file is replaced."""

        def journal(written: _Written[Any]) -> Undo:
            return self._append(self._entries(actor, written.steps))

        return journal

    def _entries(self, actor: str | None, steps: Iterable[_Step]) -> list[dict[str, Any]]:
        who = actor or self.actor
        return [HistoryLog.entry(who, s.action, s.memory_id, s.before, s.after) for s in steps]

    def _fits(self, items: int, chars: int) -> bool:
        return items <= self.max_items and chars <= self.max_chars


def _totals(records: list[dict[str, Any]]) -> tuple[int, int]:
    """How many records, and their characters of content."""
    return len(records), sum(len(str(r.get("content", ""))) for r in records)


def _folded_content(record: dict[str, Any]) -> str:
    return fold(str(record.get("content", "")))
