"""Months, weekdays, dates and durations, in English and Chinese, with the calendar's bounds.

One month table for every reader ("jan", "January", "sept", 3月, 三月), and one weekday table
("monday", "mon", "Mondays", 星期一, 週一, 周1, 禮拜天: Monday is 0, as ``date.weekday()``). Dates are read with or
without their year ("2026-03-05", "March 5, 2026", 2026年3月5日, "March 5", "5th of March",
3月5日, 三月五號); a date the calendar does not have (February 30, month 13, year 0) is no date.
Durations ("99999999 days", "999999 months", 10^20 hours) longer than ``MAX_DURATION`` are no
usable value: every function here answers None rather than raise OverflowError or ValueError.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from ..text import fold
from .numbers import parse_number

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            "january jan",
            "february feb",
            "march mar",
            "april apr",
            "may",
            "june jun",
            "july jul",
            "august aug",
            "september sept sep",
            "october oct",
            "november nov",
            "december dec",
        ),
        start=1,
    )
    for name in names.split()
}
# Any month's name (longest first, so "sept" is not read as "sep" and a "t").
MONTH_NAME = "|".join(sorted(MONTHS, key=len, reverse=True))
# The one weekday table. English names (Monday first, as ``date.weekday()``), their stems
# ("wednes" + "day") and short forms ("wed", "thu", "tues"); in Chinese a week word (周, 星期,
# 礼拜: 週 and 禮拜 fold to these, see ``webapp.text.fold``) and the day's mark (一 … 六, 日
# or 天 for Sunday, or a digit 1-7).
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
EN_WEEKDAY_STEM = "(?:" + "|".join(name.removesuffix("day") for name in WEEKDAYS) + ")"
EN_WEEKDAY = EN_WEEKDAY_STEM + "day"
# A weekday in full or short ("mon", "tue", "wed", "thu" … "sunday"), its first three letters
# captured as ``day``.
EN_WEEKDAY_OR_SHORT = (
    "(?P<day>" + "|".join(name[:3] for name in WEEKDAYS) + ")(?:day|sday|nesday|rsday|urday)?"
)
_ZH_DAY_MARKS = ("一1", "二2", "三3", "四4", "五5", "六6", "日天7")
ZH_WEEK = "(?:周|星期|礼拜)"
ZH_DAY_NUMERAL = "[" + "".join(marks[0] for marks in _ZH_DAY_MARKS) + "天]"  # no digit
ZH_DAY_MARK = ZH_DAY_NUMERAL[:-1] + "1-7]"
ZH_WEEKDAY = ZH_WEEK + ZH_DAY_MARK
# Monday to Friday said as a range: "monday to friday", "mon-fri", 周一到周五, 星期一至星期五.
WORKING_WEEK = (
    f"{WEEKDAYS[0]} to {WEEKDAYS[4]}",
    f"{WEEKDAYS[0][:3]}-{WEEKDAYS[4][:3]}",
    *(f"{week}一{to}{week}五" for week in ("周", "星期", "礼拜") for to in "到至"),
)
# A weekday in a text not folded, in either script (週一, 禮拜天, 星期三, 周五).
ZH_WEEKDAY_UNFOLDED = "(?:周|週|星期|礼拜|禮拜)" + ZH_DAY_NUMERAL
_WEEKDAY_NUMBERS = {
    **{name: number for number, name in enumerate(WEEKDAYS)},
    **{name[:3]: number for number, name in enumerate(WEEKDAYS)},
    **{
        week + mark: number
        for number, marks in enumerate(_ZH_DAY_MARKS)
        for mark in marks
        for week in ("周", "星期", "礼拜")
    },
}


def weekday_names(day: int) -> tuple[str, ...]:
    """Every folded name of weekday ``day`` (0 is Monday) but the short English one: "monday",
    "mondays", 周一, 周1, 星期一, 礼拜一 … (Sunday's with 日, 天 and 7)."""
    names = [
        name
        for name, number in _WEEKDAY_NUMBERS.items()
        if number == day and not (name.isascii() and len(name) == 3)
    ]
    return (*names, WEEKDAYS[day] + "s")


def weekday_number(name: str) -> int | None:
    """0 for "Monday", "mon", "mondays", 星期一, 周1, 禮拜一 (any case or script), 6 for
    周日, 星期天 or 礼拜7; None for any other word."""
    word = fold(name).strip().removesuffix(".")
    return _WEEKDAY_NUMBERS.get(word.removesuffix("s") if word.endswith("days") else word)


# A Chinese month or day number: digits or numerals up to 三十一.
_ZH_DAY_NUMBER = r"\d{1,2}|[一二三四五六七八九十]{1,3}"

# The longest stretch of time a phrase may name and still be read: a century.
MAX_DURATION = timedelta(days=36525)
_UNIT_DAYS = {"hour": 1 / 24, "day": 1, "week": 7, "month": 30.4375, "year": 365.25}


def month_number(name: str) -> int | None:
    """1 for "jan", "January" or "Jan."; None for any other word."""
    return MONTHS.get(name.casefold().rstrip("."))


def calendar_date(year: int, month: int, day: int) -> date | None:
    """That date, or None when the calendar has no such day (Feb 30, month 13, year 10000)."""
    try:
        return date(year, month, day)
    except (ValueError, OverflowError):
        return None


def month_day(month: float | None, day: float | None) -> int | None:
    """Month × 100 + day for a day of the year (February 29 included); None when there is no
    such day."""
    if month is None or day is None or month != int(month) or day != int(day):
        return None
    found = calendar_date(2000, int(month), int(day))
    return found.month * 100 + found.day if found else None


def shifted(day: date, days: float) -> date | None:
    """``day`` plus ``days``; None past the calendar's ends or ``MAX_DURATION``."""
    if abs(days) > MAX_DURATION.days:
        return None
    try:
        return day + timedelta(days=days)
    except OverflowError:
        return None


def add_months(day: date, months: int) -> date | None:
    """The same day ``months`` later (the month's last day when it is shorter: Jan 31 + 1
    month is Feb 28); None past the calendar's ends or ``MAX_DURATION``."""
    if abs(months) * _UNIT_DAYS["month"] > MAX_DURATION.days:
        return None
    year, month = divmod(day.month - 1 + months, 12)
    year, month = day.year + year, month + 1
    first_of_next = calendar_date(year + month // 12, month % 12 + 1, 1)
    if first_of_next is None or not 1 <= year <= 9999:
        return None
    return date(year, month, min(day.day, (first_of_next - timedelta(days=1)).day))


def duration(count: float, unit: str) -> timedelta | None:
    """``count`` hours, days, weeks or years as a timedelta (a month counts 30.4375 days);
    None for an unknown unit, a negative count or one longer than ``MAX_DURATION``."""
    per = _UNIT_DAYS.get(unit)
    if per is None or count < 0 or count * per > MAX_DURATION.days:
        return None
    return timedelta(days=count * per)


def later(moment: datetime, span: timedelta) -> datetime | None:
    """``moment`` plus ``span``; None when that is past year 9999."""
    try:
        return moment + span
    except OverflowError:
        return None


# ------------------------------------------------------------------ dates in a text
_MONTH = rf"(?P<mon>{MONTH_NAME})\.?"
_ORDINAL_SUFFIX = r"(?:st|nd|rd|th)?"
# The year first, as ISO 8601 writes a date (and as 2026/3/5 and 2026.3.5 do).
YEAR_FIRST_DATE = r"\b(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})\b"
DATE_PATTERNS: tuple[re.Pattern[str], ...] = (
    # with the year first: a date that happens once
    re.compile(YEAR_FIRST_DATE),
    re.compile(r"(?P<y>\d{4})\s*年\s*(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*[日号號]?"),
    re.compile(rf"\b{_MONTH}\s+(?P<d>\d{{1,2}}){_ORDINAL_SUFFIX},?\s+(?P<y>\d{{4}})\b"),
    re.compile(rf"\b(?P<d>\d{{1,2}}){_ORDINAL_SUFFIX}\s+(?:of\s+)?{_MONTH},?\s+(?P<y>\d{{4}})\b"),
    # a day of the year: a birthday, "March 3", 3月5日
    re.compile(rf"\b{_MONTH}\s+(?P<d>\d{{1,2}}){_ORDINAL_SUFFIX}\b"),
    re.compile(rf"\b(?P<d>\d{{1,2}}){_ORDINAL_SUFFIX}\s+(?:of\s+)?{_MONTH}(?![a-z])"),
    re.compile(rf"(?P<m>{_ZH_DAY_NUMBER})\s*月\s*(?P<d>{_ZH_DAY_NUMBER})\s*[日号號]"),
)
MONTH_ALONE = re.compile(
    r"\b(?P<mon>january|february|march|april|june|july|august|september|october|november"
    r"|december|"
    + "|".join(f"(?<={w} )may" for w in ("in", "by", "of", "until", "before", "after", "since"))
    + r")\b"
)


@dataclass(frozen=True)
class DateReading:
    """A date read from a text: its year when said, month and day, as written, and where."""

    year: int | None
    month: int
    day: int
    text: str
    start: int
    end: int

    @property
    def day_of_year(self) -> int:
        """Month × 100 + day: what a birthday and "March 3" share whatever the year."""
        return self.month * 100 + self.day

    @property
    def date(self) -> date | None:
        """The date itself when the year is said."""
        return calendar_date(self.year, self.month, self.day) if self.year else None


def _date_reading(match: re.Match[str]) -> DateReading | None:
    parts = match.groupdict()
    month = month_number(parts["mon"]) if parts.get("mon") else parse_number(parts["m"])
    day = parse_number(parts["d"])
    year = int(parts["y"]) if parts.get("y") else None
    if month is None or day is None or month_day(month, day) is None:
        return None
    if year is not None and calendar_date(year, int(month), int(day)) is None:
        return None  # February 29 of a year without one, year 0
    said = match.group(0)
    start = match.start() + len(said) - len(said.lstrip())
    end = match.end() - len(said) + len(said.rstrip())
    return DateReading(year, int(month), int(day), said.strip(), start, end)


def dates(folded: str, *, keep_length: bool = False) -> tuple[str, list[DateReading]]:
    """Every date in ``folded`` and the text without them (each blanked by as many spaces
    with ``keep_length``, so positions keep pointing at ``folded``, else by one)."""
    found: list[DateReading] = []
    text = folded
    for pattern in DATE_PATTERNS:

        def read(match: re.Match[str]) -> str:
            reading = _date_reading(match)
            if reading is None:
                return match.group(0)
            found.append(reading)
            return " " * len(match.group(0)) if keep_length else " "

        text = pattern.sub(read, text)
    return text, found


def months_alone(folded: str) -> tuple[str, list[tuple[int, str]]]:
    """Months named without a day ("ends in August", "until May") as (number, as written),
    and the text without them."""
    found: list[tuple[int, str]] = []

    def read(match: re.Match[str]) -> str:
        found.append((MONTHS[match["mon"]], match.group(0)))
        return " "

    return MONTH_ALONE.sub(read, folded), found
