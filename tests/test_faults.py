"""Disk full and I/O errors at each step of a write leave the original file exactly as it was."""

from __future__ import annotations

import errno
import os
import tempfile

import pytest

from tests.support.stores import memory_store
from webapp.stores import MemoryStore, StoreError, StoreWriteError, atomic

STEPS = ["temp create", "chmod", "write", "short write", "fsync", "close", "replace"]
ERRORS = [errno.ENOSPC, errno.EIO]
EXPECTED_FILES = {
    "memories.json",
    "memories.json.lock",
    "memories.json.bak",
    "memories.history.jsonl",
    "memories.json.format",  # the format sidecar (stores/formats.py), written first
}


class Faulty:
    """Stands in for a module inside webapp.stores.atomic (the file layer's writes); one
    function fails as the disk would."""

    def __init__(self, real, name: str, fail):
        self._real, self._name, self._fail = real, name, fail
        self.triggered = 0

    def __getattr__(self, attribute):
        value = getattr(self._real, attribute)
        if attribute != self._name:
            return value

        def failing(*args, **kwargs):
            self.triggered += 1
            return self._fail(value, *args, **kwargs)

        return failing


def raiser(code: int):
    def fail(real, *args, **kwargs):
        raise OSError(code, os.strerror(code))

    return fail


def inject(monkeypatch, step: str, code: int, target) -> Faulty:
    """Make ``step`` of write_atomic fail with ``code`` for writes of ``target``."""
    if step == "temp create":
        faulty = Faulty(tempfile, "mkstemp", raiser(code))
        monkeypatch.setattr(atomic, "tempfile", faulty)
        return faulty

    def short_then_fail(real, fd, data):
        if not getattr(short_then_fail, "wrote", False) and len(data) > 1:
            short_then_fail.wrote = True
            return real(fd, bytes(data[: len(data) // 2]))
        raise OSError(code, os.strerror(code))

    def close_then_fail(real, fd):
        real(fd)  # the descriptor is gone either way, as on Linux
        raise OSError(code, os.strerror(code))

    def replace_target_fails(real, src, dst):
        if str(dst) == str(target):
            raise OSError(code, os.strerror(code))
        return real(src, dst)

    name, fail = {
        "chmod": ("fchmod", raiser(code)),
        "write": ("write", raiser(code)),
        "short write": ("write", short_then_fail),
        "fsync": ("fsync", raiser(code)),
        "close": ("close", close_then_fail),
        "replace": ("replace", replace_target_fails),
    }[step]
    faulty = Faulty(os, name, fail)
    monkeypatch.setattr(atomic, "os", faulty)
    return faulty


@pytest.fixture
def store(data_dir) -> MemoryStore:
    store = memory_store(data_dir / "memories.json").init()
    store.add("first")
    store.add("second")  # now a .bak exists too
    return store


@pytest.mark.parametrize("code", ERRORS, ids=["ENOSPC", "EIO"])
@pytest.mark.parametrize("step", STEPS)
def test_a_failed_step_changes_nothing_and_raises(store, monkeypatch, step, code):
    original = store.path.read_bytes()
    history = store.history_path.read_bytes()
    before = [m.content for m in store.get_all()]
    faulty = inject(monkeypatch, step, code, store.path)

    with pytest.raises(OSError) as caught:
        store.add("third")

    assert faulty.triggered
    assert caught.value.errno == code
    assert isinstance(caught.value, StoreWriteError) and isinstance(caught.value, StoreError)
    assert str(store.path) in str(caught.value)
    assert store.path.read_bytes() == original
    assert store.history_path.read_bytes() == history
    assert set(os.listdir(store.path.parent)) <= EXPECTED_FILES
    assert [m.content for m in store.get_all()] == before

    monkeypatch.undo()
    store.add("third")
    assert [m.content for m in store.get_all()] == before + ["third"]


@pytest.mark.parametrize("step", ["temp create", "write", "fsync", "replace"])
def test_a_failed_first_write_leaves_no_file_and_no_temp(data_dir, monkeypatch, step):
    path = data_dir / "memories.json"
    inject(monkeypatch, step, errno.ENOSPC, path)
    with pytest.raises(OSError):
        memory_store(path, max_items=10, max_chars=100).init()
    assert not path.exists()
    assert set(os.listdir(data_dir)) <= {"memories.json.lock", "memories.json.format"}


def test_a_failing_backup_link_does_not_block_the_write(store, monkeypatch):
    inject_link = Faulty(os, "link", raiser(errno.EIO))
    monkeypatch.setattr(atomic, "os", inject_link)
    store.add("third")
    assert inject_link.triggered
    assert [m.content for m in store.get_all()] == ["first", "second", "third"]
    assert set(os.listdir(store.path.parent)) <= EXPECTED_FILES


def test_a_failing_folder_fsync_after_the_replace_reports_success(store, monkeypatch, caplog):
    """The new content is already visible; raising would make the caller add it twice."""
    real_fsync = os.fsync
    calls = []

    def second_fsync_fails(real, fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real_fsync(fd)

    monkeypatch.setattr(atomic, "os", Faulty(os, "fsync", second_fsync_fails))
    store.add("third")
    assert [m.content for m in store.get_all()] == ["first", "second", "third"]
    assert "could not fsync" in caplog.text


@pytest.mark.parametrize("code", ERRORS, ids=["ENOSPC", "EIO"])
def test_a_change_whose_history_entry_cannot_be_written_does_not_happen(store, monkeypatch, code):
    """The history entry is written first: a deletion is never saved without the entry that
    lets a person restore it."""
    from webapp.stores import history

    first = store.get_all()[0]
    original, log = store.path.read_bytes(), store.history_path.read_bytes()

    def write_half_then_fail(real, fd, data):
        real(fd, bytes(data[: len(data) // 2]))
        raise OSError(code, os.strerror(code))

    faulty = Faulty(os, "write", write_half_then_fail)
    monkeypatch.setattr(history, "os", faulty)
    with pytest.raises(StoreWriteError) as caught:
        store.delete(first.id)
    assert faulty.triggered
    assert caught.value.errno == code and str(store.path) in str(caught.value)
    assert store.path.read_bytes() == original
    assert store.history_path.read_bytes() == log  # the half-written entry was cut off again

    monkeypatch.undo()
    assert store.delete(first.id) is True
    assert store.restore(first.id).content == first.content


@pytest.mark.parametrize("step", ["write", "fsync", "replace"])
def test_a_deletion_that_cannot_be_saved_leaves_memory_and_history_as_they_were(
    store, monkeypatch, step
):
    first = store.get_all()[0]
    original, log = store.path.read_bytes(), store.history_path.read_bytes()
    inject(monkeypatch, step, errno.ENOSPC, store.path)
    with pytest.raises(OSError):
        store.delete(first.id)
    monkeypatch.undo()
    assert store.path.read_bytes() == original
    assert store.history_path.read_bytes() == log
    assert store.get(first.id) is not None
