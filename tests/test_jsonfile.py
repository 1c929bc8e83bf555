"""The JSON file layer: cached reads, change detection, bounded lock waits, atomic writes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from webapp.stores import MemoryStore, StoreBusyError, jsonread
from webapp.stores.atomic import write_atomic
from webapp.stores.jsonbytes import encode
from webapp.stores.jsonfile import JsonFile


@pytest.fixture
def parse_calls(monkeypatch) -> list[int]:
    """Counts every parse of a store file's bytes."""
    calls: list[int] = []
    real = jsonread.parse_bytes

    def counting(raw, path):
        calls.append(len(raw))
        return real(raw, path)

    monkeypatch.setattr(jsonread, "parse_bytes", counting)
    return calls


def run_python(code: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        **kw,
    )


def store_at(path, **kw) -> MemoryStore:
    return MemoryStore(
        path, max_items=1000, max_chars=100_000, lock_timeout=kw.pop("timeout", 5), **kw
    )


def test_an_unchanged_file_is_not_re_parsed(data_dir, parse_calls):
    store = store_at(data_dir / "memories.json").init()
    store.add("one")
    parse_calls.clear()
    for _ in range(5):
        assert [m.content for m in store.get_all()] == ["one"]
        store.search("o")
        store.get("x")
    # The store keeps what it wrote: its own file is not parsed again at all.
    assert len(parse_calls) == 0
    other = store_at(data_dir / "memories.json")
    for _ in range(5):
        assert [m.content for m in other.get_all()] == ["one"]
        other.search("o")
    assert len(parse_calls) == 1


def test_derived_views_are_built_once_per_version(data_dir):
    store = store_at(data_dir / "memories.json").init()
    store.add("one")
    assert store.get_all()[0] is store.get_all()[0]


def test_a_change_by_another_process_is_seen(data_dir, parse_calls):
    path = data_dir / "memories.json"
    store = store_at(path).init()
    store.add("mine")
    assert len(store.get_all()) == 1
    parse_calls.clear()
    done = run_python(f"""
        from webapp.stores import MemoryStore
        MemoryStore({str(path)!r}, max_items=9, max_chars=999, lock_timeout=5).add("theirs")
    """)
    assert done.returncode == 0, done.stderr
    assert [m.content for m in store.get_all()] == ["mine", "theirs"]
    assert len(parse_calls) == 1
    store.get_all()
    assert len(parse_calls) == 1


def test_a_same_size_change_within_one_mtime_tick_is_seen(data_dir, monkeypatch):
    """Inode, size and mtime all unchanged (coarse clock, in-place edit): the bytes still tell."""
    monkeypatch.setattr(jsonread, "RACY_NS", 3600 * 10**9)  # a slow machine stays in the window
    path = data_dir / "doc.json"
    path.write_bytes(b'{"v": "aaaa"}')
    stamp = os.stat(path).st_mtime_ns
    document = JsonFile(path, default=dict)
    assert document.read() == {"v": "aaaa"}
    with open(path, "r+b") as handle:
        handle.write(b'{"v": "bbbb"}')
    os.utime(path, ns=(stamp, stamp))
    assert document.signature()[1:] == (stamp, 13)
    assert document.read() == {"v": "bbbb"}


def test_a_write_reuses_its_cached_parse_only_for_the_same_bytes(data_dir, parse_calls):
    """Under the lock the cached parse stands in for the file only when the bytes are the ones
    it was parsed from: an in-place edit that keeps inode, size and mtime (the racy case) is
    still read, and the write keeps it."""
    path = data_dir / "memories.json"
    store = store_at(path).init()
    first = store.add("aaaa")
    parse_calls.clear()
    store.add("second")
    assert parse_calls == []  # the file is the one it wrote: nothing parsed again
    stat = os.stat(path)
    raw = path.read_bytes()
    edited = raw.replace(b'"aaaa"', b'"bbbb"')
    with open(path, "r+b") as handle:
        handle.write(edited)
    os.utime(path, ns=(stat.st_mtime_ns, stat.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        stat.st_ino,
        stat.st_size,
        stat.st_mtime_ns,
    )
    store.add("third")
    assert len(parse_calls) == 1
    contents = {m.id: m.content for m in store_at(path).get_all()}
    assert contents[first.id] == "bbbb"
    assert sorted(contents.values()) == ["bbbb", "second", "third"]


def test_a_write_that_changes_nothing_does_not_touch_the_file(data_dir):
    store = store_at(data_dir / "memories.json").init()
    memory = store.add("same")
    before = store.signature()
    assert store.delete("unknown") is False
    assert store.update(memory.id, "same").content == "same"
    assert store.signature() == before


HOLD_LOCK = """
    import sys, filelock
    lock = filelock.FileLock(sys.argv[1])
    lock.acquire()
    print("locked", flush=True)
    sys.stdin.read()
"""


def test_a_held_lock_gives_store_busy_error_not_a_hang(data_dir):
    path = data_dir / "memories.json"
    store = store_at(path, timeout=0.3).init()
    store.add("before")
    original = path.read_bytes()
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLD_LOCK), f"{path}.lock"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreBusyError) as caught:
            store.add("while locked")
        assert str(path) in str(caught.value) and "busy" in str(caught.value)
        assert path.read_bytes() == original
        assert [m.content for m in store.get_all()] == ["before"]  # readers need no lock
    finally:
        holder.communicate(timeout=30)  # closes its stdin (it lets go) and its stdout
    store.add("after")
    assert [m.content for m in store.get_all()] == ["before", "after"]


def test_the_lock_file_is_a_sidecar_and_stays(data_dir):
    path = data_dir / "memories.json"
    store_at(path).init().add("x")
    assert (data_dir / "memories.json.lock").exists()
    assert path.read_bytes().startswith(b"[")


def test_write_atomic_keeps_the_previous_version_as_backup(data_dir):
    path = data_dir / "doc.json"
    write_atomic(path, encode(["one"]))
    write_atomic(path, encode(["two"]), backup=path.with_name("doc.json.bak"))
    assert path.read_bytes() == encode(["two"])
    assert path.with_name("doc.json.bak").read_bytes() == encode(["one"])


def test_write_atomic_keeps_the_file_mode(data_dir):
    path = data_dir / "doc.json"
    write_atomic(path, b"[]\n")
    assert os.stat(path).st_mode & 0o777 == 0o644
    os.chmod(path, 0o664)
    write_atomic(path, b"[1]\n")
    assert os.stat(path).st_mode & 0o777 == 0o664


def test_files_are_utf8_with_non_ascii_kept(data_dir):
    store = store_at(data_dir / "memories.json").init()
    store.add("喜欢喝咖啡 ☕")
    assert "喜欢喝咖啡 ☕".encode() in store.path.read_bytes()
