"""What may be wrong with one memory: stale (a date passed, a moment named has gone by, untouched
for long), hard for the assistant to use (first person, too long, mostly a link, code), holding
a secret, or past its ``expiresAt``."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from datetime import UTC, date, datetime, tzinfo

from ..language.phrasing import as_user_fact, is_first_person
from ..sensitive.secrets import SecretFinding, find_secrets
from ..stores.memories import Memory
from ..stores.timefmt import EPOCH
from .findings import Finding, finding_key
from .pairs import Reason, features, reason

__all__ = ["expired_findings", "hard_to_use_reason", "memory_findings", "stale_reason"]

LONG_MEMORY_CHARS = 300

_URL = re.compile(r"https?://\S+|www\.\S+", re.I)
_CODE_CHARS = set("{}[]();=<>$`|\\")
_CODE_START = re.compile(
    r"^\s*(?:```|def |class |import |from \S+ import|function |const |let |\$ |#!|<\w+)"
)
# Words that tie a memory to a moment, and how long after it was written they stop being true.
_RELATIVE_TIME: tuple[tuple[re.Pattern[str], int], ...] = tuple(
    (re.compile(pattern, re.I), days)
    for pattern, days in (
        (r"\b(?:today|tonight)\b|今天|今晚|今日", 1),
        (r"\btomorrow\b|明天|明日", 2),
        (
            r"\bthis week(?:end)?\b|這週|这周|本週|本周|這禮拜|这礼拜|這個週末|这个周末|這週末|这周末",
            7,
        ),
        (r"\bnext week(?:end)?\b|下週|下周|下禮拜|下礼拜|下個禮拜|下个礼拜", 14),
        (r"\bthis month\b|這個月|这个月|本月", 31),
        (r"\bnext month\b|下個月|下个月", 62),
        (r"\b(?:currently|for now|at the moment|these days|right now)\b|暫時|暂时|目前|最近", 30),
        (r"\bthis year\b|今年", 365),
    )
)


def stale_reason(memory: Memory, today: date, stale_days: int) -> Reason | None:
    """Why ``memory`` may no longer be true, or None."""
    dates = features(memory.content).dates
    if dates and max(dates) < today:
        return reason("past_date", date=max(dates))
    if memory.updated_at == EPOCH:  # its time is unknown (none, or none the file could hold)
        return None
    written = memory.updated_at.astimezone(UTC).date()
    age = (today - written).days
    # A memory that knows when it ends (expiresAt) is judged by that, not by its words.
    for word, days in _relative_words(memory.content) if memory.expires_at is None else ():
        if age >= days:
            return reason("expired_word", word=word, written=written)
    if age >= stale_days:
        return reason("untouched", days=age, threshold=stale_days)
    return None


@functools.lru_cache(maxsize=65_536)
def _relative_words(text: str) -> tuple[tuple[str, int], ...]:
    """The moments ``text`` names that pass ("this week", 今晚) and after how many days, in
    ``_RELATIVE_TIME``'s order; cached per text."""
    found = ((pattern.search(text), days) for pattern, days in _RELATIVE_TIME)
    return tuple((match.group(0), days) for match, days in found if match)


def hard_to_use_reason(memory: Memory) -> tuple[Reason, str | None] | None:
    """Why ``memory`` is hard for the assistant to use, and a rewrite when there is one."""
    return _hard_to_use(memory.content)


@functools.lru_cache(maxsize=65_536)
def _hard_to_use(text: str) -> tuple[Reason, str | None] | None:
    # Cached per text: a rescan after one change reads the others again.
    if is_first_person(text):
        suggestion = as_user_fact(text)
        if suggestion != text:
            return reason("first_person"), suggestion
    if len(text) > LONG_MEMORY_CHARS:
        return reason("too_long", chars=len(text), max=LONG_MEMORY_CHARS), None
    urls = sum(len(u) for u in _URL.findall(text))
    if urls and urls >= 0.5 * len(text.strip()):
        return reason("mostly_link"), None
    symbols = sum(ch in _CODE_CHARS for ch in text)
    if len(text) >= 20 and (_CODE_START.match(text) or symbols >= max(4, 0.08 * len(text))):
        return reason("looks_like_code"), None
    return None


def memory_findings(memory: Memory, *, today: date, stale_days: int) -> list[Finding]:
    """What a scan finds in ``memory`` alone: stale, hard to use, holding a secret."""
    findings: list[Finding] = []
    why = stale_reason(memory, today, stale_days)
    if why:
        findings.append(Finding("stale", finding_key("stale", (memory,)), why, (memory,)))
    hard = hard_to_use_reason(memory)
    if hard:
        findings.append(
            Finding("hard", finding_key("hard", (memory,)), hard[0], (memory,), None, hard[1])
        )
    secret = _secret(memory.content)
    if secret:
        why = reason("holds_secret", secret=secret.kind, masked=secret.masked)
        key = finding_key("secret", (memory,))
        findings.append(Finding("secret", key, why, (memory,), None, secret.fact))
    return findings


@functools.lru_cache(maxsize=65_536)
def _secret(text: str) -> SecretFinding | None:
    # Cached per text, as the other checks of one memory.
    return find_secrets(text)


def expired_findings(
    memories: Iterable[Memory], now: datetime, zone: tzinfo = UTC
) -> list[Finding]:
    """A finding per memory whose ``expiresAt`` has passed at ``now``, soonest expired first:
    out of every prompt, kept until a person deletes or extends it; the day it stopped being
    true is the household's (``zone``). Worked out when asked, not by the background scan,
    since an expiry passes at its own instant."""
    found = sorted(
        (m for m in memories if m.expired(now)), key=lambda m: (m.expires_at or now, m.id)
    )
    return [
        Finding(
            "expired",
            finding_key("expired", (memory,)),
            reason("expired_at", date=(memory.expires_at or now).astimezone(zone).date()),
            (memory,),
        )
        for memory in found
    ]
