"""Issue 23, "As of": what memory held at a past moment, rebuilt from the history log."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.support.data import an_hour_ago
from webapp.stores import MemoryStore
from webapp.stores.asof import memories_as_of


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
