"""One JSON file shared by several processes: locked read-modify-write, atomic replace, cached reads.

How a write works (ARCHITECTURE.md, "One write, from a click to the disk"): take the sidecar ``<file>.lock`` and make sure the lock held
is the file at that path (``locking.SidecarLock``), read the file afresh, change the data,
validate it, write a temp file in the same folder (write, fsync); then, under a short lock on
the folder, verify the data file is still the one read (a program that does not know the lock,
or a writer let in by a deleted lock file, may have replaced it: then read again and re-apply),
append the history entry (written ahead), keep the previous version as ``<file>.bak``,
``os.replace``; fsync the folder; release the lock. Readers never take the lock and never
re-parse a file whose bytes have not changed.

Speed without changing a byte on disk (``jsonbytes``): under the lock the file is read afresh
and its bytes compared with the cached parse, which is reused only when they are identical; a
store that says how to copy its document (``copy=``) then also reuses the encoded form of every
item it did not replace, so a write encodes and validates only what changed. A change function
that changes a cached item in place instead of replacing it cannot lose the change: before
the bytes are written they are checked (as fast as orjson writes them) to be the encoding of
the document as it is, and when they are not every item is encoded and validated anew; a
change function that fails or changes nothing leaves no changed item in the cache.

The other parts of the file layer: ``jsonparse`` (every parse bounded: nesting depth, number
size), ``atomic`` (temp file, fsync, replace, backup), ``setaside`` (records a store cannot use
go, bytes intact, to ``<file>.rejected-<stamp>``; ``repair`` starts from ``<file>.bak`` and
replays the history log's newer entries) and ``changes`` (what a change function returns).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from glob import escape as glob_escape
from pathlib import Path
from typing import Any, TypeVar, cast

from ..plainfiles import NotRegularFileError, open_regular, read_regular
from ..settings import DEFAULTS
from .atomic import (
    backup_temp_path,
    copy_backup,
    fsync_dir,
    replace_with,
    sync_folder_after_replace,
    temp_files_of,
    unlink_quietly,
    write_atomic,
    write_temp,
)
from .changes import Changed, Unchanged, Undo, not_an_outcome
from .errors import (
    StoreBusyError,
    StoreCorruptError,
    StoreFormatNewerError,
    StoreFormatUnreadableError,
    StoreSymlinkError,
)
from .formats import FormatFile, upgrade
from .jsonbytes import (
    Fragments,
    PendingCheck,
    encode,
    encode_spliced,
    encodes_as,
    fragments_of,
)
from .jsonparse import (
    MAX_DEPTH,
    has_surrogate_escape,
    loads_bounded,
    nesting_depth,
    object_depth,
    parse_bytes,
    parse_bytes_as_is,
    without_lone_surrogates,
)
from .jsonread import Read, Snapshot, checked
from .jsonread import _FileChanged as FileChanged  # noqa: PLC2701 - the layer's own signal
from .jsonread import _SharedChanged as SharedChanged  # noqa: PLC2701
from .locking import Gated, SidecarLock, commit_lock
from .setaside import (
    Rejected,
    RepairReport,
    SetAside,
    array_item_texts,
    free_path,
    plural,
    record_count,
)

# The file layer's names the stores use, importable from here as before.
__all__ = [
    "MAX_DEPTH",
    "RACY_NS",
    "Changed",
    "JsonFile",
    "RepairReport",
    "SetAside",
    "Signature",
    "TimeCheck",
    "Unchanged",
    "encode",
    "encode_spliced",
    "fragments_of",
    "free_path",
    "fsync_dir",
    "loads_bounded",
    "nesting_depth",
    "object_depth",
    "parse_bytes",
    "temp_files_of",
    "write_atomic",
]

T = TypeVar("T")
R = TypeVar("R")
V = TypeVar("V")
Signature = tuple[int, int, int]

log = logging.getLogger(__name__)

# A file modified this recently may be changed again within the same mtime tick (coarse
# clocks, reused inodes) without its (inode, mtime_ns, size) changing, so its signature
# alone is not trusted: the bytes are re-read and compared instead ("racy git").
RACY_NS = 2_000_000_000
# How often a write re-reads and re-applies its change when another program keeps replacing
# the file between our read and our replace, before it gives up with StoreBusyError.
REAPPLY_LIMIT = 10
EXCLUSIVE_AFTER = 2
# Replaying history onto the backup starts this long before the backup was written: entries
# of that moment are applied again, which changes nothing when they are already in it.
REPLAY_SLACK_NS = RACY_NS

Replay = Callable[[Any, int | None], int]
# What a store's records hold that is kept but cannot be read as a time: (record, problem).
TimeCheck = Callable[[Any], list[tuple[str, str]]]


_UNENCODED: tuple[Any, bytes, str | None] = (object(), b"", None)
_NOT_BUILDING: Any = object()  # no ``view`` of this thread is being built


class JsonFile(Gated):
    """A JSON document on disk that several processes read and change safely.

    ``validate`` checks the document's shape (a problem makes the file damaged);
    ``item_problem`` checks one item of an array document (an unusable item is set aside
    and the rest kept); ``replay`` (data, since_ns) re-applies the history log's entries
    newer than ``since_ns`` (all when None) to ``data`` in place and returns how many
    records it changed, for ``repair``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        default: Callable[[], Any],
        validate: Callable[[Any], str | None] | None = None,
        item_problem: Callable[[Any], str | None] | None = None,
        replay: Replay | None = None,
        lock_timeout: float = DEFAULTS["lock_timeout"],
        copy: Callable[[Any], Any] | None = None,
        validate_item: Callable[[Any], str | None] | None = None,
        unreadable_times: TimeCheck | None = None,
        beside: Sequence[Path] = (),
        store: str | None = None,
    ) -> None:
        """``validate`` checks a whole document (each parse and, without ``validate_item``,
        each write). ``copy`` makes the mutable document ``update`` hands to a change function
        from the cached parse: the parts it copies may be changed in place, the rest is shared
        with the cache and is then neither encoded nor validated again, so a change function
        replaces an item it changes (an item changed in place is still saved, more slowly:
        see ``update``). Without ``copy`` each write parses the file's bytes again.
        ``validate_item`` checks one item of the top-level list or dict; with it a write
        validates (and bounds the depth of) only the new items, so it must refuse whatever
        ``item_problem`` would. ``unreadable_times`` lists the times in a document that cannot
        be read (kept, read as unknown), for ``repair`` to report. ``beside`` names the other
        files written only under this file's lock (a history log), whose temp files are then
        a dead writer's too. ``store`` names the file's format (``formats``: its sidecar
        ``<file>.format`` and its migrations); the file's name when not given."""
        self.path = Path(path)
        self.format = FormatFile(self.path, store or self.path.name)
        self.beside = tuple(beside)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.backup_path = self.path.with_name(self.path.name + ".bak")
        self._default = default
        self._validate = validate
        self._validate_item = validate_item
        self._copy = copy
        self._item_problem = item_problem
        self.replay = replay
        self._unreadable_times = unreadable_times
        self.lock_timeout = lock_timeout
        self._lock = SidecarLock(self.lock_path, timeout=lock_timeout, busy_path=self.path)
        self._cache_guard = threading.Lock()
        self._snapshot: Snapshot | None = None
        self._set_aside_cache: tuple[int, list[SetAside]] | None = None
        # What ``item_view`` built from each item of the last version (item, its line, value).
        self._built: dict[str, dict[int, tuple[Any, bytes, Any]]] = {}
        # The snapshot a ``view`` of this thread builds from: its item_views read that version.
        self._building = threading.local()

    # ----------------------------------------------------------------- reading
    def signature(self) -> Signature | None:
        """(inode, mtime_ns, size) of the file, or None when it does not exist."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def read(self) -> Any:
        """The parsed document, shared and cached: callers must not mutate it."""
        snapshot = self._load()
        return self._default() if snapshot is None else snapshot.data

    def view(self, key: str, build: Callable[[Any], T]) -> T:
        """``build(document)`` cached until the file changes (e.g. a list of Memory objects)."""
        snapshot = self._load()
        if snapshot is not None:
            with self._cache_guard:
                if key in snapshot.views:
                    return cast(T, snapshot.views[key])
        outer = getattr(self._building, "snapshot", _NOT_BUILDING)
        self._building.snapshot = snapshot
        try:
            value = build(self._default() if snapshot is None else snapshot.data)
        finally:
            self._building.snapshot = outer
        if snapshot is None:
            return value
        with self._cache_guard:
            return cast(T, snapshot.views.setdefault(key, value))

    def item_view(self, key: str, build: Callable[[Any], T]) -> tuple[T, ...]:
        """``build(item)`` for each item of a list document, cached until the file changes; an
        item a write of this process left alone (the same object, encoded as the same line)
        keeps what was built from it in the version before, so only changed items are built."""
        building = getattr(self._building, "snapshot", _NOT_BUILDING)
        snapshot = self._load() if building is _NOT_BUILDING else building
        key = f"items.{key}"
        if snapshot is None:
            return tuple(map(build, self._default()))
        with self._cache_guard:
            if key in snapshot.views:
                return cast(tuple[T, ...], snapshot.views[key])
            before = self._built.get(key, {})
            fragments = snapshot.fragments
        built: dict[int, tuple[Any, bytes, T]] = {}
        for item in snapshot.data:
            mark = id(item)
            line = fragments.get(mark, _UNENCODED)
            hit = before.get(mark)
            if hit is not None and hit[0] is item and hit[1] is line[1] and line[0] is item:
                built[mark] = hit
            elif line[0] is item:  # an item changed in place is encoded anew: a new line
                built[mark] = (item, line[1], build(item))
            else:
                built[mark] = (item, b"", build(item))
        value = tuple(entry[2] for entry in built.values())
        if len(built) != len(snapshot.data):  # the same object twice in the list
            value = tuple(built[id(item)][2] for item in snapshot.data)
        with self._cache_guard:
            self._built[key] = {k: v for k, v in built.items() if v[1]}
            return cast(tuple[T, ...], snapshot.views.setdefault(key, value))

    def set_aside(self) -> list[SetAside]:
        """The files of unusable records set aside beside this one (``<file>.rejected-*``),
        oldest first, with how many records each holds. Cached until the folder changes:
        a page asks on every view, and there is almost never one."""
        folder = self.path.parent
        try:
            stamp = os.stat(folder).st_mtime_ns
        except OSError:
            return []
        cached = self._set_aside_cache
        if cached is not None and cached[0] == stamp:
            return cached[1]
        found = [
            SetAside(path, record_count(path))
            for path in sorted(folder.glob(glob_escape(self.path.name) + ".rejected-*"))
            if path.is_file()
        ]
        self._set_aside_cache = (stamp, found)
        return found

    def status(self) -> str:
        """'ok', 'missing', 'corrupt' or 'unreadable' (permissions, a folder in its place)."""
        if not self.path.exists():
            return "missing"
        try:
            self.read()
        except StoreCorruptError:
            return "corrupt"
        except OSError:
            return "unreadable"
        return "ok"

    def _load(self) -> Snapshot | None:
        """The current snapshot, re-read only when the file may have changed; None if missing."""
        with self._cache_guard:
            previous = self._snapshot
        if previous is not None and previous.trusted:
            # A page reads each store several times: one stat, not open + fstat + close, when
            # the file is the one parsed (a FIFO or a folder in its place is never the same).
            try:
                st = os.stat(self.path)
            except OSError:
                st = None
            if st is not None and (st.st_ino, st.st_mtime_ns, st.st_size) == previous.sig:
                return checked(previous)
        try:
            handle = open_regular(self.path)  # noqa: SIM115 - only a missing file is caught
        except NotRegularFileError as exc:  # a FIFO, never waited on: ``repair`` sets it aside
            raise StoreCorruptError(self.path, exc.strerror or "not a regular file") from None
        except FileNotFoundError:
            return None
        with handle:
            st = os.fstat(handle.fileno())
            sig = (st.st_ino, st.st_mtime_ns, st.st_size)
            with self._cache_guard:
                previous = self._snapshot
            if previous is not None and previous.sig == sig and previous.trusted:
                return checked(previous)
            raw = handle.read()
        trusted = time.time_ns() - st.st_mtime_ns > RACY_NS
        if previous is not None and previous.raw == raw:
            snapshot = Snapshot(
                sig,
                raw,
                previous.data,
                previous.error,
                trusted,
                previous.views,
                previous.fragments,
                previous.rejected,
            )
        else:
            try:
                data, rejected = self._parse_split(raw)
                snapshot = Snapshot(sig, raw, data, None, trusted, rejected=rejected)
            except StoreCorruptError as exc:
                snapshot = Snapshot(sig, raw, None, exc, trusted)
        with self._cache_guard:
            self._snapshot = snapshot
        return checked(snapshot)

    def _parse(self, raw: bytes, path: Path | None = None) -> Any:
        """The usable document in ``raw`` (unusable records left out); StoreCorruptError."""
        return self._parse_split(raw, path)[0]

    def _parse_split(self, raw: bytes, path: Path | None = None) -> tuple[Any, Rejected | None]:
        """(usable document, unusable records or None); StoreCorruptError when nothing is usable."""
        path = self.path if path is None else path
        data = parse_bytes(raw, path)
        problem = self._validate(data) if self._validate else None
        if problem:
            raise StoreCorruptError(path, problem)
        if self._item_problem is None or not isinstance(data, list):
            return data, None
        problems = [self._item_problem(item) for item in data]
        bad = [i for i, p in enumerate(problems) if p]
        if not bad:
            return data, None
        if len(bad) == len(data):
            raise StoreCorruptError(path, f"item {bad[0]} {problems[bad[0]]}")
        texts = array_item_texts(raw.decode("utf-8").lstrip("\ufeff"))
        rejected = Rejected(
            tuple(texts[i] for i in bad), tuple(f"item {i} {problems[i]}" for i in bad)
        )
        return [item for i, item in enumerate(data) if not problems[i]], rejected

    def _read_under_lock(self) -> Read:
        """Under the lock: the current document as a new, mutable object, its signature, the
        records set aside and the encoded items it shares with the cached parse.

        The file's bytes are always read; the cached parse stands in for parsing them only when
        they are identical to the bytes it was parsed from (whatever the timestamps say) and
        are in our own form (its items can be cut from them): only then are items shared.
        """
        self._refuse_symlink()
        try:
            handle = open_regular(self.path)  # noqa: SIM115 - only a missing file is caught
        except NotRegularFileError as exc:  # a FIFO, never waited on: ``repair`` sets it aside
            raise StoreCorruptError(self.path, exc.strerror or "not a regular file") from None
        except FileNotFoundError:
            return Read(None, self._default())
        with handle:
            st = os.fstat(handle.fileno())
            raw = handle.read()
        sig = (st.st_ino, st.st_mtime_ns, st.st_size)
        with self._cache_guard:
            cached = self._snapshot
        if cached is not None and cached.error is None and cached.raw == raw:
            if self._copy is None:
                # Parsed (bounded) again for a mutable copy; validated when it was cached.
                data = parse_bytes(raw, self.path)
                if cached.rejected is None:
                    return Read(sig, data)
                return Read(sig, *self._parse_split(raw))
            if not cached.fragments and cached.rejected is None:
                # The second write in a row: worth cutting them now.
                cached.fragments = fragments_of(raw, cached.data)
            if cached.fragments:
                return Read(sig, self._copy(cached.data), None, cached.fragments, cached)
        # A parse of our own, shared with nothing: the cache takes the document written (or
        # the next read parses again), never one a change function may have changed.
        data, rejected = self._parse_split(raw)
        return Read(sig, data if self._copy is None else self._copy(data), rejected)

    def _refuse_symlink(self) -> None:
        """A link would be replaced by a plain file on the first write, splitting the store."""
        if self.path.is_symlink():
            raise StoreSymlinkError(self.path, Path(os.path.realpath(self.path)))

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

    def ensure(self) -> None:
        """Create the folder and, if missing, the file with the default document; check it parses.

        Also removes temp files a killed writer left behind (safe: temps exist only under the lock).
        Then brings the file to this release's format (``upgrade``); a file in a newer format,
        or whose format sidecar cannot be read, is left as it is (read only: writes say why).
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists() or temp_files_of(self.path) or not self.format.settled():
            with self.locked():
                self._remove_stale_temps()
                try:
                    self.upgrade()
                except (StoreFormatNewerError, StoreFormatUnreadableError) as exc:
                    log.warning("%s", exc)
                else:
                    if not self.path.exists() and not self.path.is_symlink():
                        write_atomic(self.path, encode(self._default()))
        self.read()

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

    def repair(self) -> Path | None:
        """Set a damaged file aside (bytes intact), start from the backup and replay history.

        Returns the quarantine path, or None when the whole file was not set aside.
        """
        return self.repair_report().quarantine

    def repair_report(self) -> RepairReport:
        """Repair the file and say what was done (see ``RepairReport``).

        A file with a few unusable records keeps the usable ones (the others are set aside);
        a damaged file is set aside whole, and the store starts again from ``<file>.bak``
        (else empty) with the history log's newer entries replayed on top.
        A file in a format newer than this release knows, or whose format sidecar cannot be
        read, is left as it is (``report.format_problem`` says why); any other is brought to
        this release's format afterwards (``upgrade``).
        """
        report = RepairReport(self.path)
        with self.locked():
            self._refuse_symlink()
            report.unfinished = self._remove_stale_temps()
            try:
                self.format.writable()
            except (StoreFormatNewerError, StoreFormatUnreadableError) as exc:
                report.format_problem = exc
                return report
            self._repair_locked(report)
            report.migrated = self.upgrade()
            report.format = self.format.state().describe()
        return report

    def _repair_locked(self, report: RepairReport) -> None:
        try:
            read = self._read_under_lock()
        except StoreCorruptError:
            pass
        else:
            report.surrogates = self._lone_surrogates_on_disk()
            if read.rejected:
                report.rejected = len(read.rejected)
                report.rejected_path = self._set_aside(read.rejected)
            if read.rejected or report.surrogates:
                self.write_locked(read.data)  # (read with U+FFFD for each lone surrogate)
            self._note_times(report, read.data)
            return
        report.quarantine = free_path(self.path, "corrupt")
        try:
            # A link keeps a file at the path at every moment; replace is the fallback
            # for filesystems without hard links.
            os.link(self.path, report.quarantine)
        except OSError:
            os.replace(self.path, report.quarantine)
        fsync_dir(self.path.parent)
        restored, since = self._default(), None
        report.source = "an empty store"
        try:
            restored = self._parse(read_regular(self.backup_path), self.backup_path)
            since = os.stat(self.backup_path).st_mtime_ns - REPLAY_SLACK_NS
            report.source = "the last good backup"
        except (OSError, StoreCorruptError):
            pass
        if self.replay is not None:
            report.replayed = self.replay(restored, since)
        write_atomic(self.path, self.encode_valid(restored)[0])
        self._note_times(report, restored)

    def _lone_surrogates_on_disk(self) -> int:
        """How many texts of the file (as it is on disk) hold a lone surrogate."""
        try:
            raw = read_regular(self.path)
            return (
                without_lone_surrogates(parse_bytes_as_is(raw, self.path))[1]
                if has_surrogate_escape(raw)
                else 0
            )
        except (OSError, StoreCorruptError):
            return 0

    def _note_times(self, report: RepairReport, data: Any) -> None:
        if self._unreadable_times is not None:
            report.unreadable_times = self._unreadable_times(data)
