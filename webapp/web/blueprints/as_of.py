"""As of: the Memories list as it was at a past date and time, rebuilt from the history log
(``stores.asof``), read-only; the prompt preview takes the same moment (``as_of``)."""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Blueprint, request
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from ...language.moments import iso_time
from ...stores.asof import memories_as_of
from ...stores.timefmt import EARLIEST, LATEST, to_iso
from ..plumbing.context import stores
from ..plumbing.formatting import household_tz, household_zone_name
from ..plumbing.htmx import render

bp = Blueprint("as_of", __name__, url_prefix="/memories")


def read_moment(value: str) -> datetime | None:
    """A date and time as the picker sends it (``2026-11-20T08:30``, on the household's clock:
    ``memory_timezone``) or in ISO 8601 with its offset, kept inside the calendar; None when it
    is none."""
    moment = iso_time(value, naive=household_tz())
    if moment is None:
        return None
    try:
        moment = moment.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+14:00 is before the year 1 in UTC; 9999… after
        moment = EARLIEST if moment.year == 1 else LATEST
    # A moment at a calendar's end stands for "before anything" or "now and after": kept a
    # day inside it, as every time read from a file is, so nothing computed from it overflows.
    return min(max(moment, EARLIEST), LATEST)


def picker_value(moment: datetime) -> str:
    """``moment`` as a datetime-local input shows it (the household's clock, to the second)."""
    try:
        local = moment.astimezone(household_tz())
    except OverflowError:
        local = moment.astimezone(UTC)
    return local.strftime("%Y-%m-%dT%H:%M:%S")


@bp.get("/as-of")
def index() -> Response:
    """The memories the assistant knew at ``?at=`` (default: now), with the prompt's link."""
    raw = request.args.get("at", "").strip()
    moment = read_moment(raw) if raw else datetime.now(UTC)
    error = None
    if moment is None:
        error = _(
            "%(value)s is not a date and time; use the picker, or write it as "
            "2026-11-20T08:30 (%(zone)s).",
            value=repr(raw[:40]),
            zone=household_zone_name(),
        )
    memories = memories_as_of(stores().memories, moment) if moment is not None else []
    return render(
        None,
        "memories/as_of_page.html",
        status=422 if error else 200,
        title=_("Memories as of a past time"),
        active_area="memories",
        moment=moment,
        moment_iso=to_iso(moment) if moment is not None else "",
        picker=picker_value(moment) if moment is not None else raw,
        error=error,
        memories=memories,
    )
