"""When a statement says its fact held: a year it is dated by, read from its own words.

``dated(text, this_year)`` reads the year a statement or a memory is dated by: an explicit
year framed as a time ("as of 2019", "in 2022", "since 2025", "back in 2018", "(2026)";
2019年時/2019年的時候, 2026年起, 从2025年起), or a year said relatively ("last year", "two
years ago"; 去年, 前年, 三年前). ``older(statement, memory)`` says a statement is dated before
the memory it would replace: both dated and the statement's year earlier, or the memory undated
and the statement said of a past year or framed as the past ("used to", "back then"; 以前,
當時/当时). Such a statement never replaces the memory (``extraction.sureness``).

Read after ``fold`` (case, width, 繁→简): each list is written once, in 简体 and lower case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text import fold

_YEAR = r"(?:19|20)\d\d"
# An explicit year framed as a time: "as of 2019", "in 2022", "since 2025", "(2026)".
_EN_YEAR = re.compile(
    rf"(?<![\w'])(?:as\s+of|in|since|from|back\s+in|during|until|till|by|circa|around)"
    rf"\s+(?:(?:early|late|mid|the\s+end\s+of|the\s+start\s+of|january|february|march|april|"
    rf"may|june|july|august|september|october|november|december|spring|summer|autumn|fall|"
    rf"winter)[\s,-]+)?({_YEAR})(?!\d)|\(\s*({_YEAR})\s*\)|^\s*({_YEAR})\s*[:,]"
)
_ZH_YEAR = re.compile(rf"(?<!\d)({_YEAR})\s*年")
_EN_RELATIVE = re.compile(
    r"(?<![\w'])(?:(last)\s+year|a\s+year\s+ago|(two|three|four|five|\d+)\s+years\s+ago)(?![\w'])"
)
_ZH_RELATIVE = re.compile(r"(去年)|(前年)|(大前年)|([一二两三四五六七八九十\d]+)年前")
_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5}
_ZH_NUMBERS = {
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
    "十": 10,
}
# Framed as the past, without a year: "used to", "back then"; 以前, 当时.
_EN_PAST = re.compile(
    r"(?<![\w'])(?:used\s+to|back\s+then|at\s+the\s+time|previously|formerly|years\s+ago|"
    r"in\s+the\s+past|once\s+was|was\s+once)(?![\w'])"
)
_ZH_PAST = re.compile(r"以前|之前|从前|当时|那时|那个时候|过去|早年|曾经")


@dataclass(frozen=True)
class Dated:
    """The year a text is dated by, and the words that say so (as folded)."""

    year: int
    words: str


def dated(text: str, this_year: int) -> Dated | None:
    """The year ``text`` is dated by (the earliest it names), or None."""
    folded = fold(text)
    found: list[Dated] = []
    for match in _EN_YEAR.finditer(folded):
        year = next(group for group in match.groups() if group)
        found.append(Dated(int(year), match.group(0).strip()))
    for match in _ZH_YEAR.finditer(folded):
        found.append(Dated(int(match.group(1)), match.group(0)))
    for match in _EN_RELATIVE.finditer(folded):
        if match.group(1) or "a year" in match.group(0):
            back = 1
        else:
            number = match.group(2)
            back = int(number) if number.isdigit() else _NUMBERS[number]
        found.append(Dated(this_year - back, match.group(0)))
    for match in _ZH_RELATIVE.finditer(folded):
        if match.group(1):
            back = 1
        elif match.group(2):
            back = 2
        elif match.group(3):
            back = 3
        else:
            number = match.group(4)
            back = int(number) if number.isdigit() else _ZH_NUMBERS.get(number, 0)
        if back:
            found.append(Dated(this_year - back, match.group(0)))
    return min(found, key=lambda d: d.year) if found else None


def said_of_the_past(text: str) -> str | None:
    """The words that frame ``text`` as the past ("used to", 以前), or None."""
    folded = fold(text)
    match = _EN_PAST.search(folded) or _ZH_PAST.search(folded)
    return match.group(0) if match else None


def older(statement: str, memory: str, this_year: int, *, replacing: bool = True) -> str | None:
    """The words dating ``statement`` before ``memory`` (it never replaces it), or None.

    Against an undated memory, a statement of a past year is older only when it would replace
    the memory (``replacing``): "Bought the dishwasher in 2021" beside "The dishwasher is a
    Bosch" is a fact of its own; "last year" and "used to" always say the past."""
    said = dated(statement, this_year)
    kept = dated(memory, this_year)
    if said is not None and kept is not None:
        return said.words if said.year < kept.year else None
    if kept is not None:
        return None
    relative = _EN_RELATIVE.search(fold(statement)) or _ZH_RELATIVE.search(fold(statement))
    if said is not None and said.year < this_year and (replacing or relative):
        return said.words
    return said_of_the_past(statement)
