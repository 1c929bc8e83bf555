"""Append-only change log next to a store: ``<name>.history.jsonl``, one JSON object per line."""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..plainfiles import NotRegularFileError, check_regular, open_regular
from .atomic import write_atomic
from .errors import StoreWriteError
from .jsonparse import has_surrogate_escape, loads_bounded, without_lone_surrogates
from .setaside import free_path
from .timefmt import now_iso

log = logging.getLogger(__name__)


class HistoryLog:
    """Who changed what, when, with the record before and after. Read back for undo/restore."""

    def __init__(self, store_path: str | os.PathLike[str]) -> None:
        store_path = Path(store_path)
        self.store_path = store_path
        stem = (
            store_path.name[: -len(".json")]
            if store_path.name.endswith(".json")
            else store_path.name
        )
        self.path = store_path.with_name(f"{stem}.history.jsonl")
        self._guard = threading.Lock()
        self._sig: tuple[int, int, int] | None = None
        self._entries: list[dict[str, Any]] = []

    @staticmethod
    def entry(actor: str, action: str, record_id: str, before: Any, after: Any) -> dict[str, Any]:
        """A new log entry with its own id (used to restore from it)."""
        return {
            "hid": secrets.token_hex(8),
            "ts": now_iso(),
            "actor": actor,
            "action": action,
            "id": record_id,
            "before": before,
            "after": after,
        }

    def append(self, entries: list[dict[str, Any]]) -> Callable[[], None]:
        """Append entries durably; call it while holding the store's lock.

        Returns an undo that cuts the log back to where it was (the store calls it when the
        change these entries describe could not be saved). A failed append undoes itself.
        """
        if not entries:
            return lambda: None
        payload = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries).encode("utf-8")
        fd = self._open_for_append()
        try:
            size = os.fstat(fd).st_size
            if _ends_mid_line(fd, size):
                # A writer died mid-line; without this newline our first entry would be
                # glued to its fragment and lost with it.
                payload = b"\n" + payload
            try:
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            except OSError as exc:
                _cut(fd, size, self.path)
                # To the caller the change was not saved: name the store, like any write error.
                raise StoreWriteError(self.store_path, exc) from exc
            except BaseException:
                _cut(fd, size, self.path)
                raise
        finally:
            os.close(fd)
        return lambda: self._cut_back(size)

    def _open_for_append(self) -> int:
        """The log opened to append to; anything but a regular file in its place (a FIFO
        would take the entries and block once full) is set aside first, and a new log
        begun."""
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            check_regular(fd, self.path)
        except OSError as exc:
            os.close(fd)
            aside = free_path(self.path, "corrupt")
            try:
                os.replace(self.path, aside)
            except OSError as move:
                raise StoreWriteError(self.path, move) from exc
            log.warning(
                "The history log %s was no file (%s); set aside as %s", self.path, exc, aside
            )
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            check_regular(fd, self.path)
        return fd

    def _cut_back(self, size: int) -> None:
        fd = os.open(self.path, os.O_RDWR)
        try:
            _cut(fd, size, self.path)
        finally:
            os.close(fd)

    def read(self, record_id: str | None = None) -> list[dict[str, Any]]:
        """Entries oldest first (optionally of one record); damaged lines are skipped."""
        entries = self._load()
        if record_id is None:
            return list(entries)
        return [e for e in entries if e.get("id") == record_id]

    def entries(self) -> list[dict[str, Any]]:
        """Every entry, oldest first: the cached list itself (do not change it), the same object
        for as long as the file is unchanged."""
        return self._load()

    def find(self, hid: str) -> dict[str, Any] | None:
        """The entry with history id ``hid``."""
        entries: list[dict[str, Any]] = self._load()
        return next((e for e in reversed(entries) if e.get("hid") == hid), None)

    def rewrite_without(self, record_id: str) -> int:
        """Drop every entry of ``record_id`` (purge); the caller holds the store's lock."""
        entries = self._parse_file()
        kept = [e for e in entries if e.get("id") != record_id]
        if len(kept) == len(entries):
            return 0
        payload = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in kept).encode("utf-8")
        write_atomic(self.path, payload)
        return len(entries) - len(kept)

    def rewrite_where(self, gone: Callable[[dict[str, Any]], bool]) -> int:
        """Drop every entry ``gone`` says (Delete forever); the caller holds the store's lock."""
        entries = self._parse_file()
        kept = [e for e in entries if not gone(e)]
        if len(kept) == len(entries):
            return 0
        payload = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in kept).encode("utf-8")
        write_atomic(self.path, payload)
        return len(entries) - len(kept)

    def rewrite_each(self, change: Callable[[dict[str, Any]], dict[str, Any]]) -> int:
        """Replace each entry by ``change(entry)`` (the same object when it stays as it is);
        the caller holds the store's lock. How many entries changed."""
        entries = self._parse_file()
        changed = [change(e) for e in entries]
        count = sum(new is not old for new, old in zip(changed, entries, strict=True))
        if count:
            payload = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in changed)
            write_atomic(self.path, payload.encode("utf-8"))
        return count

    def _load(self) -> list[dict[str, Any]]:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return []
        sig = (st.st_ino, st.st_mtime_ns, st.st_size)
        with self._guard:
            if sig == self._sig:
                return self._entries
        entries = self._parse_file()
        with self._guard:
            self._sig, self._entries = sig, entries
        return entries

    def _parse_file(self) -> list[dict[str, Any]]:
        """Every readable entry of the file as it is now (damaged lines are skipped)."""
        entries: list[dict[str, Any]] = []
        try:
            handle = open_regular(self.path)  # noqa: SIM115 - only a missing file is caught
        except FileNotFoundError:
            return entries
        except (NotRegularFileError, IsADirectoryError):  # no entry is readable in a FIFO
            return entries
        with handle:
            for line in handle:
                try:
                    entry = loads_bounded(line.decode("utf-8"))
                except ValueError:  # not UTF-8, not JSON, nested too deep, a huge number
                    continue
                if has_surrogate_escape(line):  # (so none is restored into a store)
                    entry = without_lone_surrogates(entry)[0]
                if isinstance(entry, dict):
                    entries.append(entry)
        return entries


def _ends_mid_line(fd: int, size: int) -> bool:
    """True when the file is non-empty and its last byte is not a newline."""
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


def _cut(fd: int, size: int, path: Path) -> None:
    """Truncate the log back to ``size`` bytes; a failure is logged (the log stays readable)."""
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    except OSError as exc:
        log.warning("Could not cut %s back to %d bytes: %s", path, size, exc)
