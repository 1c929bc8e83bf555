"""The dashboard's template filters, one per job: ``time`` for every timestamp (absolute or
relative), ``count`` for a number with its noun, ``category_label`` and ``interface_label`` for
stored keys shown to a person, ``action_label`` for what a proposal does, ``who`` for who made a
change and ``import_source`` for where imported memories came from. ``init_app`` registers
them."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from babel.dates import format_date, format_timedelta
from babel.support import NullTranslations
from flask import Flask, current_app, g, has_app_context, has_request_context
from flask_babel import get_locale, get_translations
from flask_babel import gettext as _
from markupsafe import Markup, escape

from ...stores.timefmt import EPOCH, parse_ts
from ...text import count_noun, english_ngettext

STYLES = ("absolute", "relative")
_UNITS: tuple[tuple[Literal["day", "hour", "minute"], int], ...] = (
    ("day", 86400),
    ("hour", 3600),
    ("minute", 60),
)
Ngettext = Callable[[str, str, int], str]


@dataclass(frozen=True)
class Moment:
    """A timestamp as the pages show it: machine form, absolute text, relative text."""

    iso: str
    absolute: str
    relative: str


def page_locale() -> str:
    """The language of the page being rendered (English outside a request)."""
    locale = get_locale() if has_request_context() else None
    return str(locale) if locale else "en"


def _relative(seconds: float) -> str:
    """'3 minutes ago', 'in 6 days', '3 天前' in the page's language (CLDR's words, via Babel);
    whole units counted down, as a person reads a clock; 'just now' under a minute."""
    for unit, size in _UNITS:
        if abs(seconds) >= size:
            whole = math.copysign(int(abs(seconds) // size) * size, seconds)
            return format_timedelta(
                timedelta(seconds=whole),
                granularity=unit,
                threshold=math.inf,
                add_direction=True,
                locale=page_locale(),
            )
    return _("just now") if has_request_context() else "just now"


def day_text(day: date) -> str:
    """A calendar day as the page's language writes it: ISO in English (``2026-11-22``, as the
    dashboard's times read), CLDR's medium form otherwise (「2026年11月22日」, via Babel)."""
    locale = page_locale()
    return day.isoformat() if locale == "en" else format_date(day, "medium", locale=locale)


def household_zone_name() -> str:
    """The household's timezone (``memory_timezone``) every page shows and reads times in;
    ``UTC`` outside an app or when it is unset or unknown."""
    if not has_app_context():
        return "UTC"
    configured = current_app.config.get("MEMORY_SETTINGS")
    name = str(getattr(configured, "timezone", "") or "").strip() or "UTC"
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return "UTC"
    return name


def household_tz() -> ZoneInfo:
    """``household_zone_name`` as a zone."""
    return ZoneInfo(household_zone_name())


def _absolute(utc: datetime) -> str:
    """The time on the household's clock, the zone named: "2026-11-27 14:42 Europe/Berlin"."""
    name = household_zone_name()
    try:
        local = utc.astimezone(ZoneInfo(name))
    except OverflowError:  # at the calendar's very ends: as written
        local, name = utc, "UTC"
    if page_locale() == "en":
        return f"{local:%Y-%m-%d %H:%M} {name}"
    return f"{day_text(local.date())} {local:%H:%M} {name}"


def moment(value: Any, now: datetime | None = None) -> Moment | None:
    """``value`` (a datetime, ISO 8601 text or Unix milliseconds) described for a person,
    relative to ``now`` ("3 minutes ago", "in 6 days"), the absolute time on the household's
    clock with its zone named; None when it is not a time (the
    stores read a time they cannot use as the epoch: unknown)."""
    when = value if isinstance(value, datetime) else parse_ts(value)
    if when == EPOCH:
        return None
    utc = when.astimezone(UTC)
    seconds = (utc - (now or datetime.now(UTC))).total_seconds()
    return Moment(
        iso=utc.isoformat(timespec="seconds").replace("+00:00", "Z"),
        absolute=_absolute(utc),
        relative=_relative(seconds),
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


def page_translations() -> NullTranslations:
    """The request's catalog, looked up once per request and kept on ``g``.

    Flask-Babel walks its context on every call (a dozen proxy lookups); a page of 50
    memories translates some 450 strings, which made that walk a third of its time. The
    language is fixed for a request (Flask-Babel keeps the locale on the same context)."""
    if not has_app_context():  # e.g. a filter tried out in a shell: English
        return NullTranslations()
    cached: NullTranslations | None = g.get("_memory_curator_translations")
    if cached is None:
        cached = g._memory_curator_translations = get_translations()  # noqa: SLF001 (our own key on flask.g)
    return cached


def _named(key: Any, labels: dict[str, str]) -> str:
    """A stored key as ``labels`` names it; a key they lack is shown as it is."""
    return labels.get(key, key) if isinstance(key, str) else str(key)


def category_label(key: Any) -> str:
    """A memory category (a stored key such as ``preference``) as the page's language names it;
    an unknown key is shown as it is. Keep the key itself as a form's option *value*."""
    t = page_translations()  # 50 rows a page: one catalog lookup per request, not per label
    labels = {
        "preference": str(t.pgettext("memory category", "preference")),
        "project": str(t.pgettext("memory category", "project")),
        "workflow": str(t.pgettext("memory category", "workflow")),
        "tool": str(t.pgettext("memory category", "tool")),
        "convention": str(t.pgettext("memory category", "convention")),
        "general": str(t.pgettext("memory category", "general")),
    }
    return _named(key, labels)


def interface_label(key: Any) -> str:
    """Where a conversation came from (``slack``, ``cli``, ``schedule``, ``other``: see
    ``interface_of``) as the page's language names it; an unknown key is shown as it is."""
    t = page_translations()
    labels = {
        "slack": "Slack",
        "cli": "CLI",
        "schedule": str(t.pgettext("conversation interface", "Schedule")),
        "other": str(t.pgettext("conversation interface", "Other")),
    }
    return _named(key, labels)


def action_label(action: Any) -> str:
    """What a proposal in Review would do (``add``, ``update``, ``delete``), as the page's
    language says it; an unknown action is shown as it is."""
    t = page_translations()
    labels = {
        "add": t.gettext("Add"),
        "update": t.gettext("Update memory"),
        "delete": t.gettext("Delete memory"),
    }
    return _named(action, labels)


def _as_written(value: Any) -> Markup:
    """A stored value no label names (a person's or a file's name): as written, and marked
    translate="no" so that a page translator leaves it alone."""
    if value is None or value == "":
        return Markup("—")
    return Markup('<span translate="no">{}</span>').format(value)


def actor_label(key: Any) -> Markup:
    """Who made a change or a decision, stored as a key (``dashboard``, ``mcp``, ``cli``,
    ``demo``…), as the page's language names them; any other name (a Home Assistant user's)
    as written."""
    t = page_translations()
    labels = {
        "dashboard": t.pgettext("who made a change", "dashboard"),
        "mcp": t.pgettext("who made a change", "the assistant (MCP)"),
        "cli": t.pgettext("who made a change", "the command line"),
        "demo": t.pgettext("who made a change", "the demo"),
        "library": t.pgettext("who made a change", "a program"),
        "extractor": t.pgettext("who made a change", "the extractor"),
        "review": t.pgettext("who made a change", "Review"),
        "import": t.pgettext("who made a change", "an import"),
        "runtime": t.pgettext("who made a change", "the assistant's runtime skills"),
    }
    if isinstance(key, str) and key in labels:
        return escape(labels[key])
    return _as_written(key)


def import_source_label(source: Any) -> Markup:
    """Where imported memories came from: the demo's and an upload's in the page's language
    (they are stored as English phrases), a file's name as written."""
    t = page_translations()
    labels = {
        "the demo data": t.pgettext("imported from", "the demo data"),
        "an uploaded file": t.pgettext("imported from", "an uploaded file"),
    }
    if isinstance(source, str) and source in labels:
        return escape(labels[source])
    return _as_written(source)


def init_app(app: Flask, ngettext: Ngettext = english_ngettext) -> None:
    """Register the filters; ``ngettext`` (e.g. Flask-Babel's) picks singular or plural."""

    def count_filter(count: int, singular: str, plural: str | None = None) -> str:
        """Template filter: ``{{ n | count("memory", "memories") }}`` → ``3 memories``."""
        return count_noun(count, singular, plural, ngettext)

    app.add_template_filter(time_filter, "time")
    app.add_template_global(household_zone_name, "household_zone_name")
    app.add_template_filter(count_filter, "count")
    app.add_template_filter(category_label, "category_label")
    app.add_template_filter(interface_label, "interface_label")
    app.add_template_filter(action_label, "action_label")
    app.add_template_filter(actor_label, "who")
    app.add_template_filter(import_source_label, "import_source")
