"""Temporary situations get an expiry and standing rules none (issue 36), in the parser and in
the extraction rules that work without an LLM.

The development file ``tests/data/time/time-phrases.dev-h2.json`` holds each case; the held-out
file of the same form is only counted (``benchmarks/quality.py``), with its floors asserted here.
"""

from __future__ import annotations

import json
import time as time_module
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.support.cli import run_cli
from tests.support.data import memories_and_review, write_thread
from webapp.extraction.rules import match_sentence
from webapp.language.validity import expires_at, stated_end
from webapp.stores.timefmt import parse_ts, to_iso

DATA = Path(__file__).parent / "data" / "time"
BERLIN = ZoneInfo("Europe/Berlin")


def cases(name: str) -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((DATA / name).read_text("utf-8"))["cases"]
    return loaded


def last_day(case: dict[str, Any]) -> str | None:
    """The local date of the last day the parser's expiry holds (see tests/data/time/README)."""
    moment = expires_at(case["text"], parse_ts(case["said_at"]), case["timezone"])
    if moment is None:
        return None
    local = moment.astimezone(ZoneInfo(case["timezone"])) - timedelta(microseconds=1)
    return local.date().isoformat()


@pytest.mark.parametrize("case", cases("time-phrases.dev-h2.json"), ids=lambda c: c["id"])
def test_dev_situations_and_rules(case: dict[str, Any]) -> None:
    assert last_day(case) == case["expected_expiry_date"], case["text"]


def held_out(kind: str) -> list[dict[str, Any]]:
    return [c for c in cases("time-phrases.heldout-h3.json") if c["kind"] == kind]


def test_held_out_temporary_situations_get_their_expiry() -> None:
    temporary = held_out("temporary")
    found = sum(last_day(c) == c["expected_expiry_date"] for c in temporary)
    # Counts only: nobody tunes against its cases.
    assert found / len(temporary) >= 0.9, f"expiry found {found}/{len(temporary)}"


def test_held_out_permanent_rules_get_no_expiry() -> None:
    permanent = held_out("permanent")
    kept = sum(last_day(c) is None for c in permanent)
    # Counts only: nobody tunes against its cases (issue 36's floor: 0.95).
    assert kept / len(permanent) >= 0.95, f"given none {kept}/{len(permanent)}"


WEDNESDAY = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "Never turn on the bedroom speaker before 8am, my partner works nights",
        "Don't start the robot vacuum before 10 am",
        "不要在晚上十點以後開客廳的燈",
        "週末不要設鬧鐘",
        "我们家周一和周四收垃圾",
        "Quiet hours run from 10pm till 7am",
    ],
)
def test_a_standing_rule_keeps_no_expiry(text: str) -> None:
    assert expires_at(text, WEDNESDAY, BERLIN) is None


@pytest.mark.parametrize(
    "text",
    [
        "Rent is due on the 1st of every month",
        "The gardener comes every two weeks on Monday",
        "Our lease renews every year on 1 September",
        "Alex takes the bins out on Thursday nights",
        "The heating should be off until 6am on weekdays",
        "Garbage night is Tuesday",
        "每週二和週五是資源回收日",
        "社區管理費要在每個月十號前繳",
        "每到月底記得提醒我繳信用卡費",
        "每个月 5 号交物业费",
        "每隔两周周六打扫",
        "以後週三都由我接小孩",
        "小孩平日九點睡，週末十點睡",
    ],
)
def test_a_time_inside_a_habit_repeats_with_it(text: str) -> None:
    # A weekday in a weekly habit, a day of the month in a monthly one, a clock time in any:
    # one more turn of the habit, not the day it ends.
    assert expires_at(text, WEDNESDAY, BERLIN) is None


@pytest.mark.parametrize(
    ("text", "last_day"),
    [
        ("Feed the cat every night this week", date(2026, 12, 6)),
        ("I'm taking antibiotics every morning until Sunday", date(2026, 12, 6)),
        ("Every evening until the 15th, feed the neighbour's cat", date(2026, 12, 15)),
        ("这个月每周六都加班", date(2026, 12, 31)),
        ("每天都在台中待到週五", date(2026, 12, 4)),
        ("每天早上都要送小孩到下週三", date(2026, 12, 9)),
    ],
)
def test_a_habit_with_a_bound_ends_with_it(text: str, last_day: date) -> None:
    ends = expires_at(text, WEDNESDAY, BERLIN)
    assert ends == datetime.combine(last_day + timedelta(days=1), time(0), tzinfo=BERLIN)


def test_a_past_event_s_date_is_not_an_end() -> None:
    assert expires_at("The car was bought on March 3rd", WEDNESDAY, BERLIN) is None
    assert expires_at("We were told the road is closed until March 3rd", WEDNESDAY, BERLIN)
    # only a date: a period said beside a past tense keeps its end
    assert expires_at("I was told I'm off this week", WEDNESDAY, BERLIN) == datetime.combine(
        date(2026, 12, 7), time(0), tzinfo=BERLIN
    )


@pytest.mark.parametrize(
    "text",
    [
        "Prefers meetings before 3pm",
        "Goes to bed by 11pm",
        "Alex works until 6pm",
        "The cleaner comes on Thursday",
        "The bins go out on Tuesday",
        "喜歡晚上十點前睡覺",
        "小孩晚上八點前要上床",
        "垃圾在週二收",
    ],
)
def test_a_typed_fact_s_bare_day_or_clock_time_is_no_end(text: str) -> None:
    # The full reading gives these an end (a conversation's proposal shows it in Review);
    # typed or told through manage_memory, nobody sees the reading, and the fact would leave
    # every prompt the next day.
    assert expires_at(text, WEDNESDAY, BERLIN) is not None
    assert stated_end(text, WEDNESDAY, BERLIN) is None


@pytest.mark.parametrize(
    ("text", "last_day"),
    [
        ("Is in Tokyo until Friday", date(2026, 12, 4)),
        ("Staying at my mum's this week", date(2026, 12, 6)),
        ("我這週都在台中", date(2026, 12, 6)),
        ("下周都出差", date(2026, 12, 13)),
        ("Off work for the next three days", date(2026, 12, 5)),
        ("Grandma is with us till the 15th", date(2026, 12, 15)),
        ("The plumber comes tomorrow", date(2026, 12, 3)),
        # a person called Bill is not a monthly bill
        ("Bill is staying with us until Friday", date(2026, 12, 4)),
    ],
)
def test_a_typed_fact_keeps_a_bounded_end(text: str, last_day: date) -> None:
    ends = stated_end(text, WEDNESDAY, BERLIN)
    assert ends == datetime.combine(last_day + timedelta(days=1), time(0), tzinfo=BERLIN)


def _seconds(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time_module.perf_counter()
        expires_at(text, WEDNESDAY, BERLIN)
        best = min(best, time_module.perf_counter() - started)
    return best


@pytest.mark.parametrize("run", ["1", "一", "十", "1点", "1月", "12一"])
def test_a_long_run_of_numerals_is_read_in_one_pass(run: str) -> None:
    # Ten thousand digits took 4.7 s (a number pattern tried from every place inside the run
    # read the rest of it again): a remembered fact's words are read on every add. Compared
    # with an ordinary text of the same length in the same run, not against a clock.
    hostile = run * (10_000 // len(run))
    ordinary = ("I am in Lisbon and the kids are fine " * 300)[: len(hostile)]
    assert _seconds(hostile) < 20 * _seconds(ordinary) + 0.05


def test_a_one_off_clock_time_still_ends_the_fact() -> None:
    ends = expires_at("I'm at the office until 5pm", WEDNESDAY, BERLIN)
    assert ends == datetime.combine(date(2026, 12, 2), time(17), tzinfo=BERLIN)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("I'm in Lisbon until Friday", "Is in Lisbon until Friday"),
        ("Staying at my mum's this week", "Staying at my mum's this week"),
        ("我這週都在台中", "這週都在台中"),
        ("下周都出差", "下周都出差"),
    ],
)
def test_the_rules_propose_a_temporary_situation(text: str, fact: str) -> None:
    found = match_sentence(text)
    assert found is not None and found.content.rstrip(".") in (fact, text)


@pytest.mark.parametrize(
    "text", ["Book a table for Friday", "Turn off the lights until 5pm", "Play jazz this week"]
)
def test_a_request_with_a_date_is_not_a_situation(text: str) -> None:
    assert match_sentence(text) is None


def test_extract_without_an_llm_proposes_lisbon_with_its_expiry(data_dir: Path) -> None:
    said_at = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
    write_thread(
        data_dir,
        said_at,
        "I'm in Lisbon until Friday.",
        "Never turn on the bedroom speaker before 8am, my partner works nights.",
    )
    result = run_cli(
        "extract", "--all", data_dir=data_dir, env={"MEMORY_TIMEZONE": "Europe/Berlin"}
    )
    assert result.returncode == 0, result.stderr
    _, queue = memories_and_review(data_dir)
    pending = {item.content: item for item in queue.pending()}
    [lisbon] = [item for text, item in pending.items() if "Lisbon" in text]
    local = said_at.astimezone(BERLIN).date()
    friday = local + timedelta(days=(4 - local.weekday()) % 7)
    assert lisbon.expires_at == to_iso(
        datetime.combine(friday + timedelta(days=1), time(0), tzinfo=BERLIN)
    )
    [speaker] = [item for text, item in pending.items() if "speaker" in text]
    assert speaker.expires_at is None
