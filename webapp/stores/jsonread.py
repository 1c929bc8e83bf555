"""What the JSON file layer (jsonfile.py) reads a file into: one parse of it (``Snapshot``),
the file as read under the lock (``Read``), and the two signals a write re-applies on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import StoreCorruptError
from .jsonbytes import Fragments
from .setaside import Rejected

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
