"""One JSON file shared by several processes: locked read-modify-write, atomic replace, cached reads.

How a write works (DESIGN.md): take the sidecar ``<file>.lock``, read the file afresh,
change the data, validate it, write a temp file in the same folder (write, fsync),
keep the previous version as ``<file>.bak``, ``os.replace``, fsync the folder, run the
commit hook (the history log), release the lock. Readers never take the lock and never
re-parse a file whose bytes have not changed.

Speed without changing a byte on disk: JSON is encoded and decoded with orjson, whose
indented UTF-8 output is exactly ``json.dumps(indent=2, ensure_ascii=False)`` for documents of
text, whole numbers, booleans and null; anything else (a float, an integer beyond 64 bits, a
lone surrogate, NaN) goes through the standard library as before. Under the lock the file is
read afresh and its bytes compared with the cached parse, which is reused only when they are
identical; a store that says how to copy its document (``copy=``) then also reuses the encoded
form of every item it did not replace, so a write encodes only what changed.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import compress, repeat
from operator import and_, eq, is_, itemgetter, not_
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

import filelock
import orjson

from .errors import StoreBusyError, StoreCorruptError, StoreWriteError

T = TypeVar("T")
Signature = tuple[int, int, int]

log = logging.getLogger(__name__)

# A file modified this recently may be changed again within the same mtime tick (coarse
# clocks, reused inodes) without its (inode, mtime_ns, size) changing, so its signature
# alone is not trusted: the bytes are re-read and compared instead ("racy git").
RACY_NS = 2_000_000_000
DEFAULT_MODE = 0o644
LOCK_POLL_SECONDS = 0.005


class Unchanged(Generic[T]):
    """Returned by a mutation that decided not to change anything: no write happens."""

    def __init__(self, value: T) -> None:
        self.value = value


_ORJSON_OPTIONS = (
    orjson.OPT_INDENT_2
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
_PLAIN_LEAVES = (str, int, bool, type(None))


def _refuse(value: Any) -> Any:
    """orjson's fallback for a type it would write differently from json: use json instead."""
    raise TypeError(type(value).__name__)


def plain_json(value: Any) -> bool:
    """True when ``value`` holds only dicts, lists, text, whole numbers, booleans and null
    (no floats, tuples or subclasses): the documents orjson writes byte for byte like json."""
    stack = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is dict:
            push(item.values())
        elif kind is list:
            push(item)
        elif kind not in _PLAIN_LEAVES:
            return False
    return True


def encode_value(value: Any) -> bytes:
    """``value`` as ``json.dumps(value, ensure_ascii=False, indent=2)`` writes it, in UTF-8."""
    if plain_json(value):
        try:
            return orjson.dumps(value, default=_refuse, option=_ORJSON_OPTIONS)
        except (orjson.JSONEncodeError, TypeError):
            pass  # a non-text key, a lone surrogate, an integer beyond 64 bits
    return json.dumps(value, ensure_ascii=False, indent=2).encode("utf-8")


def encode(data: Any) -> bytes:
    """The on-disk form: UTF-8, human-readable (indented by 2), non-ASCII kept as is."""
    return encode_value(data) + b"\n"


Fragments = dict[int, tuple[Any, bytes, str | None]]


def encode_spliced(data: Any, fragments: Fragments) -> tuple[bytes, Fragments, list[Any]]:
    """``encode(data)`` for a top-level list or dict, reusing the encoded items in ``fragments``.

    ``fragments`` maps ``id(item)`` to ``(item, its encoded line, its key)``; an entry is
    reused only for that very object (and, in a dict, under the same key), so the caller must
    never change an item of a cached document in place. ``fragments`` itself may be extended
    and returned (the caller holds the lock; readers never use it). Returns the bytes, the
    fragments of this document and the items that were encoded anew (the ones to validate).
    """
    kind = type(data)
    if kind is not list and kind is not dict:
        return encode(data), {}, [data]
    if not fragments or not data:  # nothing to reuse: one call encodes it all, faster
        return encode(data), {}, list(data.values() if kind is dict else data)
    # Item by item, but in C (map, zip, compress): a file of 10,000 records is spliced in
    # about the time it takes to copy its bytes.
    items: list[Any] = list(data.values()) if kind is dict else data
    count = len(items)
    keys: list[Any] | None = list(data) if kind is dict else None
    ids = list(map(id, items))
    hits = list(map(fragments.get, ids, repeat(_NO_FRAGMENT, count)))
    reused = map(is_, map(_FIRST, hits), items)
    if keys is not None:
        reused = map(and_, reused, map(eq, map(_THIRD, hits), keys))
    lines: list[bytes] = list(map(_SECOND, hits))
    new_items: list[Any] = []
    added: list[tuple[int, tuple[Any, bytes, str | None]]] = []
    for index in compress(range(count), map(not_, reused)):
        item = items[index]
        line = encode_value(item).replace(b"\n", b"\n  ")
        key = None
        if keys is not None:
            key = keys[index]
            if type(key) is not str:
                return encode(data), {}, items
            line = encode_value(key) + b": " + line
        lines[index] = line
        new_items.append(item)
        added.append((ids[index], (item, line, key)))
    if len(fragments) + len(added) <= 2 * count + 64:
        # Grown in place (no new entry per reused item): an entry of an item that is gone
        # keeps that object alive, so its id cannot come back for another one.
        fresh = fragments
        fresh.update(added)
    else:
        fresh = dict(
            zip(ids, zip(items, lines, keys or repeat(None, count), strict=True), strict=True)
        )
    opening, closing = (b"[\n  ", b"\n]\n") if kind is list else (b"{\n  ", b"\n}\n")
    lines[0] = opening + lines[0]
    lines[-1] = lines[-1] + closing
    return b",\n  ".join(lines), fresh, new_items


_NO_FRAGMENT: tuple[Any, bytes, str | None] = (object(), b"", None)
_FIRST, _SECOND, _THIRD = itemgetter(0), itemgetter(1), itemgetter(2)


_TOP_LEVEL_SEPARATOR = re.compile(rb",\n  (?! )")


def fragments_of(raw: bytes, data: Any) -> Fragments:
    """The encoded items of ``data`` cut out of ``raw``, the bytes it was parsed from.

    Only when ``raw`` is exactly ``encode(data)``: then every line is structure (text has its
    line breaks escaped), an item of the top level starts on a line indented by exactly two
    spaces after a line that ends with a comma, and the cut pieces are what ``encode_spliced``
    would make. Anything else gives no fragments (the next write encodes every item).
    """
    kind = type(data)
    if (kind is not list and kind is not dict) or not data or encode(data) != raw:
        return {}
    pieces = _TOP_LEVEL_SEPARATOR.split(raw[4:-3])  # between "[\n  " and "\n]\n"
    if len(pieces) != len(data):
        return {}
    if kind is list:
        return {id(item): (item, piece, None) for item, piece in zip(data, pieces, strict=True)}
    return {
        id(item): (item, piece, key)
        for (key, item), piece in zip(data.items(), pieces, strict=True)
    }


def parse_bytes(raw: bytes, path: Path) -> Any:
    """Parse the bytes of ``path`` or raise StoreCorruptError saying where it breaks."""
    if not raw.strip():
        raise StoreCorruptError(path, "the file is empty", offset=0)
    if not raw.startswith(b"\xef\xbb\xbf"):
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # json says where it breaks (or reads what orjson refuses), below
        else:
            if plain_json(data):
                return data
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StoreCorruptError(path, "it is not valid UTF-8", offset=exc.start) from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise StoreCorruptError(path, exc.msg, line=exc.lineno, column=exc.colno) from exc


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, payload: bytes) -> None:
    """os.write until every byte is written (a short write is not an error)."""
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _unlink_quietly(path: str | os.PathLike[str]) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _mode_of(path: Path) -> int:
    """Permissions for the replacement: the current file's, else rw-r--r-- (mkstemp gives 0600)."""
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        return DEFAULT_MODE


def write_atomic(path: Path, payload: bytes, *, backup: Path | None = None) -> None:
    """Replace ``path`` with ``payload`` so that a reader or a crash sees old or new, never half.

    On any failure the original file is untouched, no temp file is left and StoreWriteError
    (an OSError with the original errno) is raised.
    """
    path = Path(path)
    directory = path.parent
    mode = _mode_of(path)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise StoreWriteError(path, exc) from exc
    try:
        try:
            os.fchmod(fd, mode)
            _write_all(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
        if backup is not None:
            _keep_backup(path, backup)
        os.replace(tmp_name, path)
    except BaseException as exc:
        _unlink_quietly(tmp_name)
        if isinstance(exc, OSError) and not isinstance(exc, StoreWriteError):
            raise StoreWriteError(path, exc) from exc
        raise
    try:
        fsync_dir(directory)
    except OSError as exc:
        # The new content is in place and visible; failing the call now would make the
        # caller retry a change that happened. Only durability across power loss is in doubt.
        log.warning("Saved %s but could not fsync its folder: %s", path, exc)


def _keep_backup(path: Path, backup: Path) -> None:
    """Hard-link the current (good) file as the backup; a failure here never blocks a write."""
    link_tmp = backup.with_name(backup.name + ".tmp")
    try:
        _unlink_quietly(link_tmp)
        os.link(path, link_tmp)
        os.replace(link_tmp, backup)
    except FileNotFoundError:
        pass
    except OSError:
        _unlink_quietly(link_tmp)


def utc_stamp() -> str:
    """A UTC timestamp safe in a file name, e.g. 20261122T015444123456Z."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")


def temp_files_of(path: Path) -> list[Path]:
    """Temp files ``write_atomic`` makes for ``path`` (left behind only by a killed writer)."""
    pattern = re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}\.tmp")
    try:
        names = os.listdir(path.parent)
    except FileNotFoundError:
        return []
    return [path.parent / name for name in names if pattern.fullmatch(name)]


@dataclass
class _Snapshot:
    """One parse of the file: its bytes, the result (or the error) and views built from it."""

    sig: Signature
    raw: bytes
    data: Any
    error: StoreCorruptError | None
    trusted: bool
    views: dict[str, Any] = field(default_factory=dict)
    fragments: Fragments = field(default_factory=dict)  # encoded items, see encode_spliced


class JsonFile:
    """A JSON document on disk that several processes read and change safely."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        default: Callable[[], Any],
        validate: Callable[[Any], str | None] | None = None,
        lock_timeout: float = 10.0,
        copy: Callable[[Any], Any] | None = None,
        validate_item: Callable[[Any], str | None] | None = None,
    ) -> None:
        """``validate`` checks a whole document (each parse and, without ``validate_item``,
        each write). ``copy`` makes the mutable document ``update`` hands to a mutation from
        the cached parse: every part the store's mutations change in place must be a new object
        in it, the rest may be shared (and is then never re-encoded). ``validate_item`` checks
        one item of the top-level list or dict; with it a write validates only the new items.
        Without ``copy`` each write parses the file's bytes again, as before."""
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.backup_path = self.path.with_name(self.path.name + ".bak")
        self._default = default
        self._validate = validate
        self._validate_item = validate_item
        self._copy = copy
        self.lock_timeout = lock_timeout
        self._lock = filelock.FileLock(str(self.lock_path), timeout=lock_timeout)
        self._cache_guard = threading.Lock()
        self._snapshot: _Snapshot | None = None

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
        if snapshot is None:
            return build(self._default())
        with self._cache_guard:
            if key in snapshot.views:
                return cast(T, snapshot.views[key])
        value = build(snapshot.data)
        with self._cache_guard:
            return cast(T, snapshot.views.setdefault(key, value))

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

    def backup_status(self) -> str:
        """'ok', 'missing' or 'corrupt' for ``<file>.bak``, the copy ``repair`` starts from."""
        try:
            self._parse(self.backup_path.read_bytes(), self.backup_path)
        except FileNotFoundError:
            return "missing"
        except (OSError, StoreCorruptError):
            return "corrupt"
        return "ok"

    def _load(self) -> _Snapshot | None:
        """The current snapshot, re-read only when the file may have changed; None if missing."""
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - only a missing file is caught here
        except FileNotFoundError:
            return None
        with handle:
            st = os.fstat(handle.fileno())
            sig = (st.st_ino, st.st_mtime_ns, st.st_size)
            with self._cache_guard:
                previous = self._snapshot
            if previous is not None and previous.sig == sig and previous.trusted:
                return _checked(previous)
            raw = handle.read()
        trusted = time.time_ns() - st.st_mtime_ns > RACY_NS
        if previous is not None and previous.raw == raw:
            snapshot = _Snapshot(
                sig, raw, previous.data, previous.error, trusted, previous.views, previous.fragments
            )
        else:
            try:
                snapshot = _Snapshot(sig, raw, self._parse(raw), None, trusted)
            except StoreCorruptError as exc:
                snapshot = _Snapshot(sig, raw, None, exc, trusted)
        with self._cache_guard:
            self._snapshot = snapshot
        return _checked(snapshot)

    def _parse(self, raw: bytes, path: Path | None = None) -> Any:
        path = self.path if path is None else path
        data = parse_bytes(raw, path)
        problem = self._validate(data) if self._validate else None
        if problem:
            raise StoreCorruptError(path, problem)
        return data

    def _read_fresh(self) -> Any:
        """Under the lock: the current document as a new, mutable object."""
        return self._read_locked()[0]

    def _read_locked(self) -> tuple[Any, Fragments]:
        """Under the lock: a mutable document read afresh, and the encoded items it shares.

        The file's bytes are always read; the cached parse stands in for parsing them only when
        they are identical to the bytes it was parsed from (whatever the timestamps say).
        """
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - only a missing file is caught here
        except FileNotFoundError:
            return self._default(), {}
        with handle:
            st = os.fstat(handle.fileno())
            raw = handle.read()
        with self._cache_guard:
            cached = self._snapshot
        if cached is not None and cached.error is None and cached.raw == raw:
            if self._copy is None:
                return parse_bytes(raw, self.path), {}  # validated when it was cached
            if not cached.fragments:  # the second write in a row: worth cutting them now
                cached.fragments = fragments_of(raw, cached.data)
            return self._copy(cached.data), cached.fragments
        data = self._parse(raw)
        if self._copy is None:
            return data, {}
        sig = (st.st_ino, st.st_mtime_ns, st.st_size)
        trusted = time.time_ns() - st.st_mtime_ns > RACY_NS
        # Fragments are cut from these bytes only if this process writes again without
        # another writer in between (above): when writers take turns, one encode is cheaper.
        with self._cache_guard:
            self._snapshot = _Snapshot(sig, raw, data, None, trusted)
        return self._copy(data), {}

    # ----------------------------------------------------------------- writing
    def locked(self) -> _BoundedLock:
        """The sidecar lock, bounded: raises StoreBusyError instead of hanging."""
        return _BoundedLock(self)

    def update(
        self,
        mutate: Callable[[Any], Any],
        journal: Callable[[Any], Callable[[], None] | None] | None = None,
    ) -> Any:
        """Apply ``mutate`` to a fresh copy of the document under the lock and save it.

        ``mutate`` changes the document in place and returns a result; returning
        ``Unchanged(result)`` skips the write. ``journal(result)`` (the history log) runs
        under the lock *before* the file is replaced, so no change can land without its
        entry — a deletion stays restorable even when the disk fills up right after it;
        it returns an undo, called when the write then fails.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.locked():
            data, fragments = self._read_locked()
            result = mutate(data)
            if isinstance(result, Unchanged):
                return result.value
            undo = journal(result) if journal is not None else None
            try:
                self.write_locked(data, fragments)
            except BaseException:
                if undo is not None:
                    undo()
                raise
            return result

    def write_locked(self, data: Any, fragments: Fragments | None = None) -> None:
        """Validate and atomically write ``data``; the caller holds the lock.

        ``fragments`` are the encoded items ``data`` shares with the cached parse (from
        ``update``); only the other items are encoded and, with ``validate_item``, validated.
        """
        payload, fresh, new_items = encode_spliced(data, fragments or {})
        if self._validate_item is not None and type(data) in (list, dict):
            problem = next(filter(None, map(self._validate_item, new_items)), None)
        else:
            problem = self._validate(data) if self._validate else None
        if problem:
            raise ValueError(f"Refusing to write {self.path}: {problem}")
        backup = self.backup_path if self.path.exists() else None
        write_atomic(self.path, payload, backup=backup)
        if self._copy is not None:
            self._remember(data, payload, fresh)

    def _remember(self, data: Any, payload: bytes, fragments: Fragments) -> None:
        """Cache what was just written, so neither readers nor the next write parse it again."""
        try:
            st = os.stat(self.path)
        except OSError:
            return
        sig = (st.st_ino, st.st_mtime_ns, st.st_size)
        with self._cache_guard:
            self._snapshot = _Snapshot(sig, payload, data, None, False, {}, fragments)

    def refresh_backup(self) -> None:
        """Make ``<file>.bak`` the current file, so a purged record does not live on in it.

        The caller holds the lock.
        """
        if self.path.exists():
            _keep_backup(self.path, self.backup_path)

    def ensure(self) -> None:
        """Create the folder and, if missing, the file with the default document; check it parses.

        Also removes temp files a killed writer left behind (safe: temps exist only under the lock).
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists() or temp_files_of(self.path):
            with self.locked():
                self._remove_stale_temps()
                if not self.path.exists():
                    write_atomic(self.path, encode(self._default()))
        self.read()

    def _remove_stale_temps(self) -> None:
        """Under the lock no writer is running, so any temp file of ours is a dead writer's."""
        for stale in temp_files_of(self.path):
            _unlink_quietly(stale)

    def repair(self) -> Path | None:
        """Set a damaged file aside (bytes intact) and start from the last good backup.

        Returns the quarantine path, or None when the file was fine or missing.
        """
        with self.locked():
            try:
                self._read_fresh()
                return None
            except StoreCorruptError:
                pass
            self._remove_stale_temps()
            quarantine = self._quarantine_path()
            try:
                # A link keeps a file at the path at every moment; replace is the fallback
                # for filesystems without hard links.
                os.link(self.path, quarantine)
            except OSError:
                os.replace(self.path, quarantine)
            fsync_dir(self.path.parent)
            restored = self._default()
            try:
                restored = self._parse(self.backup_path.read_bytes(), self.backup_path)
            except (OSError, StoreCorruptError):
                pass
            write_atomic(self.path, encode(restored))
            return quarantine

    def _quarantine_path(self) -> Path:
        """``<name>.corrupt-<UTC timestamp>``, never an existing file."""
        base = f"{self.path.name}.corrupt-{utc_stamp()}"
        candidate, n = self.path.with_name(base), 1
        while candidate.exists():
            candidate, n = self.path.with_name(f"{base}-{n}"), n + 1
        return candidate


def _checked(snapshot: _Snapshot) -> _Snapshot:
    """The snapshot, or a fresh copy of its error (re-raising one instance grows its traceback)."""
    error = snapshot.error
    if error is not None:
        raise StoreCorruptError(
            error.path, error.reason, line=error.line, column=error.column, offset=error.offset
        )
    return snapshot


class _BoundedLock:
    """Context manager around the file lock that turns a timeout into StoreBusyError."""

    def __init__(self, owner: JsonFile) -> None:
        self._owner = owner

    def __enter__(self) -> _BoundedLock:
        try:
            # Poll more often than filelock's 50 ms default: writes take milliseconds, and a
            # dashboard request waiting on another process should not idle for most of that.
            self._owner._lock.acquire(poll_interval=LOCK_POLL_SECONDS)
        except filelock.Timeout as exc:
            raise StoreBusyError(self._owner.path, self._owner.lock_timeout) from exc
        return self

    def __exit__(self, *exc: object) -> None:
        self._owner._lock.release()
