"""Damaged store files: a clear error naming file and position, nothing overwritten, repair."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.cli import run_cli
from tests.support.stores import conversation_store, memory_store
from webapp.stores import StoreCorruptError
from webapp.stores.jsonbytes import encode

GOOD = encode(
    [
        {
            "id": "m1",
            "content": "a good memory",
            "createdAt": "2026-01-01T00:00:00.000Z",
            "updatedAt": "2026-01-01T00:00:00.000Z",
            "category": "general",
        }
    ]
)

# (name, bytes, what the message must say about the position)
BAD_MEMORY_FILES = [
    ("empty", b"", "at byte 0"),
    ("blank", b"  \n\t\n", "at byte 0"),
    ("truncated", GOOD[: len(GOOD) // 2], "at line"),
    ("trailing garbage", GOOD + b"}\n]", "at line 10, column 1"),
    ("NUL bytes", b"\x00" * 64, "at line 1, column 1"),
    ("NUL after data", GOOD + b"\x00\x00\x00", "at line 10, column 1"),
    (
        "invalid UTF-8",
        GOOD.replace(b"a good", b"a \xff\xfe good"),
        f"at byte {GOOD.index(b'a good') + 2}",
    ),
    ("object instead of array", b'{"id": "m1", "content": "x"}', "JSON array"),
    ("array of strings", b'["just text"]', "item 0"),
]


def quarantined(folder, name):
    pattern = re.compile(rf"{re.escape(name)}\.corrupt-\d{{8}}T\d{{12}}Z(-\d+)?")
    return [p for p in folder.iterdir() if pattern.fullmatch(p.name)]


@pytest.mark.parametrize(
    "name, content, where", BAD_MEMORY_FILES, ids=[case[0] for case in BAD_MEMORY_FILES]
)
def test_a_bad_memory_file_is_reported_and_never_overwritten(data_dir, name, content, where):
    path = data_dir / "memories.json"
    path.write_bytes(content)
    store = memory_store(path)

    with pytest.raises(StoreCorruptError) as caught:
        store.init()
    message = str(caught.value)
    assert str(path) in message and where in message and "repair" in message

    for attempt in (
        lambda: store.add("new"),
        store.get_all,
        lambda: store.delete("m1"),
        lambda: store.update("m1", "changed"),
        lambda: store.search("a"),
    ):
        with pytest.raises(StoreCorruptError):
            attempt()
    assert path.read_bytes() == content
    assert store.status() == "corrupt"


@pytest.mark.parametrize("content", [b"[]", b'[{"id": "c1"}]', b"{bad"])
def test_a_bad_conversation_file_is_reported_and_never_overwritten(data_dir, content):
    path = data_dir / "conversations.json"
    path.write_bytes(content)
    store = conversation_store(path)
    with pytest.raises(StoreCorruptError, match=re.escape(str(path))):
        store.init()
    with pytest.raises(StoreCorruptError):
        store.add_exchange("slack:1", "q", "r")
    assert path.read_bytes() == content


def test_a_utf8_bom_is_accepted(data_dir):
    path = data_dir / "memories.json"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD)
    assert [m.content for m in memory_store(path).init().get_all()] == ["a good memory"]


@pytest.mark.parametrize(
    "name, content, where", BAD_MEMORY_FILES[:4], ids=[case[0] for case in BAD_MEMORY_FILES[:4]]
)
def test_repair_quarantines_and_restarts_from_the_backup(data_dir, name, content, where):
    path = data_dir / "memories.json"
    store = memory_store(path).init()
    first = store.add("first")
    second = store.add("second")  # the .bak holds "first" only; the history log has "second"
    path.write_bytes(content)  # damaged by something that is not us

    moved = store.repair()

    assert moved is not None and quarantined(data_dir, "memories.json") == [moved]
    assert moved.read_bytes() == content
    assert [m.id for m in store.get_all()] == [first.id, second.id]  # the backup + replay
    store.add("works again")
    assert len(store.get_all()) == 3


def test_repair_without_a_good_backup_starts_empty(data_dir):
    path = data_dir / "memories.json"
    path.write_bytes(b"[{")
    (data_dir / "memories.json.bak").write_bytes(b"also broken")
    store = memory_store(path)
    moved = store.repair()
    assert moved.read_bytes() == b"[{"
    assert store.init().get_all() == []
    assert (data_dir / "memories.json.bak").read_bytes() == b"also broken"


def test_repair_of_a_good_file_does_nothing(data_dir):
    path = data_dir / "memories.json"
    path.write_bytes(GOOD)
    assert memory_store(path).repair() is None
    assert path.read_bytes() == GOOD
    assert quarantined(data_dir, "memories.json") == []


def test_two_repairs_never_overwrite_a_quarantined_file(data_dir):
    path = data_dir / "memories.json"
    store = memory_store(path)
    for content in (b"first damage", b"second damage"):
        path.write_bytes(content)
        store.repair()
    assert sorted(p.read_bytes() for p in quarantined(data_dir, "memories.json")) == [
        b"first damage",
        b"second damage",
    ]


def test_the_repair_command(data_dir):
    memories = data_dir / "memories.json"
    conversations = data_dir / "conversations" / "conversations.json"
    conversations.parent.mkdir()
    conversations.write_bytes(b'{"slack:1": {"turns": []}}')
    memories.write_bytes(GOOD)
    memory_store(memories).add("second")  # makes GOOD the backup
    memories.write_bytes(b"\x00\x00garbage")

    done = run_cli("repair", data_dir=data_dir)

    assert done.returncode == 0, done.stderr
    [moved] = quarantined(data_dir, "memories.json")
    assert moved.read_bytes() == b"\x00\x00garbage"
    assert (
        f"{memories}: damaged; moved to {moved}, started from the last good backup" in done.stdout
    )
    assert f"{conversations}: ok" in done.stdout
    assert json.loads(memories.read_bytes())[0]["content"] == "a good memory"
    assert run_cli("repair", data_dir=data_dir).stdout.count(": ok") == 2


def test_stats_shows_a_damaged_file_loudly(data_dir):
    (data_dir / "memories.json").write_bytes(b"[1, 2")
    done = run_cli("stats", data_dir=data_dir)
    assert done.returncode != 0
    assert "damaged" in done.stderr and "memory-curator repair" in done.stderr
    assert "corrupt" in done.stdout
