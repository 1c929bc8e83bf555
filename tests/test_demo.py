"""The demo content: `memory-curator demo` fills a data folder with freshly dated samples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from webapp.cli.demo import DEMO_DATA, NEWEST_MEMORY_AGE, DemoRefusedError, fill_demo
from webapp.curator import Curator
from webapp.settings import Settings
from webapp.stores import ConversationStore, MemoryStore, ReviewQueue, SkillDocumentStore
from webapp.stores.timefmt import parse_ts

SAMPLE_MEMORIES = json.loads((DEMO_DATA / "memories.json").read_text(encoding="utf-8"))
SAMPLE_THREADS = json.loads((DEMO_DATA / "threads.json").read_text(encoding="utf-8"))
SAMPLE_SKILLS = sorted(p.name for p in (DEMO_DATA / "skills").iterdir() if p.is_dir())


def stores(settings: Settings):
    memories = MemoryStore.from_settings(settings)
    conversations = ConversationStore.from_settings(settings)
    return memories, conversations, SkillDocumentStore(settings.skills_dir, lock_timeout=5)


def load(settings: Settings, **kw):
    return fill_demo(Curator.from_settings(settings, actor="demo"), **kw)


def test_the_package_ships_the_samples():
    assert len(SAMPLE_MEMORIES) >= 5 and len(SAMPLE_THREADS) >= 3
    assert {"slack", "cli", "schedule"} <= {key.split(":")[0] for key in SAMPLE_THREADS}
    for skill in SAMPLE_SKILLS:
        assert (DEMO_DATA / "skills" / skill / "SKILL.md").is_file()


def test_demo_fills_an_empty_folder_with_fresh_timestamps(settings: Settings):
    started = datetime.now(UTC)
    report = load(settings)
    memories, conversations, skills = stores(settings)

    loaded = {m.id: m for m in memories.get_all()}
    assert {r["id"]: r["content"] for r in SAMPLE_MEMORIES} == {
        k: m.content for k, m in loaded.items()
    }
    newest = max(m.updated_at for m in loaded.values())
    assert started - NEWEST_MEMORY_AGE - timedelta(seconds=5) <= newest <= started
    for record in SAMPLE_MEMORIES:  # the samples' spacing in time is kept
        memory = loaded[record["id"]]
        sample_gap = parse_ts(record["updatedAt"]) - parse_ts(record["createdAt"])
        assert memory.updated_at - memory.created_at == sample_gap

    assert {s.id for s in conversations.list_conversations()} == set(SAMPLE_THREADS)
    for key, pairs in SAMPLE_THREADS.items():
        turns = conversations.get_history(key)
        assert [t.content for t in turns] == [text for pair in pairs for text in pair]
        assert all(t.timestamp >= started - timedelta(seconds=1) for t in turns)

    assert sorted(skills.by_skill()) == SAMPLE_SKILLS
    assert report.memories["added"] == len(SAMPLE_MEMORIES)
    assert report.exchanges == sum(len(p) for p in SAMPLE_THREADS.values())


def test_demo_refuses_a_folder_that_holds_data(settings: Settings):
    memories, _, _ = stores(settings)
    memories.init()
    memories.add("Someone's real memory")
    before = settings.memory_file.read_bytes()
    with pytest.raises(DemoRefusedError, match="1 memory"):
        load(settings)
    assert settings.memory_file.read_bytes() == before
    assert not settings.conversation_file.exists() or stores(settings)[1].list_conversations() == []


def test_forced_demo_is_idempotent_and_keeps_other_data(settings: Settings):
    memories, conversations, skills = stores(settings)
    memories.init()
    mine = memories.add("Someone's real memory")
    conversations.add_exchange("slack:mine", "hello", "hi")
    load(settings, force=True)
    first = (
        len(memories.get_all()),
        {s.id: s.turn_count for s in conversations.list_conversations()},
        len(skills.list()),
    )
    report = load(settings, force=True)
    second = (
        len(memories.get_all()),
        {s.id: s.turn_count for s in conversations.list_conversations()},
        len(skills.list()),
    )
    assert first == second
    assert first[0] == len(SAMPLE_MEMORIES) + 1 and memories.get(mine.id) is not None
    assert first[1]["slack:mine"] == 2
    assert report.memories["unchanged"] == len(SAMPLE_MEMORIES)


def test_demo_command(tmp_path: Path):
    folder = tmp_path / "fresh"
    done = run_cli("demo", "--data-dir", str(folder))
    assert done.returncode == 0, done.stderr
    assert f"Memories: {len(SAMPLE_MEMORIES)} added" in done.stdout
    assert f"Conversations: {len(SAMPLE_THREADS)} threads" in done.stdout
    for skill in SAMPLE_SKILLS:
        assert f"Skill {skill}: " in done.stdout
    snapshot = (folder / "memories.json").read_bytes()

    again = run_cli("demo", "--data-dir", str(folder))
    assert again.returncode == 1
    assert "already holds" in again.stderr and "--force" in again.stderr
    assert "Traceback" not in again.stderr
    assert (folder / "memories.json").read_bytes() == snapshot

    forced = run_cli("demo", "--data-dir", str(folder), "--force")
    assert forced.returncode == 0, forced.stderr
    assert f"0 added, 0 updated, {len(SAMPLE_MEMORIES)} unchanged" in forced.stdout


def test_demo_comes_with_pending_proposals_queued_once(settings: Settings):
    report = load(settings)
    memories, _, _ = stores(settings)
    queue = ReviewQueue(settings.review_file, memories, lock_timeout=5)
    pending = queue.pending()
    assert report.proposals == len(pending) >= 3
    assert {"add", "update"} <= {item.action for item in pending}
    update = next(item for item in pending if item.action == "update")
    assert update.current_content == memories.get(update.memory_id).content
    threads = set(SAMPLE_THREADS)
    assert all(item.conversation_id in threads and item.evidence for item in pending)
    assert "Review: " in "\n".join(report.lines())

    again = load(settings, force=True)
    assert again.proposals == 0 and len(queue.pending()) == len(pending)


def test_demo_shows_every_kind_of_finding_and_a_change_of_mind_in_review(tmp_path: Path):
    """Needs attention has something of every kind (but the LLM's own, with no LLM), and
    Review a delete next to the facts."""
    from webapp.attention.one_memory import expired_findings
    from webapp.attention.scanner import KINDS, MODEL_KINDS, scan

    folder = tmp_path / "fresh"
    done = run_cli("demo", "--data-dir", str(folder))
    assert done.returncode == 0, done.stderr
    settings = Settings().with_data_dir(folder)
    memories = MemoryStore.from_settings(settings)
    findings = scan(
        memories.get_all(),
        today=datetime.now(UTC).date(),
        stale_days=settings.memory_stale_days,
    )
    findings += expired_findings(memories.get_all(), datetime.now(UTC))
    found = {
        kind: [f for f in findings if f.kind == kind] for kind in KINDS if kind not in MODEL_KINDS
    }
    assert all(found.values()), {kind: len(items) for kind, items in found.items()}

    queue = ReviewQueue.from_settings(settings, memories)
    pending = queue.pending()
    assert {"add", "update", "delete"} <= {item.action for item in pending}
    [delete] = [item for item in pending if item.action == "delete"]
    memory = memories.get(delete.memory_id)
    assert memory is not None and delete.current_content == memory.content
    said = [
        t.content
        for t in ConversationStore.from_settings(settings).get_history(delete.conversation_id)
        if t.role == "user"
    ]
    assert delete.evidence in said

    # It is the change of mind extraction finds in that thread: proposed already, not again.
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "webapp",
            "extract",
            "--data-dir",
            str(folder),
            "--conversation",
            str(delete.conversation_id),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")},
    )
    assert again.returncode == 0, again.stderr
    assert f"skipped (already remembered, proposed or rejected): delete {memory.id}" in again.stdout
    assert len(queue.pending()) == len(pending)


def test_a_forced_demo_never_brings_back_a_sample_fact_deleted_forever(tmp_path: Path):
    folder = tmp_path / "fresh"
    assert run_cli("demo", "--data-dir", str(folder)).returncode == 0
    settings = Settings().with_data_dir(folder)
    gone = SAMPLE_MEMORIES[0]
    Curator.from_settings(settings).forget(gone["id"], forever=True)

    forced = run_cli("demo", "--data-dir", str(folder), "--force")
    assert forced.returncode == 0, forced.stderr
    kept = MemoryStore.from_settings(settings).get_all()
    assert gone["id"] not in {m.id for m in kept}
    assert gone["content"] not in {m.content for m in kept}
    assert len(kept) == len(SAMPLE_MEMORIES) - 1
