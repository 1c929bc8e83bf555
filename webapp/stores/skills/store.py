"""``SkillDocumentStore``: the skills folder, read through caches, written under ``<folder>/.lock``.

Every write takes the lock and replaces files atomically; at most one live document exists per
key (kebab skill, type, kebab reference) and a second one is refused with
``SkillDocumentConflictError``. Deprecated documents move to ``.deprecated/``.
"""

from __future__ import annotations

import builtins
import os
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO

from ...settings import Settings
from ..atomic import fsync_dir, is_temp_name, write_atomic
from ..history import HistoryLog
from ..jsonbytes import encode
from ..jsonparse import MAX_DEPTH, object_depth
from ..locking import Gated, SidecarLock
from ..owned import HISTORY, LOCK, SKILL, UNFINISHED, UPLOAD, OwnFile, existing
from ..timefmt import now_ms
from .archive import unpacked_skill
from .documents import (
    SkillDocument,
    as_document,
    derive_snippet,
    safe_key,
    sort_key,
    to_ms,
)
from .errors import (
    InvalidSkillDocumentError,
    SkillDocumentConflictError,
    SkillDocumentError,
    SkillEditedHereError,
    UnsafeNameError,
)
from .folder import DEPRECATED_DIR, MAX_FILE_BYTES, FolderCache, SkillDocumentProblem, Snapshot
from .importing import ImportPlan, ImportReport, PlannedDocument, read_skill_folder
from .merge import MergedMemory, RuntimeSource, merge_memories
from .naming import document_file_name, document_key, is_document_name
from .search import SearchHit, search_entries
from .staging import STAGING_DIR, ImportStaging, StagedImport
from .validation import validate_record

LOCK_NAME = ".lock"
HISTORY_STORE_NAME = ".skills.json"  # its change log is ``<folder>/.skills.history.jsonl``
# Fields that say when a document was written or imported, not what it says.
_STAMPS = ("createdAt", "updatedAt", "importedAt")


class SkillDocumentStore(Gated):
    """The skills folder: list, get, save, deprecate/restore, search, import and export documents.

    Build it with ``SkillDocumentStore.from_settings(settings)``. The constructor reads the
    environment only when it is given no ``directory`` (then the folder and lock timeout come
    from ``Settings.from_env()``); with one, the lock timeout defaults to 10 s. ``runtime`` (a list or a
    zero-argument callable returning runtime memories) is merged into ``search`` and ``merged``
    when those are called without their own ``runtime``.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        *,
        runtime: RuntimeSource = None,
        lock_timeout: float | None = None,
        staging_directory: str | os.PathLike[str] | None = None,
    ) -> None:
        settings = Settings.from_env() if directory is None else Settings()
        self.directory = Path(directory) if directory is not None else settings.skills_dir
        self.deprecated_directory = self.directory / DEPRECATED_DIR
        self.lock_timeout = float(
            lock_timeout if lock_timeout is not None else settings.lock_timeout
        )
        self.lock_path = self.directory / LOCK_NAME
        self._lock = SidecarLock(self.lock_path, timeout=self.lock_timeout)
        self._runtime = runtime
        self._live = FolderCache(self.directory, deprecated=False)
        self._dead = FolderCache(self.deprecated_directory, deprecated=True)
        self.history_log = HistoryLog(self.directory / HISTORY_STORE_NAME)
        # Uploaded zips waiting for the confirmation of their import (see preview_import_zip).
        self.staging = ImportStaging(
            staging_directory if staging_directory is not None else self.directory / STAGING_DIR
        )

    @classmethod
    def from_settings(
        cls, settings: Settings, *, runtime: RuntimeSource = None
    ) -> SkillDocumentStore:
        """The skills folder ``settings`` describe, with their lock timeout."""
        return cls(
            settings.skills_dir,
            runtime=runtime,
            lock_timeout=settings.lock_timeout,
            staging_directory=Path(settings.data_dir) / ".skill-imports",
        )

    def locked(self) -> SidecarLock:
        """The store's sidecar lock (what ``wait_gate`` bounds)."""
        return self._lock

    def own_files(self) -> builtins.list[OwnFile]:
        """Every file the store keeps that is there now, each with what it is
        (``stores.owned``): the documents (deprecated too), unfinished writes, the lock, the
        history log and the uploads kept for a confirmation (here and in the folder's own
        ``.imports``, where they go without a staging folder of their own)."""
        found: builtins.list[OwnFile] = []
        for folder in (self.directory, self.deprecated_directory):
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                continue
            for name in names:
                if is_document_name(name):
                    found += existing(folder / name, SKILL)
                elif is_temp_name(name):
                    found += existing(folder / name, UNFINISHED)
        found += existing(self.lock_path, LOCK)
        found += existing(self.history_log.path, HISTORY)
        stagings = {self.staging.directory, self.directory / STAGING_DIR}
        for staging in sorted(stagings):
            found += [OwnFile(path, UPLOAD) for path in ImportStaging(staging).kept()]
        return found

    # ----------------------------------------------------------------- reading
    def list(self, include_deprecated: bool = False) -> list[SkillDocument]:
        """Valid documents sorted by skill (skill first, then its references); invalid files skipped."""
        docs = list(self._live.snapshot().documents)
        if include_deprecated:
            docs.extend(self._dead.snapshot().documents)
            docs.sort(key=sort_key)
        return docs

    def by_skill(self, include_deprecated: bool = False) -> dict[str, builtins.list[SkillDocument]]:
        """``list()`` grouped by kebab skill name (for a page that shows one block per skill)."""
        groups: dict[str, builtins.list[SkillDocument]] = {}
        for doc in self.list(include_deprecated):
            groups.setdefault(safe_key(doc)[0], []).append(doc)
        return groups

    def get(self, doc_id: str) -> SkillDocument | None:
        """The document with that id (live first, then deprecated), or None."""
        return self._live.snapshot().by_id.get(doc_id) or self._dead.snapshot().by_id.get(doc_id)

    def problems(self) -> builtins.list[SkillDocumentProblem]:
        """Files that are skipped and why: unparseable, invalid, stale copies, clashing keys."""
        live, dead = self._live.snapshot(), self._dead.snapshot()
        found = list(live.problems) + list(dead.problems)
        by_key: dict[tuple[str, str, str], SkillDocument] = {}
        for doc in live.documents:
            other = by_key.setdefault(doc.key, doc)
            if other is not doc:
                found.append(
                    SkillDocumentProblem(
                        doc.file_name or "",
                        self.directory / (doc.file_name or ""),
                        f"same skill/type/reference as {other.file_name}; deprecate one of them",
                    )
                )
        for doc in dead.documents:
            if doc.id in live.by_id:
                found.append(
                    SkillDocumentProblem(
                        doc.file_name or "",
                        self.deprecated_directory / (doc.file_name or ""),
                        f"document {doc.id!r} is also live as {live.by_id[doc.id].file_name}",
                        True,
                    )
                )
        return found

    def merged(self, runtime: RuntimeSource = None) -> builtins.list[MergedMemory]:
        """``merge_memories(list(), runtime)``; ``runtime`` defaults to the constructor's."""
        return merge_memories(self.list(), self._runtime_items(runtime))

    def search(
        self, query: str, *, runtime: RuntimeSource = None, limit: int | None = 20
    ) -> builtins.list[SearchHit]:
        """Rank documents and runtime memories (merged first) against ``query``.

        Case- and width-insensitive; Chinese works (character bigrams, not whitespace words).
        An empty query returns every merged entry in listing order.
        """
        return search_entries(self.merged(runtime), query, limit)

    def _runtime_items(self, runtime: RuntimeSource) -> builtins.list[Any]:
        source = self._runtime if runtime is None else runtime
        if source is None:
            return []
        return list(source() if callable(source) else source)

    # ----------------------------------------------------------------- writing
    def save(
        self, document: SkillDocument | Mapping[str, Any], *, actor: str = "library"
    ) -> SkillDocument:
        """Validate and write a document; returns it as stored.

        Without an ``id`` (or with an unknown one) it is created. Fields left out of a mapping
        keep their stored values (unknown fields too), except ``snippet``, which is derived
        again. ``createdAt`` is kept, ``updatedAt`` bumped; when the content changed the file is
        renamed to its new hash. Nothing is written when nothing changed.
        Raises InvalidSkillDocumentError, UnsafeNameError, SkillDocumentConflictError, StoreBusyError.
        """
        raw = document.to_dict() if isinstance(document, SkillDocument) else _plain(document)
        if "snippet" in raw and not isinstance(document, SkillDocument) and raw["snippet"] is None:
            del raw["snippet"]
        with self._locked():
            return self._save_locked(raw, actor=actor)

    def history(self, doc_id: str | None = None) -> builtins.list[dict[str, Any]]:
        """The change log (oldest first), optionally of one document: each entry has ``hid``,
        ``ts``, ``actor``, ``action`` (add, update, import, restore, deprecate, undeprecate)
        and the record ``before`` and ``after`` the change (no ``before`` for a move)."""
        return self.history_log.read(doc_id)

    def restore_version(self, hid: str, *, actor: str = "library") -> SkillDocument:
        """Bring back the version that the change ``hid`` replaced (its content, description
        and front matter) as a new save, itself in the history. KeyError when there is none."""
        entry = self.history_log.find(hid)
        before = entry.get("before") if entry else None
        if entry is None or not isinstance(before, dict):
            raise KeyError(f"No earlier version to restore for {hid!r}.")
        with self._locked():
            current = self.get(str(entry.get("id")))
            if current is None:
                raise KeyError(f"Document {entry.get('id')!r} no longer exists.")
            raw = {
                "id": current.id,
                "content": before.get("content", ""),
                "skillDescription": before.get("skillDescription", ""),
                "meta": before.get("meta", {}),
            }
            return self._save_locked(raw, actor=actor, action="restore")

    def edited_since_import(self, doc: SkillDocument) -> bool:
        """Was ``doc`` changed here (dashboard, library) after the import that last wrote it?"""
        imported = doc.extra.get("importedAt")
        if isinstance(imported, int) and not isinstance(imported, bool):
            return doc.updated_at > imported
        moves_and_imports = ("import", "deprecate", "undeprecate", None)
        return any(e.get("action") not in moves_and_imports for e in self.history(doc.id))

    def plan_import(self, folder: str | os.PathLike[str]) -> ImportPlan:
        """What ``import_skill(folder)`` would do, per document; nothing is written."""
        return self._plan(read_skill_folder(Path(folder)))

    def _plan(self, records: builtins.list[dict[str, Any]]) -> ImportPlan:
        planned = []
        for record in records:
            current = self._live_by_key(document_key(record))
            if current is None:
                planned.append(PlannedDocument("add", record, None, False))
                continue
            merged = {**current.to_dict(), **record, "id": current.id}
            kind = "same" if _same(current.to_dict(), merged) else "update"
            edited = kind == "update" and self.edited_since_import(current)
            planned.append(PlannedDocument(kind, record, current, edited))
        skill_key = document_key(records[0])[0]
        seen = {document_key(r) for r in records}
        stale = tuple(
            d
            for d in self._live.snapshot().documents
            if d.key[0] == skill_key and d.key not in seen
        )
        return ImportPlan(str(records[0]["skill"]), tuple(planned), stale)

    def plan_import_zip(self, source: bytes | BinaryIO | str | os.PathLike[str]) -> ImportPlan:
        """``plan_import`` for an uploaded ``.zip``, with the same checks as ``import_skill_zip``."""
        with unpacked_skill(source) as folder:
            return self.plan_import(folder)

    def preview_import_zip(self, data: bytes) -> StagedImport:
        """``plan_import_zip`` for an upload that is confirmed later: the plan, and a token under
        which the zip is kept (for a day) until ``import_staged`` applies it; nothing is written
        to the documents. Raises what ``plan_import_zip`` raises, and then keeps nothing."""
        plan = self.plan_import_zip(data)
        return StagedImport(self.staging.keep(data), plan)

    def import_staged(
        self, token: str, *, actor: str = "import", replace_edits: bool = True
    ) -> ImportReport:
        """``import_skill_zip`` of the upload ``preview_import_zip`` kept under ``token``.

        The kept zip is removed once imported, or refused as unusable (a busy lock keeps it for
        another try). Raises StagedImportGoneError when the token names no kept upload.
        """
        data = self.staging.read(token)
        try:
            report = self.import_skill_zip(data, actor=actor, replace_edits=replace_edits)
        except SkillDocumentError:
            self.staging.discard(token)
            raise
        self.staging.discard(token)
        return report

    def discard_staged(self, token: str) -> None:
        """Forget an upload kept by ``preview_import_zip`` (a cancelled preview)."""
        self.staging.discard(token)

    def deprecate(self, doc_id: str, *, actor: str = "library") -> bool:
        """Move a live document to ``.deprecated/`` (a ``deprecate`` entry in its history);
        False when no live document has that id."""
        with self._locked():
            return self._move(doc_id, self._live, self._dead, actor=actor)

    def restore(self, doc_id: str, *, actor: str = "library") -> bool:
        """Move a deprecated document back (an ``undeprecate`` entry in its history); False
        when none has that id.

        Raises SkillDocumentConflictError when a live document now has the same key.
        """
        with self._locked():
            return self._move(doc_id, self._dead, self._live, actor=actor)

    def import_skill(
        self,
        folder: str | os.PathLike[str],
        *,
        actor: str = "import",
        replace_edits: bool = True,
    ) -> ImportReport:
        """Save an Agent Skills folder: one skill document and one per ``references/**/*.md``.

        Documents are matched by key (skill, type, reference), so re-importing unchanged
        content writes nothing and changed content updates the stored document (same id).
        Everything is read and checked before anything is written. A replaced version stays
        in ``history`` (``restore_version`` brings it back); the report's ``edits_replaced``
        names the replaced versions that had been edited here since the last import. With
        ``replace_edits=False`` such an import raises SkillEditedHereError instead and writes
        nothing (decided under the lock, as ``plan_import`` would show it).
        """
        records = read_skill_folder(Path(folder))
        with self._locked():
            plan = self._plan(records)
            edited = tuple(d.current for d in plan.edited_here if d.current is not None)
            if edited and not replace_edits:
                raise SkillEditedHereError(plan.skill, edited)
            report = self._upsert_all(records, actor=actor, imported=True)
        return replace(report, not_in_source=plan.not_in_source, edits_replaced=edited)

    def import_skill_zip(
        self,
        source: bytes | BinaryIO | str | os.PathLike[str],
        *,
        actor: str = "import",
        replace_edits: bool = True,
    ) -> ImportReport:
        """``import_skill`` for an uploaded ``.zip`` of one skill folder, unpacked safely.

        Refuses paths that climb out (``..``, absolute, drive letters), links, encrypted entries,
        more than 1,000 entries or 20 MB unpacked (counted while reading, not from headers).
        """
        with unpacked_skill(source) as folder:
            return self.import_skill(folder, actor=actor, replace_edits=replace_edits)

    def export_runtime(self, memories: Iterable[SkillDocument | Mapping[str, Any]]) -> ImportReport:
        """Write runtime skill memories out as document files (migration from in-memory skills).

        Matched by key like ``import_skill``: an unchanged memory writes nothing, a changed one
        updates the stored document. The runtime ``createdAt`` is kept when creating.
        """
        records = [as_document(m).to_dict() for m in memories]
        with self._locked():
            return self._upsert_all(records, actor="runtime")

    # ----------------------------------------------------------------- internals
    def _locked(self) -> _FolderLock:
        return _FolderLock(self)

    def _upsert_all(
        self, records: builtins.list[dict[str, Any]], *, actor: str, imported: bool = False
    ) -> ImportReport:
        added: builtins.list[SkillDocument] = []
        updated: builtins.list[SkillDocument] = []
        unchanged: builtins.list[SkillDocument] = []
        action = "import" if imported else None
        for record in records:
            existing = self._live_by_key(document_key(record))
            if existing is not None:
                record = {**record, "id": existing.id}
                saved = self._save_locked(record, actor=actor, action=action, imported=imported)
                (updated if saved.updated_at != existing.updated_at else unchanged).append(saved)
                continue
            if not record.get("id") or self.get(str(record["id"])) is not None:
                record = {**record, "id": str(uuid.uuid4())}
            added.append(self._save_locked(record, actor=actor, action=action, imported=imported))
        return ImportReport(tuple(added), tuple(updated), tuple(unchanged))

    def _live_by_key(self, key: tuple[str, str, str]) -> SkillDocument | None:
        return self._live.snapshot().by_key.get(key)

    def _save_locked(
        self,
        raw: dict[str, Any],
        *,
        actor: str = "library",
        action: str | None = None,
        imported: bool = False,
    ) -> SkillDocument:
        current = self.get(str(raw["id"])) if raw.get("id") else None
        record = {**(current.to_dict() if current else {}), **raw}
        if not record.get("id"):
            record["id"] = str(uuid.uuid4())
        if record.get("type") != "reference" and record.get("reference") is None:
            record.pop("reference", None)
        record.setdefault("skillDescription", "")
        record.setdefault("meta", {})
        if "snippet" not in raw:
            record["snippet"] = derive_snippet(record)
        record = self._stamp(record, current)
        if imported:
            record["importedAt"] = record["updatedAt"]
        record = validate_record(record)
        if current is not None and _same(current.to_dict(), record):
            return current
        cache = self._dead if current is not None and current.deprecated else self._live
        if cache is self._live:
            self._check_key_free(record)
        # Written ahead: the entry that can bring the old version back lands first, and is cut
        # off again when the document cannot be written.
        entry = HistoryLog.entry(
            actor,
            action or ("update" if current is not None else "add"),
            str(record["id"]),
            current.to_dict() if current is not None else None,
            record,
        )
        undo = self.history_log.append([entry])
        try:
            return self._write(cache, record)
        except BaseException:
            undo()
            raise

    def _stamp(self, record: dict[str, Any], current: SkillDocument | None) -> dict[str, Any]:
        now = now_ms()
        if current is not None:
            record["createdAt"] = current.created_at
            record["updatedAt"] = max(now, current.updated_at + 1)
        else:
            created = to_ms(record.get("createdAt"))
            record["createdAt"] = min(created, now) if created is not None else now
            record["updatedAt"] = now
        return record

    def _check_key_free(self, record: dict[str, Any]) -> None:
        key = document_key(record)
        other = self._live_by_key(key)
        if other is not None and other.id != record["id"]:
            what = (
                f"reference {key[2]!r} of skill {key[0]!r}"
                if key[1] == "reference"
                else f"skill {key[0]!r}"
            )
            raise SkillDocumentConflictError(
                f"A document for the {what} already exists ({other.file_name}, id {other.id}); "
                f"edit that one or deprecate it first.",
                code="skill_document_exists",
                file=other.file_name,
                id=other.id,
            )

    def _write(self, cache: FolderCache, record: dict[str, Any]) -> SkillDocument:
        name = document_file_name(record)
        target = cache.folder / name
        if target.parent != cache.folder or not is_document_name(name):
            raise UnsafeNameError(
                f"Refusing to write {name!r} outside {cache.folder}.",
                code="name_outside_folder",
                name=repr(name),
                folder=cache.folder,
            )
        snap = cache.snapshot()
        _check_free(snap, name, record["id"])
        cache.folder.mkdir(parents=True, exist_ok=True)
        saved = SkillDocument.from_dict(record, file_name=name, deprecated=cache.deprecated)
        write_atomic(target, storable_bytes(saved.to_dict()))
        _remove_other_copies(cache.folder, snap, record["id"], keep=name)
        fsync_dir(cache.folder)
        return saved

    def _move(self, doc_id: str, source: FolderCache, dest: FolderCache, *, actor: str) -> bool:
        snap = source.snapshot()
        doc = snap.by_id.get(doc_id)
        if doc is None or doc.file_name is None:
            return False
        if not dest.deprecated:
            self._check_key_free(doc.to_dict())
        _check_free(dest.snapshot(), doc.file_name, doc_id)
        dest.folder.mkdir(parents=True, exist_ok=True)
        # Written ahead like a save; the text does not change, so the entry has no "before"
        # to restore, only who moved it and when.
        action = "deprecate" if dest.deprecated else "undeprecate"
        entry = HistoryLog.entry(actor, action, doc_id, None, doc.to_dict())
        undo = self.history_log.append([entry])
        try:
            os.replace(source.folder / doc.file_name, dest.folder / doc.file_name)
        except BaseException:
            undo()
            raise
        _remove_other_copies(source.folder, snap, doc_id, keep=doc.file_name)
        fsync_dir(dest.folder)
        fsync_dir(source.folder)
        return True


def _check_free(snap: Snapshot, name: str, doc_id: str) -> None:
    """Refuse to replace a file that holds another document or cannot be read."""
    occupant = snap.entries.get(name)
    if occupant is None:
        return
    if occupant.document is None:
        raise SkillDocumentConflictError(
            f"{name} already exists and is not a valid document ({occupant.problem}); "
            f"it was left untouched. Fix or remove it first.",
            code="skill_file_unreadable",
            file=name,
            problem=occupant.problem,
        )
    if occupant.document.id != doc_id:
        raise SkillDocumentConflictError(
            f"{name} already holds document {occupant.document.id!r} with the same content; "
            f"nothing was changed.",
            code="skill_file_taken",
            file=name,
            id=repr(occupant.document.id),
        )


def _remove_other_copies(folder: Path, snap: Snapshot, doc_id: str, keep: str) -> None:
    """Delete the files of ``doc_id`` other than ``keep`` (older versions under older hashes)."""
    for old in snap.files_by_id.get(doc_id, []):
        if old != keep:
            _unlink(folder / old)


def storable_bytes(record: dict[str, Any]) -> bytes:
    """The file's bytes, or InvalidSkillDocumentError when the folder could not load it again."""
    if object_depth(record) > MAX_DEPTH:
        raise InvalidSkillDocumentError([f"it is nested deeper than {MAX_DEPTH} levels"])
    payload = encode(record)
    if len(payload) > MAX_FILE_BYTES:
        raise InvalidSkillDocumentError(
            [f"it is too large to store ({len(payload):,} bytes; at most {MAX_FILE_BYTES:,})"]
        )
    return payload


def _same(stored: Mapping[str, Any], record: Mapping[str, Any]) -> bool:
    """Equal apart from the timestamps."""
    return _without_times(stored) == _without_times(record)


def _without_times(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in _STAMPS}


def _plain(document: Any) -> dict[str, Any]:
    if not isinstance(document, Mapping):
        raise InvalidSkillDocumentError([f"expected a mapping, found {type(document).__name__}"])
    return dict(document)


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


class _FolderLock:
    """``<folder>/.lock``, bounded: raises StoreBusyError instead of hanging."""

    def __init__(self, store: SkillDocumentStore) -> None:
        self._store = store

    def __enter__(self) -> _FolderLock:
        self._store.directory.mkdir(parents=True, exist_ok=True)
        self._store._lock.acquire()  # StoreBusyError on timeout; taken again if deleted
        return self

    def __exit__(self, *exc: object) -> None:
        self._store._lock.release()
