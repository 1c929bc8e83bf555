"""One JSON file shared by several processes: locked read-modify-write, atomic replace, cached reads.

How a write works (DESIGN.md): take the sidecar ``<file>.lock``, read the file afresh,
change the data, validate it, write a temp file in the same folder (flush, fsync),
keep the previous version as ``<file>.bak``, ``os.replace``, fsync the folder, run the
commit hook (the history log), release the lock. Readers never take the lock and never
re-parse a file whose (inode, mtime_ns, size) has not changed.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Generic, TypeVar

import filelock

from .errors import StoreBusyError, StoreCorruptError

T = TypeVar("T")
Signature = tuple[int, int, int]

_MISSING = object()


class Unchanged(Generic[T]):
    """Returned by a mutation that decided not to change anything: no write happens."""

    def __init__(self, value: T) -> None:
        self.value = value


def encode(data: Any) -> bytes:
    """The on-disk form: UTF-8, human-readable, non-ASCII kept as is."""
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def parse_bytes(raw: bytes, path: Path) -> Any:
    """Parse the bytes of ``path`` or raise StoreCorruptError saying where it breaks."""
    if not raw.strip():
        raise StoreCorruptError(path, "the file is empty", offset=0)
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


def write_atomic(path: Path, payload: bytes, *, backup: Path | None = None) -> None:
    """Replace ``path`` with ``payload`` so that a reader or a crash sees old or new, never half.

    On any failure the original file is untouched, no temp file is left and the error is raised.
    """
    directory = path.parent
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if backup is not None:
            _keep_backup(path, backup)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        raise
    fsync_dir(directory)


def _keep_backup(path: Path, backup: Path) -> None:
    """Hard-link the current (good) file as the backup; a failure here never blocks a write."""
    link_tmp = backup.with_name(backup.name + ".tmp")
    try:
        try:
            link_tmp.unlink()
        except FileNotFoundError:
            pass
        os.link(path, link_tmp)
        os.replace(link_tmp, backup)
    except FileNotFoundError:
        pass
    except OSError:
        try:
            link_tmp.unlink()
        except OSError:
            pass


def utc_stamp() -> str:
    """A UTC timestamp safe in a file name, e.g. 20261122T015444Z."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")


class JsonFile:
    """A JSON document on disk that several processes read and change safely."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        default: Callable[[], Any],
        validate: Callable[[Any], str | None] | None = None,
        lock_timeout: float = 10.0,
    ) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.backup_path = self.path.with_name(self.path.name + ".bak")
        self._default = default
        self._validate = validate
        self.lock_timeout = lock_timeout
        self._lock = filelock.FileLock(str(self.lock_path), timeout=lock_timeout)
        self._cache_guard = threading.Lock()
        self._sig: Any = _MISSING
        self._data: Any = None
        self._error: StoreCorruptError | None = None
        self._views: dict[str, Any] = {}

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
        return self._load()[1]

    def view(self, key: str, build: Callable[[Any], T]) -> T:
        """``build(document)`` cached until the file changes (e.g. a list of Memory objects)."""
        sig, data = self._load()
        with self._cache_guard:
            cached = self._views.get(key)
            if cached is not None and cached[0] == sig:
                return cached[1]
        value = build(data)
        with self._cache_guard:
            if self._sig == sig:
                self._views[key] = (sig, value)
        return value

    def status(self) -> str:
        """'ok', 'missing' or 'corrupt' — for /healthz."""
        if not self.path.exists():
            return "missing"
        try:
            self.read()
        except StoreCorruptError:
            return "corrupt"
        return "ok"

    def _load(self) -> tuple[Any, Any]:
        try:
            handle = open(self.path, "rb")
        except FileNotFoundError:
            return None, self._default()
        with handle:
            st = os.fstat(handle.fileno())
            sig = (st.st_ino, st.st_mtime_ns, st.st_size)
            with self._cache_guard:
                if self._sig == sig:
                    if self._error is not None:
                        raise self._error
                    return sig, self._data
            raw = handle.read()
        try:
            data = self._parse(raw)
        except StoreCorruptError as exc:
            with self._cache_guard:
                self._sig, self._data, self._error = sig, None, exc
                self._views.clear()
            raise
        with self._cache_guard:
            self._sig, self._data, self._error = sig, data, None
            self._views.clear()
        return sig, data

    def _parse(self, raw: bytes) -> Any:
        data = parse_bytes(raw, self.path)
        problem = self._validate(data) if self._validate else None
        if problem:
            raise StoreCorruptError(self.path, problem)
        return data

    def _read_fresh(self) -> Any:
        """Under the lock: the current document as a new, mutable object."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return self._default()
        return self._parse(raw)

    # ----------------------------------------------------------------- writing
    def locked(self) -> filelock.BaseFileLock:
        """The sidecar lock, bounded: raises StoreBusyError instead of hanging."""
        return _BoundedLock(self)

    def update(self, mutate: Callable[[Any], Any],
               on_commit: Callable[[Any], None] | None = None) -> Any:
        """Apply ``mutate`` to a fresh copy of the document under the lock and save it.

        ``mutate`` changes the document in place and returns a result; returning
        ``Unchanged(result)`` skips the write. ``on_commit(result)`` runs after the
        file is replaced, still under the lock (the history log).
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.locked():
            data = self._read_fresh()
            result = mutate(data)
            if isinstance(result, Unchanged):
                return result.value
            self.write_locked(data)
            if on_commit is not None:
                on_commit(result)
            return result

    def write_locked(self, data: Any) -> None:
        """Validate and atomically write ``data``; the caller holds the lock."""
        problem = self._validate(data) if self._validate else None
        if problem:
            raise ValueError(f"Refusing to write {self.path}: {problem}")
        backup = self.backup_path if self.path.exists() else None
        write_atomic(self.path, encode(data), backup=backup)

    def ensure(self) -> None:
        """Create the folder and, if missing, the file with the default document; check it parses."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists():
            with self.locked():
                if not self.path.exists():
                    write_atomic(self.path, encode(self._default()))
        self.read()

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
            quarantine = self.path.with_name(f"{self.path.name}.corrupt-{utc_stamp()}")
            os.replace(self.path, quarantine)
            fsync_dir(self.path.parent)
            restored = self._default()
            try:
                restored = self._parse(self.backup_path.read_bytes())
            except (OSError, StoreCorruptError):
                pass
            write_atomic(self.path, encode(restored))
            return quarantine


class _BoundedLock:
    """Context manager around the file lock that turns a timeout into StoreBusyError."""

    def __init__(self, owner: JsonFile) -> None:
        self._owner = owner

    def __enter__(self) -> "_BoundedLock":
        try:
            self._owner._lock.acquire()
        except filelock.Timeout as exc:
            raise StoreBusyError(self._owner.path, self._owner.lock_timeout) from exc
        return self

    def __exit__(self, *exc: object) -> None:
        self._owner._lock.release()
