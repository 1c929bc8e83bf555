"""Timestamps as the files hold them: ISO 8601 UTC with milliseconds and ``Z``, or Unix ms.

A time field of a file may hold anything another program wrote there. Reading one never
raises: a value that is no usable time (not text or a number, unreadable, or outside the
calendar once in UTC) reads as unknown, which is the epoch (the reading itself is
``webapp.language.moments``, which the prompt and the dashboard share).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from ..language.moments import EARLIEST as EARLIEST
from ..language.moments import EPOCH as EPOCH
from ..language.moments import LATEST as LATEST
from ..language.moments import LATEST_PLUS as LATEST_PLUS
from ..language.moments import read_time as read_time
from ..language.moments import time_read


def to_iso(moment: datetime) -> str:
    """What JavaScript's ``toISOString()`` writes, e.g. 2026-11-22T01:54:44.120Z."""
    moment = moment.astimezone(UTC)
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T"
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}."
        f"{moment.microsecond // 1000:03d}Z"
    )


def now_iso() -> str:
    """The current time in the on-disk ISO form."""
    return to_iso(datetime.now(UTC))


def now_ms() -> int:
    """The current time in Unix milliseconds."""
    return time.time_ns() // 1_000_000


def parse_ts(value: Any) -> datetime:
    """Read an ISO 8601 string or a Unix-millisecond number; a value that is no usable time
    (unreadable, of another type, outside the calendar) gives the epoch: an unknown time."""
    moment = read_time(value)
    return EPOCH if moment is None else moment


def time_problem(value: Any) -> str | None:
    """Why a time field holding ``value`` has no usable time (for ``repair`` to say); None when
    it has one or holds nothing (null or absent)."""
    if value is None:
        return None
    return time_read(value)[1]


def unreadable_times(record: Any, fields: Iterable[str]) -> list[str]:
    """ "<field> <why>" for each of ``fields`` of ``record`` (a JSON object) that holds something
    but no usable time; [] for anything that is not an object."""
    if not isinstance(record, dict):
        return []
    found = []
    for name in fields:
        problem = time_problem(record.get(name))
        if problem is not None:
            found.append(f"{name} {problem}")
    return found


def unreadable_record_times(records: Any, fields: Sequence[str]) -> list[tuple[str, str]]:
    """(the record's id, "<field> <why>") for each of ``fields`` of each record of a JSON list
    that holds something but no usable time; [] for anything that is not a list."""
    if not isinstance(records, list):
        return []
    return [
        (repr(record.get("id")), problem)
        for record in records
        for problem in unreadable_times(record, fields)
    ]


def unreadable_entry_times(entries: Any, fields: Sequence[str]) -> list[tuple[str, str]]:
    """(the entry's key, "<field> <why>") for each of ``fields`` of each entry of a JSON
    object that holds something but no usable time; [] for anything that is not an object."""
    if not isinstance(entries, dict):
        return []
    return [
        (repr(key), problem)
        for key, entry in entries.items()
        for problem in unreadable_times(entry, fields)
    ]
