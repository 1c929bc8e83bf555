"""A secret said with no word for it is known by the question before it
(``webapp.sensitive.dialogue``): "Biscuit1987" after "What's the new Wi-Fi password?" is a
password; after "What's the network called?" it is a name. Measured on the development
dialogues of ``tests/data/secrets`` (the held-out ones are counted by
``benchmarks/quality.py --section secrets``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webapp.extraction.sentences import secret_replies
from webapp.sensitive.dialogue import find_secrets_in_reply

DIALOGUES = Path(__file__).parent / "data" / "secrets" / "secrets-dialogues.dev.json"


def secret(reply: str, *before: tuple[str, str]) -> str | None:
    finding = find_secrets_in_reply(reply, before)
    if finding is None:
        return None
    return "|".join(reply[s.start : s.end] for s in finding.spans)


def test_a_reply_to_a_question_for_a_secret_is_the_secret() -> None:
    asked = ("assistant", "What's the new Wi-Fi password?")
    assert secret("Biscuit1987", asked) == "Biscuit1987"
    assert secret("It's 'blue heron 42'.", ("assistant", "Tell me the passphrase")) == (
        "blue heron 42"
    )
    assert secret("是 0 4 1 7", ("assistant", "掛鎖的密碼是多少？")) == "0 4 1 7"


def test_what_it_is_comes_from_the_users_turn_before_the_question() -> None:
    before = (("user", "我把 Wi-Fi 密码换了"), ("assistant", "新的是什么？"))
    assert secret("Panda2024", *before) == "Panda2024"
    before = (("user", "I had lunch with Sam"), ("assistant", "What is it?"))
    assert secret("Panda2024", *before) is None


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("What's the network called?", "Kestrel_Home"),
        ("What time should the alarm go off?", "6:45"),
        ("How many digits is the PIN?", "six"),
        ("What's the zip code?", "94110"),
        ("What's the password?", "I'd rather not say"),
        ("What's the password?", "It's on the sticker under the router"),
        ("新的密碼是什麼？", "不告訴你"),
        ("Should I remember the code? What do you think?", "Yes please"),
    ],
)
def test_a_reply_that_gives_no_secret_stays_as_said(question: str, reply: str) -> None:
    assert secret(reply, ("assistant", question)) is None


def test_without_a_question_before_it_a_reply_is_read_alone() -> None:
    assert secret("Biscuit1987") is None
    assert secret("Biscuit1987", ("user", "What's the password?")) is None  # not asked of them


def test_the_development_dialogues_are_read_right() -> None:
    wrong = []
    for case in json.loads(DIALOGUES.read_text("utf-8")):
        turns = [(t["role"], t["content"]) for t in case["turns"]]
        flagged = find_secrets_in_reply(turns[-1][1], turns[:-1]) is not None
        if flagged != case["secret"]:
            wrong.append(case["id"])
    assert wrong == []


def test_the_rules_keep_no_fact_from_a_reply_that_is_a_secret() -> None:
    messages = [
        {"role": "user", "content": "I changed the alarm code"},
        {"role": "assistant", "content": "What is it now?"},
        {"role": "user", "content": "Remember 7 7 0 1"},
    ]
    assert secret_replies(messages) == {"Remember 7 7 0 1"}


def test_no_development_dialogue_is_a_held_out_one() -> None:
    def replies(name: str) -> set[str]:
        cases = json.loads((DIALOGUES.parent / name).read_text("utf-8"))
        return {case["turns"][-1]["content"] for case in cases}

    # Counts only: a held-out dialogue is never printed, so nobody tunes against it.
    shared = len(replies(DIALOGUES.name) & replies("secrets-dialogues.heldout-h6.json"))
    assert shared == 0, f"{shared} replies of the held-out dialogues are in the dev file too"
