"""The on-disk form is exactly what the standard library wrote before the switch to orjson.

``old_encode`` is the encoder the stores used until then; files written by either must read the
same in both, byte for byte where the content is unchanged.
"""

from __future__ import annotations

import json
import random

import pytest

from tests.support.stores import conversation_store, memory_store
from webapp.stores import MemoryStore
from webapp.stores.jsonbytes import encode, encode_spliced, fragments_of
from webapp.stores.jsonparse import parse_bytes


def old_encode(data) -> bytes:
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


EDGE_VALUES = [
    "plain",
    "",
    "中文 繁體 简体 😀 é",
    "line\nbreak\ttab\rcr\bbs\fff",
    'quote " backslash \\ slash /',
    "".join(chr(c) for c in range(0x20)),  # every control character
    "\x7f\x80\x85\xa0",
    "\u2028 and \u2029 (JavaScript line terminators)",
    "\ufeff BOM inside text, \u200b zero width",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467 family",
    0,
    -1,
    2**63 - 1,
    -(2**63),
    2**64,  # beyond 64 bits: orjson refuses, json writes it
    -(2**70),
    10**40,
    True,
    False,
    None,
    0.1,
    1.0,
    -0.0,
    1e-05,  # json: 1e-05, orjson: 0.00001
    1e16,
    1e22,
    5e-324,
    1.7976931348623157e308,
    float("nan"),
    float("inf"),
    float("-inf"),
    [],
    {},
    [[]],
    {"a": {}},
    [1, [2, [3, {"k": [None, True]}]]],
    {"1": "text key", "": "empty key", "ключ": "值", "k\n\u2028": 1},
    {1: "int key", 2.5: "float key", None: "null key", False: "bool key"},
    (1, "tuple"),
    [{"nested": [{"deep": "中"}]}],
]


@pytest.mark.parametrize("value", EDGE_VALUES, ids=lambda v: repr(v)[:40])
def test_encode_writes_what_json_dumps_wrote(value):
    assert encode(value) == old_encode(value)
    wrapped = [{"id": "x", "content": "c", "extra": value}]
    assert encode(wrapped) == old_encode(wrapped)
    assert encode_spliced(wrapped, {})[0] == old_encode(wrapped)
    keyed = {"thread": value, "other": [value]}
    assert encode(keyed) == old_encode(keyed)
    assert encode_spliced(keyed, {})[0] == old_encode(keyed)


@pytest.mark.parametrize("value", EDGE_VALUES, ids=lambda v: repr(v)[:40])
def test_items_cut_from_the_file_splice_into_the_same_bytes(value):
    listed = [{"id": "a", "v": value}, [value, {"deep": [value]}], "text", {}]
    keyed = {"a": {"v": value}, "b": [value], "c": "text", "d": []}
    for data, grow in ((listed, lambda d: d + [{"new": 1}]), (keyed, lambda d: {**d, "n": 1})):
        raw = old_encode(data)
        fragments = fragments_of(raw, data)
        assert len(fragments) == len(data) or not raw.startswith((b"[\n", b"{\n"))
        grown = grow(data)
        assert encode_spliced(grown, fragments)[0] == old_encode(grown)


def test_items_are_not_cut_from_a_file_in_another_form():
    data = [{"id": "a", "content": "中"}, {"id": "b", "content": "x"}]
    for raw in (json.dumps(data).encode(), json.dumps(data, indent=2).encode() + b"\n"):
        assert fragments_of(raw, data) == {}


@pytest.mark.parametrize("text", ["\ud800", "a\udfffb", "\udc00\ud800"])
def test_a_lone_surrogate_still_cannot_be_written(text):
    for data in (text, [text], {"k": text}, {text: 1}):
        with pytest.raises(UnicodeEncodeError):
            old_encode(data)
        with pytest.raises(UnicodeEncodeError):
            encode(data)
        if isinstance(data, (list, dict)):
            with pytest.raises(UnicodeEncodeError):
                encode_spliced(data, {})


DOCUMENTS = [
    b'[{"id": "a", "content": "x", "n": 18446744073709551616}]',  # orjson would make it a float
    b'[{"id": "a", "content": "x", "n": -1180591620717411303424}]',
    b'[{"id": "a", "content": "x", "f": 1e-05, "g": 1E400}]',
    b'[{"id": "a", "content": "x", "n": NaN, "i": Infinity, "j": -Infinity}]',
    b'[{"id": "a", "content": "\\ud83d\\ude00 escaped pair"}]',
    b'\xef\xbb\xbf[{"id": "bom", "content": "x"}]',
    b'{"a": 1, "a": 2}',
    b'["\\u0000", "\\u2028", "\\/"]',
    '["中文", "\u2028"]'.encode(),
    b"  [ ]  \n",
]


@pytest.mark.parametrize("raw", DOCUMENTS, ids=lambda r: r[:30].decode("utf-8", "replace"))
def test_parse_reads_what_json_loads_read(raw, tmp_path):
    expected = json.loads(raw.decode("utf-8-sig"))
    parsed = parse_bytes(raw, tmp_path / "x.json")
    assert repr(parsed) == repr(expected)  # repr: NaN != NaN, and 1 == 1.0 would hide a change
    assert [type(v) for v in _leaves(parsed)] == [type(v) for v in _leaves(expected)]


def test_parse_writes_a_lone_surrogate_escape_as_the_replacement_character(tmp_path):
    """JSON may hold half a character (an escaped lone surrogate); no page, tool answer or
    write could use it, so it is read as U+FFFD (a pair stays one character)."""
    raw = b'[{"id": "a", "content": "\\ud800 lone, \\ud83d\\ude00 pair", "\\udc00": 1}]'
    assert parse_bytes(raw, tmp_path / "x.json") == [
        {"id": "a", "content": "\ufffd lone, \U0001f600 pair", "\ufffd": 1}
    ]


def _leaves(value):
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _store(path) -> MemoryStore:
    return memory_store(path, max_items=10_000, max_chars=10**7)


def test_a_file_written_before_reads_the_same_and_keeps_its_bytes(data_dir):
    """Old → new: the demo memories (English, 繁體, 简体) written by json.dumps; after a change the
    file is exactly json.dumps of old records + the change."""
    from webapp.cli.demo import DEMO_DATA

    records = json.loads((DEMO_DATA / "memories.json").read_text(encoding="utf-8"))
    records.append({"id": "odd", "content": "extra fields kept", "weight": 1e-05, "n": 2**64})
    path = data_dir / "memories.json"
    path.write_bytes(old_encode(records))
    store = _store(path)
    assert [m.content for m in store.get_all()] == [r["content"] for r in records]

    added = store.add("新的記憶 with U+2028 \u2028 inside")
    written = json.loads(path.read_bytes())
    assert written[:-1] == records
    assert path.read_bytes() == old_encode(records + [written[-1]])
    assert written[-1]["id"] == added.id

    store.update(records[1]["id"], "改過的內容")
    store.delete(records[2]["id"])
    now = json.loads(path.read_bytes())
    assert path.read_bytes() == old_encode(now)
    unchanged = [r for r in records if r["id"] not in (records[1]["id"], records[2]["id"])]
    assert [r for r in now if r["id"] in {u["id"] for u in unchanged}] == unchanged


def test_a_file_written_now_reads_the_same_before(data_dir):
    """New → old: what the stores write is what json.dumps would write for the same content,
    and json.loads (the old reader, and any other program) reads it back exactly."""
    path = data_dir / "memories.json"
    store = _store(path).init()
    for text in ["tea 茶", "咖啡 ☕", "line\u2028sep", 'tab\tand "quotes"', "\x01 control"]:
        store.add(text, source="manual")
    raw = path.read_bytes()
    assert raw == old_encode(json.loads(raw))
    assert [r["content"] for r in json.loads(raw)] == [m.content for m in store.get_all()]


def test_many_changes_splice_exactly_what_a_full_encode_writes(data_dir):
    """Every write reuses the encoded records it did not change (its own, or cut from the bytes
    another writer left); after a random mix of every kind of change by two writers, the file is
    still exactly the full encoding, and a fresh reader agrees."""
    path = data_dir / "memories.json"
    writers = [_store(path).init(), _store(path)]  # two processes, taking turns now and then
    rng = random.Random(13)
    for n in range(120):
        store = writers[(n // 3) % 2]
        memories = store.get_all()
        roll = rng.random()
        if roll < 0.4 or not memories:
            store.add(f"fact {n} 第{n}條")
        elif roll < 0.6:
            store.update(rng.choice(memories).id, f"edited {n}")
        elif roll < 0.75:
            store.delete(rng.choice(memories).id)
        elif roll < 0.85:
            deleted = [e["id"] for e in store.history() if e["action"] == "delete"]
            if deleted:
                try:
                    store.restore(rng.choice(deleted))
                except KeyError:
                    pass
        else:
            target = rng.choice(memories)
            store.import_records(
                [
                    {"id": target.id, "content": f"imported {n}", "category": "tool"},
                    {"id": f"imp{n}", "content": f"new import {n}"},
                ]
            )
        raw = path.read_bytes()
        assert raw == old_encode(json.loads(raw))
        fresh = _store(path)
        assert [(m.id, m.content, m.category) for m in fresh.get_all()] == [
            (m.id, m.content, m.category) for m in store.get_all()
        ]


def test_conversations_splice_one_thread_and_keep_the_rest_byte_for_byte(data_dir):
    path = data_dir / "conversations" / "conversations.json"
    path.parent.mkdir()
    document = {
        "slack:1": {"turns": [{"role": "user", "content": "舊 1", "timestamp": "x"}]},
        "slack:2": [{"role": "user", "content": "bare array", "timestamp": 1731900000000}],
        "cli:session-3": {"turns": [], "createdAt": "2026-11-20T00:00:00.000Z", "trimmed": 4},
    }
    path.write_bytes(old_encode(document))
    store = conversation_store(
        path, lock_timeout=10, max_turns=6, max_chars=10_000, max_age_days=36500
    )
    store.add_exchange("slack:1", "新問題", "回答")
    store.add_exchange("slack:new", "hi", "hello")
    for n in range(5):
        store.add_exchange("slack:new", f"q{n}", f"a{n}")
    raw = path.read_bytes()
    now = json.loads(raw)
    assert raw == old_encode(now)
    assert now["slack:2"] == document["slack:2"]  # untouched threads keep their exact form
    assert now["cli:session-3"] == document["cli:session-3"]
    assert [t["content"] for t in now["slack:new"]["turns"]] == [
        "q2", "a2", "q3", "a3", "q4", "a4"
    ]  # fmt: skip
    assert "trimmed" not in document["slack:1"]  # the cached document was not changed in place
    other = conversation_store(
        path, lock_timeout=10, max_turns=6, max_chars=10_000, max_age_days=36500
    )
    assert [t.content for t in other.get_history("slack:1")] == ["舊 1", "新問題", "回答"]
    assert store.clear("slack:2")
    raw = path.read_bytes()
    assert raw == old_encode(json.loads(raw)) and "slack:2" not in json.loads(raw)
