"""One reader per concept (issue #45): one weekday table, one Chinese clock reader and one ISO
8601 reader, all in ``webapp.language``, give every caller the same answer, and no second table
or ISO parser grows back outside it.

The answers pinned here are what the readers answered before they became one (collected on
46 ISO inputs and 1,234 weekday and clock sentences; the ones that changed say why)."""

from __future__ import annotations

import ast
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from webapp.extraction.rules import match_sentence
from webapp.language import clock_times
from webapp.language.calendar import WEEKDAYS, weekday_names, weekday_number
from webapp.language.moments import iso_date, iso_time, read_time, time_read
from webapp.language.standing import repeating_cycle
from webapp.language.validity import expires_at, household_zone, stated_end
from webapp.prompts import memory_section
from webapp.similarity.facts import analyse
from webapp.stores.timefmt import EPOCH, parse_ts, time_problem
from webapp.text import fold
from webapp.web.blueprints.as_of import read_moment

WEBAPP = Path(__file__).resolve().parent.parent / "webapp"

# ------------------------------------------------------------------ ISO 8601
# (value, the UTC time the files read, why not): as the stores and the prompt read them before.
FILE_TIMES: list[tuple[Any, str | None, str | None]] = [
    ("2026-11-20T08:30:00.120Z", "2026-11-20T08:30:00.120000+00:00", None),
    ("2026-11-20T08:30:00.120z", "2026-11-20T08:30:00.120000+00:00", None),
    (" 2026-11-20T08:30Z ", "2026-11-20T08:30:00+00:00", None),
    ("2026-11-20", "2026-11-20T00:00:00+00:00", None),
    ("2026-11-20 08:30", "2026-11-20T08:30:00+00:00", None),
    ("2026-11-20T08:30:00-05:30", "2026-11-20T14:00:00+00:00", None),
    ("2026-11-20 08:30 +01:00", "2026-11-20T07:30:00+00:00", None),
    ("0001-01-02T00:00Z", "0001-01-02T00:00:00+00:00", None),
    ("9999-12-30T00:00Z", "9999-12-30T00:00:00+00:00", None),
    (1764000000000, "2025-11-24T16:00:00+00:00", None),
    ("", None, "'' cannot be read as a time"),
    ("２０２６-１１-２０T08:30Z", None, "'２０２６-１１-２０T08:30Z' cannot be read as a time"),
    ("2026-02-30T00:00Z", None, "'2026-02-30T00:00Z' cannot be read as a time"),
    ("2026-11-20T25:00", None, "'2026-11-20T25:00' cannot be read as a time"),
    ("2026-11-20T08:30ZZ", None, "'2026-11-20T08:30ZZ' cannot be read as a time"),
    ("0001-01-01T00:00+14:00", None, "'0001-01-01T00:00+14:00' is outside the calendar"),
    ("9999-12-31T23:59-14:00", None, "'9999-12-31T23:59-14:00' is outside the calendar"),
    ("9" * 100_000, None, f"'{'9' * 36}… (100,000 characters) cannot be read as a time"),
    ("1764000000000", None, "'1764000000000' cannot be read as a time"),
    (float("nan"), None, "nan cannot be read as a time"),
    (True, None, "is a JSON boolean, not a time"),
    ([], None, "is a JSON list, not a time"),
]


@pytest.mark.parametrize(("value", "utc", "why"), FILE_TIMES, ids=lambda v: repr(v)[:30])
def test_the_files_and_the_prompt_read_a_time_as_before(
    value: Any, utc: str | None, why: str | None
) -> None:
    read = read_time(value)
    assert (read.isoformat() if read else None) == utc
    assert time_read(value)[1] == time_problem(value) == why
    assert parse_ts(value) == (read if read is not None else EPOCH)
    # the prompt drops a memory whose end has passed, reading it as the store does
    memory = {"content": "Fact.", "category": "general", "expiresAt": value}
    kept = memory_section([memory], now=datetime(2026, 11, 21, tzinfo=UTC))
    assert ("Fact." in kept) == (read is None or read > datetime(2026, 11, 21, tzinfo=UTC))


ZONED = [value for value, utc, _ in FILE_TIMES if isinstance(value, str) and utc]


@pytest.mark.parametrize("text", ZONED)
def test_every_caller_reads_iso_text_with_the_one_reader(text: str) -> None:
    """The files, the as-of picker (outside an app the household's clock is UTC) and the
    Assist endpoint (which keeps the zone as said) name one moment for each text."""
    moment = iso_time(text)
    assert moment is not None and read_time(text) == moment.astimezone(UTC)
    assert read_moment(text) == read_time(text)
    said = iso_time(text, naive=None)
    assert said is not None and said.astimezone(UTC) == read_time(text)
    assert (said.tzinfo is None) == (iso_time(text, naive=UTC) != said)


def test_the_as_of_picker_keeps_its_clamping_and_takes_the_files_length_bound() -> None:
    # Times past the calendar's usable ends are clamped by the picker (not refused) as before.
    assert read_moment("9999-12-31T23:59:59Z") == datetime(9999, 12, 30, tzinfo=UTC)
    assert read_moment("0001-01-01T00:00+14:00") == datetime(1, 1, 2, tzinfo=UTC)
    assert read_moment("yesterday") is None and read_moment("") is None
    # Changed: 65+ characters were parsed by the picker's own reader (a 76-character time with
    # 50 fraction digits was a time); the one reader reads no text the files would not.
    long = "2026-11-20T08:30:00." + "1" * 50 + "+00:00"
    assert read_moment(long) is None and read_time(long) is None


def test_a_date_picker_value_is_read_by_the_one_reader() -> None:
    assert iso_date(" 2026-11-20 ") == date(2026, 11, 20)
    assert iso_date("2026-02-30") is None and iso_date("") is None
    assert iso_date("２０２６-１１-２０") is None and iso_date("9" * 100_000) is None


# ------------------------------------------------------------------ weekdays
WEDNESDAY_NAMES = [
    "Wednesday",
    "wednesday",
    "星期三",
    "週三",
    "周三",
    "禮拜三",
    "礼拜三",
    "周3",
    "星期3",
]


@pytest.mark.parametrize("name", WEDNESDAY_NAMES)
def test_a_weekday_reads_the_same_in_every_reader(name: str) -> None:
    assert weekday_number(name) == 2
    sent = datetime(2026, 11, 23, 9, tzinfo=UTC)  # a Monday
    zh = not name.isascii()
    end = stated_end(f"下{name}之前都在出差" if zh else f"Away until next {name}", sent)
    assert end is not None and end.date() == date(2026, 12, 3)  # next week's Wednesday, ended
    # Changed: similarity read 周3 as the number 3 and no day; it reads it as validity does.
    assert analyse(f"{name}去健身" if zh else f"Gym on {name}").days == {2}
    assert repeating_cycle(fold(f"每{name}都去" if zh else f"every {name}")) == 2


def test_short_and_plural_english_weekdays() -> None:
    """Validity reads "wed" (an end: "until wed"); a plural is a habit, no end; similarity
    reads "Wednesdays" but not "wed" (nor "sun" or "sat", which are words of their own)."""
    sent = datetime(2026, 11, 23, 9, tzinfo=UTC)
    end = stated_end("Away until wed", sent)
    assert end is not None and end.date() == date(2026, 11, 26)
    assert stated_end("Gym on wednesdays", sent) is None
    assert weekday_number("wed") == weekday_number("Wednesdays") == 2
    assert analyse("Gym on Wednesdays").days == {2} and analyse("Gym on wed").days is None
    assert analyse("Lies in the sun").days is None


def test_the_table_names_every_day_once() -> None:
    assert [weekday_number(name) for name in WEEKDAYS] == list(range(7))
    assert {weekday_number(n) for n in ("周日", "星期天", "禮拜日", "周7", "Sundays")} == {6}
    assert weekday_number("周八") is None and weekday_number("funday") is None
    names = [name for day in range(7) for name in weekday_names(day)]
    assert len(names) == len(set(names))


def test_a_number_after_a_week_word_is_no_weekday_when_more_digits_follow() -> None:
    assert analyse("每周15小时").days is None
    assert analyse("周1和周3游泳").days == {0, 2}  # changed: was no day (two numbers)


def test_monday_to_friday_is_the_working_week_in_every_form() -> None:
    # Changed: 礼拜一到礼拜五 and 星期一至星期五 read as Monday and Friday only.
    for said in (
        "周一到周五上班",
        "星期一至星期五上班",
        "禮拜一到禮拜五上班",
        "Monday to Friday gym",
    ):
        assert analyse(said).days == frozenset(range(5)), said


def test_a_habit_on_a_weekday_is_remembered_whatever_week_word_says_it() -> None:
    # Changed: only 周一 / 週一 started a habit; 星期一 and 禮拜天 were not remembered.
    for said in ("我週一去健身", "我星期一都去游泳", "我禮拜天都去教堂", "我礼拜六加班"):
        fact = match_sentence(said)
        assert fact is not None and fact.category == "general", said


# ------------------------------------------------------------------ the Chinese clock
def test_a_bound_at_night_reads_the_clock_as_the_language_clock_does() -> None:
    """晚上两点 is 02:00 for the clock reader (and for similarity); validity's own reading
    made "晚上两点前要回家" end at 14:00 the next afternoon. Changed to 02:00."""
    sent = datetime(2026, 11, 25, 7, tzinfo=UTC)  # 15:00 in Taipei
    taipei = household_zone("Asia/Taipei")
    _, (clock,) = clock_times(fold("晚上两点"))
    assert clock.minutes == 120
    for said, wanted in (
        ("晚上两点前要回家", datetime(2026, 11, 26, 2)),
        ("晚上十點前回家", datetime(2026, 11, 25, 22)),
        ("下午三点前交报告", datetime(2026, 11, 26, 15)),
        ("中午一点前吃饭", datetime(2026, 11, 26, 13)),
        ("十点半以前", datetime(2026, 11, 26, 10, 30)),
    ):
        end = expires_at(said, sent, taipei)
        assert end is not None and end.astimezone(taipei).replace(tzinfo=None) == wanted, said
    assert expires_at("25点前", sent, taipei) is None


# ------------------------------------------------------------------ no second reader
_EN_DAY = re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day", re.IGNORECASE)
_EN_STEMS = re.compile(r"\b(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)\|", re.I)
_ZH_DAY = re.compile(r"(?:周|週|星期|礼拜|禮拜)(?:[一二三四五六日天1-7])")
_ZH_CLASS = re.compile(r"(?:周|週|星期|礼拜|禮拜)\)?\[[一二三四五六日天]|\(\?:周\|")
_ISO = re.compile(r"\\d\{4\}\)?\[?-|\\d\{2\}:\\d\{2\}")


def _strings_and_parsers(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, text) of each string constant that is no docstring, and of each use of a
    standard-library date parser (``fromisoformat``, ``strptime``)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):  # a table, taken whole
            items = [*node.keys, *node.values] if isinstance(node, ast.Dict) else node.elts
            words = [i.value for i in items if isinstance(i, ast.Constant)]
            found.append((node.lineno, " ".join(w for w in words if isinstance(w, str))))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                found.append((node.lineno, node.value))
        elif isinstance(node, ast.Attribute) and node.attr in ("fromisoformat", "strptime"):
            found.append((node.lineno, f"parser {node.attr}"))
    return found


def second_readers(source: str) -> list[str]:
    """What in ``source`` is a weekday table or an ISO 8601 reader of its own."""
    found = []
    for line, text in _strings_and_parsers(ast.parse(source)):
        days = {m.group(0).casefold() for m in _EN_DAY.finditer(text)}
        zh_days = {m.group(0) for m in _ZH_DAY.finditer(text)}
        if (
            len(days) >= 3
            or len(zh_days) >= 2
            or _EN_STEMS.search(text)
            or _ZH_CLASS.search(text)
            or _ISO.search(text)
            or text.startswith("parser ")
        ):
            found.append(f"line {line}: {text[:60]!r}")
    return found


def test_the_check_finds_the_tables_and_readers_that_were_there() -> None:
    assert second_readers('NAMES = ("monday", "tuesday", "wednesday")')
    assert second_readers('DAYS = {"周一": 0, "周二": 1}')
    assert second_readers('P = r"(?:周|星期|礼拜)[一二三四五六日天1-7]"')
    assert second_readers('P = r"(?P<day>mon|tue|wed)"')
    assert second_readers('P = r"\\b(?P<y>\\d{4})[-/.](?P<m>\\d{1,2})"')
    assert second_readers("moment = datetime.fromisoformat(text)")
    assert not second_readers('HELP = "Keep it although it says until Friday."')
    assert not second_readers('def f():\n    """Every Monday, Tuesday and Wednesday."""')


def test_no_weekday_table_or_iso_reader_outside_the_language_layer() -> None:
    found = {
        str(path.relative_to(WEBAPP.parent)): hits
        for path in sorted(WEBAPP.rglob("*.py"))
        if "language" not in path.relative_to(WEBAPP).parts
        and (hits := second_readers(path.read_text(encoding="utf-8")))
    }
    assert found == {}, "read weekdays and ISO times with webapp.language (calendar, moments)"
