"""Search matches every word in any order, folding case, width and 繁/简 — in the library,
so the dashboard and the MCP tool find the same memories."""

from __future__ import annotations

import pytest

from webapp.stores import MemoryStore
from webapp.text import fold, match_spans, matches_all, search_terms


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


# ----------------------------------------------------------------- Chinese without spaces
@pytest.mark.parametrize(
    "query, terms",
    [
        ("垃圾回收", ("垃圾", "回收")),  # what a person types with no space
        ("資源回收", ("资源", "回收")),  # folded to simplified first, then segmented
        ("我住台北", ("我", "住", "台北")),  # no guessed word across 我住
        ("北京大学", ("北京", "大学")),  # a dictionary word made of two shorter ones
        ("喝tea", ("喝", "tea")),
        ('"垃圾回收"', ("垃圾回收",)),  # a quoted phrase stays whole
    ],
)
def test_a_run_of_chinese_is_split_into_words(query, terms):
    assert search_terms(query) == terms


@pytest.fixture
def chores(tmp_path) -> MemoryStore:
    store = MemoryStore(tmp_path / "memories.json").init()
    for text in (
        "週二晚上倒垃圾，週四資源回收",
        "我喜歡喝無糖綠茶",
        "喜欢无糖的绿茶",
        "晚上不喝绿茶",
        "垃圾車晚上八點到",
    ):
        store.add(text)
    return store


@pytest.mark.parametrize(
    "query, expected",
    [
        # found with and without the space, in either script
        ("垃圾回收", ["週二晚上倒垃圾，週四資源回收"]),
        ("垃圾 回收", ["週二晚上倒垃圾，週四資源回收"]),
        ("垃圾焚化", []),  # every word must be there
        ("資源回收", ["週二晚上倒垃圾，週四資源回收"]),
        ("无糖绿茶", ["我喜歡喝無糖綠茶", "喜欢无糖的绿茶"]),
        ('"無糖綠茶"', ["我喜歡喝無糖綠茶"]),  # quoted: only where it is written so
        ("垃圾晚上", ["週二晚上倒垃圾，週四資源回收", "垃圾車晚上八點到"]),
    ],
)
def test_chinese_typed_without_spaces_finds_each_word(chores, query, expected):
    assert [m.content for m in chores.search(query)] == expected


def test_each_chinese_word_of_the_search_is_highlighted_where_it_is():
    text = "週二晚上倒垃圾，週四資源回收"
    spans = match_spans(text, search_terms("垃圾回收"))
    assert [text[a:b] for a, b in spans] == ["垃圾", "回收"]
    text = "垃圾回收日"
    assert [text[a:b] for a, b in match_spans(text, search_terms("垃圾回收"))] == ["垃圾回收"]


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("wifi", "Our Wi-Fi is Lighthouse"),
        ("WiFi", "The Wi Fi router"),
        ("wi-fi", "The wifi name is Harbour"),
        ("wi fi", "Wi‑Fi upstairs"),  # a non-breaking hyphen
        ("wifi", "家裡的無線網路叫 Home"),
        ("WLAN", "The Wi-Fi router"),
        ("e-mail", "Her email is on the fridge"),
    ],
)
def test_a_word_written_with_or_without_a_joiner_is_found(query: str, text: str) -> None:
    terms = search_terms(query)
    assert matches_all(fold(text), terms)
    assert match_spans(text, terms) != []


@pytest.mark.parametrize(
    ("query", "text"), [("wifi", "Wine fine"), ("wifi", "wi"), ("tea", "te a")]
)
def test_a_joiner_is_dropped_only_inside_a_word(query: str, text: str) -> None:
    assert not matches_all(fold(text), search_terms(query))
