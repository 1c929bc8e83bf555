"""Reading a time another program or a person wrote: ISO 8601 text or Unix milliseconds, never raising.

``iso_time`` is the one reader of ISO 8601 text in the package (``iso_date`` its reader of a
day alone, for the dashboard's date pickers): the stores (``stores.timefmt``,
which writes the files' times too), the prompt (``prompts``, over memories given as dicts),
the dashboard's "as of" picker (``web.as_of``, naive times on the household's clock) and the
Assist endpoint's ``at`` (``assist_http``, which wants the zone said) all read through it, so
"2026-11-20T08:30z", a space for the "T" or 65 characters of text mean the same everywhere.
``read_time`` and ``time_read`` add the files' rules: an ``expiresAt`` outside the calendar is
no usable time, which is "never"; usable times keep a day's distance from the calendar's
ends, so stepping, comparing, subtracting or formatting a time read cannot overflow.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, tzinfo
from typing import Any

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# The usable times: a day inside the ends of Python's calendar (years 1 to 9999).
EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, tzinfo=UTC)
LATEST_PLUS = datetime(9999, 12, 31, tzinfo=UTC)  # stands for any time beyond the calendar
# An ISO 8601 time is some 30 characters; longer text is no time (and is not parsed).
MAX_TIME_TEXT = 64


def time_read(value: Any) -> tuple[datetime | None, str | None]:
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


def iso_time(value: str, *, naive: tzinfo | None = UTC) -> datetime | None:
    """The time ISO 8601 text names, as written (not converted: a conversion may overflow);
    a naive time is taken on ``naive``'s clock (left naive when ``naive`` is None). Spaces
    around it, a final "Z" or "z" and a space for the "T" are read; None for empty text, text
    longer than ``MAX_TIME_TEXT`` (not parsed) or no ISO 8601 time."""
    text = value.strip()
    if not text or len(text) > MAX_TIME_TEXT:
        return None
    if text.endswith("z"):  # (fromisoformat reads "Z", not "z")
        text = text[:-1] + "Z"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None and naive is not None:
        return moment.replace(tzinfo=naive)
    return moment


def iso_date(value: str) -> date | None:
    """The day ISO 8601 text names ("2026-11-20", as a date picker sends it; spaces around it
    are read); None for empty text, text longer than ``MAX_TIME_TEXT`` or no ISO 8601 date."""
    text = value.strip()
    if not text or len(text) > MAX_TIME_TEXT:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _from_text(value: str) -> datetime | None:
    """ISO 8601 text in UTC (naive times are UTC); None when unreadable, OverflowError when
    it falls outside the calendar in UTC."""
    moment = iso_time(value)
    return None if moment is None else moment.astimezone(UTC)


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
    no usable time; never raises. (``time_read``'s answer, without building its message for
    text: the files hold thousands of times.)"""
    if type(value) is not str:
        return time_read(value)[0]
    moment = iso_time(value)
    if moment is None:
        return None
    try:
        moment = moment.astimezone(UTC)
    except OverflowError:  # e.g. 0001-01-01T00:00:00+14:00: before the year 1 in UTC
        return None
    return moment if EARLIEST <= moment <= LATEST else None
