"""Reading one JSON file shared by several processes (the reading half of ``jsonfile.JsonFile``):
what a read holds (``Snapshot``, one parse of the file and the views built from it; ``Read``,
the file as read under the lock), ``FileReader`` (the cached parse, re-read only when the
file's bytes may have changed, the cached views and item views of one version, the records set
aside) and the two signals a write re-applies on."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from glob import escape as glob_escape
from pathlib import Path
from typing import Any, TypeVar, cast

from ..plainfiles import NotRegularFileError, open_regular
from ..settings import DEFAULTS
from .errors import StoreCorruptError, StoreSymlinkError
from .formats import FormatFile
from .jsonbytes import Fragments, fragments_of
from .jsonparse import parse_bytes
from .locking import Gated, SidecarLock
from .setaside import Rejected, SetAside, array_item_texts, record_count

Signature = tuple[int, int, int]


@dataclass
class Read:
    """The file as read under the lock: its signature (None when missing) and usable data."""

    sig: Signature | None
    data: Any
    rejected: Rejected | None = None
    fragments: Fragments = field(default_factory=dict)  # encoded items, see encode_spliced
    # The cached parse whose items ``data`` shares (only ever with ``fragments``), else None.
    shared: Snapshot | None = None


@dataclass
class Snapshot:
    """One parse of the file: its bytes, the result (or the error) and views built from it."""

    sig: Signature
    raw: bytes
    data: Any
    error: StoreCorruptError | None
    trusted: bool
    views: dict[str, Any] = field(default_factory=dict)
    fragments: Fragments = field(default_factory=dict)  # encoded items, see encode_spliced
    rejected: Rejected | None = None  # records of ``raw`` left out of ``data``


class _FileChanged(Exception):
    """The data file is no longer the one read under the lock; read again and re-apply."""


class _SharedChanged(Exception):
    """A change function changed an item shared with the cached parse in place: the spliced
    bytes are stale; encode every item anew."""


def checked(snapshot: Snapshot) -> Snapshot:
    """The snapshot, or a fresh copy of its error (re-raising one instance grows its traceback)."""
    error = snapshot.error
    if error is not None:
        raise StoreCorruptError(
            error.path, error.reason, line=error.line, column=error.column, offset=error.offset
        )
    return snapshot


T = TypeVar("T")

# A file modified this recently may be changed again within the same mtime tick (coarse
# clocks, reused inodes) without its (inode, mtime_ns, size) changing, so its signature
# alone is not trusted: the bytes are re-read and compared instead ("racy git").
RACY_NS = 2_000_000_000

Replay = Callable[[Any, int | None], int]
# What a store's records hold that is kept but cannot be read as a time: (record, problem).
TimeCheck = Callable[[Any], list[tuple[str, str]]]

_UNENCODED: tuple[Any, bytes, str | None] = (object(), b"", None)
_NOT_BUILDING: Any = object()  # no ``view`` of this thread is being built


class FileReader(Gated):
    """A JSON document on disk, read by several processes: cached parses and views, never a
    lock (``jsonwrite.FileWriter`` writes it, ``jsonfile.JsonFile`` is the whole file)."""

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
