"""Issue 35, items 7–10: forgotten is gone.

After Delete forever (a real ``memory-curator delete ID --forever`` process) — also when that
process is killed with SIGKILL at any step of it and the command is run again, or ``repair``
is — no file under the data folder holds the words, read as bytes (UTF-8, and JSON's \\uXXXX
form for Chinese text): not the extraction job's ``found`` list, not other memories' or
review items' evidence (files, backups, history log), not the conversation thread they were
said in (the sentence is replaced by a marker saying so). Nothing brings the fact back:
restore, ``memory-curator import`` of a backup taken before, or another process's vector
cache; the cache's rows are named by keyed hashes; the tombstone cap never pushes a
Delete-forever fingerprint out.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.support.cli import clean_env, run_cli
from tests.support.data import make_settings
from tests.support.forgetting import EN_FACT, EN_SAID, EN_WORDS, files_holding
from webapp.curator import Curator
from webapp.curator.errors import DeletedForeverError
from webapp.curator.wiping import MARKER, STEPS
from webapp.extraction.batch import ExtractionBatch
from webapp.stores import ConversationStore, Proposal
from webapp.stores.tombstones import TombstoneStore

ZH_FACT = "喜欢爬山"
ZH_SAID = "我喜欢爬山"
EN_MESSAGE = f"{EN_SAID} My favourite colour is green. I prefer tea over coffee."
ZH_MESSAGE = f"我每天早上喝乌龙茶。{ZH_SAID}。"
OTHER = "Favourite colour is green"  # said in the same message: it stays, its evidence masked
ZH_WORDS = (ZH_FACT, ZH_SAID)

# A real CLI process that kills itself (SIGKILL) when Delete forever reaches a step.
KILLED_AT = """
import os, signal, sys
from webapp.curator import forgetting, wiping
STEP = sys.argv[1]
def reached(step):
    if step == STEP:
        os.kill(os.getpid(), signal.SIGKILL)
wiping.reached = forgetting.reached = reached
from webapp.cli import main
main(sys.argv[2:], prog_name="memory-curator")
"""


def _killed(data_dir: Path, step: str, *args: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", KILLED_AT, step, *args, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=180,
    )
    assert result.returncode == -signal.SIGKILL, (step, result.stdout, result.stderr)


def _ids(data_dir: Path) -> dict[str, str]:
    records = json.loads((data_dir / "memories.json").read_text("utf-8"))
    return {r["content"]: r["id"] for r in records}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder where the words are everywhere: memories extracted (auto mode) from
    two threads by the extraction job, another memory and review items quoting them."""
    root = tmp_path_factory.mktemp("gone")
    settings = make_settings(root, review_mode="auto")
    conversations = ConversationStore.from_settings(settings)
    conversations.add_exchange("cli:en", EN_MESSAGE, "Noted.")
    conversations.add_exchange("cli:zh", ZH_MESSAGE, "好的。")
    batch = ExtractionBatch(settings, caller=None)
    batch.start()
    progress = batch.run_to_end()
    assert progress is not None and EN_FACT in progress.found and ZH_FACT in progress.found
    curator = Curator.from_settings(settings, actor="alice")
    quoted = curator.review.submit(
        [
            Proposal("add", "Likes hiking in the Alps", evidence=f"{EN_SAID} I like the Alps."),
            Proposal("add", "Goes climbing on Sundays", evidence=f"{ZH_SAID}。周日去攀岩。"),
        ],
        conversation_id="cli:other",
    )
    curator.approve(quoted[0].id)  # a memory whose evidence quotes the words
    data = root / "data"
    assert files_holding(data, EN_WORDS) and files_holding(data, ZH_WORDS)
    return data


@pytest.fixture
def folder(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(template, copy)
    return copy


def _gone_for_good(data_dir: Path, memory_id: str, words: tuple[str, ...]) -> None:
    """No file holds the words; nothing brings the memory back."""
    assert files_holding(data_dir, words) == []
    curator = Curator.from_settings(make_settings(data_dir.parent))
    assert memory_id not in {m.id for m in curator.memories.get_all()}
    assert memory_id not in {d.memory.id for d in curator.memories.recently_deleted()}
    with pytest.raises(KeyError):
        curator.restore(memory_id)
    (tombstone,) = [t for t in curator.tombstones.all() if t.memory_id == memory_id]
    assert tombstone.content is None and tombstone.forgetting is None
    assert tombstone.fingerprints and tombstone.vectors and tombstone.vector_keys


def test_delete_forever_takes_the_words_out_of_every_file_and_no_old_backup_brings_them_back(
    folder, tmp_path
):
    ids = _ids(folder)
    backup = tmp_path / "backup.json"
    run_cli("export", "-o", str(backup), data_dir=folder, ok=True)
    assert EN_FACT.encode() in backup.read_bytes()

    out = run_cli("delete", ids[EN_FACT], "--forever", data_dir=folder, ok=True).stdout
    assert f"now say {MARKER} in their place" in out
    run_cli("delete", ids[ZH_FACT], "--forever", data_dir=folder, ok=True)

    _gone_for_good(folder, ids[EN_FACT], EN_WORDS)
    _gone_for_good(folder, ids[ZH_FACT], ZH_WORDS)
    # the thread keeps its other sentences, and says where words were deleted forever
    threads = json.loads((folder / "conversations" / "conversations.json").read_text("utf-8"))
    (said,) = [t["content"] for t in threads["cli:en"]["turns"] if t["role"] == "user"]
    assert said == f"{MARKER} My favourite colour is green. I prefer tea over coffee."
    (said,) = [t["content"] for t in threads["cli:zh"]["turns"] if t["role"] == "user"]
    assert said.startswith("我每天早上喝乌龙茶。") and MARKER in said
    # the other facts said with them stay, their evidence masked
    records = {r["content"]: r for r in json.loads((folder / "memories.json").read_text("utf-8"))}
    assert MARKER in records[OTHER]["origin"]["evidence"]
    assert "My favourite colour is green." in records[OTHER]["origin"]["evidence"]
    job = json.loads((folder / "extraction-job.json").read_text("utf-8"))
    assert OTHER in job["found"]
    exported = run_cli("export", data_dir=folder, ok=True).stdout
    assert not any(w.lower() in exported.lower() for w in EN_WORDS + ZH_WORDS)

    # an import of the backup taken before brings neither fact nor words back
    out = run_cli("import", str(backup), data_dir=folder, ok=True).stdout
    assert "2 not imported: a person deleted them before" in out, out
    _gone_for_good(folder, ids[EN_FACT], EN_WORDS)
    _gone_for_good(folder, ids[ZH_FACT], ZH_WORDS)
    assert OTHER in {m["content"] for m in json.loads((folder / "memories.json").read_bytes())}


# A fact approved from Review after the person edited the proposal: every field of its item
# (the proposal, the edited text, the evidence) holds its words.
PROPOSED = "Plays chess with Grandpa on Wednesdays"
EDITED = "Has a weekly chess game with Grandpa"
CHESS_SAID = "I play chess with Grandpa on Wednesdays."
CHESS_WORDS = ("chess",)


def _edited_approval(data_dir: Path) -> tuple[str, str]:
    """(memory id, review item id) of a fact approved with an edited text."""
    curator = Curator.from_settings(make_settings(data_dir.parent), actor="alice")
    (item,) = curator.review.submit(
        [Proposal("add", PROPOSED, evidence=f"{CHESS_SAID} It is our thing.")],
        conversation_id="cli:chess",
    )
    done = curator.approve(item.id, content=EDITED)
    assert done.applied_memory_id and done.edited
    return done.applied_memory_id, item.id


def _no_way_back(data_dir: Path, item_id: str) -> None:
    """Undo of the approval, then Approve, are refused with the reason; nothing comes back."""
    curator = Curator.from_settings(make_settings(data_dir.parent))
    with pytest.raises(DeletedForeverError) as undone:
        curator.undo_decision(item_id)
    assert undone.value.code == "deleted_forever"
    with pytest.raises(DeletedForeverError):
        curator.approve(item_id)
    assert not any("chess" in m.content.lower() for m in curator.memories.get_all())


@pytest.mark.slow
@pytest.mark.parametrize("finish", ["again", "repair", "start"])
@pytest.mark.parametrize("step", STEPS)
def test_a_delete_forever_killed_at_any_step_is_finished_by_running_it_again_or_repair(
    folder, step, finish
):
    # Before: killed at "recorded", "deleted" or "intent", the edited approval stayed in
    # review.json; Undo then Approve added the fact back as a new memory, for good.
    memory_id, item_id = _edited_approval(folder)
    _killed(folder, step, "delete", memory_id, "--forever")
    if finish == "again":
        out = run_cli("delete", memory_id, "--forever", data_dir=folder, ok=True).stdout
        assert "Deleted forever" in out
    elif finish == "repair":
        run_cli("repair", data_dir=folder, ok=True)
    else:  # the next start of any command finishes it
        run_cli("stats", data_dir=folder, ok=True)
        assert not (folder / "memories.tombstones.json.forgetting").exists()
    _gone_for_good(folder, memory_id, CHESS_WORDS)
    _no_way_back(folder, item_id)
    _gone_for_good(folder, memory_id, CHESS_WORDS)
    assert OTHER in _ids(folder)


def test_delete_forever_of_an_edited_proposal_takes_every_field_of_its_review_item(folder):
    memory_id, item_id = _edited_approval(folder)
    assert files_holding(folder, (PROPOSED,))  # the proposal as it was, in review.json
    run_cli("delete", memory_id, "--forever", data_dir=folder, ok=True)
    _gone_for_good(folder, memory_id, CHESS_WORDS)
    curator = Curator.from_settings(make_settings(folder.parent))
    assert item_id not in {i.id for i in curator.review.decided()}  # Review's Decided tab
    _no_way_back(folder, item_id)


# A real CLI process killed (SIGKILL) when its first store write has its temp file written
# and fsync'd, before the rename: the temp file holds the whole new file.
KILLED_BEFORE_RENAME = """
import os, signal, sys
from webapp.stores import jsonwrite
def replace_with(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
jsonwrite.replace_with = replace_with
from webapp.cli import main
main(sys.argv[1:], prog_name="memory-curator")
"""


def _killed_before_rename(data_dir: Path, *args: str) -> list[Path]:
    """Run ``memory-curator args`` killed before its rename; the temp files it left."""
    before = set(data_dir.rglob(".*.tmp"))
    result = subprocess.run(
        [sys.executable, "-c", KILLED_BEFORE_RENAME, *args, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=180,
    )
    assert result.returncode == -signal.SIGKILL, (result.stdout, result.stderr)
    left = sorted(set(data_dir.rglob(".*.tmp")) - before)
    assert left
    return left


def test_a_temp_file_a_killed_writer_left_does_not_keep_the_words_after_delete_forever(folder):
    memory_id = _ids(folder)[EN_FACT]
    (temp,) = _killed_before_rename(folder, "memories", "add", "Waters the ferns on Fridays")
    assert temp.name.startswith(".memories.json.") and EN_FACT.encode() in temp.read_bytes()
    run_cli("delete", memory_id, "--forever", data_dir=folder, ok=True)
    _gone_for_good(folder, memory_id, EN_WORDS)
    assert not temp.exists()


def test_repair_removes_the_temp_file_a_killed_writer_left(folder):
    (temp,) = _killed_before_rename(folder, "memories", "add", "Waters the ferns on Fridays")
    out = run_cli("repair", data_dir=folder, ok=True).stdout
    assert "1 unfinished write a killed writer left removed" in out, out
    assert not temp.exists()
    assert "Waters the ferns on Fridays" not in _ids(folder)  # never written: nothing lost
    assert EN_FACT in _ids(folder)
    run_cli(
        "memories", "add", "Waters the ferns on Fridays", data_dir=folder, ok=True
    )  # the store works on


def test_a_killed_delete_forever_of_a_chinese_fact_leaves_no_escaped_words(folder):
    memory_id = _ids(folder)[ZH_FACT]
    _killed(folder, "memories", "delete", memory_id, "--forever")
    run_cli("repair", data_dir=folder, ok=True)
    _gone_for_good(folder, memory_id, ZH_WORDS)


def test_a_delete_killed_before_its_tombstone_can_still_be_marked_dont_propose_again(folder):
    memory_id = _ids(folder)[EN_FACT]
    _killed(folder, "deleted", "delete", memory_id)
    assert TombstoneStore(folder / "memories.tombstones.json").for_memory(memory_id) is None

    out = run_cli("delete", memory_id, "--dont-propose-again", data_dir=folder, ok=True).stdout
    assert "It will not be proposed again." in out
    tombstone = TombstoneStore(folder / "memories.tombstones.json").for_memory(memory_id)
    assert tombstone is not None and tombstone.no_propose and tombstone.content == EN_FACT


# A second process that holds the vectors of the memories in memory: it says "ready" once
# they are embedded, and saves its cache when told to (a line on its standard input).
HOLDER = """
import sys
from webapp.attention.semantic import SemanticIndex
index = SemanticIndex(sys.argv[1])
index.judge().cache.vectors(sys.argv[2:])
print("ready", flush=True)
sys.stdin.readline()
index.save()
print("saved", flush=True)
"""


def _cache_rows(data_dir: Path) -> tuple[set[bytes], np.ndarray]:
    with np.load(data_dir / "memories.vectors.npz", allow_pickle=False) as data:
        return {bytes(k) for k in data["keys"]}, np.array(data["vectors"])


def test_a_process_holding_a_forgotten_vector_never_writes_it_back_to_the_cache(folder):
    from webapp.similarity.embedders import default_embedder, embedding_text

    ids = _ids(folder)
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder / "memories.json"), *ids, "A text only it has"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=clean_env(),
    ) as holder:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "ready"
        run_cli("delete", ids[EN_FACT], "--forever", data_dir=folder, ok=True)
        holder.stdin.write("save\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "saved"
    keys, rows = _cache_rows(folder)
    forgotten = default_embedder().embed([embedding_text(EN_FACT)])[0]
    assert rows.shape[0] >= len(ids) - 1  # the others stay
    assert float(np.max(rows @ forgotten)) < 0.999  # no row is the forgotten fact's vector
    (tombstone,) = [
        t for t in TombstoneStore(folder / "memories.tombstones.json").all() if t.forever
    ]
    assert not keys & set(tombstone.vector_keys)
    assert files_holding(folder, EN_WORDS) == []


def test_the_vector_cache_is_keyed_with_a_secret_key_apart_from_the_fingerprints(folder):
    from webapp.similarity.cache import _key
    from webapp.similarity.embedders import default_embedder
    from webapp.stores.tombstones import fingerprint_key

    ids = _ids(folder)
    holder = subprocess.run(
        [sys.executable, "-c", HOLDER, str(folder / "memories.json"), *ids],
        input="save\n",
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
    )
    assert holder.stdout.split() == ["ready", "saved"], holder.stderr
    keys, _rows = _cache_rows(folder)
    model = default_embedder().name
    unkeyed = {_key(model, text) for text in ids}
    assert keys and not keys & unkeyed  # a guess list hashed without the key finds nothing
    key_file = folder / "memories.vectors.key"
    secret = bytes.fromhex(key_file.read_text("ascii"))
    assert {_key(model, text, secret) for text in ids} <= keys
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    assert secret != fingerprint_key(folder / "memories.json")
    assert secret.hex().encode() not in b"".join(
        p.read_bytes() for p in folder.rglob("*") if p.is_file() and p != key_file
    )
    stats = run_cli("stats", data_dir=folder, ok=True).stdout
    assert "the key of the vector cache" in stats and "not written by" not in stats


def test_ordinary_deletions_never_push_a_delete_forever_fingerprint_out(folder, monkeypatch):
    from webapp.extraction.forgotten import deleted_match
    from webapp.stores import tombstones as module

    monkeypatch.setattr(module, "MAX_TOMBSTONES", 3)
    curator = Curator.from_settings(make_settings(folder.parent))
    curator.forget(_ids(folder)[EN_FACT], forever=True)
    for n in range(10):
        memory = curator.memories.add(f"Temporary fact number {n}")
        curator.forget(memory.id)
    everything = curator.tombstones.all()
    assert sum(1 for t in everything if not t.forever) == 3
    match = deleted_match(
        EN_FACT, everything, fingerprint=curator.tombstones.fingerprint, judge=None
    )
    assert match is not None and match.forever
