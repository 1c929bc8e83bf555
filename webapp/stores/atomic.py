"""Atomic writes beside a store file: temp file, fsync, replace, the backup and the folder fsync.

A reader or a crash sees the old file or the new one, never half of one; on any failure the
original is untouched, no temp file is left and ``StoreWriteError`` (an OSError with the
original errno) is raised. The previous version is kept as ``<file>.bak``.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from ..plainfiles import read_regular
from .errors import StoreWriteError

log = logging.getLogger(__name__)

DEFAULT_MODE = 0o644


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


def unlink_quietly(path: str | os.PathLike[str]) -> None:
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


def write_temp(path: Path, payload: bytes, *, during_sync: Callable[[], None] | None = None) -> str:
    """Write ``payload`` to a new temp file beside ``path`` (mode of ``path``), fsync'd; its name.

    ``during_sync`` runs on this thread once the bytes are written, while a thread of its own
    fsyncs them (the fsync waits for the disk without holding the GIL); both have finished
    when this returns. On failure (of either) no temp file is left and StoreWriteError (an
    OSError with the errno) is raised, or what ``during_sync`` raised.
    """
    mode = _mode_of(path)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise StoreWriteError(path, exc) from exc
    try:
        try:
            os.fchmod(fd, mode)
            _write_all(fd, payload)
            if during_sync is None:
                os.fsync(fd)
            else:
                _fsync_during(fd, during_sync)
        finally:
            os.close(fd)
    except BaseException as exc:
        unlink_quietly(tmp_name)
        if isinstance(exc, OSError):
            raise StoreWriteError(path, exc) from exc
        raise
    return tmp_name


def _fsync_during(fd: int, work: Callable[[], None]) -> None:
    """fsync ``fd`` in a thread while ``work`` runs here; raise the fsync's error after both."""
    failed: list[OSError] = []

    def sync() -> None:
        try:
            os.fsync(fd)
        except OSError as exc:
            failed.append(exc)

    syncing = threading.Thread(target=sync, name="store-fsync", daemon=True)
    try:
        syncing.start()
    except RuntimeError:  # no thread to be had: one after the other
        work()
        os.fsync(fd)
        return
    try:
        work()
    finally:
        syncing.join()
    if failed:
        raise failed[0]


def replace_with(tmp_name: str, path: Path, *, backup: Path | None = None) -> None:
    """Keep the current file as ``backup`` (best effort) and move the temp file over ``path``.

    The backup is the current file's inode, which the replace takes away from ``path``: the
    two never share an inode afterwards (a program rewriting the file in place would change
    the backup with it). When the replace fails, the backup is made a copy instead.
    """
    try:
        if backup is not None:
            _keep_backup(path, backup)
        os.replace(tmp_name, path)
    except OSError as exc:
        if backup is not None:
            _unshare_backup(path, backup)
        raise StoreWriteError(path, exc) from exc


def sync_folder_after_replace(path: Path) -> None:
    """fsync the folder of a file just replaced; a failure is logged, not raised."""
    try:
        fsync_dir(path.parent)
    except OSError as exc:
        # The new content is in place and visible; failing the call now would make the
        # caller retry a change that happened. Only durability across power loss is in doubt.
        log.warning("Saved %s but could not fsync its folder: %s", path, exc)


def write_atomic(path: Path, payload: bytes, *, backup: Path | None = None) -> None:
    """Replace ``path`` with ``payload`` so that a reader or a crash sees old or new, never half.

    On any failure the original file is untouched, no temp file is left and StoreWriteError
    (an OSError with the original errno) is raised.
    """
    path = Path(path)
    tmp_name = write_temp(path, payload)
    try:
        replace_with(tmp_name, path, backup=backup)
    finally:
        unlink_quietly(tmp_name)
    sync_folder_after_replace(path)


def _keep_backup(path: Path, backup: Path) -> None:
    """Hard-link the current (good) file as the backup, just before it is replaced; a
    failure here never blocks a write."""
    link_tmp = backup_temp_path(backup)
    try:
        unlink_quietly(link_tmp)
        os.link(path, link_tmp)
        os.replace(link_tmp, backup)
    except OSError:
        pass
    finally:
        # Renaming a link over another link of the same file does nothing: remove it.
        unlink_quietly(link_tmp)


def backup_temp_path(backup: Path) -> Path:
    """The link ``_keep_backup`` makes before it replaces ``backup`` (``<file>.bak.tmp``)."""
    return backup.with_name(backup.name + ".tmp")


def copy_backup(path: Path, backup: Path) -> None:
    """Make the backup a copy of the current file: its own inode, whatever later happens to
    the file. When that fails the backup is removed, so it never holds what the file no
    longer does (a purged memory)."""
    try:
        write_atomic(backup, read_regular(path))
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("Could not copy %s to %s (%s); removed the backup instead", path, backup, exc)
        unlink_quietly(backup)


def _unshare_backup(path: Path, backup: Path) -> None:
    """When the backup is the live file itself (its replace failed), make it a copy."""
    try:
        shared = os.path.samefile(path, backup)
    except OSError:
        return
    if shared:
        copy_backup(path, backup)


def utc_stamp() -> str:
    """A UTC timestamp safe in a file name, e.g. 20261122T015444123456Z."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")


_TEMP_NAME = r"\.{name}\.[a-z0-9_]{{8}}\.tmp"  # tempfile.mkstemp(prefix=".<name>.", suffix=".tmp")


def is_temp_name(name: str) -> bool:
    """True for the name of a temp file ``write_atomic`` makes (for any file)."""
    return re.fullmatch(_TEMP_NAME.format(name=".+"), name) is not None


def temp_files_of(path: Path) -> list[Path]:
    """Temp files ``write_atomic`` makes for ``path`` (left behind only by a killed writer)."""
    pattern = re.compile(_TEMP_NAME.format(name=re.escape(path.name)))
    try:
        names = os.listdir(path.parent)
    except FileNotFoundError:
        return []
    return [path.parent / name for name in names if pattern.fullmatch(name)]
