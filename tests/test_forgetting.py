"""Issue 23: forgetting that sticks.

A memory a person deletes is remembered as deleted (a tombstone): said again in other words in
a conversation, `memory-curator extract` (a real process) queues it in Review marked as deleted
before (who, when), never saves it in auto mode, and after Delete forever with "don't propose
again" does not propose it at all, while no file under the data folder holds its words.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.cli import run_cli
from tests.support.data import make_settings
from webapp.curator import Curator
from webapp.stores import ConversationStore, MemoryStore, ReviewQueue
from webapp.stores.tombstones import TombstoneStore

KEPT = "Goes to bed around 23:00"
SAID = "I usually go to sleep by eleven."  # the rules make it "Usually goes to sleep by eleven"
THREAD = "cli:bedtime"


def _curator(data_dir: Path) -> Curator:
    """What the dashboard deletes through (its door is "dashboard")."""
    return Curator(make_settings(data_dir.parent), via="dashboard")


def _stores(data_dir: Path) -> tuple[MemoryStore, ReviewQueue, TombstoneStore]:
    memories = MemoryStore(data_dir / "memories.json", lock_timeout=5)
    return (
        memories,
        ReviewQueue(data_dir / "review.json", memories),
        TombstoneStore.beside(memories),
    )


def _deleted_then_said_again(data_dir: Path) -> str:
    """A memory deleted on the command line, then a conversation saying it in other words."""
    memories, _, _ = _stores(data_dir)
    memory = memories.add(KEPT, category="workflow", source="dashboard")
    out = run_cli("delete", memory.id, data_dir=data_dir, ok=True).stdout
    assert KEPT in out
    conversations = ConversationStore(
        data_dir / "conversations" / "conversations.json", lock_timeout=5
    )
    conversations.add_exchange(THREAD, SAID, "Noted.")
    return memory.id


def _files_holding(data_dir: Path, text: str) -> list[Path]:
    wanted = text.encode("utf-8")
    return [p for p in sorted(data_dir.rglob("*")) if p.is_file() and wanted in p.read_bytes()]


def test_a_deleted_fact_said_again_is_marked_in_review_and_never_saved_in_auto_mode(tmp_path):
    manual, auto = tmp_path / "manual", tmp_path / "auto"
    for folder in (manual, auto):
        folder.mkdir()
        _deleted_then_said_again(folder)

    run_cli("extract", "--conversation", THREAD, data_dir=manual, ok=True)
    _, queue, tombstones = _stores(manual)
    (tombstone,) = tombstones.all()
    assert (tombstone.content, tombstone.deleted_by, tombstone.via) == (KEPT, "cli", "cli")
    (item,) = queue.pending()
    assert item.content != KEPT  # other words: the judge recognised it
    assert item.tombstone_id == tombstone.id

    out = run_cli(
        "extract",
        "--conversation",
        THREAD,
        data_dir=auto,
        env={"MEMORY_REVIEW_MODE": "auto"},
        ok=True,
    ).stdout
    memories, queue, tombstones = _stores(auto)
    assert memories.get_all() == [], out
    (item,) = queue.pending()
    assert item.tombstone_id == tombstones.all()[0].id


def test_deleted_forever_it_is_not_proposed_and_no_file_holds_its_words(data_dir):
    memory_id = _deleted_then_said_again(data_dir)
    run_cli("extract", "--conversation", THREAD, data_dir=data_dir, ok=True)
    _, queue, _ = _stores(data_dir)
    (proposed,) = queue.pending()
    assert _files_holding(data_dir, KEPT)  # the tombstone, the history log, the backup

    run_cli("delete", memory_id, "--forever", "--dont-propose-again", data_dir=data_dir, ok=True)
    out = run_cli("extract", "--conversation", THREAD, data_dir=data_dir, ok=True).stdout

    memories, queue, tombstones = _stores(data_dir)
    assert queue.pending() == [] and queue.decided() == [], out
    assert memories.get_all() == []
    (tombstone,) = tombstones.all()
    assert tombstone.content is None and tombstone.no_propose
    assert tombstone.fingerprints and tombstone.vectors
    assert _files_holding(data_dir, KEPT) == []
    assert _files_holding(data_dir, proposed.content) == []  # the other wording's item too
    assert (data_dir / "memories.tombstones.key").exists()
    # the file says when and by whom, not what
    record = json.loads((data_dir / "memories.tombstones.json").read_text("utf-8"))[0]
    assert record["deletedBy"] == "cli" and "content" not in record


def test_a_fact_deleted_with_dont_propose_again_is_not_proposed_in_other_words(data_dir):
    memories, queue, tombstones = _stores(data_dir)
    memory = memories.add("Drinks green tea without sugar", source="dashboard")
    _curator(data_dir).forget(memory.id, actor="alice", dont_propose_again=True)
    conversations = ConversationStore(
        data_dir / "conversations" / "conversations.json", lock_timeout=5
    )
    conversations.add_exchange(THREAD, "I really like green tea with no sugar.", "Noted.")
    run_cli("extract", "--conversation", THREAD, data_dir=data_dir, ok=True)
    assert queue.pending() == []
    assert tombstones.all()[0].deleted_by == "alice"


def test_restoring_a_deleted_memory_lifts_its_tombstone_and_repair_settles_the_rest(data_dir):
    memories, _, tombstones = _stores(data_dir)
    memory = memories.add(KEPT, source="dashboard")
    _curator(data_dir).forget(memory.id, actor="alice")
    assert [t.memory_id for t in tombstones.active()] == [memory.id]
    memories.restore(memory.id, actor="alice")
    assert tombstones.active(m.id for m in memories.get_all()) == []  # no longer counts
    out = run_cli("repair", data_dir=data_dir, ok=True).stdout
    assert "1 forgotten fact(s) dropped" in out
    assert tombstones.all() == []


def test_an_approved_forget_proposal_is_remembered_with_its_conversation_and_undo_lifts_it(
    data_dir,
):
    from webapp.stores import Proposal

    memories, queue, tombstones = _stores(data_dir)
    memory = memories.add("Drinks oolong tea every morning", source="dashboard")
    (item,) = queue.submit(
        [Proposal("delete", memory.content, memory_id=memory.id, evidence="No more oolong")],
        conversation_id="slack:C1:17.1",
    )
    curator = Curator.from_settings(make_settings(data_dir.parent))
    curator.approve(item.id, actor="alice")
    (tombstone,) = tombstones.all()
    assert (tombstone.deleted_by, tombstone.via, tombstone.conversation_id) == (
        "alice",
        "review",
        "slack:C1:17.1",
    )
    curator.undo_decision(item.id, actor="alice")
    assert memories.get(memory.id) is not None and tombstones.all() == []


def test_the_delete_command_refuses_an_unknown_id_and_changes_nothing(data_dir):
    memories, _, tombstones = _stores(data_dir)
    memories.add(KEPT)
    before = (data_dir / "memories.json").read_bytes()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    for extra in ([], ["--forever"], ["--dont-propose-again"]):
        result = subprocess.run(
            [sys.executable, "-m", "webapp", "delete", "nope", *extra, "--data-dir", str(data_dir)],
            capture_output=True,
            text=True,
            env=environ,
            timeout=120,
        )
        assert result.returncode == 1 and "nope" in result.stderr, result.stderr
    assert (data_dir / "memories.json").read_bytes() == before
    assert tombstones.all() == []


def test_stats_and_repair_know_the_tombstones_and_their_key(data_dir):
    memory_id = _deleted_then_said_again(data_dir)
    run_cli("delete", memory_id, "--forever", data_dir=data_dir, ok=True)
    stats = run_cli("stats", data_dir=data_dir, ok=True).stdout
    assert f"Forgotten facts: {data_dir / 'memories.tombstones.json'} [ok]" in stats
    assert "the key of the forgotten facts' fingerprints" in stats
    assert "not written by Memory Curator" not in stats
    assert (
        "not written by Memory Curator" not in run_cli("repair", data_dir=data_dir, ok=True).stdout
    )


def test_a_dry_run_marks_a_deleted_fact_as_the_real_run_would(data_dir):
    _deleted_then_said_again(data_dir)
    out = run_cli(
        "extract", "--conversation", THREAD, "--dry-run", data_dir=data_dir, ok=True
    ).stdout
    _, queue, _ = _stores(data_dir)
    assert queue.pending() == []  # nothing saved
    assert "would queue: add" in out and "deleted before: a person deleted this fact" in out
    real = run_cli("extract", "--conversation", THREAD, data_dir=data_dir, ok=True).stdout
    assert real.replace("queued:", "would queue:") == out


def test_a_damaged_fingerprint_key_is_set_aside_not_overwritten(data_dir):
    from webapp.stores.tombstones import fingerprint_key, key_path

    memory_file = data_dir / "memories.json"
    key_path(memory_file).write_bytes(b"not a key")
    key = fingerprint_key(memory_file)
    assert len(key) == 32 and fingerprint_key(memory_file) == key
    (aside,) = data_dir.glob("memories.tombstones.key.corrupt-*")
    assert aside.read_bytes() == b"not a key"
    assert oct(key_path(memory_file).stat().st_mode & 0o777) == "0o600"


def test_a_fact_a_host_deleted_before_anything_looked_is_remembered_by_every_extraction(
    tmp_path,
):
    # Before: only ``Curator.extract`` settled a host's deletions; the dashboard's "Extract
    # from all conversations" (the batch) and an import never did, so a fact deleted through
    # the library before any extraction ran was saved again as new in auto mode.
    from webapp.extraction.batch import ExtractionBatch

    settings = make_settings(tmp_path, review_mode="auto")
    store = MemoryStore.from_settings(settings)  # a host program, through the library
    gone = store.add(KEPT, category="workflow")
    backup = store.export()
    store.delete(gone.id)
    ConversationStore.from_settings(settings).add_exchange(THREAD, SAID, "Noted.")

    batch = ExtractionBatch(settings, caller=None)
    batch.start()
    progress = batch.run_to_end()
    assert progress is not None and not progress.failed

    curator = Curator.from_settings(settings)
    assert curator.memories.get_all() == []  # not saved as new
    (tombstone,) = curator.tombstones.all()
    assert (tombstone.memory_id, tombstone.deleted_by, tombstone.via) == (
        gone.id,
        "library",
        "library",
    )
    (marked,) = curator.review.pending()
    assert marked.tombstone_id == tombstone.id  # "You deleted this on …"

    records, _preview = curator.preview_export(backup.decode("utf-8"))
    counts = curator.import_export(records, source="backup.json")
    assert counts["forgotten"] == 1 and curator.memories.get_all() == []


def test_an_import_alone_remembers_a_fact_a_host_deleted_before(tmp_path):
    settings = make_settings(tmp_path)
    store = MemoryStore.from_settings(settings)
    gone = store.add(KEPT, category="workflow")
    backup = store.export()
    store.delete(gone.id)
    curator = Curator.from_settings(settings)
    records, _preview = curator.preview_export(backup.decode("utf-8"))
    counts = curator.import_export(records, source="backup.json")
    assert counts["forgotten"] == 1
    assert curator.memories.get_all() == []
    assert [t.memory_id for t in curator.tombstones.all()] == [gone.id]
