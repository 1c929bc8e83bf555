"""The add-on's option ``memory_data_dir``: the stores in a folder under /share, which other
add-ons and containers can map too. What the add-on kept in its private /data moves there on
the first start with the option, all or nothing:

1. the stores' own locks in /data are taken (a writer that still uses /data waits), and one
   mover at a time holds ``<shared>/.memory-move.lock``;
2. every file is copied into ``<shared>/.memory-move/`` (hidden: no program opens it), each
   fsynced, then the folders, then each copy is compared byte for byte with its original;
3. the marker ``<shared>/.memory-moved.json`` is written last, atomically (``"state":
   "copied"``, the source, every file with its size and SHA-256, a version): from here on the
   copy is whole and a start finishes the move instead of starting it again;
4. each file is put in its place in the shared folder (never over a file already there);
5. the originals in /data are removed — each only when it still has the bytes the marker
   names, so a write that reached /data after the copy is kept — and the marker says
   ``"state": "done"``: a later start copies nothing again over newer data.

A start that finds ``.memory-move/`` without a ``"copied"`` marker found a copy that was cut
off: it removes that partial copy (/data is still whole) and moves again; one that finds a
``"copied"`` marker finishes steps 4 and 5. Both happen before anything is served. When the
move cannot be done whole, nothing is removed from /data and the add-on says why and does not
start."""

from __future__ import annotations

import contextlib
import fcntl
import filecmp
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...settings import MOVE_LOCK, MOVE_MARKER, Settings, SettingsError

OPTIONS_FILE = "options.json"  # the Supervisor's, stays where it is
# The add-on keeps the memory's files in /data/memories; a data folder keeps them at its top
# (the layout `--data-dir` and MEMORY_DATA_DIR use), so a program in another container
# opens the shared folder like any data folder.
ADDON_MEMORY_FOLDER = "memories"
STAGING = ".memory-move"  # the copy while it is being made
MARKER = MOVE_MARKER  # written last: the copy is whole
MARKER_VERSION = 1
COPIED, DONE = "copied", "done"
LOCK_SUFFIX = ".lock"  # the stores' sidecar locks (and the skills folder's ``.lock``)
LOCK_POLL_SECONDS = 0.05


class MoveError(SettingsError):
    """The private data could not be moved to the shared folder; nothing was removed."""


@dataclass(frozen=True)
class _File:
    """One file of the move: where it is in /data, where it goes in the shared folder."""

    source: str  # relative to the private folder
    path: str  # relative to the shared folder


def checkpoint(step: str) -> None:
    """Where the move is (a step of the module's docstring, with the file it did). Does
    nothing; the crash tests stop a real process here with SIGKILL."""


def move_to_shared_folder(settings: Settings) -> list[Path]:
    """Move the add-on's private data into ``settings.data_dir`` when memory_data_dir names a
    folder elsewhere, or finish a move an earlier start began; the files moved (none when
    there was nothing to move, or the shared folder already holds a memory)."""
    source, target = settings.moved_from, Path(settings.data_dir)
    if source is None or _same(source, target):
        return []
    plan = _plan(source, target) if source.is_dir() else []
    if not plan and not target.is_dir():
        return []
    if plan and target.is_relative_to(source):
        raise MoveError(
            f"memory_data_dir ({target}) is inside the add-on's own folder {source}; "
            "name a folder under /share.",
            source="memory_data_dir",
            value=str(target),
        )
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _cannot(source, target, exc) from exc
    with _held(target / MOVE_LOCK):
        marker = _read_marker(target)
        if marker is not None and marker["state"] == COPIED:
            if marker["source"] != str(source):
                raise MoveError(
                    f"The shared folder {target} holds an unfinished move from "
                    f"{marker['source']}, not from {source}; nothing was moved or removed. "
                    "Start the program that began it, or name another folder.",
                    source="memory_data_dir",
                    value=str(target),
                )
            return _finish(marker, source, target, settings.lock_timeout, resumed=True)
        if (target / STAGING).exists():
            _discard_staging(target)
            print(
                f"A move from {source} to the shared folder {target} was cut off before the "
                "copy was whole; the partial copy was removed and the move starts again "
                f"({source} was not changed).",
                flush=True,
            )
        if not plan:
            return []
        if (target / "memories.json").exists():
            print(
                f"The shared folder {target} already holds a memory: it is used, and the data "
                f"in {source} was left where it is (not moved, not removed).",
                flush=True,
            )
            return []
        with _store_locks(source, plan, settings.lock_timeout):
            files = _files(plan, source, target)
            clashes = [f.path for f in files if (target / f.path).exists()]
            if clashes:
                raise MoveError(
                    f"Cannot move the data in {source} to {target}: {', '.join(clashes)} "
                    "would be overwritten. Nothing was moved or removed; empty the shared "
                    "folder or clear memory_data_dir.",
                    source="memory_data_dir",
                    value=str(target),
                )
            marker = _copy_whole(files, source, target)
            return _finish(marker, source, target, settings.lock_timeout, resumed=False, held=True)


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _plan(source: Path, target: Path) -> list[tuple[Path, Path]]:
    """(where it is, where it goes) for everything in the private folder but options.json."""
    plan: list[tuple[Path, Path]] = []
    for entry in sorted(source.iterdir()):
        if entry.name == OPTIONS_FILE or _is_lock(entry):
            continue
        if entry.name == ADDON_MEMORY_FOLDER and entry.is_dir() and not entry.is_symlink():
            plan += [
                (inner, target / inner.name)
                for inner in sorted(entry.iterdir())
                if not _is_lock(inner)
            ]
        else:
            plan.append((entry, target / entry.name))
    return plan


def _is_lock(path: Path) -> bool:
    return path.name.endswith(LOCK_SUFFIX) and not path.is_dir()


def _files(plan: list[tuple[Path, Path]], source: Path, target: Path) -> list[_File]:
    """Every file (or symbolic link) the plan holds, the memory file last: its presence in
    the shared folder is what says that folder holds a memory."""
    found: list[_File] = []
    for src, dst in plan:
        inner = (
            sorted(p for p in src.rglob("*") if not p.is_dir() or p.is_symlink())
            if src.is_dir() and not src.is_symlink()
            else [src]
        )
        for path in inner:
            if not _is_lock(path):
                where = dst / path.relative_to(src) if path != src else dst
                found.append(_File(str(path.relative_to(source)), str(where.relative_to(target))))
    return sorted(found, key=lambda f: (f.path == "memories.json", f.path))


@contextlib.contextmanager
def _held(path: Path) -> Iterator[None]:
    """An exclusive flock on ``path`` while the block runs; the kernel lets go if we die."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def _store_locks(source: Path, plan: list[tuple[Path, Path]], timeout: float) -> Iterator[None]:
    """The sidecar locks of every store in the private folder, all at once (taken together
    or not at all, so a writer holding one and waiting for another is never deadlocked): a
    program still writing to /data waits until the move is over, and writes to a file the
    move left alone or removed (then kept, see ``_clean_source``)."""
    locks: list[Path] = []
    for src, _ in plan:
        if src.is_dir() and not src.is_symlink():
            locks.append(src / ".lock")
            locks += [p.with_name(p.name + LOCK_SUFFIX) for p in src.rglob("*.json")]
        elif src.name.endswith(".json"):
            locks.append(src.with_name(src.name + LOCK_SUFFIX))
    deadline = time.monotonic() + timeout
    while True:
        taken = _try_all(sorted(set(locks)))
        if taken is not None:
            break
        if time.monotonic() >= deadline:
            raise MoveError(
                f"Cannot move the data in {source}: a program kept writing to it for "
                f"{timeout:g} s. Nothing was moved or removed; stop it and start again.",
                source="memory_data_dir",
                value=str(source),
            )
        time.sleep(LOCK_POLL_SECONDS)
    try:
        yield
    finally:
        for fd in taken:
            os.close(fd)


def _try_all(paths: list[Path]) -> list[int] | None:
    taken: list[int] = []
    for path in paths:
        try:
            fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            continue  # a store no one has written yet: nobody to wait for
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            for held in taken:
                os.close(held)
            return None
        taken.append(fd)
    return taken


def _copy_whole(files: list[_File], source: Path, target: Path) -> dict[str, Any]:
    """Copy every file into the staging folder, fsync it all, check it byte for byte and
    write the marker last; the marker. On any failure the partial copy is removed."""
    staging = target / STAGING
    try:
        staging.mkdir()
        _fsync_dir(target)
        checkpoint("staging folder made")
        entries = []
        for f in files:
            src, dst = source / f.source, staging / f.path
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_symlink():
                os.symlink(os.readlink(src), dst)
            else:
                shutil.copy2(src, dst)
            checkpoint(f"copied {f.path}")
            if not dst.is_symlink():
                _fsync_file(dst)
            checkpoint(f"fsynced {f.path}")
        for folder in sorted({p for p in staging.rglob("*") if p.is_dir()} | {staging}):
            _fsync_dir(folder)
        checkpoint("folders fsynced")
        for f in files:
            entries.append(_checked(source / f.source, staging / f.path, f))
        checkpoint("copies checked")
        marker = {
            "version": MARKER_VERSION,
            "state": COPIED,
            "source": str(source),
            "target": str(target),
            "copied_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "files": entries,
        }
        _write_marker(target, marker)
    except (OSError, ValueError) as exc:
        with contextlib.suppress(OSError):
            _discard_staging(target)
            (target / (MARKER + ".tmp")).unlink(missing_ok=True)
        raise _cannot(source, target, exc) from exc
    return marker


def _checked(src: Path, dst: Path, f: _File) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": f.path, "from": f.source}
    if src.is_symlink():
        if os.readlink(src) != os.readlink(dst):
            raise ValueError(f"the copy of {src} differs from it")
        entry["symlink"] = os.readlink(dst)
        return entry
    if not filecmp.cmp(src, dst, shallow=False):
        raise ValueError(f"the copy of {src} differs from it")
    entry["bytes"], entry["sha256"] = dst.stat().st_size, _sha256(dst)
    return entry


def _finish(
    marker: dict[str, Any],
    source: Path,
    target: Path,
    timeout: float,
    *,
    resumed: bool,
    held: bool = False,
) -> list[Path]:
    """Steps 4 and 5: every copy in its place, then the originals removed."""
    try:
        _place(marker, target)
        if held:
            kept = _clean_source(marker, source, target)
        else:
            plan = _plan(source, target) if source.is_dir() else []
            with _store_locks(source, plan, timeout):
                kept = _clean_source(marker, source, target)
        _write_marker(target, marker | {"state": DONE})
    except OSError as exc:
        raise MoveError(
            f"Cannot finish the move from {source} to the shared folder {target}: {exc}. "
            f"The copy there is whole and kept (marker {MARKER}); what was not removed from "
            f"{source} stays. The next start finishes the move once the cause (space, "
            "permissions) is fixed.",
            source="memory_data_dir",
            value=str(target),
        ) from exc
    moved = [target / entry["path"] for entry in marker["files"]]
    print(
        f"{'Finished the move that an earlier start began: moved' if resumed else 'Moved'} "
        f"the data from {source} to the shared folder {target} ({len(moved)} files, each "
        "copied, fsynced and checked byte for byte before it was removed).",
        flush=True,
    )
    if kept:
        print(
            f"Kept in {source}, changed after they were copied: {', '.join(kept)}; the shared "
            "folder holds them as they were when copied.",
            flush=True,
        )
    return moved


def _place(marker: dict[str, Any], target: Path) -> None:
    """Put each staged copy where it goes, never over a file that is already there."""
    staging = target / STAGING
    if not staging.exists():
        return
    folders: set[Path] = {target}
    for entry in marker["files"]:
        staged, dst = staging / entry["path"], target / entry["path"]
        if not os.path.lexists(staged):
            continue  # placed by an earlier start
        dst.parent.mkdir(parents=True, exist_ok=True)
        folders.add(dst.parent)
        if not os.path.lexists(dst):
            try:
                os.link(staged, dst, follow_symlinks=False)
            except FileExistsError:
                pass  # appeared just now: the check below names it
            except OSError:  # a filesystem without hard links
                os.rename(staged, dst)
                checkpoint(f"placed {entry['path']}")
                continue
        if not os.path.samestat(os.lstat(staged), os.lstat(dst)):
            raise MoveError(
                f"Cannot finish the move to {target}: {entry['path']} appeared there "
                f"during the move. The whole copy is kept in {staging}; nothing was "
                f"removed from {marker['source']}. Move that file away and start again.",
                source="memory_data_dir",
                value=str(target),
            )
        checkpoint(f"placed {entry['path']}")
        os.unlink(staged)
    for folder in sorted(folders, reverse=True):
        _fsync_dir(folder)
    checkpoint("copies placed")
    shutil.rmtree(staging)  # only empty folders are left in it
    _fsync_dir(target)
    checkpoint("staging folder removed")


def _clean_source(marker: dict[str, Any], source: Path, target: Path) -> list[str]:
    """Remove each original that still holds the bytes that were copied (and whose copy is in
    the shared folder); the ones that changed since are kept, named in the answer."""
    kept: list[str] = []
    # every folder a file came from, even one an earlier start emptied before it was killed
    folders = {(source / entry["from"]).parent for entry in marker["files"]}
    for entry in marker["files"]:
        original = source / entry["from"]
        if not os.path.lexists(original) or not os.path.lexists(target / entry["path"]):
            continue
        if _unchanged(original, entry):
            original.unlink()
            checkpoint(f"removed {entry['from']} from {source.name or source}")
        else:
            kept.append(entry["from"])
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        if folder.exists():
            _fsync_dir(folder)
        with contextlib.suppress(OSError):  # a writer made a file in it again: it stays
            _remove_if_only_locks(folder, source)
    checkpoint("originals removed")
    return kept


def _unchanged(original: Path, entry: dict[str, Any]) -> bool:
    if "symlink" in entry:
        return original.is_symlink() and os.readlink(original) == entry["symlink"]
    return (
        not original.is_symlink()
        and original.stat().st_size == entry["bytes"]
        and _sha256(original) == entry["sha256"]
    )


def _remove_if_only_locks(folder: Path, source: Path) -> None:
    """A folder of the private data that holds nothing but lock files any more goes (the
    private folder itself stays)."""
    while folder != source and folder.is_relative_to(source) and folder.is_dir():
        inside = list(folder.iterdir())
        if any(not _is_lock(p) for p in inside):
            return
        for lock in inside:
            lock.unlink(missing_ok=True)
        folder.rmdir()
        folder = folder.parent


def _read_marker(target: Path) -> dict[str, Any] | None:
    path = target / MARKER
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise _bad_marker(path, str(exc)) from exc
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        raise _bad_marker(path, "it is not a move marker")
    if data.get("version") != MARKER_VERSION or data.get("state") not in (COPIED, DONE):
        raise _bad_marker(
            path, f"version {data.get('version')!r}, state {data.get('state')!r} is unknown"
        )
    return data


def _bad_marker(path: Path, why: str) -> MoveError:
    return MoveError(
        f"The move marker {path} cannot be used ({why}); nothing was moved or removed. "
        "Restore it, or clear memory_data_dir.",
        source="memory_data_dir",
        value=str(path.parent),
    )


def _write_marker(target: Path, marker: dict[str, Any]) -> None:
    """Write the marker whole or not at all: a temporary file, fsynced, renamed, the folder
    fsynced."""
    temporary, path = target / (MARKER + ".tmp"), target / MARKER
    with open(temporary, "wb") as out:
        out.write(json.dumps(marker, ensure_ascii=False, indent=1).encode("utf-8"))
        out.flush()
        os.fsync(out.fileno())
    checkpoint(f"marker {marker['state']} written, not in place")
    os.replace(temporary, path)
    _fsync_dir(target)
    checkpoint(f"marker {marker['state']} in place")


def _discard_staging(target: Path) -> None:
    shutil.rmtree(target / STAGING)
    _fsync_dir(target)


def _cannot(source: Path, target: Path, exc: Exception) -> MoveError:
    return MoveError(
        f"Cannot move the data in {source} to the shared folder {target}: {exc}. Nothing "
        "was removed from the add-on's folder; fix the cause (space, permissions) or clear "
        "memory_data_dir.",
        source="memory_data_dir",
        value=str(target),
    )


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
