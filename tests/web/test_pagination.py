"""One pagination helper for every list page."""

from __future__ import annotations

import pytest

from webapp.web.plumbing.pagination import page_number, paginate


@pytest.mark.parametrize(
    ("raw", "number"),
    [
        ("1", 1),
        ("3", 3),
        (2, 2),
        ("0", 1),
        ("-4", 1),
        ("abc", 1),
        ("", 1),
        (None, 1),
        ("9" * 5000, 1),
    ],
)
def test_page_number(raw, number):
    assert page_number(raw) == number


@pytest.mark.parametrize(
    ("total", "page", "number", "pages", "first", "last"),
    [
        (0, "1", 1, 1, 0, 0),
        (120, "1", 1, 3, 1, 50),
        (120, "2", 2, 3, 51, 100),
        (120, "99", 3, 3, 101, 120),
        (100, "3", 2, 2, 51, 100),
    ],
)
def test_paginate(total, page, number, pages, first, last):
    shown = paginate(list(range(1, total + 1)), page)
    assert (shown.number, shown.pages, shown.total) == (number, pages, total)
    assert (shown.first, shown.last) == (first, last)
    assert shown.items == list(range(first, last + 1)) if total else shown.items == []
