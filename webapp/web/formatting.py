"""The dashboard's template filters, one per job: ``time`` for every timestamp (absolute or
relative) and ``count`` for a number with its noun. ``init_app`` registers them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from flask import Flask
from markupsafe import Markup, escape

from ..stores.timefmt import EPOCH, parse_ts
from ..text import count_noun, english_ngettext

STYLES = ("absolute", "relative")
Ngettext = Callable[[str, str, int], str]


@dataclass(frozen=True)
class Moment:
    """A timestamp as the pages show it: machine form, absolute text, relative text."""

    iso: str
    absolute: str
    relative: str


def _span(seconds: float) -> str:
    """'3 minutes', '1 day'; '' under a minute."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            return count_noun(int(seconds // size), unit)
    return ""


def moment(value: Any, now: datetime | None = None) -> Moment | None:
    """``value`` (a datetime, ISO 8601 text or Unix milliseconds) described for a person,
    relative to ``now`` ("3 minutes ago", "in 6 days"); None when it is not a time."""
    when = value if isinstance(value, datetime) else parse_ts(value)
    if when == EPOCH and not isinstance(value, datetime):
        return None
    utc = when.astimezone(UTC)
    seconds = (utc - (now or datetime.now(UTC))).total_seconds()
    span = _span(abs(seconds))
    return Moment(
        iso=utc.isoformat(timespec="seconds").replace("+00:00", "Z"),
        absolute=utc.strftime("%Y-%m-%d %H:%M UTC"),
        relative="just now" if not span else f"in {span}" if seconds > 0 else f"{span} ago",
    )


def time_filter(value: Any, style: str = "absolute", now: datetime | None = None) -> Markup:
    """Template filter: ``<time datetime=… title=absolute>absolute or relative text</time>``;
    an em dash when ``value`` is not a time."""
    if style not in STYLES:
        raise ValueError(f"time style must be one of {STYLES}, not {style!r}")
    seen = moment(value, now)
    if seen is None:
        return Markup("—")
    text = seen.absolute if style == "absolute" else seen.relative
    return Markup('<time datetime="{}" title="{}">{}</time>').format(
        seen.iso, seen.absolute, escape(text)
    )


def init_app(app: Flask, ngettext: Ngettext = english_ngettext) -> None:
    """Register the filters; ``ngettext`` (e.g. Flask-Babel's) picks singular or plural."""

    def count_filter(count: int, singular: str, plural: str | None = None) -> str:
        """Template filter: ``{{ n | count("memory", "memories") }}`` → ``3 memories``."""
        return count_noun(count, singular, plural, ngettext)

    app.add_template_filter(time_filter, "time")
    app.add_template_filter(count_filter, "count")
