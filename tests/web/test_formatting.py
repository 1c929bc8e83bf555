"""The dashboard's template filters: one for times, one for counts with their noun."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from flask import Flask, render_template_string

from webapp.text import count_noun
from webapp.web.plumbing import formatting

NOW = datetime(2026, 11, 22, 15, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "style", "html"),
    [
        (
            "2026-11-22T01:54:44.120Z",
            "absolute",
            '<time datetime="2026-11-22T01:54:44Z" title="2026-11-22 01:54 UTC">'
            "2026-11-22 01:54 UTC</time>",
        ),
        (1763776484120, "absolute", ">2025-11-22 01:54 UTC</time>"),
        (NOW - timedelta(minutes=3), "relative", ">3 minutes ago</time>"),
        (NOW + timedelta(days=6, hours=1), "relative", ">in 6 days</time>"),
        (NOW - timedelta(days=1), "relative", ">1 day ago</time>"),
        (NOW - timedelta(seconds=20), "relative", ">just now</time>"),
        ("not a time", "absolute", "—"),
        (None, "relative", "—"),
    ],
)
def test_time_filter(value, style, html):
    assert html in formatting.time_filter(value, style, now=NOW)


def test_time_filter_refuses_an_unknown_style():
    with pytest.raises(ValueError, match="absolute"):
        formatting.time_filter(NOW, "fuzzy")


@pytest.mark.parametrize(
    ("count", "words", "text"),
    [
        (0, ("memory", "memories"), "0 memories"),
        (1, ("memory", "memories"), "1 memory"),
        (1204, ("memory", "memories"), "1,204 memories"),
        (2, ("turn",), "2 turns"),
    ],
)
def test_count_noun(count, words, text):
    assert count_noun(count, *words) == text


def test_filters_in_a_template_and_a_catalog_can_take_over():
    app = Flask(__name__)
    formatting.init_app(app)
    page = '{{ n | count("memory", "memories") }} · {{ t | time("relative", now) }}'
    with app.app_context():
        html = render_template_string(page, n=3, t=NOW - timedelta(hours=2), now=NOW)
    assert html.startswith("3 memories · <time ")
    assert ">2 hours ago</time>" in html

    translated = Flask(__name__)
    german = {("memory", "memories"): ("Erinnerung", "Erinnerungen")}
    formatting.init_app(translated, ngettext=lambda s, p, n: german[s, p][0 if n == 1 else 1])
    with translated.app_context():
        assert render_template_string(page, n=3, t=NOW, now=NOW).startswith("3 Erinnerungen")
