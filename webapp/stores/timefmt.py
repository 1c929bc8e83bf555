"""Timestamps as the files hold them: ISO 8601 UTC with milliseconds and ``Z``, or Unix ms.

A time field of a file may hold anything another program wrote there. Reading one never
raises: a value that is no usable time (not text or a number, unreadable, or outside the
calendar once in UTC) reads as unknown, which is the epoch. Usable times keep a day's
distance from the calendar's ends, so stepping, comparing, subtracting or formatting a time
read from a file cannot overflow.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# The usable times: a day inside the ends of Python's calendar (years 1 to 9999).
EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, tzinfo=UTC)
LATEST_PLUS = datetime(9999, 12, 31, tzinfo=UTC)  # stands for any time beyond the calendar
# An ISO 8601 time is some 30 characters; longer text is no time (and is not parsed).
MAX_TIME_TEXT = 64


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


def _read(value: Any) -> tuple[datetime | None, str | None]:
    """(the UTC time ``value`` holds, None) or (None, why it holds none); never raises."""
    if value is None:
        return None, "is empty"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None, f"is a JSON {_json_type(value)}, not a time"
    try:
        moment = _from_text(value) if isinstance(value, str) else _from_ms(value)
    except OverflowError:  # e.g. 0001-01-01T00:00:00+14:00: before the year 1 in UTC
        moment = LATEST_PLUS
    if moment is None:
        return None, f"{_shown(value)} cannot be read as a time"
    if not EARLIEST <= moment <= LATEST:
        return None, f"{_shown(value)} is outside the calendar"
    return moment, None


def _from_ms(value: float) -> datetime | None:
    """Unix milliseconds in UTC; None for NaN; OverflowError beyond the calendar."""
    if isinstance(value, float) and math.isnan(value):
        return None
    try:
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    except (OSError, ValueError) as exc:  # (platforms differ in what they raise)
        raise OverflowError(str(exc)) from None


def _from_text(value: str) -> datetime | None:
    """ISO 8601 text in UTC (naive times are UTC); None when unreadable, OverflowError when
    it falls outside the calendar in UTC."""
    text = value.strip()
    if not text or len(text) > MAX_TIME_TEXT:
        return None
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (list, tuple)):
        return "list"
    return type(value).__name__


def _shown(value: Any) -> str:
    """``value`` as a message quotes it: cut short, and never with a lone surrogate."""
    text = repr(value)
    if len(text) > 40:
        text = f"{text[:37]}… ({len(str(value)):,} characters)"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def read_time(value: Any) -> datetime | None:
    """The UTC time ``value`` (ISO 8601 text or Unix milliseconds) holds, or None when it holds
    no usable time; never raises."""
    if type(value) is str and len(value) <= MAX_TIME_TEXT:  # the usual case, quickly
        try:
            moment = datetime.fromisoformat(value)  # (reads a final "Z" too)
            moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        except (ValueError, OverflowError):
            pass  # spaces around it, a lower-case "z", or no time: the careful way says
        else:
            return moment if EARLIEST <= moment <= LATEST else None
    return _read(value)[0]


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
    return _read(value)[1]


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
