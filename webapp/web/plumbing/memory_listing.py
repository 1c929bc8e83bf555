"""One page of the memory list as the Memories page shows it: the request's filters, the
library's page of memories (``MemoryStore.query``, cached per file version) and the sort labels
and highlighted matches, which are presentation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flask_babel import lazy_gettext as _l
from markupsafe import Markup, escape

from ...stores import CATEGORIES, Memory
from ...stores.readers import MemoryReader
from ...text import match_spans, search_terms
from .pagination import PAGE_SIZE, page_number

__all__ = [
    "PAGE_SIZE",
    "EXPIRY_FILTERS",
    "SORTS",
    "Listing",
    "build_listing",
    "date_column",
    "highlight",
]

# The library's sort keys (``stores.SORTS``) with the labels the Sort menu shows.
SORTS = {
    "newest": _l("Newest first (created)"),
    "oldest": _l("Oldest first (created)"),
    "updated": _l("Recently updated"),
    "alpha": _l("A–Z"),
    "expires": _l("Expires soonest"),
}
# The library's expiry filters (``stores.EXPIRY_FILTERS``) with the labels the menu shows.
EXPIRY_FILTERS = {
    "expired": _l("Expired"),
    "expiring": _l("Expires later"),
    "none": _l("No expiry"),
}
DEFAULT_SORT = "newest"
BY_CREATION = ("newest", "oldest")


def date_column(sort: str | None) -> str:
    """The date the list shows: "created" when it is sorted by creation (the default), else
    "updated" (sorted by the last change, A–Z or by expiry)."""
    return "created" if (sort if sort in SORTS else DEFAULT_SORT) in BY_CREATION else "updated"


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
    whose: str = ""  # "" everyone's, "household" the household's, else one person's id
    expiry: str = ""  # a key of EXPIRY_FILTERS, "" for every memory

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


def build_listing(
    store: MemoryReader,
    *,
    query: str = "",
    category: str = "",
    sort: str = "",
    page: Any = 1,
    whose: str = "",
    expiry: str = "",
    person: str | None = None,
) -> Listing:
    """The page of memories the request's filters select (unknown values mean "all");
    ``whose`` keeps one owner's: "household", or a person's id; ``person`` is the viewer's
    filter (``curator.people.query_person``: None for everyone's)."""
    query = (query or "").strip()[:500]
    category = category if category in CATEGORIES else ""
    sort = sort if sort in SORTS else DEFAULT_SORT
    whose = (whose or "").strip()[:100]
    expiry = expiry if expiry in EXPIRY_FILTERS else ""
    shown = store.query(
        query,
        category=category,
        sort=sort,
        page=page_number(page),
        per_page=PAGE_SIZE,
        whose=whose or None,
        expiry=expiry or None,
        person=person,
    )
    filters = (
        ("q", query),
        ("category", category),
        ("sort", sort),
        ("whose", whose),
        ("expiry", expiry),
    )
    args = {k: v for k, v in filters if v}
    return Listing(
        shown.items,
        shown.total,
        shown.store_total,
        shown.page,
        shown.pages,
        query,
        category,
        sort,
        args,
        whose=whose,
        expiry=expiry,
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
