"""MemoryStore: the scenarios of the issue, the caps, the history log and restore."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest

from tests.support.data import on_disk
from tests.support.stores import memory_store
from webapp.stores import (
    ConflictError,
    DuplicateMemoryError,
    Memory,
    MemoryFullError,
    MemoryStore,
)

ISO_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


@pytest.fixture
def store(data_dir) -> MemoryStore:
    return memory_store(data_dir / "memories.json", actor="tester").init()


def test_init_creates_the_folder_and_an_empty_array(tmp_path):
    path = tmp_path / "new" / "deeper" / "memories.json"
    memory_store(path, max_items=5, max_chars=50, lock_timeout=1).init()
    assert json.loads(path.read_text(encoding="utf-8")) == []


def test_init_leaves_an_existing_file_alone(data_dir):
    path = data_dir / "memories.json"
    original = b'[{"id": "a1", "content": "kept", "createdAt": "2024-01-01T00:00:00.000Z"}]'
    path.write_bytes(original)
    store = memory_store(path, max_items=5, max_chars=50, lock_timeout=1).init()
    assert path.read_bytes() == original
    assert [m.content for m in store.get_all()] == ["kept"]


def test_add_saves_a_memory_with_id_and_timestamps(store):
    memory = store.add("  Prefers concise answers.  ", category="preference", source="manual")
    assert memory.content == "Prefers concise answers."
    assert re.fullmatch(r"[A-Za-z0-9_-]+", memory.id)
    assert memory.category == "preference" and memory.source == "manual"
    [record] = on_disk(store.path)
    assert record["id"] == memory.id
    assert ISO_MS.fullmatch(record["createdAt"]) and record["createdAt"] == record["updatedAt"]
    assert record == memory.to_dict()


def test_ids_are_unique(store):
    ids = {store.add(f"fact {n}").id for n in range(50)}
    assert len(ids) == 50


@pytest.mark.parametrize("content", ["", "   ", "\n\t "])
def test_empty_content_is_refused(store, content):
    with pytest.raises(ValueError, match="empty"):
        store.add(content)
    assert on_disk(store.path) == []


def test_unknown_category_is_refused(store):
    with pytest.raises(ValueError, match="preference"):
        store.add("x", category="secrets")


def test_item_cap(data_dir):
    store = memory_store(data_dir / "m.json", max_items=3, lock_timeout=1).init()
    for n in range(3):
        store.add(f"fact {n}")
    with pytest.raises(MemoryFullError) as caught:
        store.add("one too many")
    message = str(caught.value)
    assert "full" in message and "3 of 3 memories" in message
    assert caught.value.items == 3 and caught.value.max_items == 3
    assert len(store.get_all()) == 3


def test_character_cap(data_dir):
    store = memory_store(data_dir / "m.json", max_chars=20, lock_timeout=1).init()
    store.add("x" * 15)
    with pytest.raises(MemoryFullError) as caught:
        store.add("y" * 6)
    message = str(caught.value)
    assert "full" in message and "15 of 20 characters" in message and "6 more" in message
    store.add("z" * 5)  # exactly at the cap is allowed
    assert store.stats()["chars"] == 20


def test_update_may_not_grow_past_the_character_cap(data_dir):
    store = memory_store(data_dir / "m.json", max_chars=10, lock_timeout=1).init()
    memory = store.add("short")
    with pytest.raises(MemoryFullError):
        store.update(memory.id, "much longer than ten")
    assert store.get(memory.id).content == "short"


def test_get_all_keeps_creation_order_and_get_finds_by_id(store):
    added = [store.add(f"fact {n}") for n in range(5)]
    assert [m.id for m in store.get_all()] == [m.id for m in added]
    assert store.get(added[2].id) == added[2]
    assert store.get("no-such-id") is None


def test_update_changes_content_and_updated_at(store):
    memory = store.add("old")
    changed = store.update(memory.id, "new")
    assert changed.content == "new"
    assert changed.updated_at > memory.updated_at
    assert changed.created_at == memory.created_at
    assert store.get(memory.id).content == "new"


def test_update_of_an_unknown_id_returns_none(store):
    assert store.update("nope", "text") is None


def test_update_with_a_stale_version_raises_conflict_with_the_current_memory(store):
    memory = store.add("first")
    someone_else = store.update(memory.id, "second")
    with pytest.raises(ConflictError) as caught:
        store.update(memory.id, "third", expected_updated_at=memory.updated_at)
    assert caught.value.current.content == "second"
    assert store.get(memory.id).content == "second"
    # With the current version the update goes through; the ISO string works as well.
    assert (
        store.update(memory.id, "third", expected_updated_at=someone_else.version).content
        == "third"
    )


def test_delete(store):
    memory = store.add("to forget")
    assert store.delete(memory.id) is True
    assert store.get(memory.id) is None and on_disk(store.path) == []
    assert store.delete(memory.id) is False


@pytest.mark.parametrize(
    "keyword, expected",
    [
        ("python", ["Uses Python 3.12", "PYTHON scripts live in ~/bin"]),
        ("PyThOn", ["Uses Python 3.12", "PYTHON scripts live in ~/bin"]),
        ("STRASSE", ["Lives on Hauptstraße"]),
        ("咖啡", ["喜欢喝咖啡，不加糖"]),
        (
            "綠茶",
            ["我喜歡喝無糖綠茶", "晚上不喝绿茶"],
        ),  # traditional and simplified find each other
        ("无糖绿茶", ["我喜歡喝無糖綠茶"]),
        ("kubernetes", []),
    ],
)
def test_search_ignores_case_and_works_for_chinese(store, keyword, expected):
    for text in [
        "Uses Python 3.12",
        "PYTHON scripts live in ~/bin",
        "Lives on Hauptstraße",
        "喜欢喝咖啡，不加糖",
        "我喜歡喝無糖綠茶",
        "晚上不喝绿茶",
    ]:
        store.add(text)
    assert [m.content for m in store.search(keyword)] == expected


def test_memory_to_dict_is_the_camel_case_form():
    moment = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    memory = Memory(
        id="m1", content="c", created_at=moment, updated_at=moment, category="tool", source="mcp"
    )
    assert memory.to_dict() == {
        "id": "m1",
        "content": "c",
        "createdAt": "2026-01-02T03:04:05.678Z",
        "updatedAt": "2026-01-02T03:04:05.678Z",
        "category": "tool",
        "source": "mcp",
    }


def test_unknown_fields_and_unix_ms_timestamps_survive_a_rewrite(data_dir):
    path = data_dir / "memories.json"
    foreign = {
        "id": "ext-1",
        "content": "from another tool",
        "createdAt": 1731900000000,
        "updatedAt": 1731900000123,
        "pinned": True,
        "tags": ["a", "b"],
    }
    path.write_text(json.dumps([foreign]), encoding="utf-8")
    store = memory_store(path, max_items=10, max_chars=1000, lock_timeout=1).init()
    [memory] = store.get_all()
    assert memory.created_at == datetime(2024, 11, 18, 3, 20, tzinfo=UTC)
    assert memory.to_dict()["pinned"] is True
    store.add("another")
    assert on_disk(store.path)[0] == foreign
    store.update("ext-1", "changed", expected_updated_at=1731900000123)
    record = on_disk(store.path)[0]
    assert record["pinned"] is True and record["tags"] == ["a", "b"]
    assert record["createdAt"] == 1731900000000 and record["content"] == "changed"


def test_history_records_each_change_with_the_actor(store):
    memory = store.add("one")
    store.update(memory.id, "two", actor="dashboard")
    store.delete(memory.id)
    entries = store.history(memory.id)
    assert [(e["action"], e["actor"]) for e in entries] == [
        ("add", "tester"),
        ("update", "dashboard"),
        ("delete", "tester"),
    ]
    assert entries[0]["before"] is None and entries[0]["after"]["content"] == "one"
    assert entries[1]["before"]["content"] == "one" and entries[1]["after"]["content"] == "two"
    assert entries[2]["before"]["content"] == "two" and entries[2]["after"] is None
    assert all(ISO_MS.fullmatch(e["ts"]) for e in entries)
    lines = store.history_path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["action"] for line in lines] == ["add", "update", "delete"]


def test_restore_brings_back_a_deleted_memory(store):
    first = store.add("first")
    memory = store.add("second")
    store.add("third")
    store.delete(memory.id)
    restored = store.restore(memory.id)
    assert restored.id == memory.id and restored.content == "second"
    assert [m.content for m in store.get_all()] == ["first", "second", "third"]
    assert store.history(memory.id)[-1]["action"] == "restore"
    assert first.id != memory.id


def test_restore_an_earlier_content_by_history_entry(store):
    memory = store.add("version 1")
    store.update(memory.id, "version 2")
    update_entry = store.history(memory.id)[-1]
    store.update(memory.id, "version 3")
    assert store.restore(update_entry["hid"]).content == "version 1"
    assert store.get(memory.id).content == "version 1"


def test_restore_with_nothing_to_restore(store):
    memory = store.add("never deleted")
    with pytest.raises(KeyError):
        store.restore(memory.id)
    with pytest.raises(KeyError):
        store.restore(store.history(memory.id)[0]["hid"])  # the add has no earlier state


def test_purge_forgets_for_good(store):
    keep = store.add("keep")
    gone = store.add("gone")
    assert store.purge(gone.id) is True
    assert store.get(gone.id) is None
    assert store.history(gone.id) == []
    assert [e["id"] for e in store.history()] == [keep.id]
    with pytest.raises(KeyError):
        store.restore(gone.id)


def test_a_half_written_history_line_does_not_swallow_the_next_entry(store):
    store.add("before the crash")
    with open(store.history_path, "ab") as handle:
        handle.write(b'{"hid": "dead", "ts": "2026-')  # a writer killed mid-line
    memory = store.add("after the crash")
    assert [e["after"]["content"] for e in store.history() if e["action"] == "add"] == [
        "before the crash",
        "after the crash",
    ]
    assert store.history(memory.id)[0]["id"] == memory.id


def test_two_store_objects_on_one_file_see_each_other(data_dir):
    path = data_dir / "memories.json"
    one = memory_store(path, max_items=10, max_chars=1000, lock_timeout=1).init()
    two = memory_store(path, max_items=10, max_chars=1000, lock_timeout=1).init()
    assert one.get_all() == []
    two.add("written by two")
    assert [m.content for m in one.get_all()] == ["written by two"]


@pytest.mark.parametrize(
    "content, message",
    [
        ("bad \ud800 surrogate", "not valid Unicode"),
        ("nul \x00 inside", "NUL"),
        (None, "must be text"),
    ],
)
def test_content_that_cannot_be_stored_is_refused_clearly(store, content, message):
    with pytest.raises(ValueError, match=message):
        store.add(content)
    assert on_disk(store.path) == []


def test_hostile_text_is_stored_as_is(store):
    text = '<script>alert("x")</script> ../../etc/passwd {"id": 1} 🙂'
    memory = store.add(text)
    assert store.get(memory.id).content == text
    assert on_disk(store.path)[0]["content"] == text


def test_purge_leaves_no_copy_in_any_file(store):
    store.add("keep this")
    secret = store.add("a secret to forget for good")
    store.update(secret.id, "a secret to forget for good, edited")
    store.purge(secret.id)
    for path in store.path.parent.iterdir():
        assert b"a secret to forget" not in path.read_bytes(), path.name
    assert [m.content for m in store.get_all()] == ["keep this"]


# ----------------------------------------------------------------- import of an export file
def test_import_adds_new_ids_updates_changed_ones_and_keeps_the_rest(store):
    kept = store.add("Likes tea", category="preference")
    changed = store.add("Uses vim")
    plan = store.plan_import(
        [
            {"id": kept.id, "content": "Likes tea", "category": "preference"},
            {"id": changed.id, "content": "Uses neovim", "category": "tool"},
            {
                "id": "from-backup_1",
                "content": "每週日倒垃圾",
                "category": "workflow",
                "createdAt": "2026-10-13T20:00:00.000Z",
                "color": "kept as is",
            },
        ]
    )
    assert [action for action, _, _ in plan] == ["same", "update", "add"]

    counts = store.import_records([record for _, record, _ in plan], actor="importer")
    assert counts == {"added": 1, "updated": 1, "unchanged": 1, "refused": 0}
    by_id = {r["id"]: r for r in on_disk(store.path)}
    assert (by_id[changed.id]["content"], by_id[changed.id]["category"]) == ("Uses neovim", "tool")
    assert by_id["from-backup_1"]["createdAt"] == "2026-10-13T20:00:00.000Z"
    assert by_id["from-backup_1"]["color"] == "kept as is"
    imports = [e for e in store.history() if e["action"] == "import"]
    assert {(e["id"], e["actor"]) for e in imports} == {
        (changed.id, "importer"),
        ("from-backup_1", "importer"),
    }
    assert store.import_records([record for _, record, _ in plan]) == {
        "added": 0,
        "updated": 0,
        "unchanged": 3,
        "refused": 0,
    }


@pytest.mark.parametrize("bad_id", ["../etc", "a/b", "has space", "x" * 101, "<script>", 7])
def test_import_refuses_ids_that_are_not_url_safe(store, bad_id):
    before = store.path.read_bytes()
    with pytest.raises(ValueError, match="Item 1 has an unusable id"):
        store.import_records([{"id": bad_id, "content": "anything"}])
    assert store.path.read_bytes() == before


def test_import_over_the_caps_writes_nothing(data_dir):
    store = memory_store(data_dir / "memories.json", max_items=2, max_chars=1000).init()
    store.add("one")
    before = store.path.read_bytes()
    with pytest.raises(MemoryFullError, match="Nothing was imported"):
        store.import_records([{"id": "a", "content": "two"}, {"id": "b", "content": "three"}])
    assert store.path.read_bytes() == before


# ----------------------------------------------------------------- the same fact twice
def test_add_refuses_the_same_fact_twice_when_asked(store):
    first = store.add("我喜歡喝無糖綠茶", category="preference")
    for again in ("我喜歡喝無糖綠茶", "  我喜欢喝无糖绿茶 "):
        with pytest.raises(DuplicateMemoryError) as caught:
            store.add(again, allow_duplicate=False)
        assert caught.value.existing.id == first.id
    assert [m.content for m in store.get_all()] == ["我喜歡喝無糖綠茶"]
    assert (
        len(store.add("我喜歡喝無糖綠茶").id) == 12
    )  # the default still adds, as the API promises
    assert len(store.get_all()) == 2


@pytest.mark.parametrize(
    "first, again",
    [
        ("用戶喜歡喝無糖綠茶。", "用户喜欢喝无糖绿茶"),  # script and a full stop at the end
        ("用户喜欢喝无糖绿茶", "用戶喜歡喝無糖綠茶。"),
        ("Prefers metric units.", "ＰＲＥＦＥＲＳ metric units"),  # width, case, the full stop
        ("Likes tea!", "likes tea"),
        ("住在台北", "「住在台北…」"),
        ("Said “no coffee after 3 pm”", "said “no coffee after 3 pm”."),
    ],
)
def test_the_same_fact_with_other_script_width_case_or_end_punctuation_is_refused(
    store, first, again
):
    kept = store.add(first)
    with pytest.raises(DuplicateMemoryError) as caught:
        store.add(again, allow_duplicate=False)
    assert caught.value.existing.id == kept.id
    assert [m.content for m in store.get_all()] == [first]


@pytest.mark.parametrize(
    "first, other",
    [("Uses C++", "Uses C"), ("Uses C#", "Uses C"), ("Lights at 30%", "Lights at 30")],
)
def test_facts_that_differ_in_more_than_that_are_both_kept(store, first, other):
    store.add(first)
    store.add(other, allow_duplicate=False)
    assert [m.content for m in store.get_all()] == [first, other]


@pytest.mark.parametrize(
    "record",
    [
        # What Python's isoformat() writes: microseconds and an offset.
        {
            "createdAt": "2026-11-22T01:54:44.120999+00:00",
            "updatedAt": "2026-11-22T01:54:44.120999+00:00",
        },
        {
            "createdAt": "2026-11-22T03:54:44.120999+02:00",
            "updatedAt": "2026-11-22T03:54:44.120999+02:00",
        },
        # Unix milliseconds with a fraction (JavaScript's performance-based clocks).
        {"createdAt": 1731900000123.7, "updatedAt": 1731900000123.7},
        # Hand-edited: no updatedAt, only createdAt.
        {"createdAt": "2026-11-22T01:54:44.120Z"},
        {},
    ],
    ids=["microseconds", "offset-microseconds", "fractional-ms", "no-updatedAt", "no-timestamps"],
)
def test_the_version_a_reader_was_given_lets_it_save(data_dir, record):
    """An edit form carries ``memory.version``; a file written by another program must not make
    every save of that memory a conflict."""
    path = data_dir / "memories.json"
    path.write_text(
        json.dumps([{"id": "ext", "content": "from a host", **record}]), encoding="utf-8"
    )
    store = memory_store(path, max_items=10, max_chars=1000, lock_timeout=1).init()
    memory = store.get("ext")
    assert store.update("ext", "edited", expected_updated_at=memory.version).content == "edited"
    with pytest.raises(ConflictError):  # and the old version is stale now
        store.update("ext", "again", expected_updated_at=memory.version)
    assert (
        store.update("ext", "again", expected_updated_at=store.get("ext").updated_at).content
        == "again"
    )


@pytest.mark.parametrize("invisible", ["\u200b", "\u200b\u200c\ufeff", " \u2060\t\n", "\u200e"])
def test_text_with_nothing_visible_is_empty(store, invisible):
    with pytest.raises(ValueError, match="cannot be empty"):
        store.add(invisible)
    memory = store.add("\u200bLikes tea\ufeff ")
    assert memory.content == "Likes tea"
    with pytest.raises(ValueError, match="cannot be empty"):
        store.update(memory.id, invisible)
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # joiners inside an emoji stay
    assert store.add(f"Family {family}").content == f"Family {family}"


# ----------------------------------------------------------------- what the forms call
@pytest.mark.parametrize(
    ("content", "category", "errors"),
    [
        ("  Likes tea \u200b", "preference", {}),
        ("", "general", {"content": "Memory content cannot be empty."}),
        ("\u200b\ufeff", "general", {"content": "Memory content cannot be empty."}),
        ("a\x00b", "general", {"content": "Memory content cannot contain NUL characters."}),
        ("x" * 51, "general", {"content": "This is 51 characters; one memory can hold at most 50"}),
        ("fine", "gossip", {"category": "Unknown category 'gossip'; use one of: preference"}),
        ("", "gossip", {"content": "cannot be empty", "category": "Unknown category"}),
    ],
)
def test_the_curator_says_what_a_form_would_have_refused(settings, content, category, errors):
    from dataclasses import replace

    from webapp.curator import Curator
    from webapp.problems import CodedError, Problem

    curator = Curator.from_settings(replace(settings, memory_max_chars=50))
    if not errors:
        assert curator.remember(content, category=category).content == "Likes tea"
        return
    with pytest.raises(CodedError) as refused:
        curator.remember(content, category=category)
    found = {e.field: Problem(e) for e in (refused.value, *refused.value.also)}
    assert found.keys() == errors.keys()
    for field, message in errors.items():
        assert message in found[field]
    assert curator.memories.get_all() == []


def test_deleted_gives_the_last_state_of_a_deleted_memory_only(store):
    memory = store.add("Feeds the cat at 7")
    store.update(memory.id, "Feeds the cat at 8")
    assert store.deleted(memory.id) is None
    store.delete(memory.id)
    gone = store.deleted(memory.id)
    assert gone is not None and (gone.id, gone.content) == (memory.id, "Feeds the cat at 8")
    store.restore(memory.id)
    assert store.deleted(memory.id) is None
    assert store.deleted("never-existed") is None


def test_preview_import_counts_the_changes_and_checks_the_caps(data_dir):
    store = memory_store(data_dir / "m.json", lock_timeout=10, max_items=3, max_chars=40).init()
    kept = store.add("Likes tea")
    changed = store.add("Uses vim")
    records = [
        {"id": kept.id, "content": "Likes tea", "category": "general"},
        {"id": changed.id, "content": "Uses neovim", "category": "tool"},
        {"id": "new-1", "content": "Walks at 6"},
    ]
    preview = store.preview_import(records)
    assert preview.counts == {"add": 1, "update": 1, "same": 1, "secret": 0}
    assert [kind for kind, _, _ in preview.changes] == ["update", "add"]
    assert preview.added_chars == len("Uses neovim") - len("Uses vim") + len("Walks at 6")
    assert preview.fits
    too_many = [*records, {"id": "new-2", "content": "Reads at 9"}]
    assert not store.preview_import(too_many).fits
    with pytest.raises(MemoryFullError):
        store.import_records(too_many)
    assert len(store.get_all()) == 2


def test_memories_added_in_one_millisecond_keep_their_order_through_a_restore(store, monkeypatch):
    """Found in a full run: three memories added within one millisecond shared a createdAt, so
    a restored one went back after its later neighbour."""
    import webapp.stores.memories.model as memories_module  # where add() takes the time

    monkeypatch.setattr(memories_module, "now_iso", lambda: "2026-11-27T06:00:00.000Z")
    added = [store.add(text) for text in ("first", "second", "third")]
    stamps = [m.created_at for m in added]
    assert stamps == sorted(stamps) and len(set(stamps)) == 3
    store.delete(added[1].id)
    store.restore(added[1].id)
    assert [m.content for m in store.get_all()] == ["first", "second", "third"]


@pytest.mark.parametrize("operation", ["remember", "revise"])
def test_the_curator_refuses_every_wrong_field_at_once_naming_each(settings, operation):
    """The one check of a fact's fields (the dashboard's form shows each refusal next to its
    field): the first refusal is raised with its ``field``, the other field's in ``also``;
    nothing is written."""
    from webapp.curator import Curator
    from webapp.problems import CodedError

    curator = Curator.from_settings(settings)
    kept = curator.remember("Likes tea")
    before = settings.memory_file.read_bytes()
    cases = [
        (" \u200b ", "gossip", [("content", "content_empty"), ("category", "unknown_category")]),
        ("x" * 10_001, "general", [("content", "memory_too_long")]),
        (
            "The garage door code is 4821.",
            "moods",
            [("content", "memory_secret"), ("category", "unknown_category")],
        ),
        ("fine", "gossip", [("category", "unknown_category")]),
    ]
    for content, category, refused in cases:
        with pytest.raises(CodedError) as exc:
            if operation == "remember":
                curator.remember(content, category=category)
            else:
                curator.revise(kept.id, content=content, category=category)
        found = [(e.field, e.code) for e in (exc.value, *exc.value.also)]
        assert found == refused
    assert settings.memory_file.read_bytes() == before
