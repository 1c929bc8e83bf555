"""One way to cut a list into pages, for every page that lists things."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")

PAGE_SIZE = 50  # rows per page: a flood of memories or proposals must not make one huge page


def page_number(raw: Any) -> int:
    """The 1-based page a request asks for; anything that is not a positive number is 1."""
    try:
        number = int(raw)
    except (TypeError, ValueError):
        return 1
    return number if number >= 1 else 1


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list."""

    items: list[T]  # the rows of this page only
    number: int  # 1-based, clamped to the pages that exist
    pages: int  # at least 1
    total: int  # rows on all pages
    size: int = PAGE_SIZE

    @property
    def first(self) -> int:
        """1-based number of the first row shown (0 when none)."""
        return (self.number - 1) * self.size + 1 if self.items else 0

    @property
    def last(self) -> int:
        """1-based number of the last row shown (0 when none)."""
        return self.first + len(self.items) - 1 if self.items else 0


def paginate(rows: Sequence[T], page: Any, size: int = PAGE_SIZE) -> Page[T]:
    """The page ``page`` (a number or the raw request value) of ``rows``."""
    pages = max(1, -(-len(rows) // size))
    number = min(page_number(page), pages)
    start = (number - 1) * size
    return Page(list(rows[start : start + size]), number, pages, len(rows), size)
