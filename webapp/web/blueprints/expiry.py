"""A memory's expiry on the dashboard: how a row says it ("until 2026-03-06", "expired …"), the
date a person picks for it (the end of that day in the household's timezone, or never) and
the form that sets it on the Memories page."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from flask import Blueprint, request, url_for
from flask_babel import gettext as _
from markupsafe import Markup
from werkzeug.wrappers import Response as BaseResponse

from ...language.moments import iso_date
from ...language.validity import end_of_local_day, household_zone
from ...stores import ConflictError, Memory
from ...stores.timefmt import read_time, to_iso
from ..plumbing.context import actor, curator, settings, stores
from ..plumbing.formatting import day_text
from ..plumbing.htmx import redirect_or, render

bp = Blueprint("expiry", __name__, url_prefix="/memories")

USAGE_CHANGED = ("memories-changed", "attention-changed")
# The latest day a person may pick: the calendar's end, a day's margin kept.
LAST_DAY = date(9999, 12, 30)


def zone() -> ZoneInfo:
    """The household's timezone (MEMORY_TIMEZONE)."""
    return household_zone(settings().timezone)


def last_true_day(memory: Memory) -> date | None:
    """The last day (household time) a memory is true: the day before the midnight it expires
    at, or the day of an expiry at another time; None when it never expires."""
    return _last_day(memory.expires_at)


def _last_day(expires: datetime | None) -> date | None:
    if expires is None:
        return None
    local = expires.astimezone(zone())
    if local.time() == datetime.min.time():
        return (local - timedelta(microseconds=1)).date()
    return local.date()


def expiry_label(
    memory: Memory | None = None, when: Any = None, now: datetime | None = None
) -> Markup:
    """How a row says when the memory (or a review item, by its ``when``: ISO text) ends:
    "until <day>" or "expired after <day>" (marked), or nothing for one that never expires."""
    expires = memory.expires_at if memory is not None else read_time(when)
    day = _last_day(expires)
    if expires is None or day is None:
        return Markup("")
    expired = expires <= (now or datetime.now(UTC))
    text = (
        _("expired after %(day)s", day=day_text(day))
        if expired
        else _("until %(day)s", day=day_text(day))
    )
    return Markup('<span class="{}" translate="yes"><time datetime="{}">{}</time></span>').format(
        "expiry is-expired" if expired else "expiry", to_iso(expires), text
    )


def read_expiry(form: Mapping[str, str]) -> tuple[datetime | None, str | None]:
    """(when the memory expires, None) from a form's ``expires_on`` date (the end of that day
    in the household's timezone) or its ``never`` button (None); (None, why) when the date
    cannot be used."""
    if form.get("never"):
        return None, None
    text = (form.get("expires_on") or "").strip()
    if not text:
        return None, _("Pick a date, or choose Never.")
    day = iso_date(text)
    if day is None:
        return None, _("%(value)s is not a date; pick one with the date picker.", value=text[:40])
    if day > LAST_DAY:
        return None, _("Pick a date before the year 10000.")
    return end_of_local_day(day, zone()), None


@bp.post("/<memory_id>/expiry")
def set_expiry(memory_id: str) -> BaseResponse:
    """Set (or remove, with Never) a memory's expiry from its row's form."""
    store = stores().memories
    memory = store.get(memory_id)
    if memory is None:
        return _answer(None, _("Nothing was changed: that memory was deleted elsewhere."), 409)
    expires, problem = read_expiry(request.form)
    if problem:
        return _answer(memory, problem, 422)
    try:
        saved = curator().set_expiry(
            memory_id, expires=expires, expected=request.form.get("version") or None, actor=actor()
        )
    except ConflictError as exc:
        return _answer(
            exc.current, _("Nothing was changed: someone else edited that memory meanwhile."), 409
        )
    if saved is None:
        return _answer(None, _("Nothing was changed: that memory was deleted elsewhere."), 409)
    day = last_true_day(saved)
    message = _("Expires after %(day)s.", day=day_text(day)) if day else _("It never expires now.")
    return _answer(saved, message, 200)


def _answer(memory: Memory | None, message: str, status: int) -> BaseResponse:
    """The memory's row (htmx) with ``message`` announced, or back to the Memories page. A
    memory deleted elsewhere sends htmx to the page, which says so."""
    if memory is None:
        return redirect_or(url_for("memories.index"), announce=message)
    return redirect_or(
        url_for("memories.index"),
        lambda: render(
            "memories/_row.html",
            memory=memory,
            query="",
            focus_edit=True,
            trigger=USAGE_CHANGED if status == 200 else None,
            announce=message,
            status=status,
        ),
    )


def init_app(app: Any) -> None:
    """Make the row's expiry helpers available to every template."""
    app.add_template_global(expiry_label, "expiry_label")
    app.add_template_global(last_true_day, "last_true_day")
