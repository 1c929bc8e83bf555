"""When a fact stops being true, from what its sentence says ("until Friday", "這個月", "下周五之前").

``expires_at(text, sent_at, timezone)`` reads the time phrases of one message (English,
traditional and simplified Chinese) relative to the message's own time, in the household's
timezone, and gives the instant the fact expires (UTC), or None for a fact with no end. The
rules are those of ``tests/data/time/README.md``: "through day D" is 00:00 local time on the day
after D; weeks run Monday to Sunday; recurring times, starts without an end, past times and
dates that are attributes (birthdays) set no expiry; nor do the clock times and bare weekends of
a standing rule ("never … before 8am", 週末不要…) or repeating days and windows (周二和周五, "from
10pm until 7am"), nor a weekday a Chinese habit is set on (垃圾改成星期三晚上倒):
``webapp.language.standing`` reads those. A year said is kept ("until December 31, 2028", "till
2028-12-31", "the end of 2028", "through March 2029", 2028年底, 二〇二八年12月31日前, 明年底).

Hand rules rather than ``dateparser``: that library gives the point a phrase names ("this week"
→ now, 下周五 → next week's day of today), not the end of the period it covers, misses 這個月 and
月底, and costs some 0.3 s to import.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..text import fold
from . import add_months, calendar_date, clock_minutes, later, month_number, parse_count
from . import duration as language_duration
from .calendar import (
    EN_WEEKDAY,
    EN_WEEKDAY_OR_SHORT,
    EN_WEEKDAY_STEM,
    MONTH_NAME,
    YEAR_FIRST_DATE,
    ZH_DAY_MARK,
    ZH_WEEK,
    ZH_WEEKDAY,
    shifted,
    weekday_number,
)
from .clock import CN_DAY_PART
from .numbers import CN_NUMBER, DIGITS, EN_NUMBER, QUANTIFIER, RUN_START
from .standing import (
    CYCLE_DAY,
    CYCLE_MONTH,
    CYCLE_WEEK,
    CYCLE_YEAR,
    REPEATING_TIMES,
    STANDING_WEEKEND,
    is_standing_rule,
    repeating_cycle,
)

__all__ = ["end_of_local_day", "expires_at", "has_end", "household_zone", "stated_end"]


def household_zone(name: str) -> ZoneInfo:
    """The IANA timezone ``name`` (``UTC`` when empty); ValueError when there is no such zone."""
    try:
        return ZoneInfo(name.strip() or "UTC")
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"{name!r} is not a timezone") from exc


def end_of_local_day(day: date, zone: ZoneInfo) -> datetime:
    """00:00 local time on the day after ``day``, in UTC: the end of ``day`` where the person is."""
    following = day + timedelta(days=1)
    return datetime.combine(following, time(0), tzinfo=zone).astimezone(UTC)


# ---------------------------------------------------------------- calendar helpers
# Each answers None rather than raise when a date would fall outside the calendar (a message
# sent on 9999-12-31, "for the next 99999999 days"): the fact then has no end this can read.


@dataclass(frozen=True)
class _Now:
    moment: datetime  # the message's time, local
    zone: ZoneInfo

    @property
    def today(self) -> date:
        return self.moment.date()

    def through(self, day: date | None) -> datetime | None:
        following = shifted(day, 1) if day is not None else None
        return self.at(following, time(0)) if following is not None else None

    def at(self, day: date, clock: time) -> datetime | None:
        try:
            return datetime.combine(day, clock, tzinfo=self.zone).astimezone(UTC)
        except OverflowError:
            return None

    def sunday(self, weeks_ahead: int = 0) -> date | None:
        return shifted(self.today, 6 - self.today.weekday() + 7 * weeks_ahead)

    def weekday(self, wanted: int, which: str) -> date | None:
        """``which``: "next" (that day of next week), "this" (of this week, or the next one
        if it has passed), "" (the next one on or after today)."""
        if which == "next":
            return shifted(self.today, 7 - self.today.weekday() + wanted)
        return shifted(self.today, (wanted - self.today.weekday()) % 7)

    def month_end(self, months_ahead: int = 0) -> date | None:
        first = calendar_date(self.today.year, self.today.month, 1)
        following = add_months(first, months_ahead + 1) if first is not None else None
        return shifted(following, -1) if following is not None else None

    def year_end(self) -> date:
        return date(self.today.year, 12, 31)

    def day_of_month(self, day: int) -> date | None:
        """Day ``day`` of this month, or of the next month having it if it has passed."""
        first = date(self.today.year, self.today.month, 1)
        for ahead in range(13):
            month = add_months(first, ahead)
            candidate = calendar_date(month.year, month.month, day) if month else None
            if candidate is not None and candidate >= self.today:
                return candidate
        return None

    def month_day(self, month: int, day: int) -> date | None:
        """That date this year, or next year if it has passed."""
        for year in (self.today.year, self.today.year + 1):
            candidate = calendar_date(year, month, day)
            if candidate is None:
                return None
            if candidate >= self.today:
                return candidate
        return None

    def clock(self, hour: int, minute: int) -> datetime | None:
        if not (0 <= hour <= 24 and 0 <= minute < 60) or hour == 24 and minute:
            return None
        day: date | None = self.today
        if hour == 24:
            hour, day = 0, shifted(self.today, 1)
        moment = self.at(day, time(hour, minute)) if day is not None else None
        if moment is not None and moment <= self.moment:
            following = shifted(day, 1) if day is not None else None
            moment = self.at(following, time(hour, minute)) if following is not None else None
        return moment

    def duration(self, count: int, unit: str) -> datetime | None:
        """The end of ``count`` hours, days, weeks or months from now; None for a duration
        longer than ``language.MAX_DURATION`` or past the calendar's end."""
        if unit == "hour":
            span = language_duration(count, "hour")
            later_on = later(self.moment, span) if span is not None else None
            try:
                return later_on.astimezone(UTC) if later_on is not None else None
            except OverflowError:
                return None
        if unit == "month":
            return self.through(add_months(self.today, count))
        return self.through(shifted(self.today, count * (7 if unit == "week" else 1)))


# ---------------------------------------------------------------- what sets no expiry

# Dates that are attributes of something, not the end of a fact.
_ATTRIBUTE = re.compile(
    r"\b(?:birthday|anniversary|born|name ?day)\b|生日|纪念日|出生|诞辰", re.IGNORECASE
)
# Recurring times: removed before reading, so a bound around them still counts ("every night
# this week", 这个月每周六).
_RECURRING = re.compile(
    r"\bevery\s+(?:other\s+)?(?:single\s+)?(?:day|night|morning|evening|afternoon|week(?:end)?|"
    rf"month|year|{EN_WEEKDAY_STEM})\w*"
    rf"|\b(?:on\s+)?{EN_WEEKDAY}s\b"
    r"|\b(?:on\s+)?(?:weekdays|weeknights|weekends)\b"
    rf"|每(?:个|一)?{ZH_WEEK}{ZH_DAY_MARK}?|每(?:一)?(?:天|日|晚|早|个月|月|年)",
)
# A time right after these words is when something starts or started.
_START_BEFORE = re.compile(
    r"(?:\b(?:starting|start|from|since|beginning|as\s+of|after|last|ago)\s*(?:on\s+|the\s+)?|从|自|上)$"
)
_START_AFTER = re.compile(r"^\s*(?:开始|起|以后|之后|后|以来|onwards?\b|ago\b)")


# ---------------------------------------------------------------- phrases

_Handler = Callable[[re.Match[str], _Now], datetime | None]


def _en_weekday(match: re.Match[str], now: _Now) -> datetime | None:
    which = (match.group("which") or "").strip()
    wanted = weekday_number(match["day"])
    if wanted is None:
        return None
    return now.through(now.weekday(wanted, "next" if which == "next" else which))


def _zh_weekday(match: re.Match[str], now: _Now) -> datetime | None:
    which = match.group("which") or ""
    wanted = weekday_number(match["day"])
    if wanted is None or which == "上":
        return None  # last week's: the past
    if which.startswith("下下"):
        following = now.weekday(wanted, "next")
        return now.through(shifted(following, 7) if following is not None else None)
    kind = "next" if which.startswith("下") else ("this" if which else "")
    return now.through(now.weekday(wanted, kind))


def _en_duration(match: re.Match[str], now: _Now) -> datetime | None:
    count = parse_count(match["count"]) if match["count"] else 1
    if count is None:
        return None
    return now.duration(count, match["unit"])


def _zh_duration(match: re.Match[str], now: _Now) -> datetime | None:
    count = parse_count(match["count"])
    if count is None:
        return None
    unit = {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week"}.get(
        match["unit"], "month" if match["unit"] == "月" else "hour"
    )
    return now.duration(count, unit)


def _en_clock(match: re.Match[str], now: _Now) -> datetime | None:
    hour, minute = int(match["hour"]), int(match["minute"] or 0)
    half = match["half"]
    if half == "pm" and hour < 12:
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    elif half is None and match["minute"] is None and hour < 8:
        hour += 12  # "until 5" means the afternoon
    return now.clock(hour, minute)


def _zh_clock(match: re.Match[str], now: _Now) -> datetime | None:
    hour = parse_count(match["hour"])
    if hour is None:
        return None
    minutes = clock_minutes(hour, 30 if match["half"] else 0, part=match["part"] or "")
    if minutes is None:
        return None
    return now.clock(*divmod(int(minutes), 60))


def _en_ordinal(match: re.Match[str], now: _Now) -> datetime | None:
    day = int(match["day"])
    month = match["month"]
    number = month_number(month) if month else None
    found = now.month_day(number, day) if number else now.day_of_month(day)
    return now.through(found)


def _en_month_day(match: re.Match[str], now: _Now) -> datetime | None:
    month = match["month"] or match["month2"]
    day = match["day"] or match["day2"]
    number = month_number(month)
    return now.through(now.month_day(number, int(day)) if number else None)


def _zh_month_day(match: re.Match[str], now: _Now) -> datetime | None:
    month, day = parse_count(match["month"]), parse_count(match["day"])
    if month is None or day is None or not 1 <= month <= 12:
        return None
    return now.through(now.month_day(month, day))


def _zh_day_of_month(match: re.Match[str], now: _Now) -> datetime | None:
    day = parse_count(match["day"])
    return now.through(now.day_of_month(day) if day and 1 <= day <= 31 else None)


# A year said in digits or numerals (2028, 二〇二八, 二零二八).
_ZH_DIGITS = str.maketrans("〇零一二三四五六七八九", "00123456789")


def _dated(match: re.Match[str], now: _Now) -> datetime | None:
    """The end of what a phrase with its year names: a day ("December 31, 2028",
    2028年12月31日), a month ("through March 2029", 2028年12月底) or a year ("the end of
    2028", 2028年底, 明年底)."""
    parts = match.groupdict()
    if parts.get("ahead"):
        year: int | None = now.today.year + (1 if parts["ahead"] == "明" else 2)
    else:
        said = (parts.get("y") or "").translate(_ZH_DIGITS)
        year = int(said) if said.isdigit() else None
    named = parts.get("mon")
    month = month_number(named) if named else parse_count(parts["m"]) if parts.get("m") else 12
    if year is None or month is None or not 1 <= month <= 12 or year > now.today.year + 100:
        return None  # a number that only looks like a year (a code, a part number)
    if parts.get("d"):
        day = parse_count(parts["d"])
        return now.through(calendar_date(year, month, day) if day is not None else None)
    first = calendar_date(year, month, 1)
    following = add_months(first, 1) if first is not None else None
    return now.through(shifted(following, -1) if following is not None else None)


def _days(offset: int) -> _Handler:
    return lambda _match, now: now.through(shifted(now.today, offset))


@dataclass(frozen=True)
class _Period:
    """A handler for a phrase naming a whole period ("this week", 這個月, 年底), not one day."""

    ends: Callable[[_Now], datetime | None]

    def __call__(self, _match: re.Match[str], now: _Now) -> datetime | None:
        return self.ends(now)


def _sunday(weeks: int) -> _Handler:
    return _Period(lambda now: now.through(now.sunday(weeks)))


def _month_end(months: int) -> _Handler:
    return _Period(lambda now: now.through(now.month_end(months)))


_year_end = _Period(lambda now: now.through(now.year_end()))


_MONTH_NAMES = MONTH_NAME
_COUNT_EN = rf"{DIGITS}|{QUANTIFIER}|{EN_NUMBER}"
_ZH_NUM = rf"(?:\d+|{CN_NUMBER})"
# A number is read from the start of its run of digits or numerals only (``RUN_START``).
_RUN = RUN_START

# What a phrase names: a clock time, a day, a weekday or week, a day of the month or a month, a
# date or a year (the cycle a habit of that length repeats it on: ``language.standing``), a
# date, month or year with its year said ("December 31, 2028", 2028年底: it comes once), or a
# span from now ("for two weeks", 接下來三天) that no habit repeats.
_CLOCK, _DAY, _WEEK, _MONTH, _YEAR = 0, CYCLE_DAY, CYCLE_WEEK, CYCLE_MONTH, CYCLE_YEAR
_DATED, _SPAN = 8, 9
_EN_MON = rf"(?P<mon>{MONTH_NAME})\.?"
_EN_YEAR = r",?\s+(?P<y>\d{4})\b"
_ZH_YEAR = r"(?<![\d〇零一二三四五六七八九十])(?P<y>\d{4}|[〇零一二三四五六七八九]{4})\s*年\s*"

# (pattern, handler, what it names). Applied in this order; a matched span is blanked so a
# later, shorter pattern does not read inside it.
_PHRASES: tuple[tuple[re.Pattern[str], _Handler, int], ...] = tuple(
    (re.compile(pattern), handler, names)
    for pattern, handler, names in (
        # ---- with the year said, before the same words without it
        (YEAR_FIRST_DATE, _dated, _DATED),
        (rf"\b{_EN_MON}\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?{_EN_YEAR}", _dated, _DATED),
        (rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_EN_MON}{_EN_YEAR}", _dated, _DATED),
        (rf"\b(?:(?:the\s+)?(?:end|rest)\s+of\s+)?{_EN_MON}{_EN_YEAR}", _dated, _DATED),
        (r"\b(?:the\s+)?(?:end|rest)\s+of\s+(?P<y>\d{4})\b", _dated, _DATED),
        (r"(?:(?<=\bthrough\s)|(?<=\bthroughout\s))(?P<y>\d{4})\b", _dated, _DATED),
        (rf"{_ZH_YEAR}(?P<m>{_ZH_NUM})\s*月\s*(?P<d>{_ZH_NUM})\s*(?:日|号)", _dated, _DATED),
        (rf"{_ZH_YEAR}(?P<m>{_ZH_NUM})\s*(?:月底|月末|月份|月)", _dated, _DATED),
        (rf"{_ZH_YEAR}(?:年底|年末|底|末)", _dated, _DATED),
        (r"(?P<ahead>明|后)年(?:年底|年末|底|末)", _dated, _DATED),
        # ---- English
        (r"\b(?:the\s+)?day\s+after\s+tomorrow\b", _days(2), _DAY),
        (r"\btomorrow\b", _days(1), _DAY),
        (r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b", _days(0), _DAY),
        (r"\b(?:the\s+)?rest\s+of\s+the\s+week\b", _sunday(0), _WEEK),
        (r"\bnext\s+week(?:end)?\b", _sunday(1), _WEEK),
        (r"\b(?:this|the)\s+week(?:end)?\b|\bthis\s+week's\b", _sunday(0), _WEEK),
        (
            r"\b(?:(?:the\s+)?end\s+of\s+|(?:the\s+)?rest\s+of\s+)?next\s+month\b",
            _month_end(1),
            _MONTH,
        ),
        (
            r"\b(?:(?:the\s+)?(?:end|rest)\s+of\s+)?(?:this|the)\s+month\b|\bmonth[- ]end\b",
            _month_end(0),
            _MONTH,
        ),
        (r"\b(?:(?:the\s+)?(?:end|rest)\s+of\s+)?(?:this|the)\s+year\b", _year_end, _YEAR),
        (
            rf"\b(?:for|over|during|within|in)\s+(?:the\s+)?(?:next|coming)?\s*"
            rf"(?P<count>{_COUNT_EN})?\s*(?P<unit>hour|day|week|month)s?\b",
            _en_duration,
            _SPAN,
        ),
        (
            rf"\b(?:the\s+)?(?:next|coming)\s+(?P<count>{_COUNT_EN})?\s*"
            rf"(?P<unit>hour|day|week|month)s?\b",
            _en_duration,
            _SPAN,
        ),
        (
            rf"\bthe\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)\b(?:\s+of\s+(?P<month>{_MONTH_NAMES})\b)?",
            _en_ordinal,
            _MONTH,
        ),
        (
            rf"\b(?:(?P<month>{_MONTH_NAMES})\.?\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?"
            rf"|(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month2>{_MONTH_NAMES}))\b",
            _en_month_day,
            _YEAR,
        ),
        (
            r"\b(?:until|till|til|before|by|through)\s+(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?"
            r"\s*(?P<half>am|pm|a\.m\.|p\.m\.)?(?![\d/])",
            _en_clock,
            _CLOCK,
        ),
        (rf"\b(?:(?P<which>next|this|coming)\s+)?{EN_WEEKDAY_OR_SHORT}\b", _en_weekday, _WEEK),
        # ---- Chinese (folded to simplified)
        (r"大后天", _days(3), _DAY),
        (r"后天", _days(2), _DAY),
        (r"明(?:天|日|晚|早|儿)", _days(1), _DAY),
        (r"今(?:天|日|晚|早|儿)", _days(0), _DAY),
        (
            rf"(?:接下来|未来|这|今后|往后)(?:的)?(?P<count>{_ZH_NUM})(?:个)?"
            r"(?P<unit>天|日|周|星期|礼拜|月|小时|钟头)",
            _zh_duration,
            _SPAN,
        ),
        (
            rf"{_RUN}(?P<count>{_ZH_NUM})(?:个)?(?P<unit>天|日|周|星期|礼拜|月|小时|钟头)(?:之|以)?内",
            _zh_duration,
            _SPAN,
        ),
        (
            rf"(?P<which>下下|下|这|本|上)?(?:个)?(?P<day>{ZH_WEEKDAY})",
            _zh_weekday,
            _WEEK,
        ),
        (rf"下下(?:个)?{ZH_WEEK}(?!末)", _sunday(2), _WEEK),
        (rf"下(?:个)?{ZH_WEEK}末?", _sunday(1), _WEEK),
        (rf"(?:这|本)?(?:个)?周末|(?:这|本)(?:个)?{ZH_WEEK}", _sunday(0), _WEEK),
        (r"下(?:个)?月(?:底|末)?", _month_end(1), _MONTH),
        (r"(?:这|本)(?:个)?月(?:底|末)?|月(?:底|末)", _month_end(0), _MONTH),
        (r"今年(?:年底|年末|底)?|年(?:底|末)", _year_end, _YEAR),
        (
            rf"{_RUN}(?P<month>{_ZH_NUM})\s*月\s*(?P<day>{_ZH_NUM})\s*(?:日|号)",
            _zh_month_day,
            _YEAR,
        ),
        (rf"(?<!月){_RUN}(?P<day>{_ZH_NUM})\s*(?:日|号)", _zh_day_of_month, _MONTH),
        (
            rf"(?P<part>{CN_DAY_PART})?" + _RUN + r"(?P<hour>[0-9一二两三四五六七八九十]+)"
            r"(?:点|:00|时)(?P<half>半)?(?:钟)?(?=之前|以前|前|为止)",
            _zh_clock,
            _CLOCK,
        ),
    )
)


def _spaces(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def _starts_something(text: str, start: int, end: int) -> bool:
    """Whether the phrase at ``text[start:end]`` is when something starts or started ("starting
    next week", 下周开始, "since Monday", "last Friday"); "from Monday until Friday" keeps its end."""
    return bool(
        _START_AFTER.match(text[end : end + 8])
        or _START_BEFORE.search(text[max(0, start - 16) : start])
    )


# Words that bound a time ("until Friday", 到週五, 週五之前) and words that name which one ("next
# Friday", 這週五): with them a time ends a habit ("every night until Friday"); without them a
# weekday in a habit is one more day of it.
_BOUND_BEFORE = re.compile(
    r"(?:\b(?:until|till|til|through|thru|by|before|up\s+to)\s+(?:the\s+)?|(?:到|直到|至|截至|截止)\s*)$"
)
_BOUND_AFTER = re.compile(r"^\s*(?:之前|以前|前|为止)")
_WHICH = re.compile(r"\b(?:this|next|coming)\b|^(?:这|本|下)")
# A past event's date ("the car was bought on March 3rd") is when it happened, not an end.
_PAST = re.compile(
    r"\b(?:was|were|bought|moved|married|started|joined|adopted|arrived|opened|built|signed)\b"
)


def _bounded(text: str, match: re.Match[str]) -> bool:
    start, end = match.span()
    return bool(
        _BOUND_BEFORE.search(text[max(0, start - 16) : start])
        or _BOUND_AFTER.match(text[end : end + 4])
        or _WHICH.search(match.group(0).strip())
    )


def _ends_it(
    text: str,
    match: re.Match[str],
    names: int,
    *,
    period: bool,
    cycle: int,
    standing: bool,
    past: bool,
    bounded_only: bool = False,
) -> bool:
    """Whether the phrase ``match`` (naming ``names``) can be the end of the fact: a clock time
    in a standing rule or a habit repeats; in a habit that repeats every ``cycle`` a time of that
    cycle or shorter repeats with it (a weekday in a weekly one) and a longer one ends it only
    when bounded or named ("every night this week", "every morning until Friday"); a past
    event's date is when it happened."""
    if names == _SPAN:
        return True
    if names == _CLOCK:
        return not (standing or cycle or bounded_only)
    if cycle and names <= cycle:
        # one turn of the habit, unless the sentence names which period ("my shift this week")
        return period and bool(_WHICH.search(match.group(0).strip()))
    bounded = _bounded(text, match)
    if bounded_only and not (bounded or period or names == _DAY):
        return False
    if cycle and not bounded:
        return period
    # a date said in the past tense is when it happened ("was bought on March 3rd"); a period
    # or a day keeps its end ("I was told I'm off this week")
    return bounded or period or names == _DAY or not past


def expires_at(
    text: str, sent_at: datetime, zone: ZoneInfo | str = "UTC", *, bounded_only: bool = False
) -> datetime | None:
    """When the fact ``text`` states stops being true (UTC), read relative to ``sent_at`` in
    the household's ``zone``; None for a fact with no end (or none this can read).
    ``bounded_only``: see ``stated_end``."""
    if isinstance(zone, str):
        zone = household_zone(zone)
    if sent_at.tzinfo is None:
        sent_at = sent_at.replace(tzinfo=UTC)
    folded = fold(text)
    if _ATTRIBUTE.search(folded):
        return None
    cycle = repeating_cycle(folded)
    past = bool(_PAST.search(folded))
    folded = _RECURRING.sub(_spaces, folded)
    folded = REPEATING_TIMES.sub(_spaces, folded)
    # A standing rule ("never … before 8am", 週末不要…) repeats its clock times and weekends.
    standing = is_standing_rule(folded)
    if standing:
        folded = STANDING_WEEKEND.sub(_spaces, folded)
    try:
        now = _Now(sent_at.astimezone(zone), zone)
    except OverflowError:
        return None  # sent at the calendar's very end or start, where the zone has no day
    found: list[tuple[datetime, bool]] = []
    for pattern, handler, names in _PHRASES:
        for match in list(pattern.finditer(folded)):
            start, end = match.span()
            if not folded[start:end].strip():
                continue
            if _starts_something(folded, start, end) or not _ends_it(
                folded,
                match,
                names,
                period=isinstance(handler, _Period),
                cycle=cycle,
                standing=standing,
                past=past,
                bounded_only=bounded_only,
            ):
                folded = _blank(folded, start, end)
                continue
            moment = handler(match, now)
            folded = _blank(folded, start, end)
            if moment is not None and moment > sent_at:
                found.append((moment, names == _CLOCK))
    if not found:
        return None
    # A clock time ("until 5pm") is the end only beside nothing or "today"; a daily time
    # inside a longer period ("before 10am for the next two weeks") is not.
    end_of_today = now.through(now.today) or sent_at
    longer = [moment for moment, is_clock in found if not is_clock and moment > end_of_today]
    if longer:
        return max(longer)
    clocks = [moment for moment, is_clock in found if is_clock]
    return min(clocks) if clocks else max(moment for moment, _ in found)


def stated_end(text: str, sent_at: datetime, zone: ZoneInfo | str = "UTC") -> datetime | None:
    """The end a fact typed or told as it is (the Add and Edit forms, ``manage_memory``, the
    CLI, ``Curator.remember``) states: only a bounded one — "until Friday", "till the 15th",
    "this week", 這週都, 下周都, "for the next three days", tomorrow. A bare day or clock time
    ("The cleaner comes on Thursday", "Prefers meetings before 3pm", 晚上十點前睡覺) is most
    often a habit when nobody reviews the reading, and a durable fact that expired on its own
    would leave every prompt; a conversation's proposals keep the full reading
    (``expires_at``), which a person sees in Review."""
    return expires_at(text, sent_at, zone, bounded_only=True)


def has_end(text: str) -> bool:
    """Whether ``text`` says when its fact ends (read as if said now, in UTC)."""
    return expires_at(text, datetime.now(UTC)) is not None
