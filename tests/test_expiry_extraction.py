"""`memory-curator extract` as a real process: a fact said with a time ("for the next three
days", 這個月) is proposed, and saved, with the expiresAt it implies, counted from the time of
the message that said it, in the household's timezone (MEMORY_TIMEZONE)."""

from __future__ import annotations

import json
import os
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from tests.support.cli import run_cli
from tests.support.data import memories_and_review, write_thread
from tests.support.review import approve
from webapp.stores.timefmt import to_iso

TAIPEI = ZoneInfo("Asia/Taipei")


def end_of(day: date) -> str:
    """Midnight in Taipei after ``day``, as the files write it."""
    return to_iso(datetime.combine(day + timedelta(days=1), time(0), tzinfo=TAIPEI))


def test_a_proposal_carries_the_expiry_its_sentence_implies_and_approval_keeps_it(
    data_dir: Path,
) -> None:
    # Said two hours ago: the day it was said on is Taipei's, not necessarily today in UTC.
    said_at = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)
    write_thread(
        data_dir,
        said_at,
        "Remember that I'm working from home for the next three days.",
        "Remember that I prefer tea to coffee.",
    )
    result = run_cli("extract", "--all", data_dir=data_dir, env={"MEMORY_TIMEZONE": "Asia/Taipei"})
    assert result.returncode == 0, result.stderr
    memories, queue = memories_and_review(data_dir)
    pending = {item.content: item for item in queue.pending()}
    home = pending["Is working from home for the next three days"]
    local_day = said_at.astimezone(TAIPEI).date()
    assert home.expires_at == end_of(local_day + timedelta(days=3))
    assert pending["Prefers tea to coffee"].expires_at is None
    approve(queue, home.id, actor="dashboard")
    stored = {m.content: m for m in memories.get_all()}
    assert to_iso(stored["Is working from home for the next three days"].expires_at) == end_of(
        local_day + timedelta(days=3)
    )


def test_auto_mode_saves_the_expiry(data_dir: Path) -> None:
    said_at = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
    write_thread(data_dir, said_at, "記住我這個月都在台北。")
    result = run_cli(
        "extract",
        "--all",
        data_dir=data_dir,
        env={"MEMORY_TIMEZONE": "Asia/Taipei", "MEMORY_REVIEW_MODE": "auto"},
    )
    assert result.returncode == 0, result.stderr
    memories, _ = memories_and_review(data_dir)
    [memory] = memories.get_all()
    local_day = said_at.astimezone(TAIPEI).date()
    month_end = (local_day.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
    assert memory.expires_at is not None and to_iso(memory.expires_at) == end_of(month_end)


def test_a_bad_timezone_setting_is_refused_with_its_name(data_dir: Path) -> None:
    write_thread(data_dir, datetime.now(UTC), "Remember that I prefer tea.")
    result = run_cli("extract", "--all", data_dir=data_dir, env={"MEMORY_TIMEZONE": "Mars/Olympus"})
    assert result.returncode != 0
    assert "MEMORY_TIMEZONE must be a timezone name" in result.stderr + result.stdout
    assert not (data_dir / "review.json").exists()


def test_an_llm_fact_gets_its_expiry_from_the_message_it_came_from(data_dir: Path) -> None:
    """The LLM path: the same reading of time, from the evidence's message; when the LLM
    quoted too little to hold the time phrase, from the fact's own words."""
    import sys

    said_at = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)
    write_thread(data_dir, said_at, "btw I'm working from home this week, the office is shut")
    reply = json.dumps(
        [
            {
                "content": "Is working from home this week.",
                "category": "workflow",
                "confidence": 0.9,
                "evidence": "the office is shut",  # quoted too little: no time in it
            }
        ]
    )
    bin_dir = data_dir.parent / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "claude"  # answers as `claude --print` would
    fake.write_text(f"#!{sys.executable}\nimport sys\nsys.stdin.read()\nprint({reply!r})\n")
    fake.chmod(0o755)
    result = run_cli(
        "extract",
        "--all",
        data_dir=data_dir,
        env={
            "MEMORY_TIMEZONE": "Asia/Taipei",
            "MEMORY_LLM_PROVIDER": "claude-cli",
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        },
    )
    assert result.returncode == 0, result.stderr
    _, queue = memories_and_review(data_dir)
    [item] = queue.pending()
    local_day = said_at.astimezone(TAIPEI).date()
    sunday = local_day + timedelta(days=6 - local_day.weekday())
    assert item.extractor == "llm" and item.expires_at == end_of(sunday)
