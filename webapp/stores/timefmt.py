"""Timestamps as the files hold them: ISO 8601 UTC with milliseconds and ``Z``, or Unix ms."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_iso(moment: datetime) -> str:
    """What JavaScript's ``toISOString()`` writes, e.g. 2026-11-22T01:54:44.120Z."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def now_iso() -> str:
    """The current time in the on-disk ISO form."""
    return to_iso(datetime.now(UTC))


def now_ms() -> int:
    """The current time in Unix milliseconds."""
    return time.time_ns() // 1_000_000


def parse_ts(value: Any) -> datetime:
    """Read an ISO 8601 string or a Unix-millisecond number; unreadable values give the epoch."""
    if isinstance(value, bool):
        return EPOCH
    if isinstance(value, (int, float)):
        try:
            return datetime.fromtimestamp(value / 1000, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return EPOCH
    if isinstance(value, str) and value:
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return EPOCH
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC)
    return EPOCH
