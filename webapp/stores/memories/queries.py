"""Reading memories: every one or one person's, search, one page of a query in an order with
filters, each owner's share, what has expired, and a person's input checked as a write would."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ...text import fold, matches_all, search_terms
from ..records import (
    CATEGORIES,
    Memory,
)
from ..timefmt import LATEST_PLUS
from .file import MemoryFile
from .model import (
    DEFAULT_SORT,
    EXPIRY_FILTERS,
    HOUSEHOLD,
    MAX_CACHED_QUERIES,
    PER_PAGE,
    SORTS,
    MemoryPage,
)


class MemoryQueries(MemoryFile):
    """The reads of ``MemoryStore``."""

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


def _by_expiry(
    pairs: tuple[tuple[str, Memory], ...], expiry: str, now: datetime
) -> tuple[tuple[str, Memory], ...]:
    """The pairs whose memory is expired at ``now``, expiring later, or never ("none")."""

    def keep(memory: Memory) -> bool:
        if memory.expires_at is None:
            return expiry == "none"
        return memory.expired(now) == (expiry == "expired") and expiry != "none"

    return tuple(pair for pair in pairs if keep(pair[1]))


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
