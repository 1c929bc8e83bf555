"""`memory-curator extract`, run as a real process over a copy of the sample threads."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.stores import conversation_store, memory_store
from webapp.stores import ConversationStore, ReviewQueue

SAMPLES = (
    Path(__file__).resolve().parents[1] / "webapp" / "demo_data" / "threads.json"
)  # the demo's sample threads


def _load_samples(data_dir: Path) -> None:
    store = conversation_store(data_dir / "conversations" / "conversations.json")
    for key, exchanges in json.loads(SAMPLES.read_text("utf-8")).items():
        for user, assistant in exchanges:
            store.add_exchange(key, user, assistant)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture
def samples_dir(data_dir: Path) -> Path:
    _load_samples(data_dir)
    return data_dir


def test_dry_run_prints_proposals_and_saves_nothing(samples_dir):
    before = _snapshot(samples_dir)
    result = run_cli("extract", "--all", "--dry-run", data_dir=samples_dir)
    assert result.returncode == 0, result.stderr
    assert (
        "would queue: add [preference] Prefers the hallway lights at 30% after 22:00"
        in result.stdout
    )
    assert "习惯用 VS Code 编辑 Home Assistant 的配置文件" in result.stdout
    assert _snapshot(samples_dir) == before


def test_manual_mode_queues_for_review(samples_dir):
    result = run_cli("extract", "--all", data_dir=samples_dir)
    assert result.returncode == 0, result.stderr
    memories = memory_store(samples_dir / "memories.json")
    queue = ReviewQueue(samples_dir / "review.json", memories)
    contents = {item.content for item in queue.pending()}
    assert "記住我喜歡喝無糖綠茶，不要推薦含糖飲料" not in contents
    assert "喜歡喝無糖綠茶，不要推薦含糖飲料" in contents
    assert "Always uses metric units" in contents
    assert memories.get_all() == []
    again = run_cli("extract", data_dir=samples_dir)
    assert "no new messages" in again.stdout
    assert len(queue.pending()) == len(contents)


def test_auto_mode_applies_one_forced_conversation(samples_dir):
    result = run_cli(
        "extract",
        "--conversation",
        "slack:1731986400.000200",
        data_dir=samples_dir,
        env={"MEMORY_REVIEW_MODE": "auto"},
    )
    assert result.returncode == 0, result.stderr
    memories = memory_store(samples_dir / "memories.json")
    assert {(m.content, m.source) for m in memories.get_all()} == {
        ("喜歡喝無糖綠茶，不要推薦含糖飲料", "extracted"),
        ("辦公室在三樓，冷氣遙控器的實體叫 climate.office_ac", "extracted"),
    }


def test_default_run_only_extracts_threads_that_are_due(samples_dir):
    result = run_cli("extract", data_dir=samples_dir)
    assert "slack:1731900000.123456: 8 new message(s) - 3 proposal(s)" in result.stdout
    assert "slack:1732050000.777000: 4 new message(s) - 2 proposal(s)" in result.stdout


@pytest.mark.parametrize(
    "args, env, message",
    [
        (["--conversation", "slack:nope"], {}, "No conversation 'slack:nope'"),
        (["--all", "--conversation", "x"], {}, "not both"),
        ([], {"MEMORY_LLM_PROVIDER": "openai"}, "MEMORY_LLM_MODEL"),
        ([], {"MEMORY_REVIEW_MODE": "sometimes"}, "MEMORY_REVIEW_MODE"),
    ],
)
def test_bad_input_gives_a_clear_message(samples_dir, args, env, message):
    result = run_cli("extract", *args, data_dir=samples_dir, env={**env})
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_llm_failure_falls_back_to_regex(samples_dir, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "claude"
    stub.write_text("#!/bin/sh\nexit 1\n")
    stub.chmod(0o755)
    result = run_cli(
        "extract",
        "--conversation",
        "slack:1731900000.123456",
        data_dir=samples_dir,
        env={
            "MEMORY_LLM_PROVIDER": "claude-cli",
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        },
    )
    assert result.returncode == 0, result.stderr
    assert "by regex (the LLM gave nothing usable)" in result.stdout


def _as_done(dry_run_output: str) -> str:
    """A dry run's account in the words of the real run ("would queue" → "queued", …)."""
    for would, done in (("would queue", "queued"), ("would apply", "applied")):
        dry_run_output = dry_run_output.replace(f"  {would}: ", f"  {done}: ")
    return dry_run_output.replace("  would skip (", "  skipped (")


@pytest.mark.parametrize("mode", ["manual", "auto"])
def test_dry_run_says_what_the_real_run_then_does(samples_dir, mode):
    """After a first run, a dry run over the same threads (one of them with news) makes the
    decisions the second real run makes: what is already proposed is skipped in both."""
    memories = memory_store(samples_dir / "memories.json")
    memories.add("每天下午喝一杯無糖烏龍茶。", category="preference")
    conversations = ConversationStore(samples_dir / "conversations" / "conversations.json")
    conversations.add_exchange("slack:1731986400.000200", "我不再喝烏龍茶了。", "好的。")
    first = run_cli("extract", "--all", data_dir=samples_dir, env={"MEMORY_REVIEW_MODE": mode})
    assert first.returncode == 0, first.stderr
    assert "queued: delete" in first.stdout  # a deletion waits for a person in both modes
    # New messages: a fact the first run already proposed (or remembered), and a new one.
    conversations.add_exchange(
        "slack:1731900000.123456", "I always use metric units, please.", "Still metric."
    )
    conversations.add_exchange(
        "slack:1731900000.123456",
        "Remember that the guest room heater is climate.guest_room.",
        "Noted.",
    )
    runs = (["--all"], ["--conversation", "slack:1731986400.000200"])
    before = _snapshot(samples_dir)
    dry = [
        run_cli(
            "extract", *args, "--dry-run", data_dir=samples_dir, env={"MEMORY_REVIEW_MODE": mode}
        )
        for args in runs
    ]
    assert _snapshot(samples_dir) == before
    real = [
        run_cli("extract", *args, data_dir=samples_dir, env={"MEMORY_REVIEW_MODE": mode})
        for args in runs
    ]
    for dry_run, real_run in zip(dry, real, strict=True):
        assert dry_run.returncode == real_run.returncode == 0, dry_run.stderr + real_run.stderr
        assert _as_done(dry_run.stdout) == real_run.stdout
    news, forced = real[0].stdout, real[1].stdout
    done = "applied" if mode == "auto" else "queued"
    assert f"  {done}: add [general] The guest room heater is climate.guest_room" in news
    skipped = "  skipped (already remembered, proposed or rejected): "
    assert f"{skipped}delete" in forced  # the deletion already waits in Review
    if mode == "manual":
        assert f"{skipped}add [workflow] Always uses metric units" in news
    assert "would skip (already remembered, proposed or rejected): delete" in dry[1].stdout
