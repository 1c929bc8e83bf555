"""Long-term memory: durable facts and preferences injected into every prompt, capped in size."""

from __future__ import annotations

import os
import re
import secrets
import threading
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import Enum
from operator import itemgetter
from pathlib import Path
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from ..problems import InputError, Problem
from ..sensitive import find_secrets
from ..settings import Settings
from ..text import (
    fold,
    matches_all,
    normalize,
    same_fact_key,
    search_terms,
    strip_ends,
    without_lone_surrogates,
)
from .changes import Changed, Unchanged, Undo
from .document import FileBacked
from .errors import (
    ConflictError,
    DuplicateMemoryError,
    MemoryFullError,
    MemoryTooLongError,
    NotFoundError,
    SecretInputError,
)
from .history import HistoryLog
from .jsonbytes import encode
from .jsonfile import JsonFile
from .jsonparse import MAX_DEPTH, object_depth
from .origin import HOWS, edited_origin, imported_origin, make_origin, read_origin
from .people import check_person_id
from .secret_history import gone_secrets, scrubbed, without_gone_secrets
from .timefmt import (
    EPOCH,
    LATEST_PLUS,
    now_iso,
    parse_ts,
    read_time,
    to_iso,
    unreadable_record_times,
)

CATEGORIES = ("preference", "project", "workflow", "tool", "convention", "general")
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")  # URL-safe, like the ids add() makes
MAX_RECORD_DEPTH = MAX_DEPTH - 2  # a record sits inside the file's array
_KNOWN_KEYS = {"id", "content", "createdAt", "updatedAt", "category", "source"}
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
_NONE_UNREAD: Mapping[str, Any] = MappingProxyType({})
WARN_RATIO = 0.9  # ``usage()`` warns from 90% of a cap
MAX_CACHED_QUERIES = 64  # per file version and order


@dataclass(frozen=True)
class Memory:
    """One remembered fact. ``extra`` holds fields this version does not know; they are kept."""

    id: str
    content: str
    created_at: datetime
    updated_at: datetime
    category: str = "general"
    source: str | None = None
    # Where it came from (see origin.py); None when not recorded or not understood.
    origin: dict[str, Any] | None = field(default=None, compare=False)
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    # The values of "createdAt" / "updatedAt" the file holds that are no usable time (read as
    # the epoch, unknown); ``to_dict`` writes them back as they were, never as 1970.
    unread_times: Mapping[str, Any] = field(
        default_factory=lambda: _NONE_UNREAD, compare=False, repr=False
    )

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> Memory:
        """Read the on-disk camelCase form (ISO or Unix-ms timestamps)."""
        origin = read_origin(record.get("origin"))
        known = _KNOWN_KEYS | {"origin"} if origin is not None else _KNOWN_KEYS
        raw_created = record.get("createdAt")
        raw_updated = record.get("updatedAt", raw_created)
        created, updated = read_time(raw_created), read_time(raw_updated)
        unread: Mapping[str, Any] = _NONE_UNREAD
        if (created is None and raw_created is not None) or (
            updated is None and raw_updated is not None
        ):
            unread = {
                name: value
                for name, value, moment in (
                    ("createdAt", raw_created, created),
                    ("updatedAt", raw_updated, updated),
                )
                if moment is None and value is not None
            }
        return cls(
            id=str(record.get("id", "")),
            content=str(record.get("content", "")),
            created_at=EPOCH if created is None else created,
            updated_at=EPOCH if updated is None else updated,
            category=str(record.get("category") or "general"),
            source=record.get("source"),
            origin=origin,
            extra={k: v for k, v in record.items() if k not in known},
            unread_times=unread,
        )

    def to_dict(self) -> dict[str, Any]:
        """The on-disk camelCase form."""
        record: dict[str, Any] = dict(self.extra)
        record.update(
            id=self.id,
            content=self.content,
            createdAt=to_iso(self.created_at),
            updatedAt=to_iso(self.updated_at),
            category=self.category,
        )
        record.update(self.unread_times)  # as the file held them: an unknown time is no 1970
        if self.source is not None:
            record["source"] = self.source
        if self.origin is not None:
            record["origin"] = dict(self.origin)
        return record

    @property
    def version(self) -> str:
        """A token for optimistic concurrency: the stored ``updatedAt`` in ISO form."""
        return to_iso(self.updated_at)

    @property
    def person(self) -> str | None:
        """Whose memory this is (the record's optional "person"); None: the household's."""
        value = self.extra.get("person")
        return value if isinstance(value, str) and value else None

    @property
    def expires_at(self) -> datetime | None:
        """When the fact stops being true (the record's optional "expiresAt"); None: never.
        A value that is no readable time counts as never, so no memory drops out of the
        prompt over a field another program wrote (``repair`` reports it)."""
        return read_time(self.extra.get("expiresAt"))

    def expired(self, now: datetime | None = None) -> bool:
        """Whether ``expires_at`` has passed at ``now`` (default: the current time)."""
        expires = self.expires_at
        return expires is not None and expires <= (now or datetime.now(UTC))


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


_R = TypeVar("_R")
_V = TypeVar("_V")


class Keep(Enum):
    """``update``'s default for ``person``: the memory stays whose it is."""

    KEEP = "keep"


KEEP = Keep.KEEP


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


def _blank(char: str) -> bool:
    return char.isspace() or unicodedata.category(char) == "Cf"


def trim_invisible(raw: str) -> str:
    """The text without whitespace or invisible format characters (zero-width space, BOM) at
    either end, so a memory cannot look empty; joiners inside an emoji stay."""
    return strip_ends(raw, _blank)


def clean_content(content: Any) -> str:
    """Trim the content and refuse empty, invisible-only or non-text input with a clear message."""
    if not isinstance(content, str):
        raise InputError("Memory content must be text.", code="content_not_text")
    cleaned = trim_invisible(content)
    if not cleaned:
        raise InputError("Memory content cannot be empty.", code="content_empty")
    if "\x00" in cleaned:
        raise InputError("Memory content cannot contain NUL characters.", code="content_nul")
    if not is_valid_unicode(cleaned):
        raise InputError(
            "Memory content is not valid Unicode text (it has a lone surrogate).",
            code="content_surrogate",
        )
    return cleaned


def check_length(content: str, max_chars: int) -> None:
    """Raise MemoryTooLongError when one fact is longer than the whole store may hold."""
    if len(content) > max_chars:
        raise MemoryTooLongError(len(content), max_chars)


def is_valid_unicode(text: str) -> bool:
    """False for text with lone surrogates, which cannot be written as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_secret(content: str, *, confirmed: bool = False) -> None:
    """Raise SecretInputError when ``content`` holds a secret (a password, a door code, a key,
    a card or account number, a one-time code) and the person has not ``confirmed`` keeping it.

    ``add`` and ``update`` do not check it themselves: every interface asks first (the
    dashboard's forms through ``check_input``, the MCP tool, imports through ``plan_import``),
    and each has its own way to confirm.
    """
    if confirmed:
        return
    finding = find_secrets(content)
    if finding is not None:
        raise SecretInputError(finding.kind, finding.masked, finding.fact)


def check_category(category: Any) -> str:
    """Return the category or raise ValueError naming the allowed ones."""
    if category is None or category == "":
        return "general"
    if category not in CATEGORIES:
        raise InputError(
            f"Unknown category {category!r}; use one of: {', '.join(CATEGORIES)}.",
            code="unknown_category",
            category=category,
            categories=CATEGORIES,
        )
    return str(category)


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


class MemoryStore(FileBacked):
    """The long-term memory file (a JSON array), safe for several processes at once.

    Build it with ``MemoryStore.from_settings(settings)``. The constructor reads the environment
    only when it is given no ``path`` (then everything comes from ``Settings.from_env()``); with a
    path it uses what it is given and the documented defaults for the rest.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        max_items: int | None = None,
        max_chars: int | None = None,
        actor: str = "library",
        lock_timeout: float | None = None,
    ) -> None:
        settings = Settings.from_env() if path is None else Settings()
        self.path = Path(path) if path is not None else settings.memory_file
        self.max_items = max_items if max_items is not None else settings.memory_max_items
        self.max_chars = max_chars if max_chars is not None else settings.memory_max_chars
        self.actor = actor
        timeout = lock_timeout if lock_timeout is not None else settings.lock_timeout
        self._history = HistoryLog(self.path)
        self._secrets_gone = threading.local()  # set by _append when a change took one out
        self._file = JsonFile(
            self.path,
            default=list,
            validate=_validate_records,
            item_problem=record_problem,
            replay=self._replay,
            lock_timeout=timeout,
            # Mutations replace a record they change (copy on write), so a write can share,
            # and neither re-encode nor re-validate, every record it leaves alone.
            copy=list,
            validate_item=_check_new_record,
            unreadable_times=_unreadable_times,
        )
        self._deleted_cache: (
            tuple[list[dict[str, Any]], dict[str, Memory], list[DeletedMemory]] | None
        ) = None

    @classmethod
    def from_settings(cls, settings: Settings, *, actor: str = "library") -> MemoryStore:
        """The memory store ``settings`` describe: its file, caps and lock timeout."""
        return cls(
            settings.memory_file,
            max_items=settings.memory_max_items,
            max_chars=settings.memory_max_chars,
            actor=actor,
            lock_timeout=settings.lock_timeout,
        )

    @property
    def history_path(self) -> Path:
        return self._history.path

    def _replay(self, records: list[dict[str, Any]], since_ns: int | None) -> int:
        """For ``repair``: re-apply the history entries newer than ``since_ns`` (all when None)."""
        entries = self._history.read()
        if since_ns is not None:
            since = since_ns // 1_000_000
            entries = [e for e in entries if _entry_ms(e) >= since]
        return replay_history(records, entries)

    def init(self) -> MemoryStore:
        """Create the folder and an empty file if missing; fail loudly if the file is damaged."""
        self._file.ensure()
        return self

    # ----------------------------------------------------------------- reading
    def get_all(self, *, person: str | None = None) -> list[Memory]:
        """Every memory, in creation order; with ``person``, that person's and the
        household's (those naming no person) only."""
        if person is None:
            return list(self._memories())
        return [m for m in self._memories() if m.person in (None, person)]

    def for_person(self, person_id: str | None) -> list[Memory]:
        """What one person's prompt gets, in creation order: the household's memories and
        their own, never another person's. An unknown speaker (None, an id no memory names)
        gets the household's only."""
        return [m for m in self._memories() if m.person is None or m.person == person_id]

    def _memories(self) -> tuple[Memory, ...]:
        return self._file.view("memories", lambda data: tuple(Memory.from_dict(r) for r in data))

    def _index(self) -> dict[str, Memory]:
        return self._file.view(
            "by_id", lambda data: {str(r["id"]): Memory.from_dict(r) for r in data}
        )

    def _folded(self) -> tuple[tuple[str, Memory], ...]:
        return self._file.view(
            "folded", lambda data: tuple((fold(m.content), m) for m in map(Memory.from_dict, data))
        )

    def contents(self) -> dict[str, str]:
        """Each memory's id and text, cached until the file changes (quick: builds no Memory
        objects). Shared between callers: do not change it."""
        return self._file.view(
            "contents", lambda data: {str(r.get("id")): str(r.get("content", "")) for r in data}
        )

    def get(self, memory_id: str) -> Memory | None:
        """The memory with that id, or None."""
        return self._index().get(memory_id)

    def search(self, keyword: str, *, person: str | None = None) -> list[Memory]:
        """Memories that contain every word of ``keyword``, in any order (``search_terms``), in
        the file's order; with ``person``, only that person's and the household's.

        Case, width and traditional/simplified Chinese are ignored; an empty search finds all.
        """
        return [memory for _, memory in self._matching(keyword or "", None, person, None)]

    def query(
        self,
        q: str = "",
        *,
        category: str | None = None,
        person: str | None = None,
        sort: str = DEFAULT_SORT,
        page: int = 1,
        per_page: int | None = PER_PAGE,
        whose: str | None = None,
        expiry: str | None = None,
        now: datetime | None = None,
    ) -> MemoryPage:
        """One page of the memories that match, in ``sort`` order, with the totals.

        ``q`` matches as ``search`` does (every word, any order, case, width and 繁/简
        ignored); ``category`` keeps one category (None or "" for all); ``person`` keeps that
        person's memories and the household's (those naming no person), None keeps every
        memory; ``whose`` keeps one owner's only: "household" the household's, a person's id
        theirs alone (the Memories page's filter). ``sort`` is one of ``SORTS``: "newest" or "oldest" (by creation), "updated"
        (last change first) or "alpha" (A–Z). ``page`` is 1-based and clamped to the pages that
        exist; ``per_page`` None puts every match on one page. The sorted list and each
        query's matches are cached until the file changes. ``expiry`` (one of
        ``EXPIRY_FILTERS``, judged at ``now``, default the current time) keeps the expired
        memories, those expiring later, or those that never expire. ValueError for an unknown
        sort, category or expiry filter, or a ``per_page`` below 1.
        """
        if sort not in SORTS:
            raise ValueError(f"Unknown sort {sort!r}; use one of: {', '.join(SORTS)}.")
        if category and category not in CATEGORIES:
            raise ValueError(f"Unknown category {category!r}; use one of: {', '.join(CATEGORIES)}.")
        if per_page is not None and per_page < 1:
            raise ValueError("per_page must be at least 1 (or None for every match).")
        if expiry and expiry not in EXPIRY_FILTERS:
            raise ValueError(
                f"Unknown expiry filter {expiry!r}; use one of: {', '.join(EXPIRY_FILTERS)}."
            )
        found = self._matching(q or "", category or None, person, sort)
        if whose is not None:
            owner = None if whose == HOUSEHOLD else whose
            found = tuple(pair for pair in found if pair[1].person == owner)
        if expiry:
            found = _by_expiry(found, expiry, now or datetime.now(UTC))
        size = per_page or max(1, len(found))
        pages = max(1, -(-len(found) // size))
        number = min(max(1, page), pages)
        start = (number - 1) * size
        items = [memory for _, memory in found[start : start + size]]
        return MemoryPage(items, len(found), len(self._folded()), number, pages, per_page)

    def _in_order(self, sort: str | None) -> tuple[tuple[str, Memory], ...]:
        """(folded content, memory) in ``sort`` order (the file's for None), per file version."""
        if sort is None:
            return self._folded()

        def build(_data: Any) -> tuple[tuple[str, Memory], ...]:
            key, reverse = _sort_key(sort)
            rows = sorted(enumerate(self._folded()), key=key, reverse=reverse)
            return tuple(pair for _, pair in rows)

        return self._file.view(f"sorted.{sort}", build)

    def _matching(
        self, q: str, category: str | None, person: str | None, sort: str | None
    ) -> tuple[tuple[str, Memory], ...]:
        """The (folded content, memory) pairs of ``_in_order(sort)`` the filters keep: the one
        place search and query match; each filter's result is cached per file version."""
        pairs = self._in_order(sort)
        if not (q.strip() or category or person is not None):
            return pairs
        cache: dict[tuple[str, str | None, str | None], tuple[tuple[str, Memory], ...]]
        cache = self._file.view(f"matches.{sort}", lambda _data: {})
        key = (fold(q), category, person)
        found = cache.get(key)
        if found is None:
            terms = search_terms(q)
            found = tuple(
                (folded, memory)
                for folded, memory in pairs
                if matches_all(folded, terms)
                and (category is None or memory.category == category)
                and (person is None or memory.person in (None, person))
            )
            if len(cache) >= MAX_CACHED_QUERIES:
                cache.clear()
            cache[key] = found
        return found

    def owners(self) -> dict[str | None, tuple[int, int]]:
        """How many memories, and characters, each owner holds: None for the household's,
        else a person's id (cached until the file changes). Caps stay per store; this is
        each one's share of them."""

        def build(_data: Any) -> dict[str | None, tuple[int, int]]:
            shares: dict[str | None, tuple[int, int]] = {}
            for memory in self._memories():
                items, chars = shares.get(memory.person, (0, 0))
                shares[memory.person] = (items + 1, chars + len(memory.content))
            return shares

        return dict(self._file.view("owners", build))

    def active(self, now: datetime | None = None) -> list[Memory]:
        """The memories not expired at ``now`` (default: the current time), in the file's
        order: what a prompt carries. Expired ones stay in the file until a person deletes
        or extends them."""
        moment = now or datetime.now(UTC)
        return [memory for memory in self._memories() if not memory.expired(moment)]

    def expired(self, now: datetime | None = None) -> list[Memory]:
        """The memories whose ``expiresAt`` has passed at ``now``, soonest expired first."""
        moment = now or datetime.now(UTC)
        found = [memory for memory in self._memories() if memory.expired(moment)]
        return sorted(found, key=lambda memory: memory.expires_at or moment)

    def set_expiry(
        self,
        memory_id: str,
        expires_at: datetime | None,
        *,
        expected_updated_at: Any = None,
        actor: str | None = None,
    ) -> Memory | None:
        """Set when a memory stops being true (None: never, which removes ``expiresAt``);
        None when the id is unknown. Logged like every change, so it can be undone; with
        ``expected_updated_at``, ConflictError if someone changed the memory meanwhile."""
        wanted = None if expires_at is None else to_iso(_aware(expires_at))

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[_Written[dict[str, Any]]] | Unchanged[_Written[dict[str, Any]] | None]:
            index = _index_to_change(records, memory_id, expected_updated_at)
            if index is None:
                return Unchanged(None)
            record = records[index]
            if record.get("expiresAt") == wanted:
                return Unchanged(_Written(record))
            before = record
            record = records[index] = dict(record)
            if wanted is None:
                record.pop("expiresAt", None)
            else:
                record["expiresAt"] = wanted
            record["updatedAt"] = _later_than(record.get("updatedAt"))
            return Changed(_Written(record, (_Step("update", before, dict(record)),)))

        written = self._write(mutate, self._journal(actor))
        return None if written is None else Memory.from_dict(written.answer)

    def stats(self) -> dict[str, int]:
        """Items and characters used, and the caps."""
        items, chars = self._file.view("totals", _totals)
        return {
            "items": items,
            "chars": chars,
            "max_items": self.max_items,
            "max_chars": self.max_chars,
        }

    def usage(self) -> MemoryUsage:
        """``stats`` with flags: full (a cap is reached) and warn (90% of a cap), per cap."""
        used = self.stats()
        return MemoryUsage(used["items"], used["chars"], self.max_items, self.max_chars)

    def history(self, memory_id: str | None = None) -> list[dict[str, Any]]:
        """The change log (oldest first), optionally for one memory."""
        return self._history.read(memory_id)

    def change(self, hid: str) -> dict[str, Any] | None:
        """The history entry ``hid`` (its ``before`` and ``after`` records), or None."""
        return self._history.find(hid)

    def deleted(self, memory_id: str) -> Memory | None:
        """The last state of a memory that is deleted now (from the history log), else None."""
        if self.get(memory_id) is not None:
            return None
        entry = self._last_deletion(memory_id)
        before = entry.get("before") if entry else None
        try:
            return Memory.from_dict(before) if isinstance(before, dict) else None
        except (KeyError, TypeError, ValueError):
            return None

    def _last_deletion(self, memory_id: str) -> dict[str, Any] | None:
        deletions = [e for e in self._history.read(memory_id) if e.get("action") == "delete"]
        return deletions[-1] if deletions else None

    def check_input(
        self, content: Any, category: Any, *, confirm_secret: bool = False
    ) -> tuple[str, str, dict[str, str]]:
        """What a person typed, as ``add`` and ``update`` would store it, and a message per
        field (``content``, ``category``) they would refuse; a text longer than the whole store
        may hold is refused here, before it reaches the caps, and one that holds a secret
        unless ``confirm_secret`` (``check_secret``)."""
        errors: dict[str, str] = {}
        cleaned = trim_invisible(content) if isinstance(content, str) else ""
        try:
            cleaned = clean_content(content)
        except InputError as exc:
            errors["content"] = Problem(exc)
        else:
            try:
                check_length(cleaned, self.max_chars)
                check_secret(cleaned, confirmed=confirm_secret)
            except (MemoryTooLongError, SecretInputError) as exc:  # (as a review approval says)
                errors["content"] = Problem(exc)
        try:
            checked = check_category(category)
        except InputError as exc:
            errors["category"] = Problem(exc)
            checked = str(category)
        return cleaned, checked, errors

    def recently_deleted(self) -> list[DeletedMemory]:
        """Deleted memories the history log can bring back, most recently deleted first.

        A memory counts when its last history entry is a deletion and it is not in the store;
        a purged memory has no entries left, so it is not listed.
        """
        entries = self._history.entries()
        present = self._index()
        cached = self._deleted_cache
        # Both are cached per file version; holding them keeps the identity test sound.
        if cached is not None and cached[0] is entries and cached[1] is present:
            return list(cached[2])
        found = _deleted_from(entries, present)
        self._deleted_cache = (entries, present, found)
        return list(found)

    # ----------------------------------------------------------------- writing
    def _check_caps(
        self, records: list[dict[str, Any]], added_items: int, added_chars: int
    ) -> None:
        items = len(records)
        chars = sum(map(len, map(_CONTENT, records)))  # validated: every record has its text
        if added_items and items + added_items > self.max_items:
            raise self._full(
                f"The memory store is full: {items} of {self.max_items} memories are used. "
                f"Delete or update a memory before adding another.",
                items,
                chars,
                code="memory_full",
            )
        if added_chars > 0 and chars + added_chars > self.max_chars:
            raise self._full(
                f"The memory store is full: {chars} of {self.max_chars} characters are used and "
                f"this needs {added_chars} more. Shorten, delete or update memories first.",
                items,
                chars,
                code="memory_full_chars",
                needed=added_chars,
            )

    def _full(
        self, message: str, items: int, chars: int, *, code: str, needed: int = 0
    ) -> MemoryFullError:
        return MemoryFullError(
            message,
            items=items,
            max_items=self.max_items,
            chars=chars,
            max_chars=self.max_chars,
            needed=needed,
            code=code,
        )

    def _append(self, entries: list[dict[str, Any]]) -> Callable[[], None]:
        """Append ``entries`` to the history log (under the lock). When their change takes a
        secret out of its memories (rewritten without it, deleted, merged away), the secret
        goes from the log too: masked in every entry of those memories, the new ones included."""
        gone = gone_secrets(entries)
        if gone:
            ids = {entry.get("id") for entry in entries}
            self._history.rewrite_each(
                lambda entry: scrubbed(entry, gone) if entry.get("id") in ids else entry
            )
            entries[:] = [scrubbed(entry, gone) for entry in entries]
            self._secrets_gone.now = True
        return self._history.append(entries)

    def _write(
        self,
        mutate: Callable[[Any], Changed[_R] | Unchanged[_V]],
        journal: Callable[[_R], Undo | None],
    ) -> _R | _V:
        """``JsonFile.update``; when the change took a secret out of memory, the backup
        (the file as it was) is made a copy of the file as it is now."""
        self._secrets_gone.now = False
        result = self._file.update(mutate, journal)
        if self._secrets_gone.now:
            self._secrets_gone.now = False
            with self._file.locked():
                self._file.refresh_backup()
        return result

    def _journal(self, actor: str | None) -> Callable[[_Written[Any]], Undo]:
        """The history log's entries for a write's steps, written before the file is replaced."""

        def journal(written: _Written[Any]) -> Undo:
            return self._append(self._entries(actor, written.steps))

        return journal

    def _entries(self, actor: str | None, steps: Iterable[_Step]) -> list[dict[str, Any]]:
        who = actor or self.actor
        return [HistoryLog.entry(who, s.action, s.memory_id, s.before, s.after) for s in steps]

    def add(
        self,
        content: str,
        *,
        category: str = "general",
        source: str | None = None,
        actor: str | None = None,
        allow_duplicate: bool = True,
        origin: dict[str, Any] | None = None,
        person: str | None = None,
        expires_at: datetime | None = None,
    ) -> Memory:
        """Remember a new fact; raises ValueError for empty content, MemoryFullError at the caps.

        ``person`` (a person's id, see people.py) makes it that person's; without it, it is the
        household's. A duplicate is looked for within that person's view (their own and the
        household's): two people may each hold the same fact.

        ``expires_at``: when the fact stops being true (stored as ``expiresAt``); None: never.

        ``origin`` (see origin.py) records where it came from; without it a ``source`` that
        names a way of making memories ("dashboard", "mcp", …) becomes a plain origin.

        With ``allow_duplicate=False`` a fact already stored (the same text up to case, width,
        Chinese script, spacing and punctuation at the ends: ``same_fact_key``) raises
        DuplicateMemoryError instead — checked under the lock, so a
        form submitted twice or a retried tool call adds it once.
        """
        content = clean_content(content)
        category = check_category(category)
        if person is not None:
            person = check_person_id(person)
        wanted = same_fact_key(content)
        if origin is None and source in HOWS:
            origin = make_origin(str(source))

        def mutate(records: list[dict[str, Any]]) -> Changed[_Written[dict[str, Any]]]:
            if not allow_duplicate:
                same = next(
                    (
                        r
                        for r in records
                        if same_fact_key(str(r.get("content", ""))) == wanted
                        and _in_view(r, person)
                    ),
                    None,
                )
                if same is not None:
                    raise DuplicateMemoryError(Memory.from_dict(same))
            self._check_caps(records, 1, len(content))
            taken = set(map(_ID, records))
            memory_id = secrets.token_hex(6)
            while memory_id in taken:
                memory_id = secrets.token_hex(6)
            stamp = _after_last(records)
            record: dict[str, Any] = {
                "id": memory_id,
                "content": content,
                "createdAt": stamp,
                "updatedAt": stamp,
                "category": category,
            }
            if source is not None:
                record["source"] = source
            if origin is not None:
                record["origin"] = dict(origin)
            if person is not None:
                record["person"] = person
            if expires_at is not None:
                record["expiresAt"] = to_iso(_aware(expires_at))
            records.append(record)
            return Changed(_Written(record, (_Step("add", None, record),)))

        return Memory.from_dict(self._write(mutate, self._journal(actor)).answer)

    def update(
        self,
        memory_id: str,
        content: str,
        *,
        expected_updated_at: Any = None,
        category: str | None = None,
        actor: str | None = None,
        origin: dict[str, Any] | None = None,
        person: str | None | Keep = KEEP,
    ) -> Memory | None:
        """Change a memory's content (and optionally category); None when the id is unknown.

        ``person`` moves it to that person (a person's id) or, with None, to the household;
        left out, it stays whose it is.

        With ``expected_updated_at``, raise ConflictError if someone changed it meanwhile.
        With ``origin`` the change also records where the new content came from (an approved
        ``update`` proposal); otherwise the memory keeps its origin, which says who changed the
        words and when (``editedBy``, ``editedAt``) when the content changes.
        """
        content = clean_content(content)
        if category is not None:
            category = check_category(category)
        if isinstance(person, str):
            person = check_person_id(person)

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[_Written[dict[str, Any]]] | Unchanged[_Written[dict[str, Any]] | None]:
            index = _index_to_change(records, memory_id, expected_updated_at)
            if index is None:
                return Unchanged(None)
            record = records[index]
            new_category = category or record.get("category") or "general"
            new_person = record.get("person") if isinstance(person, Keep) else person
            if (
                record.get("content") == content
                and record.get("category", "general") == new_category
                and record.get("person") == new_person
            ):
                return Unchanged(_Written(record))
            growth = len(content) - len(record.get("content", ""))
            self._check_caps(records, 0, growth)
            before = record
            record = records[index] = dict(record)
            record.update(
                content=content,
                category=new_category,
                updatedAt=_later_than(record.get("updatedAt")),
            )
            if new_person is None:
                record.pop("person", None)
            else:
                record["person"] = new_person
            if origin is not None:
                record["origin"] = dict(origin)
            elif before.get("content") != content:
                edited = edited_origin(
                    before.get("origin"), actor or self.actor, record["updatedAt"]
                )
                if edited is not None:
                    record["origin"] = edited
            return Changed(_Written(record, (_Step("update", before, dict(record)),)))

        written = self._write(mutate, self._journal(actor))
        return None if written is None else Memory.from_dict(written.answer)

    def delete(self, memory_id: str, *, actor: str | None = None) -> bool:
        """Forget a memory (it stays in the history log until purged); False if unknown."""
        return self.delete_many([memory_id], actor=actor) == 1

    def delete_many(self, memory_ids: Iterable[str], *, actor: str | None = None) -> int:
        """Forget several memories in one write; returns how many existed."""
        wanted = set(memory_ids)

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[_Written[int]] | Unchanged[_Written[int]]:
            removed = [r for r in records if r.get("id") in wanted]
            if not removed:
                return Unchanged(_Written(0))
            records[:] = [r for r in records if r.get("id") not in wanted]
            return Changed(_Written(len(removed), tuple(_Step("delete", r, None) for r in removed)))

        return self._write(mutate, self._journal(actor)).answer

    def delete_unchanged(
        self, seen: Mapping[str, Memory | str], *, actor: str | None = None
    ) -> Deletion:
        """Forget each memory of ``seen`` (id → the Memory as the caller saw it, or its
        ``version``) in one write, but only while it is still so: one changed since (by another
        process, a tab, the MCP server) is left alone and returned in ``left_alone``. Checked
        under the lock, so a change that was confirmed to its author is never deleted unseen."""

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[_Written[Deletion]] | Unchanged[_Written[Deletion]]:
            removed: list[dict[str, Any]] = []
            changed: list[dict[str, Any]] = []
            for record in records:
                wanted = seen.get(str(record.get("id")))
                if wanted is not None:
                    (removed if _still_as_seen(record, wanted) else changed).append(record)
            deletion = Deletion(
                [str(r["id"]) for r in removed], [Memory.from_dict(r) for r in changed]
            )
            if not removed:
                return Unchanged(_Written(deletion))
            gone = {id(r) for r in removed}
            records[:] = [r for r in records if id(r) not in gone]
            return Changed(_Written(deletion, tuple(_Step("delete", r, None) for r in removed)))

        return self._write(mutate, self._journal(actor)).answer

    def merge(
        self,
        keep_id: str,
        drop_id: str,
        content: str,
        *,
        actor: str | None = None,
        expected: Mapping[str, str] | None = None,
    ) -> MergeResult:
        """Keep ``keep_id`` with ``content`` and delete ``drop_id``, in one write.

        Both changes are in the history log (an ``update`` when the kept text changes, and a
        ``delete``), so ``undo_merge`` or ``restore`` bring both back. NotFoundError when
        either memory is gone, ValueError for one memory merged with itself or empty text.
        ``expected`` maps a memory's id to its version as the caller showed it: ConflictError
        (with ``current``) when either changed since, and nothing is written.
        """
        content = clean_content(content)
        if keep_id == drop_id:
            raise InputError("Choose two different memories to merge.", code="merge_same")

        def mutate(records: list[dict[str, Any]]) -> Changed[_Written[dict[str, Any]]]:
            by_id = {r.get("id"): r for r in records}
            keep, drop = by_id.get(keep_id), by_id.get(drop_id)
            if keep is None or drop is None:
                missing = keep_id if keep is None else drop_id
                raise NotFoundError(
                    f"The memory {missing!r} is gone: it was deleted elsewhere.",
                    code="memory_gone",
                    id=repr(missing),
                )
            for record in (keep, drop):
                seen = (expected or {}).get(str(record.get("id")))
                if seen and not _still_as_seen(record, seen):
                    raise ConflictError(Memory.from_dict(record))
            growth = len(content) - len(keep.get("content", "")) - len(drop.get("content", ""))
            self._check_caps(records, 0, growth)
            steps: list[_Step] = []
            if keep.get("content") != content:
                # A new dict, never the cached one changed in place: the file write reuses the
                # encoded line of every record it has seen before (one changed in place is
                # caught, and then every record is encoded again: see JsonFile.update).
                before, keep = keep, dict(keep)
                keep.update(content=content, updatedAt=_later_than(keep.get("updatedAt")))
                edited = edited_origin(before.get("origin"), actor or self.actor, keep["updatedAt"])
                if edited is not None:
                    keep["origin"] = edited
                records[records.index(before)] = keep
                steps.append(_Step("update", before, dict(keep)))
            records[:] = [r for r in records if r.get("id") != drop_id]
            steps.append(_Step("delete", drop, None))
            return Changed(_Written(dict(keep), tuple(steps)))

        entries: list[dict[str, Any]] = []

        def journal(written: _Written[dict[str, Any]]) -> Undo:
            entries[:] = self._entries(actor, written.steps)
            return self._append(entries)

        kept = self._write(mutate, journal).answer
        update = next((e["hid"] for e in entries if e["action"] == "update"), None)
        return MergeResult(Memory.from_dict(kept), drop_id, update)

    def undo_merge(
        self, dropped_id: str, update_hid: str | None = None, *, actor: str | None = None
    ) -> list[Memory]:
        """Undo ``merge``: bring back the deleted memory and (with the ``update_hid`` of its
        MergeResult) the kept one's earlier text. KeyError when there is nothing to restore."""
        restored = [self.restore(dropped_id, actor=actor)]
        if update_hid:
            restored.insert(0, self.restore(update_hid, actor=actor))
        return restored

    def restore(
        self, ref: str, *, actor: str | None = None, expected: Memory | str | None = None
    ) -> Memory:
        """Bring back a deleted memory (by its id) or the state before a history entry (by its hid).

        Undoing a deletion (by id) never overwrites the memory when it is back already: it is
        returned as it is now, whatever it says. With ``expected`` (the memory as the caller
        saw it, or its ``version``) the earlier state is put back only while the memory is
        still so: ConflictError (with ``current``) when it changed since, NotFoundError
        (``memory_gone``) when it was deleted since. Raises KeyError when there is nothing to
        restore, MemoryFullError at the caps.
        """
        entry = self._history.find(ref)
        undelete = entry is None
        if entry is None:
            entry = self._last_deletion(ref)
            if entry is None:
                raise KeyError(f"Nothing to restore for {ref!r}: no such memory was deleted.")
        target = entry.get("before")
        if not isinstance(target, dict) or "id" not in target:
            raise KeyError(f"History entry {ref!r} created the memory; there is no earlier state.")

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[_Written[dict[str, Any]]] | Unchanged[_Written[dict[str, Any]]]:
            for index, record in enumerate(records):
                if record.get("id") == target["id"]:
                    # Never a secret the memory no longer holds: its words come back masked.
                    earlier = without_gone_secrets(target, record)
                    if expected is not None and not _still_as_seen(record, expected):
                        raise ConflictError(Memory.from_dict(record))
                    if undelete or (
                        record.get("content") == earlier.get("content")
                        and record.get("category") == earlier.get("category")
                        and record.get("person") == earlier.get("person")
                    ):
                        return Unchanged(_Written(record))
                    self._check_caps(records, 0, len(target["content"]) - len(record["content"]))
                    before = record
                    record = records[index] = dict(record)
                    record.update(
                        content=earlier["content"],
                        category=earlier.get("category", "general"),
                        updatedAt=_later_than(record.get("updatedAt")),
                    )
                    if earlier.get("person") is None:  # whose it was comes back too
                        record.pop("person", None)
                    else:
                        record["person"] = target["person"]
                    # Where the text came from comes back with it.
                    if isinstance(earlier.get("origin"), dict):
                        record["origin"] = dict(earlier["origin"])
                    else:
                        record.pop("origin", None)
                    return Changed(_Written(record, (_Step("restore", before, dict(record)),)))
            if expected is not None:
                raise NotFoundError(
                    f"The memory {target['id']!r} is gone: it was deleted elsewhere.",
                    code="memory_gone",
                    id=repr(target["id"]),
                )
            self._check_caps(records, 1, len(target.get("content", "")))
            restored = dict(without_gone_secrets(target, None))
            if "origin" not in restored:
                restored["origin"] = make_origin("restored", by=actor or self.actor, at=now_iso())
            created = parse_ts(restored.get("createdAt"))
            position = next(
                (i for i, r in enumerate(records) if parse_ts(r.get("createdAt")) > created),
                len(records),
            )
            records.insert(position, restored)
            return Changed(_Written(restored, (_Step("restore", None, restored),)))

        return Memory.from_dict(self._write(mutate, self._journal(actor)).answer)

    def purge(self, memory_id: str, *, actor: str | None = None) -> bool:
        """Delete a memory for good: it and every history entry about it are removed."""
        self.delete(memory_id, actor=actor)
        with self._file.locked():
            self._file.refresh_backup()
            return self._history.rewrite_without(memory_id) > 0

    def forget_text(
        self, memory_id: str, texts: Iterable[str], *, mask: Callable[[str], str] | None = None
    ) -> int:
        """Delete forever the words of a deleted memory: every history entry of ``memory_id``
        and every other entry whose record before or after held one of ``texts`` (by
        ``normalize``) is removed, and the backup refreshed; how many entries went. With
        ``mask``, the evidence of every other memory (in the file and in the log) is
        rewritten by it (the words said in the same message), without a history entry."""
        keys = {normalize(t) for t in texts} - {""}

        def holds(entry: dict[str, Any]) -> bool:
            if entry.get("id") == memory_id:
                return True
            sides = (entry.get("before"), entry.get("after"))
            return any(
                isinstance(r, dict) and normalize(str(r.get("content", ""))) in keys for r in sides
            )

        with self._file.locked():
            if mask is not None:
                self._file.update(_masking_evidence(mask))
            gone = self._history.rewrite_where(holds)
            if mask is not None:
                self._history.rewrite_each(_masking_entry_evidence(mask))
            self._file.refresh_backup()
            return gone

    def export(self) -> bytes:
        """Every memory as a JSON array in the on-disk form (UTF-8, extra fields kept), for a
        backup or ``import_records``; ``stores.write_atomic`` writes it as the stores do. A
        lone surrogate another program wrote into the file (UTF-8 cannot hold it) is exported
        as U+FFFD."""
        return encode(without_lone_surrogates([m.to_dict() for m in self._memories()]))

    def plan_import(
        self, records: Iterable[dict[str, Any]], *, allow_secrets: bool = False
    ) -> list[tuple[str, dict[str, Any], Memory | None]]:
        """What importing ``records`` would do: ('add' | 'update' | 'same' | 'secret', record,
        current); 'secret' is an add or update refused because its text holds a secret (unless
        ``allow_secrets``)."""
        index = self._index()
        plan: list[tuple[str, dict[str, Any], Memory | None]] = []
        for record in _clean_import(records):
            current = index.get(record["id"])
            if current is not None and (
                current.content == record["content"] and current.category == record["category"]
            ):
                plan.append(("same", record, current))
            elif not allow_secrets and find_secrets(record["content"]) is not None:
                plan.append(("secret", record, current))
            else:
                plan.append(("add" if current is None else "update", record, current))
        return plan

    def preview_import(self, records: Iterable[dict[str, Any]]) -> ImportPreview:
        """``plan_import`` summed up: the changes (and the lines refused for a secret), their
        counts, and whether the result fits (without the refused lines)."""
        plan = self.plan_import(records)
        counts = {
            kind: sum(1 for k, _, _ in plan if k == kind)
            for kind in ("add", "update", "same", "secret")
        }
        changes = [(k, r, c) for k, r, c in plan if k not in ("same", "secret")]
        added_chars = sum(len(r["content"]) - (len(c.content) if c else 0) for _, r, c in changes)
        used = self.stats()
        fits = self._fits(used["items"] + counts["add"], used["chars"] + added_chars)
        refused = [(k, r, c) for k, r, c in plan if k == "secret"]
        return ImportPreview(changes + refused, counts, added_chars, fits)

    def _fits(self, items: int, chars: int) -> bool:
        return items <= self.max_items and chars <= self.max_chars

    def import_records(
        self,
        records: Iterable[dict[str, Any]],
        *,
        actor: str | None = None,
        source: str | None = None,
        allow_secrets: bool = False,
    ) -> dict[str, int]:
        """Add unknown ids and update changed ones in one write; caps apply to the result.

        Added memories record that they were imported (from ``source``, e.g. the file name);
        one that already says where it came from (an export of this program) keeps that.
        A record whose text holds a secret is left out (counted as ``refused``) unless
        ``allow_secrets``; one the store already holds word for word counts as unchanged.
        """
        plan = self.plan_import(records, allow_secrets=allow_secrets)
        refused = sum(1 for kind, _, _ in plan if kind == "secret")
        incoming = [record for kind, record, _ in plan if kind != "secret"]
        who = actor or self.actor
        for record in incoming:
            if read_origin(record.get("origin")) is not None or "origin" not in record:
                record["origin"] = imported_origin(record.get("origin"), source, who)

        def mutate(
            existing: list[dict[str, Any]],
        ) -> Changed[_Written[dict[str, int]]] | Unchanged[_Written[dict[str, int]]]:
            by_id = {r["id"]: r for r in existing}
            position = {r["id"]: i for i, r in enumerate(existing)}
            steps: list[_Step] = []
            counts = {"added": 0, "updated": 0, "unchanged": 0, "refused": refused}
            for record in incoming:
                current = by_id.get(record["id"])
                if current is None:
                    position[record["id"]] = len(existing)
                    existing.append(record)
                    by_id[record["id"]] = record
                    steps.append(_Step("import", None, record))
                    counts["added"] += 1
                elif (
                    current["content"] == record["content"]
                    and current.get("category", "general") == record["category"]
                ):
                    counts["unchanged"] += 1
                else:
                    before = current
                    current = existing[position[record["id"]]] = dict(current)
                    current.update(
                        content=record["content"],
                        category=record["category"],
                        updatedAt=_later_than(current.get("updatedAt")),
                    )
                    steps.append(_Step("import", before, dict(current)))
                    counts["updated"] += 1
            if not steps:
                return Unchanged(_Written(counts))
            items = len(existing)
            chars = sum(len(r["content"]) for r in existing)
            if not self._fits(items, chars):
                raise self._full(
                    f"Importing would leave {items} memories and {chars} characters; the caps are "
                    f"{self.max_items} memories and {self.max_chars} characters. Nothing was imported.",
                    items,
                    chars,
                    code="memory_import_full",
                )
            return Changed(_Written(counts, tuple(steps)))

        return self._write(mutate, self._journal(actor)).answer


def _aware(moment: datetime) -> datetime:
    """``moment`` with a timezone (a naive one is UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _by_expiry(
    pairs: tuple[tuple[str, Memory], ...], expiry: str, now: datetime
) -> tuple[tuple[str, Memory], ...]:
    """The pairs whose memory is expired at ``now``, expiring later, or never ("none")."""

    def keep(memory: Memory) -> bool:
        if memory.expires_at is None:
            return expiry == "none"
        return memory.expired(now) == (expiry == "expired") and expiry != "none"

    return tuple(pair for pair in pairs if keep(pair[1]))


def _totals(records: list[dict[str, Any]]) -> tuple[int, int]:
    """How many records, and their characters of content."""
    return len(records), sum(len(str(r.get("content", ""))) for r in records)


_Row = tuple[int, tuple[str, Memory]]  # (position in the file, (folded content, memory))


def _sort_key(sort: str) -> tuple[Callable[[_Row], Any], bool]:
    """The key over ``_Row`` for ``sort``, and whether it runs backwards; ties keep the file's
    order (backwards too for the newest-first orders)."""
    if sort == "alpha":
        return (lambda row: (row[1][0], row[0])), False
    if sort == "updated":
        return (lambda row: (row[1][1].updated_at, row[0])), True
    if sort == "expires":
        return (lambda row: (row[1][1].expires_at or LATEST_PLUS, row[0])), False
    return (lambda row: (row[1][1].created_at, row[0])), sort == "newest"


def _entry_ms(entry: dict[str, Any]) -> int:
    """A history entry's time in Unix milliseconds (0 when it has none that parses)."""
    try:
        return int(parse_ts(entry.get("ts")).timestamp() * 1000)
    except (TypeError, ValueError, OverflowError):
        return 0


def _deleted_from(entries: list[dict[str, Any]], present: dict[str, Memory]) -> list[DeletedMemory]:
    """The memories whose last history entry is a deletion and that are not in ``present``,
    most recently deleted first (deletions stamped in the same millisecond: the later in the
    log first)."""
    last: dict[str, tuple[int, dict[str, Any]]] = {}
    for position, entry in enumerate(entries):
        record_id = entry.get("id")
        if isinstance(record_id, str):
            last[record_id] = (position, entry)
    found: list[tuple[int, DeletedMemory]] = []
    for record_id, (position, entry) in last.items():
        before = entry.get("before")
        if entry.get("action") != "delete" or record_id in present:
            continue
        if not isinstance(before, dict) or not isinstance(before.get("content"), str):
            continue
        deleted = DeletedMemory(
            memory=Memory.from_dict({**before, "id": record_id}),
            deleted_at=parse_ts(entry.get("ts")),
            deleted_by=str(entry.get("actor") or "unknown"),
            hid=str(entry.get("hid") or ""),
        )
        found.append((position, deleted))
    found.sort(key=lambda pair: (pair[1].deleted_at, pair[0]), reverse=True)
    return [deleted for _, deleted in found]


def _clean_import(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Validate records from an export file; raise ValueError naming the first bad one."""
    if not isinstance(records, list):
        raise InputError(
            "An import file must hold a JSON array of memories.", code="import_not_a_list"
        )
    cleaned: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            raise InputError(
                f"Item {index + 1} is not a memory object.",
                code="import_item_not_object",
                item=index + 1,
            )
        if object_depth(record, MAX_RECORD_DEPTH) > MAX_RECORD_DEPTH:
            raise InputError(
                f"Item {index + 1} is nested too deep (more than {MAX_RECORD_DEPTH} levels of "
                f"lists and objects); a memory is a flat record.",
                code="import_item_too_deep",
                item=index + 1,
                most=MAX_RECORD_DEPTH,
            )
        memory_id = record.get("id") or secrets.token_hex(6)
        if not isinstance(memory_id, str) or not _SAFE_ID.fullmatch(memory_id):
            raise InputError(
                f"Item {index + 1} has an unusable id: ids are 1 to 100 letters, "
                f"digits, '-' or '_'.",
                code="import_item_bad_id",
                item=index + 1,
            )
        if memory_id in seen:
            raise InputError(
                f"Item {index + 1} repeats the id {memory_id!r}.",
                code="import_item_repeated_id",
                item=index + 1,
                id=repr(memory_id),
            )
        seen.add(memory_id)
        try:
            content = clean_content(record.get("content"))
            category = check_category(record.get("category"))
        except InputError as exc:
            raise InputError(
                f"Item {index + 1}: {exc}", code="import_item_problem", item=index + 1, problem=exc
            ) from None
        stamp = now_iso()
        clean = dict(record)
        clean.update(
            id=memory_id,
            content=content,
            category=category,
            # a time the file holds is kept as it is, even one that is no time (read as unknown)
            createdAt=stamp if record.get("createdAt") is None else record["createdAt"],
            updatedAt=stamp if record.get("updatedAt") is None else record["updatedAt"],
        )
        if not clean.get("source"):
            clean["source"] = "import"  # where it came from, shown in the dashboard's list
        cleaned.append(clean)
    return cleaned


def _masked_evidence(record: Any, mask: Callable[[str], str]) -> Any:
    """``record`` with its origin's evidence rewritten by ``mask`` (itself when unchanged)."""
    origin = record.get("origin") if isinstance(record, dict) else None
    if not isinstance(origin, dict) or not isinstance(origin.get("evidence"), str):
        return record
    masked = mask(origin["evidence"])
    if masked == origin["evidence"]:
        return record
    return {**record, "origin": {**origin, "evidence": masked}}


def _masking_evidence(
    mask: Callable[[str], str],
) -> Callable[[list[dict[str, Any]]], Changed[int] | Unchanged[int]]:
    def mutate(records: list[dict[str, Any]]) -> Changed[int] | Unchanged[int]:
        changed = 0
        for index, record in enumerate(records):  # (copy on write: a record is replaced)
            masked = _masked_evidence(record, mask)
            if masked is not record:
                records[index] = masked
                changed += 1
        return Changed(changed) if changed else Unchanged(0)

    return mutate


def _masking_entry_evidence(
    mask: Callable[[str], str],
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def change(entry: dict[str, Any]) -> dict[str, Any]:
        before, after = entry.get("before"), entry.get("after")
        new_before, new_after = _masked_evidence(before, mask), _masked_evidence(after, mask)
        if new_before is before and new_after is after:
            return entry
        return {**entry, "before": new_before, "after": new_after}

    return change
