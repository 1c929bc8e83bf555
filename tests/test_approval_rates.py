"""Approval rates of the extractor, computed from a review queue whose decisions are known."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.review import approve
from tests.support.stores import memory_store
from webapp.extraction.approval import approval_stats, extraction_quality, format_quality
from webapp.stores import Proposal, ReviewQueue
from webapp.stores.timefmt import to_iso
from webapp.text import language_of

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)

# (content, category, extractor, model, decision, days ago); decision: as_is / edited / rejected
DECISIONS = [
    ("Prefers tea", "preference", "regex", None, "as_is", 1),
    ("Uses tabs", "convention", "regex", None, "edited", 2),
    ("Says hello", "general", "regex", None, "rejected", 3),
    ("Likes the number 7", "general", "regex", None, "rejected", 45),
    ("喜歡喝無糖綠茶", "preference", "llm", "openai/gpt-4o-mini", "as_is", 1),
    ("住在台北", "general", "llm", "openai/gpt-4o-mini", "as_is", 5),
    ("喜欢喝咖啡", "preference", "llm", "openai/gpt-4o-mini", "edited", 40),
    ("Waters the plants on Sundays", "workflow", "llm", "anthropic/claude-x", "as_is", 2),
    ("Owns a cat", "general", "llm", "anthropic/claude-x", "rejected", 60),
    ("每天早上跑步", "workflow", "llm", "anthropic/claude-x", "rejected", 10),
]


@pytest.fixture
def queue(tmp_path: Path) -> ReviewQueue:
    store = memory_store(tmp_path / "memories.json")
    queue = ReviewQueue(tmp_path / "review.json", store)
    for content, category, extractor, model, decision, _ in DECISIONS:
        [item] = queue.submit(
            [Proposal("add", content, category, extractor=extractor, model=model)],
            conversation_id="slack:1",
        )
        if decision == "rejected":
            queue.reject(item.id, actor="alice")
        else:
            approve(queue, item.id, content=content + " (edited)" if decision == "edited" else None)
    # Decisions dated as the table says (the queue stamps them now).
    records = json.loads(queue.path.read_text(encoding="utf-8"))
    for record, row in zip(records, DECISIONS, strict=True):
        record["decidedAt"] = to_iso(NOW - timedelta(days=row[5]))
    queue.path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return queue


def counts(tally):
    return (tally.as_is, tally.edited, tally.rejected)


def test_overall_figures_count_every_decision_exactly(queue):
    stats = approval_stats(queue.decided())
    assert counts(stats.overall) == (4, 2, 4)
    assert stats.overall.percent("approved") == 60.0
    assert stats.overall.percent("rejected") == 40.0
    assert {k: counts(v) for k, v in stats.by_extractor.items()} == {
        "rules": (1, 1, 2),
        "LLM openai/gpt-4o-mini": (2, 1, 0),
        "LLM anthropic/claude-x": (1, 0, 2),
    }
    assert {k: counts(v) for k, v in stats.by_category.items()} == {
        "preference": (2, 1, 0),
        "convention": (0, 1, 0),
        "general": (1, 0, 3),
        "workflow": (1, 0, 1),
    }
    assert {k: counts(v) for k, v in stats.by_language.items()} == {
        "en": (2, 1, 3),
        "zh-Hant": (2, 0, 1),
        "zh-Hans": (0, 1, 0),
    }
    assert stats.by_extractor["LLM anthropic/claude-x"].percent("rejected") == 66.7


def test_last_30_days_leaves_older_decisions_out(queue):
    recent, overall = extraction_quality(queue, now=NOW)
    assert recent.window == "Last 30 days" and overall.window == "Overall"
    assert counts(recent.overall) == (4, 1, 2)
    assert {k: counts(v) for k, v in recent.by_extractor.items()} == {
        "rules": (1, 1, 1),
        "LLM openai/gpt-4o-mini": (2, 0, 0),
        "LLM anthropic/claude-x": (1, 0, 1),
    }
    assert {k: counts(v) for k, v in recent.by_language.items()} == {
        "en": (2, 1, 1),
        "zh-Hant": (2, 0, 1),
    }


def test_pending_and_undone_items_do_not_count(queue):
    [pending] = queue.submit([Proposal("add", "Pending fact")])
    decided = queue.decided()
    queue.undo(decided[0].id)
    stats = approval_stats(queue.decided() + [pending])
    assert stats.overall.total == len(DECISIONS) - 1


def test_an_empty_queue_has_no_rates(tmp_path):
    store = memory_store(tmp_path / "m.json", max_items=5, max_chars=100)
    [recent, overall] = extraction_quality(ReviewQueue(tmp_path / "r.json", store))
    assert overall.overall.total == 0 and overall.overall.percent("approved") == 0.0
    assert format_quality([recent, overall]) == [
        "  Last 30 days:",
        "    no decisions yet",
        "  Overall:",
        "    no decisions yet",
    ]


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Prefers the hallway lights at 30%", "en"),
        ("我喜歡喝無糖綠茶", "zh-Hant"),
        ("我喜欢喝无糖绿茶", "zh-Hans"),
        ("住在台北", "zh-Hant"),  # only shared characters: the traditional default
        ("晚上不喝绿茶", "zh-Hans"),
        ("", "en"),
    ],
)
def test_language_of_tells_english_traditional_and_simplified_apart(text, language):
    assert language_of(text) == language


def test_stats_command_prints_the_same_figures(queue):
    done = run_cli("stats", "--data-dir", str(queue.path.parent))
    assert done.returncode == 0, done.stderr
    expected = format_quality(extraction_quality(queue))
    out = done.stdout.splitlines()
    start = out.index("Extractor approval rates (review decisions):")
    assert out[start + 1 : start + 1 + len(expected)] == expected
    assert any("LLM openai/gpt-4o-mini" in line and "3 decided" in line for line in out)
