"""The web layer's names for stored keys and its messages for library errors: English pages
show exactly what the library says (the CLI and MCP show the same words)."""

from __future__ import annotations

import errno
from pathlib import Path
from types import SimpleNamespace

import pytest
from flask import render_template_string
from flask_wtf.csrf import CSRFError

from webapp.stores import (
    ConflictError,
    DuplicateMemoryError,
    MemoryFullError,
    StoreBusyError,
    StoreCorruptError,
    StoreWriteError,
)
from webapp.stores.memories import CATEGORIES
from webapp.web.errors import describe_error
from webapp.web.formatting import category_label, interface_label

ERRORS = [
    StoreCorruptError(Path("/data/memories.json"), "Expecting value", line=3, column=7),
    StoreCorruptError(Path("/data/review.json"), "not an object", offset=12),
    StoreCorruptError(Path("/data/review.json"), "expected a JSON list"),
    StoreBusyError(Path("/data/memories.json"), 2.5),
    StoreWriteError(Path("/data/memories.json"), OSError(errno.ENOSPC, "No space left on device")),
    MemoryFullError(
        "The memory store is full: 3 of 3 memories are used.",
        items=3,
        max_items=3,
        chars=10,
        max_chars=100,
    ),
    DuplicateMemoryError(SimpleNamespace(id="m-1")),
    ConflictError(None),
    ValueError("Unknown category 'x'; use one of: general."),
]


@pytest.mark.parametrize("exc", ERRORS, ids=lambda e: type(e).__name__)
def test_english_pages_show_the_library_message(app, exc):
    with app.test_request_context("/", headers={"Accept-Language": "en-US"}):
        assert describe_error(exc) == str(exc)


def test_english_csrf_reason_is_flask_wtf_s(app):
    with app.test_request_context("/", headers={"Accept-Language": "en-US"}):
        assert describe_error(CSRFError("The CSRF token is missing.")) == (
            "The CSRF token is missing."
        )


def test_outside_a_request_the_message_is_the_library_s():
    exc = StoreBusyError(Path("/data/memories.json"), 1)
    assert describe_error(exc) == str(exc)


def test_every_category_has_a_label_and_unknown_keys_stay(app):
    with app.test_request_context("/", headers={"Accept-Language": "en-US"}):
        assert [category_label(c) for c in CATEGORIES] == list(CATEGORIES)
        assert category_label("made-up") == "made-up"
        assert [interface_label(k) for k in ("slack", "cli", "schedule", "other", "irc")] == [
            "Slack",
            "CLI",
            "Schedule",
            "Other",
            "irc",
        ]


def test_labels_are_template_filters(app):
    with app.test_request_context("/", headers={"Accept-Language": "en-US"}):
        html = render_template_string(
            "{{ 'preference' | category_label }}|{{ '<b>' | category_label }}"
            "|{{ 'schedule' | interface_label }}"
        )
    assert html == "preference|&lt;b&gt;|Schedule"
