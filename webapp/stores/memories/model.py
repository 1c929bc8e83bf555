"""The memory file's records: the values ``MemoryStore`` answers with (pages, usage,
deletions, merges, import previews), the record checks the file layer applies, version tokens
and the history log's steps."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from operator import itemgetter
from typing import Any, Generic, TypeVar

from ..errors import ConflictError
from ..records import Memory
from ..timefmt import now_iso, parse_ts, to_iso, unreadable_record_times

_ID, _CONTENT = itemgetter("id"), itemgetter("content")
A = TypeVar("A")

# The orders ``MemoryStore.query`` knows: by creation (newest or oldest first), by the last
# change (most recent first), A–Z by the folded text and by expiry (soonest first, memories that
# never expire last); ties keep the file's order.
SORTS = ("newest", "oldest", "updated", "alpha", "expires")
DEFAULT_SORT = "newest"
# What ``MemoryStore.query(expiry=…)`` keeps: memories whose expiry has passed, those with one
# still to come, those without one.
EXPIRY_FILTERS = ("expired", "expiring", "none")
PER_PAGE = 50  # rows per page unless a caller asks for another size
WARN_RATIO = 0.9  # ``usage()`` warns from 90% of a cap
MAX_CACHED_QUERIES = 64  # per file version and order


@dataclass(frozen=True)
class DeletedMemory:
    """A memory that is gone from the store but still in the history log (restorable)."""

    memory: Memory  # its last state before the deletion
    deleted_at: datetime
    deleted_by: str
    hid: str  # the deletion's history entry


@dataclass(frozen=True)
class Deletion:
    """What ``MemoryStore.delete_unchanged`` did: the ids deleted, and the memories left alone
    because they changed since the caller saw them (as they are now). Ids already gone are in
    neither."""

    deleted: list[str]
    left_alone: list[Memory]


@dataclass(frozen=True)
class MergeResult:
    """What ``MemoryStore.merge`` did: the memory kept, the one deleted, the history entry of
    the kept one's new text (None when its text stayed as it was)."""

    kept: Memory
    dropped_id: str
    update_hid: str | None


@dataclass(frozen=True, slots=True)
class _Step:
    """One memory's change as the history log records it: ``before`` None for one added,
    ``after`` None for one deleted."""

    action: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    @property
    def memory_id(self) -> str:
        return str((self.after or self.before or {})["id"])


@dataclass(frozen=True, slots=True)
class _Written(Generic[A]):
    """What a change to the memory file gives back: the caller's answer, and the steps the
    history log records (one entry each; none when nothing changed)."""

    answer: A
    steps: tuple[_Step, ...] = ()


@dataclass(frozen=True)
class MemoryPage:
    """One page of ``MemoryStore.query``: its memories and where they sit in the whole list."""

    items: list[Memory]  # the memories of this page only
    total: int  # how many match the filters (all pages)
    store_total: int  # how many the store holds (tells "empty" from "nothing matches")
    page: int  # 1-based, clamped to the pages that exist
    pages: int  # at least 1
    per_page: int | None  # None: every match on one page

    @property
    def first(self) -> int:
        """1-based number of the first memory shown (0 when none)."""
        if not self.items:
            return 0
        return (self.page - 1) * self.per_page + 1 if self.per_page else 1

    @property
    def last(self) -> int:
        """1-based number of the last memory shown (0 when none)."""
        return self.first + len(self.items) - 1 if self.items else 0


@dataclass(frozen=True)
class MemoryUsage:
    """Items and characters used against the caps (``MemoryStore.usage``)."""

    items: int
    chars: int
    max_items: int
    max_chars: int

    @property
    def items_full(self) -> bool:
        return self.items >= self.max_items

    @property
    def chars_full(self) -> bool:
        return self.chars >= self.max_chars

    @property
    def full(self) -> bool:
        """True when a new memory would be refused (either cap reached)."""
        return self.items_full or self.chars_full

    @property
    def items_warn(self) -> bool:
        return self.items >= WARN_RATIO * self.max_items

    @property
    def chars_warn(self) -> bool:
        return self.chars >= WARN_RATIO * self.max_chars

    @property
    def warn(self) -> bool:
        """True from 90% of either cap: time to tidy up."""
        return self.items_warn or self.chars_warn


HOUSEHOLD = "household"  # ``query(whose=...)``: the memories that name no person


def _in_view(record: dict[str, Any], person: str | None) -> bool:
    """True when ``record`` is the household's or ``person``'s (one person's view)."""
    owner = record.get("person")
    return not (isinstance(owner, str) and owner) or owner == person


def _validate_records(data: Any) -> str | None:
    if not isinstance(data, list):
        return f"expected a JSON array of memories, found a JSON {type(data).__name__}"
    return None


def record_problem(record: Any) -> str | None:
    """Why one item of the memory file cannot be used as a memory, or None."""
    if not isinstance(record, dict):
        return "is not a JSON object"
    if not isinstance(record.get("id"), str) or not record["id"]:
        return "has no string id"
    if not isinstance(record.get("content"), str):
        return f"(id {record.get('id')!r}) has no string content"
    return None


TIME_FIELDS = ("createdAt", "updatedAt", "expiresAt")


def _unreadable_times(records: Any) -> list[tuple[str, str]]:
    """Each time of a memory that cannot be read (the memory is kept; its time is unknown)."""
    return unreadable_record_times(records, TIME_FIELDS)


def _check_new_record(record: Any) -> str | None:
    """A record a write adds or changes: refused with what makes it no memory."""
    problem = record_problem(record)
    return f"a memory {problem}" if problem else None


def replay_history(records: list[dict[str, Any]], entries: list[dict[str, Any]]) -> int:
    """Apply history entries (oldest first) to ``records`` in place; how many records changed."""
    before = {str(r.get("id")): dict(r) for r in records}
    for entry in entries:
        record_id, after = entry.get("id"), entry.get("after")
        if not isinstance(record_id, str):
            continue
        position = next((i for i, r in enumerate(records) if r.get("id") == record_id), None)
        if after is None:
            if position is not None and entry.get("action") == "delete":
                del records[position]
        elif isinstance(after, dict) and record_problem(after) is None:
            if position is None:
                records.append(dict(after))
            else:
                records[position] = dict(after)
    now = {str(r.get("id")): r for r in records}
    return sum(1 for i in before.keys() | now.keys() if before.get(i) != now.get(i))


def _to_ms(moment: datetime) -> datetime:
    """``moment`` cut to whole milliseconds, the precision of ``Memory.version``."""
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def _stored_version(record: dict[str, Any]) -> Any:
    """The record's updatedAt as ``Memory.from_dict`` reads it (createdAt when missing)."""
    return record.get("updatedAt", record.get("createdAt"))


def _same_instant(stored: Any, expected: Any) -> bool:
    """True when ``expected`` (a version token, a datetime or the raw value) names ``stored``.

    Compared to the millisecond: ``Memory.version`` has no more, and files written by other
    programs may (Python's isoformat() writes microseconds).
    """
    if stored == expected and not isinstance(expected, datetime):
        return True
    wanted = expected if isinstance(expected, datetime) else parse_ts(expected)
    return _to_ms(parse_ts(stored)) == _to_ms(wanted)


def _index_to_change(
    records: list[dict[str, Any]], memory_id: str, expected_updated_at: Any
) -> int | None:
    """Where the memory ``memory_id`` is in ``records`` (None: there is none); with
    ``expected_updated_at``, ConflictError if its version is no longer that one."""
    index = next((i for i, r in enumerate(records) if r.get("id") == memory_id), None)
    if index is not None and expected_updated_at is not None:
        record = records[index]
        if not _same_instant(_stored_version(record), expected_updated_at):
            raise ConflictError(Memory.from_dict(record))
    return index


def _still_as_seen(record: dict[str, Any], seen: Memory | str) -> bool:
    """True while ``record`` is still the memory as a caller saw it: ``seen`` is that Memory
    (its version and its text must both match: another program may change the text without
    a new updatedAt) or its version token (``Memory.version``)."""
    if isinstance(seen, Memory):
        return record.get("content") == seen.content and _same_instant(
            _stored_version(record), seen.updated_at
        )
    return _same_instant(_stored_version(record), seen)


def _later_than(previous: Any) -> str:
    """A new updatedAt at least a millisecond after ``previous`` (so a version token always changes)."""
    now = _to_ms(parse_ts(now_iso()))
    before = _to_ms(parse_ts(previous))
    if now <= before:
        now = before + timedelta(milliseconds=1)
    return to_iso(now)


@dataclass(frozen=True)
class ImportPreview:
    """What importing a file would change, worked out before anything is written."""

    # ('add' | 'update', record, current), then ('secret', …) for each line refused because it
    # holds a secret
    changes: list[tuple[str, dict[str, Any], Memory | None]]
    counts: dict[str, int]  # how many records would be added, updated, or are the same
    added_chars: int  # characters the changes add (negative when they shorten memories)
    fits: bool  # False when the result would break the caps (then nothing is imported)


def _after_last(records: list[dict[str, Any]]) -> str:
    """Now, or a millisecond after the newest memory when it was made in this same instant:
    two memories added within one millisecond keep their order by ``createdAt`` (a restored
    one goes back between the same neighbours). A newest one far ahead (another clock, an
    import) is left alone."""
    stamp = now_iso()
    if records:
        now, last = parse_ts(stamp), parse_ts(records[-1].get("createdAt"))
        if timedelta(0) <= last - now < timedelta(seconds=1):
            return to_iso(last + timedelta(milliseconds=1))
    return stamp


def _aware(moment: datetime) -> datetime:
    """``moment`` with a timezone (a naive one is UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _entry_ms(entry: dict[str, Any]) -> int:
    """A history entry's time in Unix milliseconds (0 when it has none that parses)."""
    try:
        return int(parse_ts(entry.get("ts")).timestamp() * 1000)
    except (TypeError, ValueError, OverflowError):
        return 0
