"""The regex fallback (en, 繁體, 简体) and the similarity it is reconciled with."""

from __future__ import annotations

import pytest

from webapp.extraction import (
    near_identical,
    normalize,
    rule_facts,
    similarity,
    split_sentences,
)
from webapp.language.word_likeness import is_variant


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "記住我喜歡綠茶。不要推薦咖啡！今天下雨嗎？我習慣早睡；好",
            ["記住我喜歡綠茶。", "不要推薦咖啡！", "今天下雨嗎？", "我習慣早睡；", "好"],
        ),
        (
            "Set it to 30.5 degrees. Then stop! OK?",
            ["Set it to 30.5 degrees.", "Then stop!", "OK?"],
        ),
        ("line one\nline two", ["line one", "line two"]),
        ("", []),
    ],
)
def test_split_sentences_understands_chinese_punctuation(text, expected):
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    "message, content, category",
    [
        (
            "Remember that I prefer the hallway lights at 30% after 22:00.",
            "Prefers the hallway lights at 30% after 22:00",
            "preference",
        ),
        ("I prefer dark mode in every app.", "Prefers dark mode in every app", "preference"),
        ("I always use neovim for editing.", "Always uses neovim for editing", "tool"),
        (
            "Also, never turn on the bedroom speaker before 8am.",
            "Never turn on the bedroom speaker before 8am",
            "preference",
        ),
        ("My wife's name is Marta.", "Wife's name is Marta", "general"),
        ("記住我喜歡喝無糖綠茶。", "喜歡喝無糖綠茶", "preference"),
        ("我喜欢用深色主题。", "喜欢用深色主题", "preference"),
        ("以後回答都用繁體中文。", "回答都用繁體中文", "workflow"),
        ("以后帮我写自动化都用 YAML。", "写自动化都用 YAML", "workflow"),
        ("不要推薦含糖飲料。", "不要推薦含糖飲料", "preference"),
        ("我習慣用 VS Code 寫設定檔。", "習慣用 VS Code 寫設定檔", "tool"),
        ("我习惯早上七点起床。", "习惯早上七点起床", "workflow"),
        ("我的辦公室在三樓。", "辦公室在三樓", "general"),
    ],
)
def test_stated_facts_are_found_with_their_category(message, content, category):
    facts = rule_facts(_user(message))
    assert [(f.content, f.category, f.extractor) for f in facts] == [(content, category, "regex")]
    assert facts[0].evidence == message


@pytest.mark.parametrize(
    "message",
    [
        "What's the weather tomorrow?",
        "Can you remember what I said about the lights?",
        "今天幾點下雨？",
        "你记得我喜欢什么吗",
        "Turn on the kitchen lights now.",
        "現在不要開燈。",
        "Remember my password is hunter2.",
        "記住我的密碼是 1234。",
        "Thanks, that works.",
        "这段 YAML 缩进太乱了。",
    ],
)
def test_questions_one_off_requests_and_secrets_are_not_extracted(message):
    assert rule_facts(_user(message)) == []


def test_only_user_messages_are_read():
    messages = [
        {"role": "assistant", "content": "I always use metric units."},
        {"role": "user", "content": "Thanks."},
    ]
    assert rule_facts(messages) == []


def test_the_same_fact_twice_is_one_candidate():
    assert len(rule_facts(_user("I prefer tea.") + _user("i prefer tea!"))) == 1


def test_hostile_and_huge_input_is_handled():
    assert rule_facts(_user("x" * 100_000)) == []
    [fact] = rule_facts(_user("Remember that <script>alert(1)</script> is my signature."))
    assert fact.content == "<script>alert(1)</script> is my signature"


@pytest.mark.parametrize(
    "a, b",
    [
        ("User prefers VIM.", "user prefers vim"),
        ("使用者 喜歡 綠茶。", "使用者喜歡綠茶"),
        ("Ｕｓｅｒ　ｐｒｅｆｅｒｓ　ｖｉｍ", "User prefers vim"),
    ],
)
def test_normalize_ignores_case_width_spacing_and_punctuation(a, b):
    assert normalize(a) == normalize(b)


@pytest.mark.parametrize(
    "a, b, variant",
    [
        ("User prefers neovim instead of vim", "User prefers vim", True),
        (
            "Hallway lights at 50% after 22:00",
            "I prefer the hallway lights at 30% after 22:00",
            True,
        ),
        ("我习惯用 Vim 编辑配置文件", "我习惯用 VS Code 编辑配置文件", True),
        ("以後回答都用繁體中文", "以後回答都用英文", True),
        ("User prefers dark mode", "User prefers metric units", False),
        ("我喜歡喝無糖綠茶", "我的辦公室在三樓", False),
        ("I always use metric units", "My daughter's name is Ana", False),
    ],
)
def test_variants_are_recognised_in_english_and_chinese(a, b, variant):
    assert is_variant(a, b) is variant


def test_similarity_is_bounded_and_symmetric_enough():
    pairs = [("User prefers vim", "User prefers neovim"), ("我喜歡綠茶", "我喜欢绿茶"), ("", "x")]
    for a, b in pairs:
        assert 0.0 <= similarity(a, b) <= 1.0
        assert abs(similarity(a, b) - similarity(b, a)) < 0.01


@pytest.mark.parametrize(
    "a, b, same",
    [
        (
            "I prefer the hallway lights at 30% after 22:00",
            "Prefers hallway lights at 30% after 22:00.",
            True,
        ),
        ("Hallway lights at 30% after 22:00", "Hallway lights at 50% after 22:00", False),
        ("我喜歡喝無糖綠茶", "我喜歡喝無糖綠茶！", True),
        ("User prefers vim", "User prefers neovim instead of vim", False),
    ],
)
def test_near_identical_needs_the_same_fact_and_numbers(a, b, same):
    assert near_identical(a, b) is same


@pytest.mark.parametrize(
    "message, content",
    [
        ("I really prefer short answers.", "Really prefers short answers"),
        ("I'm allergic to peanuts.", "Is allergic to peanuts"),
        ("I usually go to bed at 23:00.", "Usually goes to bed at 23:00"),
        ("I hate cilantro.", "Hates cilantro"),
        ("I live in Taipei.", "Lives in Taipei"),
        ("我住在台北。", "住在台北"),
        ("我們都用 YAML 寫設定。", "我們都用 YAML 寫設定"),
    ],
)
def test_rules_proposals_read_as_facts_about_the_user(message, content):
    [fact] = rule_facts(_user(message))
    assert fact.content == content
    assert fact.evidence == message
