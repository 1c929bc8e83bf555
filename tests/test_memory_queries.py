"""MemoryStore.query and MemoryStore.usage: the library's own listing, filters, orders, pages and
capacity figures, which the dashboard, the MCP tool and the CLI all use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.stores import memory_store
from webapp.stores import SORTS, MemoryPage, MemoryStore, MemoryUsage
from webapp.web.plumbing.memory_listing import SORTS as WEB_SORTS

RECORDS = [
    # id, content, created, updated, category, person
    ("m1", "Prefers coffee without sugar", "2024-01-01", "2024-06-01", "preference", None),
    ("m2", "我喜歡喝無糖綠茶", "2024-02-01", "2024-02-01", "preference", "alice"),
    ("m3", "Uses Neovim for editing", "2024-03-01", "2024-09-01", "tool", "bob"),
    ("m4", "Black coffee on weekdays", "2024-04-01", "2024-04-02", "preference", "bob"),
    ("m5", "垃圾回收每週二", "2024-05-01", "2024-05-01", "general", None),
]


def write(path: Path, rows=RECORDS) -> None:
    records = []
    for memory_id, content, created, updated, category, person in rows:
        record = {
            "id": memory_id,
            "content": content,
            "createdAt": f"{created}T00:00:00.000Z",
            "updatedAt": f"{updated}T00:00:00.000Z",
            "category": category,
        }
        if person is not None:
            record["person"] = person
        records.append(record)
    path.write_text(json.dumps(records, ensure_ascii=False, indent=2), encoding="utf-8")


@pytest.fixture
def store(data_dir) -> MemoryStore:
    path = data_dir / "memories.json"
    write(path)
    return memory_store(path, max_items=10, max_chars=200, actor="tester")


def ids(page: MemoryPage) -> list[str]:
    return [m.id for m in page.items]


def test_the_default_query_is_every_memory_newest_first_on_one_page(store):
    page = store.query()
    assert ids(page) == ["m5", "m4", "m3", "m2", "m1"]
    assert (page.total, page.store_total, page.page, page.pages) == (5, 5, 1, 1)
    assert (page.first, page.last, page.per_page) == (1, 5, 50)


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("newest", ["m5", "m4", "m3", "m2", "m1"]),
        ("oldest", ["m1", "m2", "m3", "m4", "m5"]),
        ("updated", ["m3", "m1", "m5", "m4", "m2"]),
        ("alpha", ["m4", "m1", "m3", "m5", "m2"]),  # folded text: 垃圾 (simplified) < 我
    ],
)
def test_each_sort(store, sort, expected):
    assert ids(store.query(sort=sort)) == expected


def test_ties_keep_the_files_order(data_dir):
    path = data_dir / "memories.json"
    same = "2024-01-01"
    write(path, [(f"t{i}", f"fact {i}", same, same, "general", None) for i in range(3)])
    store = MemoryStore(path, lock_timeout=5)
    assert ids(store.query(sort="oldest")) == ["t0", "t1", "t2"]
    assert ids(store.query(sort="newest")) == ["t2", "t1", "t0"]
    assert ids(store.query(sort="alpha")) == ["t0", "t1", "t2"]


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ("coffee", ["m1", "m4"]),
        ("COFFEE black", ["m4"]),  # every word, any order, case ignored
        ("ｃｏｆｆｅｅ", ["m1", "m4"]),  # full-width letters fold to ASCII
        ("绿茶", ["m2"]),  # simplified finds traditional
        ("無糖", ["m2"]),
        ("回收垃圾", ["m5"]),  # Chinese split into words, any order
        ('"coffee without"', ["m1"]),  # a quoted phrase matches whole
        ("tea coffee", []),
        ("   ", ["m1", "m2", "m3", "m4", "m5"]),  # blank: everything
    ],
)
def test_q_matches_as_search_does(store, q, expected):
    page = store.query(q, sort="oldest")
    assert ids(page) == expected
    assert page.total == len(expected) and page.store_total == 5
    assert [m.id for m in store.search(q)] == expected  # one matcher: search agrees


def test_category_filter_and_with_q(store):
    assert ids(store.query(category="preference", sort="oldest")) == ["m1", "m2", "m4"]
    assert ids(store.query("coffee", category="preference", sort="oldest")) == ["m1", "m4"]
    assert ids(store.query("coffee", category="tool")) == []
    assert ids(store.query(category="", sort="oldest")) == ["m1", "m2", "m3", "m4", "m5"]


def test_person_keeps_theirs_and_the_households(store):
    assert ids(store.query(sort="oldest")) == ["m1", "m2", "m3", "m4", "m5"]  # None: all
    assert ids(store.query(person="bob", sort="oldest")) == ["m1", "m3", "m4", "m5"]
    assert ids(store.query(person="alice", sort="oldest")) == ["m1", "m2", "m5"]
    assert ids(store.query(person="carol", sort="oldest")) == ["m1", "m5"]
    assert ids(store.query("coffee", person="alice")) == ["m1"]
    assert store.get("m3").person == "bob" and store.get("m1").person is None


def test_paging_bounds(store):
    first = store.query(sort="oldest", per_page=2)
    assert ids(first) == ["m1", "m2"]
    assert (first.page, first.pages, first.total, first.first, first.last) == (1, 3, 5, 1, 2)
    second = store.query(sort="oldest", per_page=2, page=2)
    assert ids(second) == ["m3", "m4"] and (second.first, second.last) == (3, 4)
    last = store.query(sort="oldest", per_page=2, page=3)
    assert ids(last) == ["m5"] and (last.first, last.last) == (5, 5)
    beyond = store.query(sort="oldest", per_page=2, page=99)  # clamps to the last page
    assert ids(beyond) == ["m5"] and beyond.page == 3
    before = store.query(sort="oldest", per_page=2, page=0)  # and to the first
    assert ids(before) == ["m1", "m2"] and before.page == 1
    whole = store.query(sort="oldest", per_page=None)
    assert len(whole.items) == 5 and (whole.pages, whole.first, whole.last) == (1, 1, 5)


def test_no_match_and_an_empty_store(store, data_dir):
    none = store.query("zzzz")
    assert (none.items, none.total, none.store_total, none.page, none.pages) == ([], 0, 5, 1, 1)
    assert (none.first, none.last) == (0, 0)
    empty = MemoryStore(data_dir / "empty.json", lock_timeout=5).init().query(per_page=None)
    assert (empty.items, empty.total, empty.store_total, empty.pages) == ([], 0, 0, 1)


@pytest.mark.parametrize(
    "bad",
    [{"sort": "random"}, {"category": "nonsense"}, {"per_page": 0}],
)
def test_unknown_values_are_refused(store, bad):
    with pytest.raises(ValueError):
        store.query(**bad)


def test_results_follow_the_file(store):
    assert store.query("tea").total == 0
    store.add("Green tea in the afternoon", category="preference")
    page = store.query("tea")
    assert page.total == 1 and page.store_total == 6
    assert page.items[0].content == "Green tea in the afternoon"
    store.delete(page.items[0].id)
    assert store.query("tea").total == 0 and store.query().store_total == 5


def test_the_web_names_every_sort_the_library_knows():
    assert tuple(WEB_SORTS) == SORTS


def test_usage_counts_items_and_characters_against_the_caps(store):
    chars = sum(len(r[1]) for r in RECORDS)
    used = store.usage()
    assert used == MemoryUsage(5, chars, 10, 200)
    assert not (used.full or used.warn or used.items_warn or used.chars_warn)
    assert store.stats() == {"items": 5, "chars": chars, "max_items": 10, "max_chars": 200}


@pytest.mark.parametrize(
    ("items", "chars", "flags"),
    [
        (8, 100, set()),
        (9, 100, {"items_warn", "warn"}),  # 90% of a cap warns
        (5, 180, {"chars_warn", "warn"}),
        (10, 100, {"items_full", "full", "items_warn", "warn"}),
        (5, 200, {"chars_full", "full", "chars_warn", "warn"}),
    ],
)
def test_usage_flags(items, chars, flags):
    used = MemoryUsage(items, chars, 10, 200)
    names = ("items_full", "chars_full", "full", "items_warn", "chars_warn", "warn")
    assert {name for name in names if getattr(used, name)} == flags


def test_usage_follows_the_file(store):
    store.add("x" * 95)  # 185 of 200 characters
    assert store.usage().items == 6 and store.usage().chars_warn
