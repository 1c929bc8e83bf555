"""The expiry a typed fact states, shown before it is saved (issue 36).

The Add and Edit forms of the Memories page and Review's Edit read an end in the text as it is
typed ("Is in Tokyo until Friday", 這週都在台中: ``webapp.language.validity.stated_end``, in
the household's timezone) and show it under the text — "Expires Fri 5 Dec (Europe/Berlin)" —
with a button that removes it (the fact then never expires) and one that sets a day by hand.
The form carries what it shows: ``expires_on`` (the last day it holds) or ``no_expiry``; saving
keeps exactly that (``chosen_expiry``). Without JavaScript the page reads the same on save.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from babel.dates import format_date, format_skeleton
from flask import Blueprint, request
from flask_babel import gettext as _
from werkzeug.wrappers import Response as BaseResponse

from ...language.moments import iso_date
from ...language.validity import end_of_local_day, stated_end
from ...stores.memories import KEEP, Keep
from ...stores.timefmt import read_time
from ..plumbing.context import settings
from ..plumbing.formatting import page_locale
from ..plumbing.htmx import render
from .expiry import LAST_DAY, zone

bp = Blueprint("expiry_hint", __name__, url_prefix="/expiry-hint")

# The fields a form carries about the expiry it shows (a conflict's "Replace it with my
# version" carries them on, so what was shown is still what is saved).
EXPIRY_FIELDS = ("expires_on", "no_expiry", "expiry_current", "said")


@dataclass(frozen=True)
class Hint:
    """What the form shows about a fact's end: the last day it holds (household time) and
    whether the person removed it; ``said`` when the day is the one the text states."""

    prefix: str
    text_id: str
    day: date | None = None
    removed: bool = False
    current: date | None = None
    said: bool = False

    @property
    def text(self) -> str:
        if self.day is None:
            return ""
        return _("Expires %(day)s (%(zone)s)", day=short_day(self.day), zone=zone_name())


def zone_name() -> str:
    """The household's timezone as configured (``memory_timezone``), ``UTC`` when unset."""
    return settings().timezone.strip() or "UTC"


def short_day(day: date) -> str:
    """ "Fri 5 Dec" (the year too when it is not this year), in the page's language."""
    locale = page_locale()
    this_year = datetime.now(UTC).astimezone(zone()).year
    if locale == "en":
        return format_date(day, "EEE d MMM" if day.year == this_year else "EEE d MMM y", "en")
    skeleton = "MMMEd" if day.year == this_year else "yMMMEd"
    return format_skeleton(skeleton, day, locale=locale)


def last_day_of(expires: datetime | None) -> date | None:
    """The last local day an expiry instant holds (midnight ends the day before)."""
    if expires is None:
        return None
    return (expires.astimezone(zone()) - timedelta(microseconds=1)).date()


def stated_day(text: str, now: datetime | None = None) -> date | None:
    """The last day the fact ``text`` holds, by its own words, read now in the household's
    timezone; None when it states no end."""
    return last_day_of(stated_end(text or "", now or datetime.now(UTC), zone()))


def _date(value: str | None) -> date | None:
    day = iso_date(value or "")
    return day if day is not None and day <= LAST_DAY else None


def read_hint(
    form: Mapping[str, str],
    prefix: str,
    text_id: str,
    current: date | None = None,
    opening: bool = False,
) -> Hint:
    """The hint for a form's values: removed (``no_expiry``, unless ``read`` asks to read the
    text again); a day set by hand (``hand``); the day the text states; a day set by hand
    before (``expires_on`` not marked ``said``); else the memory's ``current`` day. An Edit
    form ``opening`` shows the memory's own expiry (or none), not its words read as if said now:
    they were said before."""
    if opening:
        return Hint(prefix, text_id, day=current, current=current)
    if form.get("no_expiry") and not form.get("read"):
        return Hint(prefix, text_id, removed=True, current=current)
    picked = _date(form.get("expires_on"))
    if form.get("hand") and picked is not None:
        return Hint(prefix, text_id, day=picked, current=current)
    said = stated_day(form.get("content", ""))
    if said is not None:
        return Hint(prefix, text_id, day=said, current=current, said=True)
    if picked is not None and not form.get("said"):
        return Hint(prefix, text_id, day=picked, current=current)
    return Hint(prefix, text_id, day=current, current=current)


def chosen_expiry(
    form: Mapping[str, str], *, current: date | None = None, unsaid: Keep | None = None
) -> datetime | None | Keep:
    """When the fact saved from ``form`` expires: never when the person removed it; the end
    of a day set by hand (``expires_on`` not marked ``said``); else of the day the text states
    (read again on save, so a hint a keystroke behind never wins over the words saved); when
    it states none, ``unsaid`` (None for a new fact: never; KEEP when editing: as it was). A
    day equal to the memory's ``current`` one keeps its expiry as it is."""
    if form.get("no_expiry"):
        return None
    picked = _date(form.get("expires_on"))
    day = picked if picked is not None and not form.get("said") else None
    if day is None:
        day = stated_day(form.get("content", ""))
    if day is None:
        return unsaid
    if day == current:
        return KEEP
    return end_of_local_day(day, zone())


@bp.get("/<prefix>")
def hint(prefix: str) -> BaseResponse | str:
    """The hint for the text typed so far (htmx, as the person types or presses a button)."""
    values: dict[str, Any] = dict(request.args.items())
    current = _date(values.get("expiry_current"))
    text_id = str(values.get("text_id") or "")[:80]
    return render(
        "memories/_expiry_hint.html", hint=read_hint(values, prefix[:80], text_id, current)
    )


def proposal_last_day(item: Any) -> date | None:
    """The last day a proposal (a review item) says its fact holds, or None: never."""
    return last_day_of(read_time(getattr(item, "expires_at", None)))


def init_app(app: Any) -> None:
    """Make ``read_hint`` and ``proposal_last_day`` available to the forms' templates."""
    app.add_template_global(read_hint, "read_hint")
    app.add_template_global(proposal_last_day, "proposal_last_day")
