"""A change function that changes a cached record in place cannot lose the change.

The memory and conversation stores hand a change function their cached parse's records
(shared, so a write re-encodes and re-validates only the records it replaced). A store that
changes one of those records in place instead of replacing it used to be saved without that
change (the write reused the record's old bytes), and the cache kept the change the file did
not: both are caught now, and the usual write keeps its speed.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time

import pytest

from tests.support.stores import conversation_store, memory_store
from webapp.stores import Changed, ConversationStore, MemoryStore, Unchanged, jsonbytes
from webapp.stores.jsonbytes import OVERLAP_BYTES, encode
from webapp.stores.jsonparse import MAX_DEPTH
from webapp.stores.timefmt import now_iso


def filled(data_dir) -> MemoryStore:
    store = memory_store(data_dir / "memories.json").init()
    for text in ("first fact", "second fact", "third fact"):
        store.add(text, source="dashboard")  # writes in a row: the records' bytes are reused
    return store


def on_disk(path) -> list[dict]:
    raw = path.read_bytes()
    assert encode(json.loads(raw)) == raw  # still the program's own form
    return json.loads(raw)


def change_second(how: str):
    def change(records: list[dict]) -> None:
        if how == "a field":
            records[1]["content"] = "second fact, changed in place"
        elif how == "a nested field":
            records[1]["origin"]["by"] = "changed in place"
        elif how == "a removed field":
            del records[1]["origin"]
        else:  # every way dict offers
            records[1].update(content="second fact, changed in place")

    return change


WAYS = ["a field", "a nested field", "a removed field", "update()"]


def second_as_changed(how: str, record: dict) -> bool:
    return {
        "a field": record.get("content") == "second fact, changed in place",
        "a nested field": record.get("origin", {}).get("by") == "changed in place",
        "a removed field": "origin" not in record,
        "update()": record.get("content") == "second fact, changed in place",
    }[how]


@pytest.mark.parametrize("how", WAYS)
def test_a_memory_changed_in_place_by_a_change_function_is_saved(data_dir, how, caplog):
    store = filled(data_dir)
    store.get_all()  # readers share the cached records too
    change = change_second(how)

    def mutate(records: list[dict]) -> Changed[None]:
        change(records)
        return Changed(None)

    with caplog.at_level(logging.WARNING):
        store._file.update(mutate)

    assert second_as_changed(how, on_disk(store.path)[1])
    assert "in place" in caplog.text  # the store is told to copy what it changes
    fresh = memory_store(store.path)
    assert [m.id for m in fresh.get_all()] == [m.id for m in store.get_all()]
    assert second_as_changed(how, fresh._file.read()[1])
    assert second_as_changed(how, store._file.read()[1])
    # The next ordinary writes keep it (no stale bytes of the record are reused later).
    store.add("fourth fact")
    store.add("fifth fact")
    assert second_as_changed(how, on_disk(store.path)[1])
    assert len(on_disk(store.path)) == 5


def test_a_turn_changed_in_place_in_a_conversation_is_saved(data_dir):
    store = conversation_store(data_dir / "conversations.json").init()
    for n in range(3):
        store.add_exchange("slack:a", f"question {n}", f"answer {n}")
        store.add_exchange("slack:b", f"other {n}", f"reply {n}")
    store.get_history("slack:a")

    def mutate(data: dict) -> Changed[None]:
        data["slack:a"]["turns"][0]["content"] = "question 0, changed in place"
        return Changed(None)

    store._file.update(mutate)
    saved = json.loads(store.path.read_bytes())
    assert saved["slack:a"]["turns"][0]["content"] == "question 0, changed in place"
    assert saved["slack:b"]["turns"][0]["content"] == "other 0"
    store.add_exchange("slack:b", "later", "later")
    saved = json.loads(store.path.read_bytes())
    assert saved["slack:a"]["turns"][0]["content"] == "question 0, changed in place"


@pytest.mark.parametrize("ending", ["raises", "unchanged", "is refused"])
@pytest.mark.parametrize("how", WAYS)
def test_a_change_function_that_writes_nothing_leaves_no_change_in_the_cache(data_dir, how, ending):
    """The cache must keep saying what the file says: readers never see a change that was
    made in place by a change function that then failed or wrote nothing."""
    store = filled(data_dir)
    before = store.path.read_bytes()
    contents = [m.content for m in store.get_all()]
    change = change_second(how)

    def mutate(records: list[dict]) -> Changed[None] | Unchanged[None]:
        change(records)
        if ending == "raises":
            raise ValueError("refused after changing a record")
        if ending == "is refused":  # a record no memory store can read: the write refuses it
            records.append({"id": "broken"})
            return Changed(None)
        return Unchanged(None)

    if ending != "unchanged":
        with pytest.raises(ValueError):
            store._file.update(mutate)
    else:
        store._file.update(mutate)

    assert store.path.read_bytes() == before
    assert [m.content for m in store.get_all()] == contents
    assert not second_as_changed(how, store._file.read()[1])
    store.add("fourth fact")
    assert not second_as_changed(how, on_disk(store.path)[1])


def test_a_record_replaced_before_its_change_is_the_only_one_encoded_and_checked(
    data_dir, monkeypatch
):
    """Copy on write keeps the speed the cache is for: only the new record is validated."""
    store = filled(data_dir)
    checked: list[object] = []
    real = store._file._validate_item
    assert real is not None

    def counting(record: object) -> str | None:
        checked.append(record)
        return real(record)

    monkeypatch.setattr(store._file, "_validate_item", counting)
    store.add("fourth fact")
    memory = store.get_all()[0]
    store.update(memory.id, "first fact, edited")
    assert [r["content"] for r in checked] == ["fourth fact", "first fact, edited"]

    # Changed in place instead: caught, and every record is checked again.
    checked.clear()
    store._file.update(lambda records: Changed(records[0].update(content="edited in place")))
    assert len(checked) == 4
    assert on_disk(store.path)[0]["content"] == "edited in place"


def test_a_change_function_must_say_whether_it_changed_the_document(data_dir):
    store = filled(data_dir)
    before = store.path.read_bytes()

    def mutate(records: list[dict]) -> None:
        records.append({"id": "x", "content": "never saved"})

    with pytest.raises(TypeError, match=r"Changed\(result\).*Unchanged\(result\)"):
        store._file.update(mutate)  # type: ignore[arg-type]
    assert store.path.read_bytes() == before
    assert [m.content for m in store.get_all()] == ["first fact", "second fact", "third fact"]


def big_conversations(data_dir) -> ConversationStore:
    """A conversations file beyond ``OVERLAP_BYTES``, written twice in a row (the threads'
    bytes are then reused) and cached."""
    store = ConversationStore(
        data_dir / "conversations.json", max_turns=20, max_chars=100_000, lock_timeout=5
    ).init()
    words = "tea coffee 咖啡 garden " * 60
    store._file.update(
        lambda data: Changed(
            data.update(
                {
                    f"slack:{n}": {
                        "turns": [
                            {
                                "role": "user",
                                "content": f"{n} {words}",
                                "timestamp": now_iso(),
                            }
                        ]
                        * 4,
                        "createdAt": now_iso(),
                        "trimmed": 0,
                    }
                    for n in range(400)
                }
            )
        )
    )
    store.add_exchange("slack:1", "warm", "up")
    store.get_history("slack:1")
    assert store.path.stat().st_size > OVERLAP_BYTES
    return store


def test_a_turn_changed_in_place_in_a_big_conversations_file_is_saved(data_dir, caplog):
    """The check of a big write runs beside its fsync: a change made in place is still caught
    before the file is replaced, and saved."""
    store = big_conversations(data_dir)
    before = store.path.read_bytes()

    def mutate(data: dict) -> Changed[None]:
        data["slack:7"]["turns"][0]["content"] = "changed in place"
        return Changed(None)

    with caplog.at_level(logging.WARNING):
        store._file.update(mutate)
    assert on_disk(store.path)["slack:7"]["turns"][0]["content"] == "changed in place"
    assert store.get_history("slack:7")[0].content == "changed in place"
    assert store.path.with_name("conversations.json.bak").read_bytes() == before
    assert "in place" in caplog.text
    store.add_exchange("slack:8", "later", "later")
    assert on_disk(store.path)["slack:7"]["turns"][0]["content"] == "changed in place"


def test_the_check_of_a_big_write_runs_while_its_bytes_wait_for_the_disk(data_dir, monkeypatch):
    """add_exchange on a big file: the check that no shared thread was changed in place (an
    encoding of the whole document, 40% of add_exchange at 10 MB in issue 46) runs while the
    temp file's fsync waits for the disk in a thread of its own, not after it."""
    store = big_conversations(data_dir)
    events: list[str] = []
    real_fsync, real_check = os.fsync, jsonbytes.encodes_as

    def fsync(fd: int) -> None:
        events.append(f"fsync on {threading.current_thread().name}")
        time.sleep(0.05)  # a slow disk: the check runs meanwhile
        real_fsync(fd)
        events.append("fsync done")

    def check(data: object, raw: bytes) -> bool:
        events.append("check")
        return real_check(data, raw)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(jsonbytes, "encodes_as", check)
    store.add_exchange("slack:3", "And tomorrow's tea?", "Rain after 15:00.")
    assert events[:3] == ["fsync on store-fsync", "check", "fsync done"]
    assert store.get_history("slack:3")[-1].content == "Rain after 15:00."
    assert on_disk(store.path)["slack:3"]["turns"][-1]["content"] == "Rain after 15:00."


def test_a_thread_is_measured_for_depth_by_its_structure_not_its_brackets(data_dir):
    """New items of a spliced write are measured on their encoded bytes: brackets inside text
    do not count, real nesting beyond the bound is refused with nothing written."""
    store = ConversationStore(
        data_dir / "conversations.json", max_turns=20, max_chars=100_000, lock_timeout=5
    ).init()
    store.add_exchange("slack:a", "first", "reply")
    store.add_exchange("slack:b", "second", "reply")  # the bytes of slack:a are now reused
    brackets = "[" * 200 + "{" * 200
    store.add_exchange("slack:a", brackets, "ok")
    assert on_disk(store.path)["slack:a"]["turns"][-2]["content"] == brackets
    deep: object = "bottom"
    for _ in range(MAX_DEPTH):
        deep = [deep]
    before = store.path.read_bytes()
    with pytest.raises(ValueError, match="nested deeper"):
        store._file.update(
            lambda data: Changed(
                data.update({"slack:c": {"turns": [{"content": "x", "extra": deep}]}})
            )
        )
    assert store.path.read_bytes() == before


# ------------------------------------------------------------ records read once (issue 46)
def test_an_add_reads_only_the_record_it_adds_and_shows_every_one(data_dir):
    """A write of this process shares the records it left alone; the memories read from them
    are kept (the same objects), so an add at 10,000 memories does not read 10,000 records."""
    store = filled(data_dir)
    before = store.get_all()
    added = store.add("fourth fact")
    after = store.get_all()
    assert [m.content for m in after] == [*(m.content for m in before), "fourth fact"]
    assert all(new is old for new, old in zip(after, before, strict=False))
    assert after[-1] == added
    assert store.get(added.id) == added
    assert [m.content for m in store.search("fourth")] == ["fourth fact"]


@pytest.mark.parametrize("how", WAYS)
def test_a_record_changed_in_place_is_read_anew_by_every_view(data_dir, how):
    store = filled(data_dir)
    kept = store.get_all()[1]
    store.search("second")  # every view built from the records as they were
    change = change_second(how)

    def mutate(records: list[dict]) -> Changed[None]:
        change(records)
        return Changed(None)

    store._file.update(mutate)
    shown = store.get_all()[1]
    assert shown is not kept
    assert shown == memory_store(store.path).get_all()[1]  # as a fresh reader sees the file
    assert store.get(kept.id) == shown
    if how in ("a field", "update()"):
        assert [m.content for m in store.search("changed in place")] == [shown.content]


def test_a_record_another_process_changed_is_read_anew(data_dir):
    store = filled(data_dir)
    first = store.get_all()[0]
    other = memory_store(store.path)
    other.update(first.id, "first fact, said elsewhere", expected_updated_at=first.version)
    assert store.get_all()[0].content == "first fact, said elsewhere"
    assert store.get(first.id).content == "first fact, said elsewhere"
