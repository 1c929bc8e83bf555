"""Search matches every word in any order, folding case, width and 繁/简 — in the library,
so the dashboard and the MCP tool find the same memories."""

from __future__ import annotations

import pytest

from webapp.stores import MemoryStore
from webapp.text import match_spans, search_terms


@pytest.mark.parametrize(
    "query, terms",
    [
        ("tea coffee", ("tea", "coffee")),
        ("  Coffee,   TEA. ", ("coffee", "tea")),
        ("ＴＥＡ", ("tea",)),
        ('"green tea" morning', ("green tea", "morning")),
        ("綠茶 咖啡", ("绿茶", "咖啡")),
        ("喝tea", ("喝", "tea")),
        ("綠茶，咖啡", ("绿茶", "咖啡")),
        ("c++", ("c++",)),
        ("tea tea TEA", ("tea",)),
        ("", ()),
        ("   ", ()),
    ],
)
def test_search_terms_split_words_and_cjk_runs(query, terms):
    assert search_terms(query) == terms


@pytest.fixture
def store(tmp_path) -> MemoryStore:
    store = MemoryStore(tmp_path / "memories.json").init()
    for text in (
        "Drinks coffee in the morning and tea after lunch",
        "Prefers green tea",
        "Coffee black, no sugar",
        "我喜歡喝無糖綠茶，早上喝咖啡",
        "晚上不喝绿茶",
    ):
        store.add(text)
    return store


@pytest.mark.parametrize(
    "query, expected",
    [
        ("tea coffee", ["Drinks coffee in the morning and tea after lunch"]),
        ("COFFEE TEA", ["Drinks coffee in the morning and tea after lunch"]),
        ("tea", ["Drinks coffee in the morning and tea after lunch", "Prefers green tea"]),
        ('"green tea"', ["Prefers green tea"]),
        ('"tea green"', []),
        ("咖啡 绿茶", ["我喜歡喝無糖綠茶，早上喝咖啡"]),  # simplified finds traditional, any order
        ("綠茶", ["我喜歡喝無糖綠茶，早上喝咖啡", "晚上不喝绿茶"]),
        ("tea kubernetes", []),
    ],
)
def test_memory_search_matches_all_words_in_any_order(store, query, expected):
    assert [m.content for m in store.search(query)] == expected


def test_match_spans_cover_each_word_in_the_original_text():
    text = "Ｃｏｆｆｅｅ then Tea, then 綠茶"
    spans = match_spans(text, search_terms("tea 绿茶 coffee"))
    assert [text[a:b] for a, b in spans] == ["Ｃｏｆｆｅｅ", "Tea", "綠茶"]


def test_adjacent_words_are_marked_apart_and_overlaps_merged():
    assert match_spans("teacoffee", search_terms("tea coffee")) == [(0, 3), (3, 9)]
    assert match_spans("abcd", search_terms("abc bcd")) == [(0, 4)]
