"""The files a store keeps, as its ``own_files()`` lists them.

A store's JSON file does not live alone: the file layer keeps a backup, a lock file, the
sidecar naming its format, the records it could not use (set aside), a damaged file moved
aside whole and, after a killed write, an unfinished temp file; a store with a history log
keeps that too. Each name is made where the file is written (``atomic``, ``jsonwrite``,
``formats``, ``setaside``, ``history``); here they are only listed, so ``stats`` and ``repair`` (through the curator) never spell them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from glob import escape as glob_escape
from pathlib import Path

from .atomic import backup_temp_path, temp_files_of
from .formats import format_path

# What a kept file is (a stable word the doors put in their own words).
DATA = "data"  # the store's own file
BACKUP = "backup"  # the last good version (<file>.bak)
BACKUP_BEING_MADE = "backup being made"  # the backup's link, before it replaces the backup
LOCK = "lock"  # the sidecar lock
FORMAT = "format"  # the sidecar naming the file's format version (<file>.format)
SET_ASIDE = "set aside"  # records that could not be used (<file>.rejected-<stamp>)
DAMAGED = "damaged"  # a damaged file moved aside whole (<file>.corrupt-<stamp>)
UNFINISHED = "unfinished write"  # a temp file a killed writer left
HISTORY = "history"  # the change log
KEY = "key"  # a random key made once (the forgotten facts' fingerprints)
VECTORS = "vectors"  # the similarity index's vectors
VECTORS_KEY = "vectors key"  # the random key of the vector cache's row names
SKILL = "skill"  # a skill document
UPLOAD = "upload"  # an uploaded skills .zip kept between its preview and its import
SECRET_KEY = "secret key"  # the dashboard's secret key
OPTIONS = "options"  # the Home Assistant add-on's options
FORGETTING = "delete forever unfinished"  # the marker of a Delete forever not finished yet
MOVE_RECORD = "move record"  # the marker of the move of /data into a shared folder


@dataclass(frozen=True)
class OwnFile:
    """A file a store keeps, and what it is (one of the words above)."""

    path: Path
    kind: str


def existing(path: Path, kind: str) -> list[OwnFile]:
    """``[OwnFile(path, kind)]`` when the file is there (a link counts), else []."""
    return [OwnFile(path, kind)] if path.is_file() or path.is_symlink() else []


def set_aside_paths(path: Path, kind: str) -> list[Path]:
    """The files ``setaside.free_path(path, kind)`` made beside ``path``, sorted."""
    try:
        return sorted(path.parent.glob(glob_escape(path.name) + f".{kind}-*"))
    except OSError:
        return []


def written_with_temps(path: Path, kind: str) -> list[OwnFile]:
    """A file ``write_atomic`` replaces, and the temp files a killed write of it left."""
    return [*existing(path, kind), *(OwnFile(p, UNFINISHED) for p in sorted(temp_files_of(path)))]


def json_file_files(path: Path, lock: Path, backup: Path) -> list[OwnFile]:
    """A store's JSON file and what the file layer keeps beside it."""
    return [
        *written_with_temps(path, DATA),
        *written_with_temps(backup, BACKUP),
        *existing(backup_temp_path(backup), BACKUP_BEING_MADE),
        *existing(lock, LOCK),
        *written_with_temps(format_path(path), FORMAT),
        *(OwnFile(p, SET_ASIDE) for p in set_aside_paths(path, "rejected")),
        *(OwnFile(p, DAMAGED) for p in set_aside_paths(path, "corrupt")),
    ]


def key_file_files(path: Path, what: str = KEY) -> list[OwnFile]:
    """A key file made once (its temp files and a damaged one set aside)."""
    return [
        *written_with_temps(path, what),
        *(OwnFile(p, DAMAGED) for p in set_aside_paths(path, "corrupt")),
    ]
