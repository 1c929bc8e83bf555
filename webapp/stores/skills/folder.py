"""The documents of one skills folder as last read: files re-read only when they changed.

Readers never lock: a file is re-parsed only when its (inode, mtime_ns, size) or the folder
changed, and a file changed within ``RACY_NS`` keeps its bytes so a same-size rewrite in the
same clock tick is still noticed.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import StoreCorruptError
from ..jsonparse import parse_bytes
from ..jsonread import RACY_NS
from .documents import SkillDocument, sort_key
from .errors import InvalidSkillDocumentError, UnsafeNameError
from .naming import is_document_name
from .validation import validate_record

DEPRECATED_DIR = ".deprecated"
MAX_FILE_BYTES = 4_000_000  # a document file larger than this is reported, not read


@dataclass(frozen=True)
class SkillDocumentProblem:
    """A file in the skills folder that is skipped, and why."""

    file_name: str
    path: Path
    reason: str
    deprecated: bool = False

    def __str__(self) -> str:
        where = f"{DEPRECATED_DIR}/{self.file_name}" if self.deprecated else self.file_name
        return f"{where}: {self.reason}"


@dataclass(frozen=True)
class _Entry:
    """One file as last read: its signature, the document or the problem, raw bytes if racy."""

    sig: tuple[int, int, int]
    document: SkillDocument | None
    problem: str | None
    raw: bytes | None


@dataclass
class Snapshot:
    """One folder's state: valid documents (one per id), problems, and the files behind them."""

    folder_sig: tuple[int, int] | None = None
    names_trusted: bool = False
    names: tuple[str, ...] = ()
    sigs: tuple[Any, ...] = ()
    entries: dict[str, _Entry] = field(default_factory=dict)
    documents: tuple[SkillDocument, ...] = ()
    by_id: dict[str, SkillDocument] = field(default_factory=dict)
    files_by_id: dict[str, list[str]] = field(default_factory=dict)
    by_key: dict[tuple[str, str, str], SkillDocument] = field(default_factory=dict)
    problems: tuple[SkillDocumentProblem, ...] = ()
    trusted: bool = False


def _read_entry(
    path: Path, sig: tuple[int, int, int], deprecated: bool, previous: _Entry | None, now_ns: int
) -> _Entry:
    """Parse one document file (or reuse the previous parse when the bytes are the same)."""
    if sig[2] > MAX_FILE_BYTES:
        return _Entry(sig, None, f"the file is larger than {MAX_FILE_BYTES} bytes", None)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return _Entry(sig, None, f"cannot be read: {exc.strerror or exc}", None)
    keep_raw = raw if now_ns - sig[1] <= RACY_NS else None
    if previous is not None and previous.raw is not None and previous.raw == raw:
        return _Entry(sig, previous.document, previous.problem, keep_raw)
    try:
        record = validate_record(parse_bytes(raw, path), "The file")
        doc = SkillDocument.from_dict(record, file_name=path.name, deprecated=deprecated)
        return _Entry(sig, doc, None, keep_raw)
    except StoreCorruptError as exc:
        reason = exc.reason + (f" (line {exc.line}, column {exc.column})" if exc.line else "")
        return _Entry(sig, None, reason, keep_raw)
    except InvalidSkillDocumentError as exc:
        return _Entry(sig, None, "; ".join(exc.reasons), keep_raw)
    except UnsafeNameError as exc:
        return _Entry(sig, None, str(exc), keep_raw)


class FolderCache:
    """The documents of one folder, re-read only when the folder or a file changed."""

    def __init__(self, folder: Path, deprecated: bool) -> None:
        self.folder = folder
        self.deprecated = deprecated
        self._prefix = os.fspath(folder)
        self._guard = threading.Lock()
        self._snap = Snapshot()

    def snapshot(self) -> Snapshot:
        """The current state; cheap (one stat per file) when nothing changed."""
        with self._guard:
            previous = self._snap
        now_ns = time.time_ns()
        try:
            st = os.stat(self.folder)
        except FileNotFoundError:
            return self._store(Snapshot())
        folder_sig = (st.st_ino, st.st_mtime_ns)
        if previous.folder_sig == folder_sig and previous.names_trusted:
            names = previous.names
        else:
            names = self._scan_names()
        sigs = tuple(self._stat(name) for name in names)
        if previous.trusted and previous.folder_sig == folder_sig and previous.sigs == sigs:
            return previous
        names_trusted = now_ns - st.st_mtime_ns > RACY_NS
        return self._store(self._rebuild(folder_sig, names_trusted, names, sigs, previous, now_ns))

    def _store(self, snap: Snapshot) -> Snapshot:
        with self._guard:
            self._snap = snap
        return snap

    def _scan_names(self) -> tuple[str, ...]:
        try:
            with os.scandir(self.folder) as it:
                return tuple(
                    sorted(
                        e.name
                        for e in it
                        if is_document_name(e.name) and e.is_file(follow_symlinks=False)
                    )
                )
        except (FileNotFoundError, NotADirectoryError):
            return ()

    def _stat(self, name: str) -> tuple[int, int, int] | None:
        try:
            st = os.lstat(os.path.join(self._prefix, name))  # str join: Path() per file is slow
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _rebuild(
        self,
        folder_sig: tuple[int, int],
        names_trusted: bool,
        names: tuple[str, ...],
        sigs: tuple[Any, ...],
        previous: Snapshot,
        now_ns: int,
    ) -> Snapshot:
        entries: dict[str, _Entry] = {}
        for name, sig in zip(names, sigs, strict=False):
            if sig is None:
                continue
            old = previous.entries.get(name)
            if old is not None and old.sig == sig and old.raw is None:
                entries[name] = old
            else:
                entries[name] = _read_entry(self.folder / name, sig, self.deprecated, old, now_ns)
        snap = Snapshot(folder_sig, names_trusted, names, sigs, entries)
        snap.trusted = names_trusted and all(e.raw is None for e in entries.values())
        self._index(snap)
        return snap

    def _index(self, snap: Snapshot) -> None:
        """Fill documents/by_id/problems; of several files with one id the newest is used."""
        problems = [
            SkillDocumentProblem(n, self.folder / n, e.problem, self.deprecated)
            for n, e in snap.entries.items()
            if e.problem is not None
        ]
        for name, entry in snap.entries.items():
            doc = entry.document
            if doc is None:
                continue
            snap.files_by_id.setdefault(doc.id, []).append(name)
            current = snap.by_id.get(doc.id)
            if current is None or current.updated_at < doc.updated_at:
                snap.by_id[doc.id] = doc
        for doc_id, names in snap.files_by_id.items():
            used = snap.by_id[doc_id].file_name
            for name in names:
                if name != used:
                    problems.append(
                        SkillDocumentProblem(
                            name,
                            self.folder / name,
                            f"an older copy of document {doc_id!r}; {used} is used",
                            self.deprecated,
                        )
                    )
        snap.documents = tuple(sorted(snap.by_id.values(), key=sort_key))
        for doc in snap.documents:
            snap.by_key.setdefault(doc.key, doc)
        snap.problems = tuple(sorted(problems, key=lambda p: p.file_name))
