"""Issue 23, "As of": what memory held at a past moment, rebuilt from the history log."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from webapp.stores import MemoryStore
from webapp.stores.asof import memories_as_of
from webapp.stores.timefmt import parse_ts, to_iso


def an_hour_ago(memory_file: Path) -> None:
    """Move every time in the memory file and its history log an hour back (as if what is
    there now was written an hour ago)."""

    def back(value: str) -> str:
        return to_iso(parse_ts(value) - timedelta(hours=1))

    records = json.loads(memory_file.read_text("utf-8"))
    for record in records:
        record.update(createdAt=back(record["createdAt"]), updatedAt=back(record["updatedAt"]))
    memory_file.write_text(json.dumps(records), "utf-8")
    log = memory_file.with_name("memories.history.jsonl")
    entries = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    for entry in entries:
        entry["ts"] = back(entry["ts"])
        for side in ("before", "after"):
            if isinstance(entry.get(side), dict):
                entry[side].update(
                    createdAt=back(entry[side]["createdAt"]),
                    updatedAt=back(entry[side]["updatedAt"]),
                )
    log.write_text("".join(json.dumps(e) + "\n" for e in entries), "utf-8")


def test_as_of_takes_back_every_change_made_after_the_moment(data_dir):
    store = MemoryStore(data_dir / "memories.json", lock_timeout=5)
    alarm = store.add("Weekday alarm is 06:45")
    tea = store.add("Drinks oolong tea")
    an_hour_ago(store.path)
    before = datetime.now(UTC) - timedelta(minutes=30)
    store.update(alarm.id, "Weekday alarm is 07:00")
    store.delete(tea.id)
    store.add("Works from home on Fridays")

    then = memories_as_of(store, before)
    assert [m.content for m in then] == ["Weekday alarm is 06:45", "Drinks oolong tea"]
    now = memories_as_of(store, datetime.now(UTC) + timedelta(seconds=1))
    assert [m.content for m in now] == [m.content for m in store.get_all()]
    assert memories_as_of(store, datetime(2000, 1, 1, tzinfo=UTC)) == []
