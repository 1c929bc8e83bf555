"""Records set aside and repairs: where unusable records and damaged files go, and what a
repair says it did.

Records a store cannot use are set aside, bytes intact, in ``<file>.rejected-<stamp>``; a
damaged file is moved whole to ``<file>.corrupt-<stamp>`` (``free_path`` names both).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .atomic import utc_stamp


@dataclass(frozen=True)
class SetAside:
    """A file of records set aside because they could not be used, and how many it holds
    (None when it cannot be read as a JSON array)."""

    path: Path
    records: int | None


def record_count(path: Path) -> int | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    return len(data) if isinstance(data, list) else None


def free_path(path: Path, kind: str) -> Path:
    """``<name>.<kind>-<UTC timestamp>`` beside ``path``, never an existing file."""
    base = f"{path.name}.{kind}-{utc_stamp()}"
    candidate, n = path.with_name(base), 1
    while candidate.exists():
        candidate, n = path.with_name(f"{base}-{n}"), n + 1
    return candidate


_WS = re.compile(r"[ \t\n\r]*")


def array_item_texts(text: str) -> list[str]:
    """The exact text of each item of a JSON array (``text`` is known to parse)."""
    decoder = json.JSONDecoder()
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    if not text.startswith("[", pos):
        return []
    pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
    items: list[str] = []
    while not text.startswith("]", pos):
        _, end = decoder.raw_decode(text, pos)
        items.append(text[pos:end])
        pos = _WS.match(text, end).end()  # type: ignore[union-attr]
        if text.startswith(",", pos):
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
    return items


@dataclass(frozen=True)
class Rejected:
    """Records of a store file that the store cannot use: their text as on disk and why."""

    texts: tuple[str, ...]
    reasons: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.texts)


@dataclass
class RepairReport:
    """What ``repair`` did to one file."""

    path: Path
    quarantine: Path | None = None  # the whole damaged file, set aside
    source: str = ""  # what the file started again from
    replayed: int = 0  # records brought back from the history log
    rejected: int = 0  # unusable records set aside
    rejected_path: Path | None = None
    surrogates: int = 0  # texts whose lone surrogates were replaced by U+FFFD
    unfinished: int = 0  # temp files a killed writer left (they may hold purged words), removed
    # Records kept whose times cannot be read (they count as unknown): (record, what is wrong).
    unreadable_times: list[tuple[str, str]] = field(default_factory=list)
    format: str = ""  # the file's format after the repair ("format 1"; see ``formats``)
    migrated: bool = False  # the data was brought to this release's format now
    # Why the file was left as it is: its format is newer than this release knows, or its
    # format sidecar cannot be read (a StoreError).
    format_problem: Exception | None = None

    @property
    def changed(self) -> bool:
        return (
            self.quarantine is not None or self.rejected_path is not None or bool(self.surrogates)
        )

    def describe(self) -> str:
        """One line for ``memory-curator repair``."""
        if self.quarantine is not None:
            line = f"{self.path}: damaged; moved to {self.quarantine}, started from {self.source}"
            if self.replayed:
                line += f"; replayed {plural(self.replayed, 'change')} from the history log"
        elif self.rejected_path is not None:
            line = (
                f"{self.path}: {plural(self.rejected, 'unusable record')} moved to "
                f"{self.rejected_path}; the usable records were kept"
            )
        else:
            line = f"{self.path}: ok"
        if self.unfinished:
            line += f"; {plural(self.unfinished, 'unfinished write')} a killed writer left removed"
        if self.surrogates:
            line += (
                f"; {plural(self.surrogates, 'text')} held a lone surrogate (half of a "
                "character, which UTF-8 cannot hold), now written as U+FFFD"
            )
        return line + self._describe_times() + self._describe_format()

    def _describe_format(self) -> str:
        if self.format_problem is not None:
            return f"; left as it is: {self.format_problem}"
        if self.migrated:
            return f"; migrated to {self.format}"
        return f"; {self.format}" if self.format else ""

    def _describe_times(self) -> str:
        if not self.unreadable_times:
            return ""
        records = list(dict.fromkeys(record for record, _ in self.unreadable_times))
        have = "has" if len(records) == 1 else "have"
        shown = "; ".join(f"{record}: {problem}" for record, problem in self.unreadable_times[:5])
        more = len(self.unreadable_times) - 5
        if more > 0:
            shown += f"; and {plural(more, 'more time')}"
        return (
            f"; {plural(len(records), 'record')} {have} a time that cannot be read (treated as "
            f"unknown, left as it is): {shown}"
        )


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
