"""ConversationStore: exchanges, trimming by turns, characters and age, keys, listing."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.stores import conversation_store
from webapp.stores import (
    ConversationStore,
    ConversationTurn,
    cli_session_key,
    schedule_key,
    slack_key,
)
from webapp.stores.timefmt import to_iso


def make_store(data_dir, **caps) -> ConversationStore:
    caps = {"max_turns": 20, "max_chars": 8000, "max_age_days": 7, **caps}
    return ConversationStore(
        data_dir / "conversations" / "conversations.json", lock_timeout=5, **caps
    ).init()


def ago(**delta) -> str:
    return to_iso(datetime.now(UTC) - timedelta(**delta))


def test_init_creates_the_folder_and_an_empty_object(data_dir):
    store = make_store(data_dir)
    assert json.loads(store.path.read_text(encoding="utf-8")) == {}


def test_add_exchange_appends_a_user_and_an_assistant_turn(data_dir):
    store = make_store(data_dir)
    store.add_exchange("slack:1", "Hi", "Hello!")
    store.add_exchange("slack:1", "Weather?", "Rain.")
    history = store.get_history("slack:1")
    assert [(t.role, t.content) for t in history] == [
        ("user", "Hi"),
        ("assistant", "Hello!"),
        ("user", "Weather?"),
        ("assistant", "Rain."),
    ]
    assert all(isinstance(t, ConversationTurn) and t.timestamp.tzinfo for t in history)
    turns = json.loads(store.path.read_text(encoding="utf-8"))["slack:1"]["turns"]
    assert set(turns[0]) == {"role", "content", "timestamp"}


def test_unknown_conversation_has_no_history(data_dir):
    assert make_store(data_dir).get_history("slack:nothing") == []


def test_conversations_are_kept_apart(data_dir):
    store = make_store(data_dir)
    store.add_exchange("a", "to a", "from a")
    store.add_exchange("b", "to b", "from b")
    assert [t.content for t in store.get_history("a")] == ["to a", "from a"]


def test_clear(data_dir):
    store = make_store(data_dir)
    store.add_exchange("a", "q", "r")
    store.add_exchange("b", "q", "r")
    store.clear("a")
    assert store.get_history("a") == []
    assert len(store.get_history("b")) == 2


def test_trimming_by_turns_keeps_the_newest_and_counts_the_trimmed(data_dir):
    store = make_store(data_dir, max_turns=4)
    for n in range(1, 4):
        store.add_exchange("t", f"q{n}", f"a{n}")
    assert [t.content for t in store.get_history("t")] == ["q2", "a2", "q3", "a3"]
    [summary] = store.list_conversations()
    assert summary.trimmed == 2 and summary.turn_count == 4


def test_an_odd_turn_cap_counts_single_messages(data_dir):
    store = make_store(data_dir, max_turns=3)
    store.add_exchange("t", "q1", "a1")
    store.add_exchange("t", "q2", "a2")
    assert [t.content for t in store.get_history("t")] == ["a1", "q2", "a2"]


def test_trimming_by_characters_drops_the_oldest_turns(data_dir):
    store = make_store(data_dir, max_chars=25)
    store.add_exchange("t", "a" * 10, "b" * 10)
    store.add_exchange("t", "c" * 10, "d" * 10)
    assert [t.content for t in store.get_history("t")] == ["c" * 10, "d" * 10]
    store.add_exchange("t", "e" * 5, "f" * 30)  # one turn larger than the cap: nothing fits
    assert store.get_history("t") == []
    assert store.list_conversations()[0].trimmed == 6


def test_turns_are_trimmed_before_characters(data_dir):
    store = make_store(data_dir, max_turns=4, max_chars=12)
    for text in ("aaaa", "bbbb", "cccc"):
        store.add_exchange("t", text, text.upper())
    # 6 turns -> the newest 4 (16 characters) -> drop "bbbb": 12 characters, exactly the cap.
    assert [t.content for t in store.get_history("t")] == ["BBBB", "cccc", "CCCC"]


def write_raw(store: ConversationStore, data: dict) -> None:
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_text(json.dumps(data), encoding="utf-8")


def old_thread(days: float) -> dict:
    return {
        "turns": [{"role": "user", "content": "hi", "timestamp": ago(days=days)}],
        "createdAt": ago(days=days),
        "trimmed": 0,
    }


def test_cleanup_removes_threads_idle_longer_than_max_age(data_dir):
    store = conversation_store(data_dir / "c.json", lock_timeout=1)
    write_raw(store, {"old": old_thread(8), "older": old_thread(30), "fresh": old_thread(6.9)})
    assert store.cleanup() == 2
    assert list(json.loads(store.path.read_text(encoding="utf-8"))) == ["fresh"]
    assert store.cleanup() == 0


def test_init_runs_cleanup(data_dir):
    store = conversation_store(data_dir / "c.json", max_age_days=1, lock_timeout=1)
    write_raw(store, {"old": old_thread(2), "new": old_thread(0.5)})
    store.init()
    assert [s.id for s in store.list_conversations()] == ["new"]


def test_an_expired_thread_has_no_history_even_before_cleanup(data_dir):
    store = conversation_store(data_dir / "c.json", lock_timeout=1)
    write_raw(store, {"old": old_thread(10)})
    assert store.get_history("old") == []


def test_list_conversations(data_dir):
    store = make_store(data_dir)
    store.add_exchange(slack_key(None, "1.5"), "abc", "de")
    store.add_exchange(schedule_key("daily"), "x", "y")
    summaries = {s.id: s for s in store.list_conversations()}
    slack = summaries["slack:1.5"]
    assert (slack.turn_count, slack.chars, slack.trimmed, slack.interface) == (2, 5, 0, "slack")
    assert slack.created_at <= slack.last_activity
    assert summaries["schedule:daily"].interface == "schedule"


def test_key_helpers():
    assert slack_key("111.222", "333.444") == "slack:111.222"
    assert slack_key(None, "333.444") == "slack:333.444"
    assert slack_key("", "333.444") == "slack:333.444"
    assert cli_session_key(1731900000123) == "cli:session-1731900000123"
    assert re.fullmatch(r"cli:session-\d{13}", cli_session_key())
    assert schedule_key("morning-brief") == "schedule:morning-brief"


def test_unknown_fields_and_unix_ms_timestamps_are_kept(data_dir):
    store = conversation_store(data_dir / "c.json", lock_timeout=1)
    now_ms = int(datetime.now(UTC).timestamp() * 1000)
    write_raw(
        store,
        {
            "t": {
                "turns": [{"role": "user", "content": "old", "timestamp": now_ms, "channel": "C1"}],
                "createdAt": now_ms,
                "trimmed": 0,
                "topic": "weather",
            }
        },
    )
    store.add_exchange("t", "q", "r")
    entry = json.loads(store.path.read_text(encoding="utf-8"))["t"]
    assert entry["topic"] == "weather"
    assert entry["turns"][0] == {
        "role": "user",
        "content": "old",
        "timestamp": now_ms,
        "channel": "C1",
    }
    assert [t.content for t in store.get_history("t")] == ["old", "q", "r"]


def test_the_older_bare_array_shape_is_read(data_dir):
    store = conversation_store(data_dir / "c.json", lock_timeout=1)
    write_raw(
        store,
        {
            "t": [
                {"role": "user", "content": "hi", "timestamp": ago(minutes=1)},
                {"role": "assistant", "content": "hello", "timestamp": ago(minutes=1)},
            ]
        },
    )
    assert [t.content for t in store.get_history("t")] == ["hi", "hello"]
    store.add_exchange("t", "q", "r")
    assert len(store.get_history("t")) == 4


@pytest.mark.parametrize("conversation_id", ["", "   "])
def test_an_empty_conversation_id_is_refused(data_dir, conversation_id):
    with pytest.raises(ValueError):
        make_store(data_dir).add_exchange(conversation_id, "q", "r")


def test_a_lone_surrogate_is_refused_and_nothing_is_written(data_dir):
    store = make_store(data_dir)
    with pytest.raises(ValueError, match="Unicode"):
        store.add_exchange("t", "bad \udc80", "reply")
    assert json.loads(store.path.read_text(encoding="utf-8")) == {}


def _hand_edited(data_dir, threads: dict) -> ConversationStore:
    path = data_dir / "conversations" / "conversations.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(threads), encoding="utf-8")
    return make_store(data_dir)


@pytest.mark.parametrize("trimmed", ["many", "3", [1], {"n": 1}, -2, 2.5])
def test_a_hand_edited_trimmed_count_does_not_break_listing_or_adding(data_dir, trimmed):
    store = _hand_edited(
        data_dir,
        {
            "slack:1": {
                "turns": [{"role": "user", "content": "hi", "timestamp": ago(minutes=1)}],
                "trimmed": trimmed,
            }
        },
    )
    [summary] = store.list_conversations()
    assert summary.turn_count == 1 and isinstance(summary.trimmed, int) and summary.trimmed >= 0
    store.add_exchange("slack:1", "again", "sure")
    assert [t.content for t in store.get_history("slack:1")] == ["hi", "again", "sure"]


def test_a_turn_without_a_timestamp_does_not_expire_a_live_thread(data_dir):
    """A hand-edited turn with no (or an unreadable) timestamp must not make init() drop the
    whole thread: its last activity is the newest time the thread does record."""
    store = _hand_edited(
        data_dir,
        {
            "slack:recent": {
                "createdAt": ago(hours=1),
                "turns": [{"role": "user", "content": "typed by hand"}],
            },
            "slack:mixed": {
                "turns": [
                    {"role": "user", "content": "old", "timestamp": ago(hours=2)},
                    {"role": "assistant", "content": "no time", "timestamp": "yesterday-ish"},
                ]
            },
            "slack:stale": {"createdAt": ago(days=30), "turns": [{"role": "user", "content": "x"}]},
        },
    )
    assert sorted(s.id for s in store.list_conversations()) == ["slack:mixed", "slack:recent"]
    assert [t.content for t in store.get_history("slack:recent")] == ["typed by hand"]
    assert len(store.get_history("slack:mixed")) == 2


@pytest.mark.parametrize("days", [999_999, 10**9, 10**20])
def test_a_max_age_beyond_the_calendar_means_threads_never_expire(data_dir, days):
    """CONVERSATION_MAX_AGE_DAYS=999999 ("keep forever") must not crash get_history or init."""
    store = make_store(data_dir, max_age_days=days)
    store.add_exchange("slack:1", "hi", "hello")
    assert [t.content for t in store.get_history("slack:1")] == ["hi", "hello"]
    assert store.cleanup() == 0 and store.init() is store
    [summary] = store.list_conversations()
    assert summary.expires_at > summary.last_activity


def test_a_key_is_found_in_the_turns_and_in_those_kept_aside_for_extraction(data_dir):
    store = make_store(data_dir, max_turns=2)
    assert store.add_exchange("ha:1", "I moved to Lisbon.", "Noted.", key="k1") == "stored"
    assert store.add_exchange("ha:1", "Hi.", "Hello.", key="k2") == "stored"  # k1 trimmed
    raw = json.loads(store.path.read_text(encoding="utf-8"))["ha:1"]
    assert [t["content"] for t in raw["keptAside"]] == ["I moved to Lisbon.", "Noted."]
    assert raw["keptAside"][0]["exchange"] == "k1" and "exchange" not in raw["turns"][1]
    before = store.path.read_bytes()
    assert store.add_exchange("ha:1", "I moved to Lisbon.", "Noted.", key="k1") == "duplicate"
    assert store.add_exchange("ha:1", "Hi.", "Hello.", key="k2") == "duplicate"
    assert store.path.read_bytes() == before
    # the key is another field of the turn: what the seed's readers get is unchanged
    assert store.get_history("ha:1") == [
        ConversationTurn("user", "Hi.", store.get_history("ha:1")[0].timestamp),
        ConversationTurn("assistant", "Hello.", store.get_history("ha:1")[1].timestamp),
    ]


def test_said_at_keeps_the_thread_in_time_order_and_never_in_the_future(data_dir):
    store = make_store(data_dir)
    now = datetime.now(UTC)
    said = (now - timedelta(hours=3)).replace(microsecond=0)
    assert store.add_exchange("ha:2", "First.", "Ok.", at=said) == "stored"
    assert [t.timestamp for t in store.get_history("ha:2")] == [said, said]
    # one that was overtaken (said before the thread's newest message): just after it
    assert store.add_exchange("ha:2", "Earlier.", "Ok.", at=said - timedelta(hours=1)) == "stored"
    assert store.get_history("ha:2")[2].timestamp == said + timedelta(milliseconds=1)
    store.add_exchange("ha:2", "Ahead.", "Ok.", at=now + timedelta(days=2))
    assert now <= store.get_history("ha:2")[-1].timestamp <= datetime.now(UTC)
    assert store.add_exchange("ha:3", "Old.", "Ok.", at=now - timedelta(days=8)) == "expired"
    assert store.get_history("ha:3") == [] and "ha:3" not in store.path.read_text()
    with pytest.raises(ValueError, match="time zone"):
        store.add_exchange("ha:4", "Naive.", "Ok.", at=datetime(2026, 1, 1))


def test_exchanges_within_one_millisecond_are_stamped_in_order(tmp_path, monkeypatch) -> None:
    """Two exchanges stamped now in the same millisecond (a fast host program, a burst of
    Assist turns) get distinct stamps, each after the one before: extraction reads what is
    newer than the stamp it read up to, so a shared stamp at the end of a run left the next
    exchange unread for good (tests/test_llm_window.py caught it on a quiet machine)."""
    from webapp.stores import conversations as module

    monkeypatch.setattr(module, "now_iso", lambda: "2026-11-28T20:00:00.000Z")
    store = ConversationStore(
        tmp_path / "conversations.json", max_turns=100, max_chars=100_000, lock_timeout=5
    ).init()
    for number in range(5):
        store.add_exchange("slack:burst", f"Message {number}.", "Noted.")
    stamps = [t.timestamp for t in store.get_history("slack:burst") if t.role == "user"]
    assert stamps == sorted(set(stamps)) and len(stamps) == 5
    replies = [t.timestamp for t in store.get_history("slack:burst") if t.role == "assistant"]
    assert replies == stamps  # an exchange's two turns keep one stamp
