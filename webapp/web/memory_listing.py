"""One page of the memory list: filter, sort, paginate and highlight, from cached views.

The sorted, case-folded copy of the list is built once per version of the file
(``JsonFile.view``), so a request does one pass of substring checks over it at most and
renders only the rows of its page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flask_babel import lazy_gettext as _l
from markupsafe import Markup, escape

from ..stores import CATEGORIES, Memory, MemoryStore
from ..text import fold, match_spans, matches_all, search_terms
from .pagination import PAGE_SIZE, paginate

__all__ = [
    "PAGE_SIZE",
    "SORTS",
    "Listing",
    "build_listing",
    "date_column",
    "highlight",
    "usage_of",
]

SORTS = {
    "newest": _l("Newest first (created)"),
    "oldest": _l("Oldest first (created)"),
    "updated": _l("Recently updated"),
    "alpha": _l("A–Z"),
}
DEFAULT_SORT = "newest"
BY_CREATION = ("newest", "oldest")


def date_column(sort: str | None) -> str:
    """The date the list shows: "created" when it is sorted by creation (the default), else
    "updated" (sorted by the last change, or A–Z)."""
    return "created" if (sort if sort in SORTS else DEFAULT_SORT) in BY_CREATION else "updated"


WARN_RATIO = 0.9
MAX_CACHED_SEARCHES = 64  # per file version and sort order


@dataclass
class Listing:
    """What the rows partial renders."""

    memories: list[Memory]  # the rows of this page only
    total: int  # how many match the filters (all pages)
    store_total: int  # how many the store holds (to tell "empty" from "no match")
    page: int  # 1-based, clamped to the pages that exist
    pages: int  # at least 1
    query: str  # the search text as typed (stripped)
    category: str  # "" for every category
    sort: str  # a key of SORTS
    args: dict[str, str] = field(default_factory=dict)  # the filters, for pager links

    first: int = 0  # 1-based number of the first row shown (0 when none)
    last: int = 0  # and of the last one

    @property
    def date_column(self) -> str:
        """The date the rows show, "created" or "updated": the one the list is sorted by."""
        return date_column(self.sort)

    @property
    def sort_label(self) -> str:
        """The order as the Sort menu names it, e.g. "Newest first (created)"."""
        return str(SORTS.get(self.sort, self.sort))


def _sort_key(sort: str):
    """Key over (position in the file, folded content, memory); ties keep creation order."""
    if sort == "alpha":
        return (lambda row: (row[1], row[0])), False
    if sort == "updated":
        return (lambda row: (row[2].updated_at, row[0])), True
    if sort == "oldest":
        return (lambda row: (row[2].created_at, row[0])), False
    return (lambda row: (row[2].created_at, row[0])), True


def sorted_folded(store: MemoryStore, sort: str) -> tuple[tuple[str, Memory], ...]:
    """(folded content, memory) in ``sort`` order, cached until the file changes."""

    def build(records: list[dict[str, Any]]) -> tuple[tuple[str, Memory], ...]:
        key, reverse = _sort_key(sort)
        rows = [(i, fold(m.content), m) for i, m in enumerate(map(Memory.from_dict, records))]
        return tuple(
            (folded, memory) for _, folded, memory in sorted(rows, key=key, reverse=reverse)
        )

    return store.file.view(f"web.sorted.{sort}", build)


def build_listing(
    store: MemoryStore, *, query: str = "", category: str = "", sort: str = "", page: Any = 1
) -> Listing:
    """The page of memories the filters select."""
    query = (query or "").strip()[:500]
    category = category if category in CATEGORIES else ""
    sort = sort if sort in SORTS else DEFAULT_SORT
    pairs = sorted_folded(store, sort)
    store_total = len(pairs)
    if query or category:
        matches: dict[tuple[str, str], tuple[tuple[str, Memory], ...]] = store.file.view(
            f"web.matches.{sort}", lambda _: {}
        )  # per file version
        key = (fold(query), category)
        found = matches.get(key)
        if found is None:
            terms = search_terms(query)
            found = tuple(
                p
                for p in pairs
                if matches_all(p[0], terms) and (not category or p[1].category == category)
            )
            if len(matches) >= MAX_CACHED_SEARCHES:
                matches.clear()
            matches[key] = found
        pairs = found
    shown = paginate(pairs, page)
    rows = [memory for _, memory in shown.items]
    args = {k: v for k, v in (("q", query), ("category", category), ("sort", sort)) if v}
    return Listing(
        rows,
        shown.total,
        store_total,
        shown.number,
        shown.pages,
        query,
        category,
        sort,
        args,
        first=shown.first,
        last=shown.last,
    )


def highlight(text: str, query: str) -> Markup:
    """``text`` escaped, with every match of every search word (``search_terms``) in <mark>."""
    out: list[Any] = []
    cursor = 0
    for start, end in match_spans(text, search_terms(query)):
        out.append(escape(text[cursor:start]))
        out.append(Markup("<mark>%s</mark>") % text[start:end])
        cursor = end
    out.append(escape(text[cursor:]))
    return Markup("").join(out)


def _totals(records: list[dict[str, Any]]) -> tuple[int, int]:
    return len(records), sum(len(str(r.get("content", ""))) for r in records)


def usage_of(store: MemoryStore) -> dict[str, Any]:
    """Items and characters against the caps, with warn/full flags (totals cached per file)."""
    items, chars = store.file.view("web.usage", _totals)
    usage: dict[str, Any] = {
        "items": items,
        "chars": chars,
        "max_items": store.max_items,
        "max_chars": store.max_chars,
    }
    usage["items_full"] = items >= store.max_items
    usage["chars_full"] = chars >= store.max_chars
    usage["full"] = usage["items_full"] or usage["chars_full"]
    usage["items_warn"] = items >= WARN_RATIO * store.max_items
    usage["chars_warn"] = chars >= WARN_RATIO * store.max_chars
    usage["warn"] = usage["items_warn"] or usage["chars_warn"]
    return usage
