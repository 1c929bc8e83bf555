"""Writing one JSON file shared by several processes (the writing half of ``jsonfile.JsonFile``):
the locked read-modify-write (``update``) that re-applies a change when another program
replaced the file meanwhile, the check that the bytes spliced from the cache are the document
as it is, the atomic replace with the history entry written ahead, and the cache of what was
written."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .atomic import (
    backup_temp_path,
    copy_backup,
    replace_with,
    sync_folder_after_replace,
    temp_files_of,
    unlink_quietly,
    write_atomic,
    write_temp,
)
from .changes import Changed, Unchanged, Undo, not_an_outcome
from .errors import StoreBusyError
from .formats import upgrade
from .jsonbytes import Fragments, PendingCheck, encode_spliced, encodes_as
from .jsonparse import MAX_DEPTH, nesting_depth, object_depth
from .jsonread import FileReader, Read, Signature, Snapshot
from .jsonread import _FileChanged as FileChanged  # noqa: PLC2701 - the layer's own signal
from .jsonread import _SharedChanged as SharedChanged  # noqa: PLC2701
from .locking import SidecarLock, commit_lock
from .setaside import Rejected, free_path, plural

R = TypeVar("R")
V = TypeVar("V")

log = logging.getLogger(__name__)

# How often a write re-reads and re-applies its change when another program keeps replacing
# the file between our read and our replace, before it gives up with StoreBusyError.
REAPPLY_LIMIT = 10
EXCLUSIVE_AFTER = 2


class FileWriter(FileReader):
    """A JSON document on disk that several processes change safely, one locked write at a
    time (``jsonfile.JsonFile`` adds creating and repairing it)."""

    # ----------------------------------------------------------------- writing
    def locked(self) -> SidecarLock:
        """The sidecar lock, bounded: raises StoreBusyError instead of hanging."""
        return self._lock

    def update(
        self,
        mutate: Callable[[Any], Changed[R] | Unchanged[V]],
        journal: Callable[[R], Undo | None] | None = None,
    ) -> R | V:
        """Apply ``mutate`` to a fresh copy of the document under the lock and save it.

        ``mutate`` changes the document in place and returns ``Changed(result)``, or
        ``Unchanged(result)`` to skip the write (``changes``); ``result`` is returned.
        ``journal(result)`` (the history log) runs under the lock *before* the file is
        replaced, so no change can land without its entry — a deletion stays restorable even
        when the disk fills up right after it; it returns an undo, called when the write then
        fails. When the file was replaced by someone else after it was read, ``mutate`` runs
        again on the new content.

        An item the document shares with the cached parse that ``mutate`` changed in place is
        saved all the same: the bytes about to be written are checked to be the document as
        it is, and when they are not every item is encoded and validated anew (and the cache,
        which saw the change, is dropped) — the slow way, with a warning for the store to copy
        the item it changes.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.locked():
            self.upgrade()
            for attempt in range(REAPPLY_LIMIT):
                # After two lost races the whole read-change-write runs under the commit
                # lock, which every writer of this folder must pass to replace a file.
                alone = attempt >= EXCLUSIVE_AFTER
                with commit_lock(self.path.parent) if alone else contextlib.nullcontext():
                    read = self._read_under_lock()
                    try:
                        outcome = mutate(read.data)
                    except BaseException:
                        self._check_cache(read)
                        raise
                    if not isinstance(outcome, Changed):
                        self._check_cache(read)
                        if isinstance(outcome, Unchanged):
                            return outcome.result
                        raise not_an_outcome(outcome)
                    try:
                        payload, fresh, check = self._encode_changed(read)
                        try:
                            sig = self._save(read, payload, journal, outcome.result, alone, check)
                        except SharedChanged:
                            self._drop_cache(read)
                            payload, fresh = self.encode_valid(read.data)
                            sig = self._save(read, payload, journal, outcome.result, alone)
                    except FileChanged:
                        log.info("%s was replaced meanwhile; applying the change again", self.path)
                        continue
                    if self._copy is not None:
                        self._remember(read.data, payload, fresh, sig)
                return outcome.result
        raise StoreBusyError(
            self.path,
            self.lock_timeout,
            replaced=True,
        )

    def upgrade(self) -> bool:
        """Under the lock, before any write: read the format sidecar first; refuse a file in a
        newer format (``StoreFormatNewerError``); migrate an older one through this file's
        atomic write and then write the sidecar (``formats``). Whether data was migrated."""

        def fresh() -> Any:
            read = self._read_under_lock()
            if read.rejected:
                self._set_aside(read.rejected)
            return read.data

        return upgrade(
            self.format, read=fresh, write=self.write_locked, refresh_backup=self.refresh_backup
        )

    def _encode_changed(self, read: Read) -> tuple[bytes, Fragments, PendingCheck | None]:
        """``encode_valid`` of the changed document, reusing the items it shares with the cache,
        and, when it did, the check that the result is the document as it is (no shared item
        was changed in place), which ``_save`` asks before the file is replaced."""
        try:
            payload, fresh = self.encode_valid(read.data, read.fragments)
        except BaseException:  # refused: nothing is written, so the cache must be as the file
            self._check_cache(read)
            raise
        return payload, fresh, PendingCheck(read.data, payload) if read.fragments else None

    def _check_cache(self, read: Read) -> None:
        """After a change function that wrote nothing: drop the cached parse if it changed an
        item of it in place (readers would see what the file does not hold)."""
        shared = read.shared
        if shared is not None and not encodes_as(shared.data, shared.raw):
            self._drop_cache(read)

    def _drop_cache(self, read: Read) -> None:
        log.warning(
            "A change to %s changed records of the cached document in place instead of "
            "replacing them: the cache is dropped and a write encodes and checks every record "
            "again (slower). Copy a record before changing it.",
            self.path,
        )
        with self._cache_guard:
            if self._snapshot is read.shared:
                self._snapshot = None
        read.fragments, read.shared = {}, None

    def remove_key(self, key: str) -> bool:
        """Delete ``key`` from an object document; False, writing nothing, when it is absent."""

        def mutate(data: dict[str, Any]) -> Changed[bool] | Unchanged[bool]:
            if key not in data:
                return Unchanged(False)
            del data[key]
            return Changed(True)

        return self.update(mutate)

    def encode_valid(
        self, data: Any, fragments: Fragments | None = None
    ) -> tuple[bytes, Fragments]:
        """The on-disk bytes of ``data`` and their fragments; ValueError when it is not valid.

        ``fragments`` are the encoded items ``data`` shares with the cached parse (from
        ``update``); only the other items are encoded and, with ``validate_item``, validated
        and measured (a shared item was checked when it was parsed or first written).
        """
        try:
            payload, fresh, new_items = encode_spliced(data, fragments or {})
        except RecursionError:
            raise ValueError(
                f"Refusing to write {self.path}: it would be nested deeper than {MAX_DEPTH} levels"
            ) from None
        if self._validate_item is not None and type(data) in (list, dict):
            problem = next(filter(None, map(self._validate_item, new_items)), None)
            inner = MAX_DEPTH - 1  # the items sit inside the top-level list or dict
            # Measured on their encoded lines when spliced (counting brackets, in C), else
            # by walking the objects; both exact beyond the limit.
            too_deep = (
                any(nesting_depth(fresh[id(item)][1], inner) > inner for item in new_items)
                if fresh
                else any(object_depth(item, inner) > inner for item in new_items)
            )
        else:
            problem = self._validate(data) if self._validate else None
            if not problem and self._item_problem is not None and isinstance(data, list):
                problem = next(
                    (f"item {i} {p}" for i, p in enumerate(map(self._item_problem, data)) if p),
                    None,
                )
            too_deep = object_depth(data) > MAX_DEPTH
        if not problem and too_deep:
            problem = f"it would be nested deeper than {MAX_DEPTH} levels"
        if problem:
            raise ValueError(f"Refusing to write {self.path}: {problem}")
        return payload, fresh

    def _save(
        self,
        read: Read,
        payload: bytes,
        journal: Callable[[R], Undo | None] | None,
        result: R,
        commit_held: bool = False,
        check: PendingCheck | None = None,
    ) -> Signature | None:
        """Write ``payload`` in place of the file read as ``read``; FileChanged if it changed,
        SharedChanged (nothing replaced) if ``check`` finds it is not the document as it is.

        Returns the signature of the file just written (None if it could not be taken).
        """
        during = check.run if check is not None and check.overlaps else None
        tmp_name = write_temp(self.path, payload, during_sync=during)
        try:
            if check is not None and not check():
                raise SharedChanged
            if not commit_held:  # (retaking the lock under the commit lock could deadlock)
                self.verify_lock()
            with contextlib.nullcontext() if commit_held else commit_lock(self.path.parent):
                self.verify_unchanged(read)
                if read.rejected:
                    self._set_aside(read.rejected)
                undo = journal(result) if journal is not None else None
                try:
                    replace_with(tmp_name, self.path, backup=self.backup_path if read.sig else None)
                except BaseException:
                    if undo is not None:
                        undo()
                    raise
                sig = self.signature() if self._copy is not None else None
        finally:
            unlink_quietly(tmp_name)
        sync_folder_after_replace(self.path)
        return sig

    def verify_lock(self) -> None:
        """Make sure the lock held is still the file at its path; if it was deleted, take it again.

        Whoever took the new lock file meanwhile may have saved: ``verify_unchanged`` sees that.
        """
        if not self._lock.still_held():
            log.info("The lock file of %s was deleted while held; taking it again", self.path)
            self._lock.retake()

    def verify_unchanged(self, read: Read) -> None:
        """Raise FileChanged when the data file is not the one ``read`` describes."""
        if self.signature() != read.sig or self.path.is_symlink():
            raise FileChanged

    def _set_aside(self, rejected: Rejected) -> Path:
        """Write the unusable records (their text as it was) to ``<file>.rejected-<stamp>``."""
        target = free_path(self.path, "rejected")
        body = "[\n" + ",\n".join(rejected.texts) + "\n]\n"
        write_atomic(target, body.encode("utf-8"))
        log.warning(
            "%s had %s; set aside in %s (%s). The usable records were kept.",
            self.path,
            plural(len(rejected), "unusable record"),
            target,
            "; ".join(rejected.reasons[:5]),
        )
        return target

    def write_locked(self, data: Any, fragments: Fragments | None = None) -> None:
        """Validate and atomically write ``data``; the caller holds the lock.

        ``fragments`` are the encoded items ``data`` shares with the cached parse; only the
        other items are encoded and, with ``validate_item``, validated.
        """
        self._refuse_symlink()
        payload, fresh = self.encode_valid(data, fragments)
        backup = self.backup_path if self.path.exists() else None
        write_atomic(self.path, payload, backup=backup)
        if self._copy is not None:
            self._remember(data, payload, fresh, self.signature())

    def _remember(
        self, data: Any, payload: bytes, fragments: Fragments, sig: Signature | None
    ) -> None:
        """Cache what was just written, so neither readers nor the next write parse it again.

        Never trusted by its signature alone: readers compare the bytes until it is older.
        """
        if sig is None:
            return
        with self._cache_guard:
            self._snapshot = Snapshot(sig, payload, data, None, False, {}, fragments)

    def refresh_backup(self) -> None:
        """Make ``<file>.bak`` a copy of the current file, so a purged record does not live on
        in it (a copy, never a link: the backup must survive the file being rewritten in place),
        and remove the temp files a killed writer left (they may hold what was purged).

        The caller holds the lock.
        """
        self._remove_stale_temps()
        if self.path.exists():
            copy_backup(self.path, self.backup_path)

    def _remove_stale_temps(self) -> int:
        """Under the lock no writer is running, so any temp file of ours (of the file, its
        backup, its format sidecar and the files written ``beside`` it) is a dead writer's;
        how many went."""
        stale = [
            *(
                t
                for p in (self.path, self.backup_path, self.format.path, *self.beside)
                for t in temp_files_of(p)
            ),
            *(
                [backup_temp_path(self.backup_path)]
                if backup_temp_path(self.backup_path).exists()
                else []
            ),
        ]
        for path in stale:
            unlink_quietly(path)
        return len(stale)
