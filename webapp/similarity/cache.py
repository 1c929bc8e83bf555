"""Vectors computed once per version of a memory, kept in memory and in a file beside the store.

A vector is keyed by a hash of the text as embedded (``embedding_text``: NFKC, 繁→简, spacing)
and the model's name, so an unchanged memory is never embedded again and a changed one is
(its text, hence its key, changed). ``VectorCache(path=…)`` loads the vectors a previous
process saved, so the first scan after a restart does not recompute them; ``save()`` writes
them back atomically (a temporary file in the same folder, fsync, ``os.replace``).

The file is one ``.npz`` (numpy's zip of arrays, read with ``allow_pickle=False``): ``vectors``
(n × dim float32), ``keys`` (the index: n × 16 bytes, the hash of row i's text) and ``meta``
(format, model name, dimension, the key's id). With a ``secret`` the hash is keyed (BLAKE2b
with the random key of ``memories.vectors.key``, apart from the forgotten facts' fingerprints),
so a list of guessed texts cannot be checked against the file without the key; a file written
with another key is ignored. ``forgotten`` names the rows of facts deleted forever: they are
left out when the file is read and whenever it is written, whichever process writes it. A file that is missing, truncated, corrupt or written by another
model is ignored with a warning, and the next ``save()`` replaces it: it never stops a scan.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import logging
import os
import tempfile
import threading
import zipfile
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..plainfiles import open_regular
from .embedders import Embedder, Vectors, embedding_text

log = logging.getLogger(__name__)

# 2: keys as n × 16 uint8 (1 lost trailing zero bytes); 3: keyed hashes, the key's id in meta
FORMAT = "memory-curator-vectors/3"
KEY_BYTES = 16


# A cache file is read only when it is a regular file (never waiting on a FIFO in its place)
# within these bounds, checked before a byte of an array is read: a header claiming 2**40
# rows, or a small compressed file inflating to gigabytes, is refused, not allocated. A cache
# holds a vector per memory (a few KB each): 128 MB is some 30,000 memories of a 1,024-wide
# model. ``save`` stores the arrays uncompressed, so a member inflating more than
# ``MAX_INFLATION`` times its stored size was written by something else.
MAX_CACHE_BYTES = 128 * 1024 * 1024
MAX_INFLATION = 4
_DTYPES = {"meta": None, "keys": np.dtype(np.uint8), "vectors": np.dtype(np.float32)}

_READ_ERRORS = (
    OSError,
    ValueError,
    KeyError,
    EOFError,
    zipfile.BadZipFile,
    TypeError,
    MemoryError,  # (what the bounds leave: a machine short of memory for a file within them)
)


def _checked_member(archive: zipfile.ZipFile, name: str) -> npt.NDArray[Any]:
    """The array ``name`` of the archive, its header checked against the bounds and its
    member's size before anything is allocated; ValueError otherwise."""
    info = archive.getinfo(f"{name}.npy")
    if info.file_size > MAX_CACHE_BYTES:
        raise ValueError(f"{name} takes {info.file_size:,} bytes (at most {MAX_CACHE_BYTES:,})")
    if info.file_size > MAX_INFLATION * max(info.compress_size, 4096):
        raise ValueError(f"{name} inflates from {info.compress_size:,} to {info.file_size:,} bytes")
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, _fortran, dtype = np.lib.format.read_array_header_1_0(member)
        elif version == (2, 0):
            shape, _fortran, dtype = np.lib.format.read_array_header_2_0(member)
        else:
            raise ValueError(f"{name}: .npy version {version}")
    wanted = _DTYPES[name]
    if dtype.hasobject or (wanted is not None and dtype != wanted):
        raise ValueError(f"{name} of {dtype}")
    claimed = dtype.itemsize
    for size in shape:
        claimed *= int(size)
    if claimed > info.file_size:
        raise ValueError(
            f"{name} claims {shape} of {dtype} ({claimed:,} bytes) in {info.file_size:,}"
        )
    with archive.open(info) as member:
        array: npt.NDArray[Any] = np.lib.format.read_array(member, allow_pickle=False)
    return array


def _read(path: Path, key_id: str | None = None) -> tuple[npt.NDArray[np.uint8], Vectors, str]:
    """(keys, vectors, model name) of a cache file, checked; ``_READ_ERRORS`` when unusable
    (or, with ``key_id``, written with another key)."""
    with open_regular(path) as handle, zipfile.ZipFile(handle) as archive:
        meta = json.loads(str(_checked_member(archive, "meta")))
        keys = _checked_member(archive, "keys")
        vectors = _checked_member(archive, "vectors")
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"format {meta.get('format') if isinstance(meta, dict) else meta!r}")
    if key_id is not None and meta.get("keyId") != key_id:
        raise ValueError("written with another key")
    if vectors.dtype != np.float32 or vectors.ndim != 2:
        raise ValueError(f"vectors {vectors.dtype} {vectors.shape}")
    if keys.shape != (vectors.shape[0], KEY_BYTES) or keys.dtype != np.uint8:
        raise ValueError(f"keys {keys.dtype} {keys.shape} / vectors {vectors.shape}")
    if not np.isfinite(vectors).all():
        raise ValueError("vectors that are not finite")
    return keys, vectors, str(meta.get("model", ""))


@functools.lru_cache(maxsize=65536)
def _key(model: str, text: str, secret: bytes = b"") -> bytes:
    # Cached: every comparison asks for the keys of all kept memories again.
    prepared = embedding_text(text)
    digest = hashlib.blake2b(digest_size=KEY_BYTES, key=secret, person=b"mc-vectors")
    digest.update(model.encode())
    digest.update(b"\0")
    digest.update(prepared.encode("utf-8", "surrogatepass"))
    return digest.digest()


def cache_path_for(store_path: str | os.PathLike[str]) -> Path:
    """Where the vectors of the store at ``store_path`` live: memories.json → memories.vectors.npz."""
    path = Path(store_path)
    return path.with_name(f"{path.stem}.vectors.npz")


def unfinished_saves(cache_path: str | os.PathLike[str]) -> list[Path]:
    """Temp files a killed ``save()`` left beside the vector file (``.<name>.<8 chars>.tmp``)."""
    path = Path(cache_path)
    prefix, suffix = f".{path.name}.", ".tmp"
    try:
        names = sorted(os.listdir(path.parent))
    except OSError:
        return []
    return [
        path.parent / name
        for name in names
        if name.startswith(prefix)
        and name.endswith(suffix)
        and len(name) == len(prefix) + 8 + len(suffix)
    ]


def cache_key_path_for(store_path: str | os.PathLike[str]) -> Path:
    """Where the key of their row names lives: memories.json → memories.vectors.key."""
    path = Path(store_path)
    return path.with_name(f"{path.stem}.vectors.key")


def _key_id(secret: bytes) -> str:
    """A name of the key that does not give it away (the file says which key wrote it)."""
    return hashlib.blake2b(secret, digest_size=8, person=b"mc-vector-key").hexdigest()


class VectorCache:
    """Vectors by text for one embedder; thread-safe; optionally persisted to ``path``."""

    def __init__(
        self,
        embedder: Embedder,
        path: str | os.PathLike[str] | None = None,
        *,
        secret: bytes | None = None,
        forgotten: Callable[[], Collection[bytes]] | None = None,
    ) -> None:
        self.embedder = embedder
        self.path = Path(path) if path is not None else None
        self._secret = secret or b""
        self._forgotten = forgotten
        self._rows: dict[bytes, Vectors] = {}
        self._lock = threading.Lock()
        self._dirty = False
        self.computed = 0  # texts embedded by this cache (a test and a benchmark read it)
        self.loaded = 0  # vectors read from the file
        self.load_error: str | None = None
        if self.path is not None:
            self._load(self.path)

    # ----------------------------------------------------------------- keys
    def key(self, text: str) -> bytes:
        """The hash a text's vector is stored under (model name and prepared text)."""
        return _key(self.embedder.name, text, self._secret)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, text: object) -> bool:
        return isinstance(text, str) and self.key(text) in self._rows

    # ----------------------------------------------------------------- vectors
    def vectors(self, texts: Sequence[str]) -> Vectors:
        """One row per text; texts never seen before are embedded together in one batch."""
        keys = [self.key(t) for t in texts]
        with self._lock:
            missing: dict[bytes, str] = {}
            for key, text in zip(keys, texts, strict=True):
                if key not in self._rows and key not in missing:
                    missing[key] = text
        if missing:
            fresh = self.embedder.embed([embedding_text(t) for t in missing.values()])
            with self._lock:
                for key, row in zip(missing, fresh, strict=True):
                    self._rows[key] = row
                self.computed += len(missing)
                self._dirty = True
        out = np.empty((len(texts), self.embedder.dim), dtype=np.float32)
        with self._lock:
            for index, key in enumerate(keys):
                out[index] = self._rows[key]
        return out

    def retain(self, texts: Iterable[str]) -> int:
        """Forget every vector but those of ``texts`` (memories deleted or edited); how many went."""
        keep = {self.key(t) for t in texts}
        with self._lock:
            gone = [k for k in self._rows if k not in keep]
            for key in gone:
                del self._rows[key]
            if gone:
                self._dirty = True
        return len(gone)

    def forget(self, texts: Iterable[str]) -> int:
        """Drop the vectors of ``texts`` (a fact deleted forever: its row's key is a hash of
        its words); how many went. ``save`` writes the file without them."""
        gone = {self.key(t) for t in texts}
        with self._lock:
            found = [k for k in gone if k in self._rows]
            for key in found:
                del self._rows[key]
            if found:
                self._dirty = True
        return len(found)

    # ----------------------------------------------------------------- file
    def _load(self, path: Path) -> None:
        if not path.exists():
            return
        try:
            keys, vectors, model = _read(path, _key_id(self._secret))
            if model != self.embedder.name:
                raise ValueError(f"vectors of {model!r}, not {self.embedder.name!r}")
            if vectors.shape[1] != self.embedder.dim:
                raise ValueError(f"dimension {vectors.shape[1]}, not {self.embedder.dim}")
        except _READ_ERRORS as error:
            self.load_error = f"{type(error).__name__}: {error}"
            log.warning("similarity: ignoring the vector cache %s (%s)", path, self.load_error)
            self._dirty = True  # the next save replaces it
            return
        rows = {k.tobytes(): vectors[i] for i, k in enumerate(keys)}
        forgotten = self._forgotten_rows()
        with self._lock:
            for key, row in rows.items():
                if key in forgotten:
                    self._dirty = True  # the next save writes the file without it
                else:
                    self._rows.setdefault(key, row)
        self.loaded = len(rows)

    def _forgotten_rows(self) -> Collection[bytes]:
        """The rows of facts deleted forever, as the tombstones say now (any process's)."""
        return self._forgotten() if self._forgotten is not None else ()

    @staticmethod
    def inspect(path: str | os.PathLike[str]) -> tuple[int, str, str | None]:
        """(vectors, model, problem) of a cache file: problem is why it cannot be read, or
        None (a file of another model is readable: the next save replaces it)."""
        try:
            keys, _vectors, model = _read(Path(path))
        except _READ_ERRORS as error:
            return 0, "", f"{type(error).__name__}: {error}"
        return len(keys), model, None

    def save(self, path: str | os.PathLike[str] | None = None) -> bool:
        """Write the vectors to ``path`` (default: the cache's own) if anything changed; atomic.
        The rows of facts deleted forever are dropped first; a cache that knows of them saves
        under a lock (``<file>.lock``), so a Delete forever running elsewhere either sees this
        file written or is seen by this save."""
        target = Path(path) if path is not None else self.path
        if target is None:
            return False
        if self._forgotten is None:
            return self._save(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target.with_name(f"{target.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return self._save(target)
        finally:
            os.close(fd)  # (releases the lock)

    def _save(self, target: Path) -> bool:
        forgotten = self._forgotten_rows()
        with self._lock:
            for key in [k for k in forgotten if k in self._rows]:
                del self._rows[key]  # deleted forever since this process embedded it
                self._dirty = True
        if not self._dirty and target == self.path and target.exists():
            return False
        with self._lock:
            # bytes as uint8 rows: numpy's fixed-width bytes type would drop trailing zero bytes
            keys = np.frombuffer(b"".join(self._rows), dtype=np.uint8).reshape(-1, KEY_BYTES)
            if self._rows:
                vectors = np.stack(list(self._rows.values())).astype(np.float32, copy=False)
            else:
                vectors = np.zeros((0, self.embedder.dim), dtype=np.float32)
            self._dirty = False
        meta = json.dumps(
            {
                "format": FORMAT,
                "model": self.embedder.name,
                "dim": self.embedder.dim,
                "keyId": _key_id(self._secret),
            }
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                np.savez(out, vectors=vectors, keys=keys, meta=np.array(meta))
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, target)
        except BaseException:
            try:
                os.unlink(temp)
            except OSError:
                pass
            self._dirty = True
            raise
        try:
            folder = os.open(target.parent, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
        except OSError:
            pass
        return True
