"""Hostile files and careless operators: a foreign writer, a deleted lock, a damaged or
symlinked store file, files nested too deep. Nothing acknowledged is lost, nothing crashes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.stores import conversation_store, memory_store
from webapp.cli import main
from webapp.extraction.state import ExtractionState
from webapp.stores import (
    MemoryStore,
    ReviewQueue,
    SkillDocumentStore,
    StoreCorruptError,
    StoreError,
)
from webapp.stores.changes import Changed
from webapp.stores.jsonbytes import encode
from webapp.stores.jsonfile import JsonFile


def large_memory_store(path: Path) -> MemoryStore:
    return memory_store(path, max_items=100_000, max_chars=10_000_000)


def foreign_replace(path: Path, data: object) -> None:
    """What a program that does not know the lock does: write a temp file, rename it over."""
    tmp = path.with_name(path.name + ".foreign")
    tmp.write_bytes(encode(data))
    os.replace(tmp, path)


# ----------------------------------------------------------------- 2. foreign writer
def test_a_foreign_writer_replacing_the_file_between_read_and_replace_is_not_overwritten(
    data_dir,
):
    path = data_dir / "notes.json"
    file = JsonFile(path, default=list)
    file.update(lambda data: Changed(data.append("first")))
    calls = []

    def mutate(data: list[str]) -> Changed[None]:
        calls.append(list(data))
        if len(calls) == 1:  # the other program saves while we hold our copy
            foreign_replace(path, [*json.loads(path.read_bytes()), "from the host bot"])
        data.append("ours")
        return Changed(None)

    file.update(mutate)

    assert json.loads(path.read_bytes()) == ["first", "from the host bot", "ours"]
    assert calls == [["first"], ["first", "from the host bot"]]


def test_a_foreign_writer_that_never_stops_gets_a_busy_error_not_an_overwrite(data_dir):
    from webapp.stores import StoreBusyError

    path = data_dir / "notes.json"
    file = JsonFile(path, default=list)
    file.update(lambda data: Changed(data.append("first")))
    count = iter(range(1000))

    def mutate(data: list[str]) -> Changed[None]:
        foreign_replace(path, ["theirs", next(count)])
        data.append("ours")
        return Changed(None)

    with pytest.raises(StoreBusyError):
        file.update(mutate)
    assert json.loads(path.read_bytes())[0] == "theirs"


# ----------------------------------------------------------------- 1. deleted lock, every store
def _hold_then_write(file: JsonFile, change, inside: threading.Event, go: threading.Event):
    def mutate(data):
        inside.set()
        go.wait(10)
        return change(data)

    return lambda: file.update(mutate)


STORES = {
    "memories": lambda d: large_memory_store(d / "memories.json")._file,
    "conversations": lambda d: (
        conversation_store(d / "conversations.json", max_turns=100, max_chars=10_000)._file
    ),
    "review": lambda d: (
        ReviewQueue(
            d / "review.json", large_memory_store(d / "memories.json"), lock_timeout=5
        )._file
    ),
    "extraction state": lambda d: ExtractionState(d / ".state.json", lock_timeout=5)._file,
}


@pytest.mark.parametrize("kind", STORES)
def test_a_lock_deleted_while_held_does_not_let_a_second_writer_overwrite(data_dir, kind):
    file = STORES[kind](data_dir)
    file.ensure()
    empty = file.read()

    def change(key: str):
        def apply(data):
            if isinstance(data, list):
                data.append({"id": key, "content": key, "status": "pending", "action": "add"})
            else:
                data[key] = {"turns": []}
            return Changed(None)

        return apply

    inside, go = threading.Event(), threading.Event()
    first = threading.Thread(target=_hold_then_write(file, change("first"), inside, go))
    first.start()
    assert inside.wait(5)
    file.lock_path.unlink()  # `rm data/*.lock` while a writer holds it
    other = STORES[kind](data_dir)
    other.update(change("second"))
    go.set()
    first.join(10)

    data = json.loads(file.path.read_bytes())
    keys = [r["id"] for r in data] if isinstance(data, list) else list(data)
    assert sorted(keys) == ["first", "second"], (empty, data)


def _memories_lock(data_dir: Path):
    file = large_memory_store(data_dir / "memories.json")._file
    file.ensure()
    return file.lock_path, file.locked


def _skills_lock(data_dir: Path):
    from webapp.stores.skills.store import _FolderLock

    store = SkillDocumentStore(data_dir / "skills", lock_timeout=5)
    store.directory.mkdir()
    return store.lock_path, lambda: _FolderLock(store)


@pytest.mark.parametrize("lock_of", [_memories_lock, _skills_lock], ids=["jsonfile", "skills"])
def test_a_writer_waiting_on_a_deleted_lock_file_takes_the_new_one(data_dir, lock_of):
    """The waiter opened the old lock file; once it is deleted and another writer holds a
    new one, the old file guards nothing, so the waiter must not count it as the lock."""
    import fcntl

    lock_path, locked = lock_of(data_dir)
    lock_path.touch()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, fcntl, os\n"
            "fd = os.open(sys.argv[1], os.O_RDWR)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "sys.stdin.readline()\n",
            str(lock_path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "held"
    got, done = threading.Event(), threading.Event()

    def wait_for_lock() -> None:
        with locked():
            got.set()
            done.wait(10)

    waiter = threading.Thread(target=wait_for_lock)
    waiter.start()
    time.sleep(0.2)  # the waiter has opened the old lock file and polls it
    lock_path.unlink()
    new_lock = os.open(lock_path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(new_lock, fcntl.LOCK_EX)  # a second writer took the new lock file
    holder.communicate("\n", timeout=5)  # the first one lets go of the deleted file
    try:
        assert not got.wait(0.5), "the waiter took a lock file that no longer guards anything"
    finally:
        fcntl.flock(new_lock, fcntl.LOCK_UN)
        os.close(new_lock)
    assert got.wait(5)
    done.set()
    waiter.join(5)


# ----------------------------------------------------------------- 3. repair replays history
def test_repair_brings_back_every_acknowledged_change(data_dir):
    path = data_dir / "memories.json"
    store = large_memory_store(path)
    store.init()
    ids = []
    for n in range(40):
        ids.append(store.add(f"fact number {n}").id)
        if n % 5 == 4:
            store.update(ids[n - 2], f"fact number {n - 2}, edited")
        if n % 7 == 6:
            store.delete(ids[n - 3])
    acknowledged = [(m.id, m.content) for m in store.get_all()]
    path.write_bytes(b'[{"id": "half-written')  # the disk or a person damaged it

    result = CliRunner().invoke(main, ["repair", "--data-dir", str(data_dir)])

    assert result.exit_code == 0, result.output
    assert [(m.id, m.content) for m in large_memory_store(path).get_all()] == acknowledged
    assert "replayed 1 change from the history log" in result.output
    assert list(data_dir.glob("memories.json.corrupt-*"))


def test_repair_without_a_backup_replays_the_whole_history(data_dir):
    path = data_dir / "memories.json"
    store = large_memory_store(path)
    store.init()
    for n in range(3):
        store.add(f"fact {n}")
    acknowledged = [(m.id, m.content) for m in store.get_all()]
    (data_dir / "memories.json.bak").unlink()
    path.write_bytes(b"garbage")

    report = store.repair_report()

    assert report.replayed == 3
    assert [(m.id, m.content) for m in large_memory_store(path).get_all()] == acknowledged


# ----------------------------------------------------------------- 4. a few bad records
def test_a_few_unusable_records_are_set_aside_and_the_rest_kept(data_dir, caplog):
    path = data_dir / "memories.json"
    good = [
        {"id": f"m{n}", "content": f"fact {n}", "createdAt": "2026-01-01T00:00:00.000Z"}
        for n in range(3)
    ]
    bad_one = '{"content": "no id here"}'
    bad_two = '{"id": "m9", "content": 42,   "note": "spacing kept"}'
    text = "[\n" + ",\n".join([json.dumps(good[0]), bad_one, json.dumps(good[1]), bad_two,
                                json.dumps(good[2])]) + "\n]\n"  # fmt: skip
    path.write_text(text, encoding="utf-8")
    store = large_memory_store(path)

    assert [m.id for m in store.get_all()] == ["m0", "m1", "m2"]  # readable at once
    store.add("a new fact")  # the first write sets the bad ones aside

    assert [m.id for m in store.get_all()][:3] == ["m0", "m1", "m2"]
    assert len(store.get_all()) == 4
    (quarantine,) = data_dir.glob("memories.json.rejected-*")
    kept = quarantine.read_text(encoding="utf-8")
    assert bad_one in kept and bad_two in kept  # their bytes, as they were
    assert "2 unusable records" in caplog.text and str(quarantine) in caplog.text


def test_repair_reports_how_many_records_it_set_aside_and_where(data_dir):
    path = data_dir / "memories.json"
    path.write_text(
        '[{"id": "a", "content": "kept"}, {"id": "b"}, {"id": "c", "content": "kept too"}]',
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["repair", "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    (quarantine,) = data_dir.glob("memories.json.rejected-*")
    assert f"1 unusable record moved to {quarantine}" in result.output
    assert [m.id for m in large_memory_store(path).get_all()] == ["a", "c"]


# ----------------------------------------------------------------- 5. symlinked store file
def test_a_symlinked_store_file_is_refused_naming_both_paths(data_dir, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "real-memories.json"
    target.write_text('[{"id": "a", "content": "kept"}]', encoding="utf-8")
    link = data_dir / "memories.json"
    link.symlink_to(target)
    store = large_memory_store(link)

    with pytest.raises(StoreError) as caught:
        store.add("new fact")

    assert str(link) in str(caught.value) and str(target) in str(caught.value)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_bytes()) == [{"id": "a", "content": "kept"}]
    assert not (data_dir / "memories.json.bak").exists()


# ----------------------------------------------------------------- 6. bounds on store files
DEEP = b"[" * 100_000 + b"]" * 100_000
HUGE_INT = b'[{"id": "a", "content": "x", "n": ' + b"9" * 5000 + b"}]"
MEDIUM_DEEP = (
    b'[{"id": "a", "content": "x", "extra": ' + b"[" * 970 + b"]" * 970 + b"}]"
)  # fine for json.loads at the top of the stack, not 40 frames down


@pytest.mark.parametrize("raw", [DEEP, HUGE_INT, MEDIUM_DEEP], ids=["deep", "int", "970"])
def test_a_store_file_beyond_the_parser_bounds_counts_as_damaged(data_dir, raw):
    path = data_dir / "memories.json"
    path.write_bytes(raw)
    store = large_memory_store(path)

    with pytest.raises(StoreCorruptError) as caught:
        store.get_all()
    assert "too deep" in str(caught.value) or "too long" in str(caught.value)
    assert store.status() == "corrupt"

    for command in (["stats"], ["repair"]):
        result = CliRunner().invoke(main, [*command, "--data-dir", str(data_dir)])
        assert (
            "Traceback" not in result.output
            and result.exception in (None,)
            or isinstance(result.exception, SystemExit)
        ), result.output
    assert path.read_bytes() == b"[]\n"  # repair set it aside and started empty
    (moved,) = data_dir.glob("memories.json.corrupt-*")
    assert moved.read_bytes() == raw


def test_the_depth_bound_holds_on_the_fast_orjson_path_too(data_dir):
    """orjson (the fast parser) allows 1024 levels; the store's bound is MAX_DEPTH, exactly."""
    from webapp.stores.jsonparse import MAX_DEPTH

    def nested(levels: int) -> bytes:  # the array and the record are two levels
        inner = levels - 2
        return b'[{"id": "a", "content": "x", "n": ' + b"[" * inner + b"]" * inner + b"}]"

    path = data_dir / "memories.json"
    path.write_bytes(nested(MAX_DEPTH))
    assert [m.id for m in large_memory_store(path).get_all()] == ["a"]

    path.write_bytes(nested(MAX_DEPTH + 1))
    with pytest.raises(StoreCorruptError, match="too deep"):
        large_memory_store(path).get_all()


def _at_depth(levels: int, call):
    if levels == 0:
        return call()
    return _at_depth(levels - 1, call)


def test_an_imported_record_nested_too_deep_is_refused_with_a_message(data_dir):
    store = large_memory_store(data_dir / "memories.json")
    record: dict = {"id": "a", "content": "fine"}
    value: list = []
    record["extra"] = value
    for _ in range(970):
        value.append([])
        value = value[0]
    with pytest.raises(ValueError, match="nested"):
        store.import_records([record])
    assert _at_depth(40, store.get_all) == []


def test_history_lines_beyond_the_parser_bounds_are_skipped(data_dir):
    store = large_memory_store(data_dir / "memories.json")
    kept = store.add("kept")
    with open(store.history_path, "ab") as log:
        log.write(b"[" * 100_000 + b"]" * 100_000 + b"\n")
        log.write(b'{"id": "x", "n": ' + b"9" * 5000 + b"}\n")
    assert [e["id"] for e in store.history()] == [kept.id]


def test_an_llm_reply_with_a_huge_number_is_not_facts(data_dir):
    from webapp.extraction.llm import parse_facts

    assert parse_facts('[{"content": "x", "confidence": ' + "9" * 5000 + "}]") is None


def test_an_add_on_options_file_nested_too_deep_is_a_settings_error(tmp_path):
    from webapp.settings import Settings, SettingsError

    options = tmp_path / "options.json"
    options.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(SettingsError, match="options"):
        Settings.from_env(environ={"SUPERVISOR_TOKEN": "x"}, options_file=options)
