"""A secret leaves the history log when it leaves its memory.

A memory may hold a secret the person confirmed keeping ("The garage door code is 4821").
When it is rewritten without it ("Has a garage door code (not kept in memory).", the offer of
Needs attention and of the add form), edited to another value, merged away or deleted, the
history log would still hold every earlier version, shown on the History page with a Restore
button. ``gone_secrets`` says which secrets a change takes out of its memories, and
``scrubbed`` gives an entry or a record with each of them masked (``webapp.sensitive.secrets.MASK``),
so the store rewrites the log's entries of those memories and appends the new entries masked.
A restore brings back the masked words (``without_gone_secrets``), never the secret.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..sensitive.secrets import MASK, find_secrets


def strings(value: Any) -> Iterator[str]:
    """Every string inside ``value`` (a record: its content, its origin's evidence, …)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)


def secret_values(record: Any) -> set[str]:
    """The secrets written in ``record`` (each as it is written there)."""
    values: set[str] = set()
    for text in strings(record):
        finding = find_secrets(text)
        if finding is not None:
            values |= {text[span.start : span.end] for span in finding.spans}
    return values


def _held(value: str, records: Iterable[Any]) -> bool:
    return any(value in text for record in records for text in strings(record))


def gone_secrets(entries: Iterable[dict[str, Any]]) -> set[str]:
    """The secrets the changes of ``entries`` take away: held by a record before, by none
    after (a deletion has no after)."""
    entries = list(entries)
    before = set().union(*(secret_values(e.get("before")) for e in entries))
    if not before:
        return set()
    after = [e.get("after") for e in entries]
    return {value for value in before if not _held(value, after)}


def scrubbed(value: Any, secrets: set[str]) -> Any:
    """``value`` (an entry, a record, a string) with each of ``secrets`` masked; the same
    object when it holds none of them."""
    if isinstance(value, str):
        out = value
        for secret in sorted(secrets, key=len, reverse=True):
            out = out.replace(secret, MASK)
        return value if out == value else out
    if isinstance(value, dict):
        items = {key: scrubbed(item, secrets) for key, item in value.items()}
        changed = any(items[key] is not value[key] for key in value)
        return items if changed else value
    if isinstance(value, list):
        listed = [scrubbed(item, secrets) for item in value]
        changed = any(new is not old for new, old in zip(listed, value, strict=True))
        return listed if changed else value
    return value


def without_gone_secrets(target: dict[str, Any], current: Any) -> dict[str, Any]:
    """``target`` (an earlier state to restore) with every secret masked that ``current``
    (the memory as it is now, or None when it is deleted) does not hold."""
    values = secret_values(target)
    gone = {value for value in values if not _held(value, [current])}
    if not gone:
        return target
    out: dict[str, Any] = scrubbed(target, gone)
    return out


def shown_entries(entries: Iterable[dict[str, Any]], current: Any) -> list[dict[str, Any]]:
    """History entries as they may be shown beside the memory as it is now (``current``,
    None when deleted): each earlier state with the secrets it no longer holds masked, as a
    Restore of it would bring it back (a log written before secrets left with their memory)."""
    shown = []
    for entry in entries:
        sides = {
            side: without_gone_secrets(entry[side], current)
            for side in ("before", "after")
            if isinstance(entry.get(side), dict)
        }
        changed = any(sides[side] is not entry[side] for side in sides)
        shown.append({**entry, **sides} if changed else entry)
    return shown
