"""One language layer (issue 32): a phrase's value has one answer in every judgement, and an
absurd value is no usable value, never an exception (issue 35, #14).

Each value is read through the modules people rely on — the similarity judge (``analyse``), the
curation rules (``features``, ``compare``), the extraction's validity (``expires_at``) and its
changes of mind (``replaced_content``) — not only through ``webapp.language``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from webapp.attention.pairs import compare, features
from webapp.extraction.change_targets import find_target, replaced_content
from webapp.extraction.changes import match_change
from webapp.extraction.run import extract_conversation
from webapp.language import (
    MAX_DURATION,
    add_months,
    calendar_date,
    chinese_number,
    duration,
    month_number,
    parse_count,
    parse_number,
    shifted,
)
from webapp.language.validity import expires_at
from webapp.settings import Settings
from webapp.similarity import analyse
from webapp.similarity.pair_parts import compare_parts
from webapp.stores import ConversationStore, Memory
from webapp.stores.timefmt import to_iso

TAIPEI = ZoneInfo("Asia/Taipei")
SENT = datetime(2026, 3, 3, 4, 0, tzinfo=UTC)  # 12:00 in Taipei, a Tuesday


def _through(days: int) -> datetime:
    """Midnight in Taipei after the day ``days`` after SENT's local day, in UTC."""
    day = SENT.astimezone(TAIPEI).date() + timedelta(days=days + 1)
    return datetime.combine(day, time(0), tzinfo=TAIPEI).astimezone(UTC)


# ------------------------------------------------------------------ the readers themselves
@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("100", 100),
        ("１００", 100),  # full-width digits
        ("30,000", 30000),
        ("３０，０００", 30000),
        ("twenty-one", 21),
        ("ninety nine", 99),
        ("一百", 100),
        ("兩百", 200),
        ("两百五", 250),
        ("三千五", 3500),
        ("一千零五", 1005),
        ("一万二", 12000),
        ("兩萬二", 22000),
        ("两万二", 22000),
        ("十二万", 120000),
        ("一億", 100_000_000),
    ],
)
def test_numbers_in_digits_words_and_chinese(text: str, number: float) -> None:
    assert parse_number(text) == number


@pytest.mark.parametrize(
    "text",
    ["9" * 5000, "1" + "0" * 20, "99999999999999999999.5", "九" * 30, "一万亿亿", "一起", "many"],
)
def test_an_absurd_number_or_a_word_is_no_usable_value(text: str) -> None:
    assert parse_number(text) is None
    assert parse_count(text) is None


def test_counts_quantifiers_and_the_calendar() -> None:
    assert parse_count("a couple of") == 2 and parse_count("a few") == 3
    assert parse_count("1.5") is None
    assert chinese_number("二十五") == 25
    assert [month_number(w) for w in ("jan", "Sept.", "september", "may", "mayday")] == [
        1,
        9,
        9,
        5,
        None,
    ]
    assert calendar_date(2026, 2, 30) is None and calendar_date(2028, 2, 29) is not None
    assert add_months(date(2026, 1, 31), 1) == date(2026, 2, 28)
    assert add_months(date(9999, 12, 1), 1) is None and shifted(date.max, 1) is None
    assert duration(99999999, "day") is None and duration(10**20, "hour") is None
    assert duration(3, "week") == timedelta(days=21)
    assert duration(MAX_DURATION.days, "day") == MAX_DURATION


# ------------------------------------------------------------------ one answer in every judgement
@pytest.mark.parametrize(
    ("text", "count", "unit", "days"),
    [
        ("Not drinking for the next twenty-one days", 21, "day", 21),
        ("接下來一百天不喝酒", 100, "天", 100),
        ("接下来一百天不喝酒", 100, "天", 100),
    ],
    ids=["en", "zh-Hant", "zh-Hans"],
)
def test_a_count_reads_the_same_in_similarity_curation_and_validity(
    text: str, count: int, unit: str, days: int
) -> None:
    """一百 was 100 to the similarity judge, nothing to the curation rules and no number to the
    expiry reader; "twenty-one days" set no expiry."""
    assert [v.amount for v in analyse(text).values if v.kind == f"count:{unit}"] == [count]
    assert [v.amount for v in features(text).values if v.kind == unit] == [count]
    assert expires_at(text, SENT, TAIPEI) == _through(days)


@pytest.mark.parametrize(
    ("morning", "evening", "vague"),
    [
        ("Alarm at 07:00", "Alarm at 19:00", "Alarm at 7:00"),
        ("鬧鐘設在早上七點", "鬧鐘設在晚上七點", "鬧鐘設在七點"),
        ("闹钟设在早上七点", "闹钟设在晚上七点", "闹钟设在七点"),
    ],
    ids=["en", "zh-Hant", "zh-Hans"],
)
def test_a_clock_time_is_ambiguous_in_the_same_cases_everywhere(
    morning: str, evening: str, vague: str
) -> None:
    """07:00 (a leading zero) and 早上七點 say which half of the day; 7:00 and 七點 do not. The
    judge read 07:00 as possibly 19:00 (no contradiction), the curation rules did not."""
    for text, ambiguous in ((morning, False), (evening, False), (vague, True)):
        assert [v.ambiguous for v in analyse(text).values if v.kind == "time"] == [ambiguous]
        assert [v.ambiguous for v in features(text).values if v.kind == "time"] == [ambiguous]
    verdict = compare(morning, evening)
    assert verdict is not None and verdict.kind == "contradiction"
    assert "time" in {
        kind for kind, _, _ in compare_parts(analyse(morning), analyse(evening)).clash
    }
    assert compare(vague, evening) is None or compare(vague, evening).kind != "contradiction"  # type: ignore[union-attr]


def _memory(content: str) -> Memory:
    return Memory(id="m1", content=content, created_at=to_iso(SENT), updated_at=to_iso(SENT))


@pytest.mark.parametrize(
    ("memory", "said", "edited"),
    [
        (
            "Monthly rent is 1,200",
            "Switch the monthly rent to 1,500 from now on",
            "Monthly rent is 1,500",
        ),
        ("房租每月兩萬二", "以後房租改成一萬二", "房租每月一萬二"),
        ("房租每月两万二", "以后房租改成一万二", "房租每月一万二"),
    ],
    ids=["en", "zh-Hant", "zh-Hans"],
)
def test_a_change_of_mind_edits_the_value_it_reads_the_same_way(
    memory: str, said: str, edited: str
) -> None:
    """The change reader found no value in "1,500" (two numbers) or 一万二 (none), so it
    gave up on the English switch and replaced the whole Chinese clause (losing 每月)."""
    change = match_change(said)
    assert change is not None and change.kind == "switch"
    kept = _memory(memory)
    assert find_target(change, [kept]) == kept
    assert replaced_content(change, kept) == edited


# ------------------------------------------------------------------ absurd values never raise
ABSURD = [
    "I'm away for the next 99999999 days.",
    "The gym is closed for 999999 months.",
    "I'm offline for the next 100000000000000000000 hours.",
    "I'm busy for the next " + "9" * 5000 + " days.",
    "I'm travelling for the next 1,000,000,000 weeks.",
    "接下来99999999天我不在家。",
    "接下來99999999天我不在家。",
    "这9999999999个月内不喝酒。",
    "我這九千九百九十九萬天都不在家。",
    "I'm away until 2026-99-99.",
]


@pytest.mark.parametrize("text", ABSURD)
def test_an_absurd_duration_or_date_sets_no_expiry(text: str) -> None:
    assert expires_at(text, SENT, TAIPEI) is None
    analyse(text), features(text)  # and the judgements read it without raising


@pytest.mark.parametrize(
    "sent", [datetime(9999, 12, 31, 23, tzinfo=UTC), datetime(1, 1, 1, 0, 30, tzinfo=UTC)]
)
@pytest.mark.parametrize("zone", ["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago"])
@pytest.mark.parametrize(
    "text",
    [
        "Until tomorrow",
        "until 5pm",
        "for the next 3 days",
        "for an hour",
        "下下週五之前",
        "這個月底前",
        "till March 5",
    ],
)
def test_a_message_at_the_calendars_ends_sets_no_impossible_expiry(
    sent: datetime, zone: str, text: str
) -> None:
    found = expires_at(text, sent, zone)
    assert found is None or found > sent


def _extract(settings: Settings, *messages: str) -> list[tuple[str, str | None]]:
    conversations = ConversationStore.from_settings(settings)
    for message in messages:
        conversations.add_exchange("cli:one", message, "Noted.")
    result = extract_conversation(settings, "cli:one", caller=None)
    return sorted((item.content, item.expires_at) for item in result.queued)


@pytest.mark.parametrize(
    "absurd",
    [
        "Remember that I'm away for the next 99999999 days.",
        "Remember that the gym is closed for 999999 months.",
        "Remember that I'm offline for the next 100000000000000000000 hours.",
        "記住接下來99999999天我不在家。",
        "记住接下来99999999天我不在家。",
        "记住这9999999999个月内不喝酒。",
    ],
    ids=["days", "months", "hours", "zh-Hant", "zh-Hans", "zh-Hans-months"],
)
def test_the_rules_extraction_keeps_every_fact_of_a_thread_with_an_absurd_duration(
    settings: Settings, absurd: str
) -> None:
    """Extraction raised OverflowError/ValueError and lost the thread's other facts."""
    found = _extract(settings, absurd, "Remember that I prefer tea to coffee.")
    assert len(found) == 2
    assert all(expiry is None for _, expiry in found)
    assert "Prefers tea to coffee" in [content for content, _ in found]


def test_the_extract_command_survives_absurd_durations(data_dir: Path) -> None:
    """`memory-curator extract` as a real process: exit 0 and every fact proposed (it exited
    with a traceback)."""
    said = to_iso(datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1))
    messages = [
        "Remember that I'm away for the next 99999999 days.",
        "記住接下來99999999天我不在家。",
        "Remember that I prefer tea to coffee.",
    ]
    turns = []
    for text in messages:
        turns.append({"role": "user", "content": text, "timestamp": said})
        turns.append({"role": "assistant", "content": "Noted.", "timestamp": said})
    folder = data_dir / "conversations"
    folder.mkdir()
    thread = {"turns": turns, "createdAt": said, "trimmed": False}
    (folder / "conversations.json").write_text(json.dumps({"cli:one": thread}), "utf-8")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    result = subprocess.run(
        [sys.executable, "-m", "webapp", "extract", "--data-dir", str(data_dir), "--all"],
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    pending = json.loads((data_dir / "review.json").read_text("utf-8"))
    items = pending["items"] if isinstance(pending, dict) else pending
    assert len(items) == 3, items
