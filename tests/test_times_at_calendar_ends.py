"""Issue 35, item 14: times at the calendar's ends. A moment asked for with an offset that
takes it past the year 1 or 9999 in UTC made "As of" and the prompt preview answer 500, and
``compose_prompt`` over dict records read an ``expiresAt`` outside the calendar as expired
while the store read it as "never"; there is one reading now (``webapp.language.moments``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from webapp.prompts import compose_prompt, is_expired
from webapp.stores.memories import Memory

# Every kind of value another program may write in ``expiresAt``: out of the calendar in UTC,
# at its ends, as milliseconds far out, unreadable, of another type, and ordinary ones.
EXPIRES = [
    "0001-01-01T00:00+14:00",
    "0001-01-01T00:00:00Z",
    "0001-01-01T12:00:00",
    "9999-12-31T23:59:59-14:00",
    "9999-12-31T23:59:59Z",
    -(10**20),
    10**20,
    -62135596800000,  # 0001-01-01 in Unix ms
    253402300799999,  # 9999-12-31T23:59:59.999
    float("inf"),
    float("nan"),
    "soon",
    " 2020-01-01T00:00:00Z ",
    True,
    ["2020-01-01"],
    "2020-01-01T00:00:00.000Z",
    "2099-01-01T00:00:00.000Z",
    1577836800000,  # 2020-01-01 in Unix ms
    None,
]


@pytest.mark.parametrize("expires", EXPIRES, ids=repr)
def test_compose_prompt_over_dicts_and_the_store_agree_on_every_expiry(tmp_path, expires):
    stamp = "2026-01-01T00:00:00.000Z"
    record = {"id": "m1", "content": "Is in Tokyo", "createdAt": stamp, "updatedAt": stamp}
    if expires is not None:
        record["expiresAt"] = expires
    now = datetime(2026, 6, 1, tzinfo=UTC)
    store_says = Memory.from_dict(record).expired(now)
    assert is_expired(record, now) == store_says
    from_dict = "Is in Tokyo" in compose_prompt([record], [], "?", now=now)
    from_memory = "Is in Tokyo" in compose_prompt([Memory.from_dict(record)], [], "?", now=now)
    assert from_dict == from_memory == (not store_says)


def test_an_expiry_outside_the_calendar_is_never_on_every_side(tmp_path):
    """The reported case: the dict reading called it expired, the store "never"."""
    record = {"id": "m1", "content": "Is in Tokyo", "expiresAt": "0001-01-01T00:00+14:00"}
    assert not is_expired(record)
    assert "Is in Tokyo" in compose_prompt([record], [], "?")
    later = datetime.now(UTC) + timedelta(days=1)
    assert "Is in Tokyo" in compose_prompt([record], [], "?", now=later)
