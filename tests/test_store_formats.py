"""Store files carry a format version in a sidecar ``<file>.format`` without changing their shape
(``webapp/stores/formats.py``): a folder in the seed's format and one in the format of the
releases before sidecars open and get their sidecars, byte for byte as they were; the seed's
own code still reads and writes them afterwards; a migration runs through the store's atomic
write, survives a SIGKILL at each step, and a newer format is never written."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest

import webapp
from tests.support.data import make_settings
from webapp.curator import Curator
from webapp.settings import Settings
from webapp.stores import (
    Changed,
    MemoryStore,
    RepairReport,
    StoreFormatNewerError,
    StoreFormatUnreadableError,
    formats,
)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "formats"
# The project's first commit: its MemoryStore and ConversationStore wrote tests/data/formats/seed.
SEED_COMMIT = "0f8cfb1"
# The folder written by the release before sidecars (its demo, a deletion, a dismissed finding
# and an Assist exchange): every store of today.
FOLDERS = ("seed", "before-sidecars")
WRITER = f"memory-curator {webapp.__version__}"

# A migration a later release could ship, for the mechanism: memories whose times are Unix
# milliseconds (as the JavaScript original wrote them; every release reads them) get the ISO
# form this release writes. Idempotent: an ISO time is left as it is.
MIGRATION = """
def iso_times(records):
    from webapp.stores.timefmt import read_time, to_iso
    for record in records:
        for name in ("createdAt", "updatedAt"):
            value = record.get(name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                moment = read_time(value)
                if moment is not None:
                    record[name] = to_iso(moment)
    return records
"""
# A CLI process with that migration registered, killed (SIGKILL) when the memories' migration
# reaches a step (argv[1]; "none" runs to the end).
WITH_MIGRATION = (
    """
import os, signal, sys
from webapp.stores import formats
"""
    + MIGRATION
    + """
formats.MIGRATIONS["memories"] = [iso_times]
def reached(step, store):
    if step == sys.argv[1] and store == "memories":
        os.kill(os.getpid(), signal.SIGKILL)
formats.reached = reached
from webapp.cli import main
main(sys.argv[2:], prog_name="memory-curator")
"""
)
MS_RECORD = {
    "id": "js0ld0000001",
    "content": "Waters the balcony plants on Sundays",
    "createdAt": 1763700000000,
    "updatedAt": 1763700000123,
    "category": "general",
}


def _iso_times() -> Any:
    namespace: dict[str, Any] = {}
    exec(MIGRATION, namespace)
    return namespace["iso_times"]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}


def _run(
    *args: str, code: str | None = None, pythonpath: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = _env()
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    command = [sys.executable, "-c", code, *args] if code else [sys.executable, *args]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        cwd=pythonpath or ROOT,
    )


def _cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    return _run("-m", "webapp", *args, "--data-dir", str(settings.data_dir))


def _folder(tmp_path: Path, name: str) -> Settings:
    settings = make_settings(tmp_path, conversation_max_age_days=36500)
    shutil.copytree(FIXTURES / name, settings.data_dir)
    return settings


def _data_bytes(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*.json"))
        if p.is_file()
    }


def _sidecar(path: Path) -> Any:
    return json.loads(path.with_name(path.name + ".format").read_bytes())


@pytest.mark.parametrize("name", FOLDERS)
def test_a_folder_from_before_sidecars_opens_in_format_1_and_repair_adds_sidecars_only(
    tmp_path: Path, name: str
) -> None:
    settings = _folder(tmp_path, name)
    folder = settings.data_dir
    before = _data_bytes(folder)
    records = json.loads(before["memories.json"])
    curator = Curator.from_settings(settings)

    assert [m.content for m in curator.memories.get_all()] == [r["content"] for r in records]
    found = curator.stats()
    assert not found.problems
    assert {c.name: c.state.version for c in found.formats if c.state} == {
        c.name: 1 for c in found.formats
    }
    assert not any(c.state and c.state.written for c in found.formats)  # nothing written yet

    stats = _cli(settings, "stats")
    assert stats.returncode == 0, stats.stderr
    assert "Formats:       memories 1, conversations 1" in stats.stdout
    if name == "before-sidecars":  # (stats failed on this file with a KeyError before)
        assert "Assist exchanges: " in stats.stdout
        assert "assist_exchanges 1" in stats.stdout

    reports = [step for step in curator.repair() if isinstance(step, RepairReport)]
    assert reports and all(r.format == "format 1" and not r.migrated for r in reports)
    assert all(r.describe().endswith("; format 1") for r in reports)
    assert _data_bytes(folder) == before  # opening changed no byte of any store file
    for relative in before:
        assert _sidecar(folder / relative)["format"] == 1
        assert _sidecar(folder / relative)["writtenBy"] == WRITER
    assert _sidecar(folder / "memories.json")["store"] == "memories"

    # A write keeps memories.json a bare array of the records it held, in their shape.
    curator.remember("Takes the dog out at seven")
    after = json.loads((folder / "memories.json").read_bytes())
    assert isinstance(after, list) and after[: len(records)] == records
    assert after[-1]["content"] == "Takes the dog out at seven"
    assert {"id", "content", "createdAt", "updatedAt", "category"} <= set(after[-1])


def test_the_seeds_own_code_reads_and_writes_a_folder_this_release_wrote_its_sidecars_in(
    tmp_path: Path,
) -> None:
    settings = _folder(tmp_path, "seed")
    curator = Curator.from_settings(settings)
    list(curator.repair())
    curator.remember("Takes the dog out at seven")
    curator.conversations.add_exchange("cli:session-1", "Hello", "Hi")
    seed = tmp_path / "seed-release"
    seed.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", SEED_COMMIT, "webapp"],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(seed, filter="data")
    reader = """
import json, sys
from webapp.stores.memories import MemoryStore
from webapp.stores.conversations import ConversationStore
store = MemoryStore(sys.argv[1], max_items=100, max_chars=10000, lock_timeout=5)
store.add("Added by the seed")
threads = ConversationStore(sys.argv[2], max_turns=20, max_chars=8000, max_age_days=36500,
                            lock_timeout=5)
print(json.dumps({"memories": [m.content for m in store.get_all()],
                  "threads": [t.id for t in threads.list_conversations()]}))
"""
    result = _run(
        str(settings.memory_file),
        str(settings.conversation_file),
        code=reader,
        pythonpath=seed,
    )
    assert result.returncode == 0, result.stderr
    read = json.loads(result.stdout)
    assert read["memories"][-2:] == ["Takes the dog out at seven", "Added by the seed"]
    assert "cli:session-1" in read["threads"]
    # ... and this release reads what the seed wrote under its sidecar.
    again = Curator.from_settings(settings)
    assert again.memories.get_all()[-1].content == "Added by the seed"
    assert again.memories.format_state().version == 1


def _with_ms_record(settings: Settings) -> list[dict[str, Any]]:
    records = json.loads(settings.memory_file.read_bytes())
    records.append(dict(MS_RECORD))
    settings.memory_file.write_bytes(json.dumps(records, indent=2).encode() + b"\n")
    return records


def _migrated(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**r, "createdAt": "2025-11-21T04:40:00.000Z", "updatedAt": "2025-11-21T04:40:00.123Z"}
        if r["id"] == MS_RECORD["id"]
        else r
        for r in records
    ]


def test_a_registered_migration_runs_once_through_the_atomic_write_then_the_sidecar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _folder(tmp_path, "seed")
    records = _with_ms_record(settings)
    monkeypatch.setitem(formats.MIGRATIONS, "memories", [_iso_times()])
    store = MemoryStore.from_settings(settings)
    assert store.format_state().describe() == "format 1, upgraded to 2 at the next write"

    store.init()

    on_disk = json.loads(settings.memory_file.read_bytes())
    assert on_disk == _migrated(records)  # still a bare array, the same records, ISO times
    assert settings.memory_file.with_name("memories.json.bak").read_bytes() == (
        settings.memory_file.read_bytes()
    )  # repair never brings back format 1 under the new sidecar
    assert _sidecar(settings.memory_file) == {"store": "memories", "format": 2, "writtenBy": WRITER}
    assert store.format_state().describe() == "format 2"
    written = os.stat(settings.memory_file)
    MemoryStore.from_settings(settings).init()
    store.add("Takes the bins out on Tuesdays")
    assert os.stat(settings.memory_file.with_name("memories.json.bak")).st_ino == written.st_ino
    assert json.loads(settings.memory_file.read_bytes())[:-1] == _migrated(records)
    # Stores without migrations stay in format 1.
    conversations = Curator.from_settings(settings).conversations
    conversations.add_exchange("cli:session-2", "Hi", "Hello")
    assert _sidecar(settings.conversation_file)["format"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("finish", ["write", "repair"])
@pytest.mark.parametrize("step", formats.STEPS)
def test_a_migration_killed_at_any_step_is_finished_by_the_next_write_or_repair(
    tmp_path: Path, step: str, finish: str
) -> None:
    settings = _folder(tmp_path, "seed")
    records = _with_ms_record(settings)
    folder = str(settings.data_dir)
    killed = _run(step, "memories", "add", "Takes the dog out at seven", "--data-dir", folder,
                  code=WITH_MIGRATION)  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    on_disk = json.loads(settings.memory_file.read_bytes())
    assert on_disk == _migrated(records)  # killed after the data write, before the add
    sidecar = settings.memory_file.with_name("memories.json.format")
    assert sidecar.exists() == (step == "format written")

    bins = "Takes the bins out on Tuesdays"
    args = ["memories", "add", bins] if finish == "write" else ["repair"]
    done = _run("none", *args, "--data-dir", folder, code=WITH_MIGRATION)
    assert done.returncode == 0, done.stdout + done.stderr

    on_disk = json.loads(settings.memory_file.read_bytes())
    kept = on_disk[: len(records)]
    assert kept == _migrated(records)
    assert [r["content"] for r in on_disk[len(records) :]] == (
        ["Takes the bins out on Tuesdays"] if finish == "write" else []
    )
    assert _sidecar(settings.memory_file)["format"] == 2
    backup = json.loads(settings.memory_file.with_name("memories.json.bak").read_bytes())
    assert not any(isinstance(r.get("createdAt"), int) for r in backup)
    if finish == "repair":  # the migration ran again (changing nothing) unless it had finished
        again = "ok; format 2" if step == "format written" else "ok; migrated to format 2"
        assert f"memories.json: {again}" in done.stdout


def _newer(path: Path, version: int = 7) -> bytes:
    body = {"store": "x", "format": version, "writtenBy": "memory-curator 9.0.0"}
    raw = json.dumps(body).encode()
    path.with_name(path.name + ".format").write_bytes(raw)
    return raw


def test_a_store_file_in_a_newer_format_is_read_never_written(tmp_path: Path) -> None:
    settings = _folder(tmp_path, "before-sidecars")
    folder = settings.data_dir
    curator = Curator.from_settings(settings)
    stores = {f.name: f.store for f in curator.data_files() if f.store.path.exists()}
    assert {"memories", "conversations", "review", "people", "tombstones", "dismissals"} <= set(
        stores
    )
    for store in stores.values():
        _newer(store.path)
    before = _data_bytes(folder)
    contents = [m.content for m in curator.memories.get_all()]

    for name, store in stores.items():
        with pytest.raises(StoreFormatNewerError) as refused:
            store.wipe(lambda data: Changed(None))
        assert refused.value.code == "store_format_newer"
        assert refused.value.values["version"] == 7, name
        assert "memories-curator" not in str(refused.value)
        assert f"this release ({WRITER}) knows format 1 at most" in str(refused.value)
        assert "written by memory-curator 9.0.0" in str(refused.value)
    with pytest.raises(StoreFormatNewerError):
        curator.remember("Takes the dog out at seven")
    assert [m.content for m in curator.memories.get_all()] == contents  # still read

    added = _cli(settings, "memories", "add", "Takes the dog out at seven")
    assert added.returncode != 0
    assert "is in format 7, written by memory-curator 9.0.0" in added.stderr + added.stdout
    stats = _cli(settings, "stats")
    assert stats.returncode == 1
    assert "memories 7 (newer than this release's 1: read only)" in stats.stdout
    repaired = _cli(settings, "repair")
    assert repaired.returncode == 0, repaired.stderr
    assert "memories.json: ok; left as it is: The store file" in repaired.stdout
    assert _data_bytes(folder) == before  # no byte of any store file changed
    MemoryStore.from_settings(settings).init()  # a start reads it and leaves it alone
    assert _data_bytes(folder) == before


def test_a_format_file_that_cannot_be_read_stops_writes_and_says_so(tmp_path: Path) -> None:
    settings = _folder(tmp_path, "seed")
    sidecar = settings.memory_file.with_name("memories.json.format")
    sidecar.write_text('{"format": "two"}')
    before = settings.memory_file.read_bytes()
    store = MemoryStore.from_settings(settings)
    with pytest.raises(StoreFormatUnreadableError) as refused:
        store.add("Takes the dog out at seven")
    assert refused.value.code == "store_format_unreadable"
    assert str(sidecar) in str(refused.value)
    assert settings.memory_file.read_bytes() == before
    assert len(store.get_all()) == 2
    stats = _cli(settings, "stats")
    assert stats.returncode == 1
    assert "memories unknown (its format file cannot be read)" in stats.stdout
    assert "cannot be read" in stats.stderr
    sidecar.unlink()  # as the message says, for a store in format 1
    store.add("Takes the dog out at seven")
    assert _sidecar(settings.memory_file)["format"] == 1


def test_a_format_file_write_a_kill_cut_short_is_listed_and_removed_by_repair(
    tmp_path: Path,
) -> None:
    settings = _folder(tmp_path, "seed")
    store = MemoryStore.from_settings(settings)
    left = settings.data_dir / ".memories.json.format.k1ll3dwr.tmp"  # write_atomic's temp name
    left.write_text('{"store": "memories", "for')
    assert ("unfinished write", left) in {(f.kind, f.path) for f in store.own_files()}
    report = store.repair_report()
    assert report.unfinished == 1 and not left.exists()
    assert report.describe().endswith("; 1 unfinished write a killed writer left removed; format 1")
