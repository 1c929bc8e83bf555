"""Issue 44, item 4: what the rules propose is the fact alone, in fact form.

No fillers ("just so you know", 跟你說), no hedge words (the doubt is the proposal's mark, read
from the sentence it came from), no "remember that"; an instruction is the preference it
implies, the user's first person becomes the person, a household subject stays; an
instruction about memory itself is never a fact. Tombstones are matched on the same form, so a
forgotten fact said again with a filler is recognised. The development sets are
tests/data/judgement/fact_form.dev.json (en, 繁體, 简体; written with the rules) and
fact_form.dev2.json (150 messages written from the issue's description before the rules that
pass it: a person's statements said outright, standing instructions, more fillers and hedges).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.stores import conversation_store, memory_store
from webapp.extraction import MemoryExtractor, StructuredFact
from webapp.language.phrasing import fact_form, is_memory_instruction
from webapp.stores import MemoryStore, ReviewQueue
from webapp.stores.tombstones import TombstoneStore
from webapp.text import same_fact_key

DEV_FILES = sorted((Path(__file__).parent / "data" / "judgement").glob("fact_form.dev*.json"))


def _stores(folder: Path) -> tuple[MemoryStore, ReviewQueue]:
    store = memory_store(folder / "memories.json")
    return store, ReviewQueue(folder / "review.json", store)


def _proposed(message: str, folder: Path) -> list[str]:
    store, queue = _stores(folder)
    extractor = MemoryExtractor(store, review_queue=queue)
    actions = extractor.reconcile(
        extractor.extract([{"role": "user", "content": message}]).candidates
    )
    return [a.content for a in actions if a.action in ("add", "update")]


@pytest.mark.parametrize("dev", DEV_FILES, ids=lambda path: path.name)
def test_the_development_sets_of_fact_forms(dev: Path, tmp_path: Path) -> None:
    cases = json.loads(dev.read_text("utf-8"))["items"]
    assert {c["language"] for c in cases} == {"en", "zh-Hant", "zh-Hans"}
    wrong = []
    for n, case in enumerate(cases):
        folder = tmp_path / str(n)
        folder.mkdir()
        facts = _proposed(case["message"], folder)
        forms = {same_fact_key(form) for form in case["acceptable"]}
        if case["not_a_fact"]:
            right = facts == []
        else:
            right = bool(facts) and all(same_fact_key(fact) in forms for fact in facts)
        if not right:
            wrong.append((case["id"], case["message"], facts))
    print(f"\nfact form ({dev.name}): {len(cases) - len(wrong)} of {len(cases)} acceptable")
    # The floor (0.9) with a margin: a statement that names a password is left to the
    # secrets' rules, a "把…換成…" request to the changes' (a switch whose old value is unsaid).
    assert len(wrong) <= 0.03 * len(cases), wrong


@pytest.mark.parametrize(
    "said, fact",
    [
        # fillers, either end
        ("Oh and I'm left-handed, just so you know.", "Is left-handed"),
        ("Heads up: I work night shifts at the hospital.", "Works night shifts at the hospital"),
        ("跟你說，我很喜歡爬山。", "很喜歡爬山"),
        ("我们家每周四倒垃圾，跟你说一下", "我们家每周四倒垃圾"),
        # hedges: the doubt is the mark, not the text
        ("I think I prefer window seats.", "Prefers window seats"),
        ("I'm probably allergic to kiwi", "Is allergic to kiwi"),
        ("我好像比較喜歡靠走道的位子", "比較喜歡靠走道的位子"),
        # "remember that"
        (
            "Please remember that our boiler is serviced every October.",
            "Our boiler is serviced every October",
        ),
        # imperatives become preferences
        ("Always give me temperatures in Celsius.", "Wants temperatures in Celsius"),
        ("From now on, always call me Sam.", "Wants to be called Sam"),
        ("以後都叫我小安就好", "希望被叫小安"),
        ("Never turn on the speaker before 8am", "Never turn on the speaker before 8am"),
        # first person becomes the person; household subjects stay
        ("My new bike is a blue Brompton.", "Bike is a blue Brompton"),
        ("New phone number is on the fridge", "Phone number is on the fridge"),
        ("Our dog Biscuit is afraid of thunder.", "Our dog Biscuit is afraid of thunder"),
        ("我們家的狗叫豆豆，怕打雷。", "我們家的狗叫豆豆，怕打雷"),
    ],
)
def test_fact_form(said: str, fact: str) -> None:
    assert fact_form(said) == fact


@pytest.mark.parametrize(
    "said, fact",
    [
        # a person's own statements said outright, with no "I prefer" or "remember that"
        ("I was born in Lisbon.", "Was born in Lisbon"),
        ("I don't eat pork.", "Doesn't eat pork"),
        ("I have a peanut allergy.", "Has a peanut allergy"),
        ("I've been vegan for five years.", "Has been vegan for five years"),
        (
            "I go to the gym on Mondays and Thursdays, fyi.",
            "Goes to the gym on Mondays and Thursdays",
        ),
        ("Quick note: I take my coffee black.", "Takes their coffee black"),
        ("Anyway, I'm learning Japanese.", "Is learning Japanese"),
        ("我是國小老師。", "是國小老師"),
        ("我通常六點起床。", "通常六點起床"),
        ("其实我乳糖不耐受。", "乳糖不耐受"),
        ("话说我每周二和周五去游泳。", "每周二和周五去游泳"),
        # standing instructions, as the preference
        ("Keep your answers short.", "Prefers short answers"),
        ("Show me prices in euros, please.", "Wants prices in euros"),
        ("Don't ever give me recipes with peanuts.", "Doesn't want recipes with peanuts"),
        ("Please stop suggesting meat recipes.", "Doesn't want meat recipes"),
        ("I'd like you to use Fahrenheit.", "Prefers Fahrenheit"),
        ("請一律用台灣用語回答。", "用台灣用語回答"),
        ("價格都用新台幣顯示。", "價格都用新台幣顯示"),
        ("不要推薦有花生的食譜給我。", "不要推薦有花生的食譜"),
        ("早上的简报请加上天气预报。", "早上的简报加上天气预报"),
        ("从今天起，用英文回复我。", "用英文回复"),
        # the household's, said with "we", 我家, 我們的: the subject stays
        ("We have a cat named Miso.", "We have a cat named Miso"),
        ("我家的狗叫豆豆。", "我家的狗叫豆豆"),
        ("对了，我家的空调是格力的。", "我家的空调是格力的"),
        ("我们住在五楼。", "我们住在五楼"),
        # a fact told as one, whoever it is about
        (
            "Just so you know, the recycling goes out on Thursdays.",
            "The recycling goes out on Thursdays",
        ),
        ("By the way, the plumber's name is Dave.", "The plumber's name is Dave"),
        ("備用鑰匙在藍色花盆下面，跟你說一下。", "備用鑰匙在藍色花盆下面"),
        ("对了，孩子的学校八点十五分上课。", "孩子的学校八点十五分上课"),
        # more fillers and hedges
        ("Not sure if I mentioned it, but I'm lactose intolerant.", "Is lactose intolerant"),
        ("I'm pretty sure I prefer tea over coffee.", "Prefers tea over coffee"),
        ("说实话，我受不了恐怖片。", "受不了恐怖片"),
        ("偷偷告訴你，我怕蟑螂。", "怕蟑螂"),
        ("我覺得我的血型是O型。", "血型是O型"),
        ("我應該比較喜歡喝茶。", "比較喜歡喝茶"),
    ],
)
def test_statements_and_standing_instructions_are_proposed_in_fact_form(
    said: str, fact: str, tmp_path: Path
) -> None:
    assert _proposed(said, tmp_path) == [fact]


@pytest.mark.parametrize(
    "said",
    [
        "I'm tired.",
        "I'm cooking dinner.",
        "I have a question.",
        "I have to leave.",
        "I can't find my keys.",
        "I go to bed.",
        "I take it back.",
        "I've been thinking about it.",
        "I walk to the station in ten minutes.",
        "Show me the weather in Paris.",
        "Use the other one.",
        "Call me when it's done.",
        "我想去超市。",
        "我剛吃過了。",
        "我有個問題。",
        "我是說那個燈。",
        "我喝完了。",
        "我怕来不及。",
        "我明天要去台北。",
        "We have to go.",
        "我家到了。",
        "我们有点累。",
        "I drive home.",
        "I'm a bit late.",
        "我有点饿。",
        "我是谁",
        "我吃饱了",
        "我怕你忘了",
        "我开车中",
        "我早上没睡好",
        "我晚上再说",
        "我一般般",
        "By the way, turn off the lights.",
        "FYI it's raining.",
        "By the way, thanks!",
        "跟你說，外面下雨了。",
        "順便說一下，幫我關燈。",
        "我到目前為止跟你說的都是亂講的。",
    ],
)
def test_passing_states_and_one_off_requests_are_not_proposed(said: str, tmp_path: Path) -> None:
    assert _proposed(said, tmp_path) == []


@pytest.mark.parametrize(
    "said",
    [
        "Everything I said before is wrong.",
        "Ignore what I told you earlier.",
        "Don't save any of this.",
        "我之前說的都是錯的。",
        "记住，我之前跟你说的都不算数",
    ],
)
def test_an_instruction_about_memory_is_never_a_fact(said: str, tmp_path: Path) -> None:
    assert is_memory_instruction(said)
    assert _proposed(said, tmp_path) == []


@pytest.mark.parametrize(
    "said", ["Don't forget to water the plants", "I said I like tea", "我今天說了很多話"]
)
def test_look_alikes_of_a_memory_instruction_are_not_one(said: str) -> None:
    assert not is_memory_instruction(said)


def test_auto_mode_never_saves_an_instruction_about_memory_whoever_read_it(
    tmp_path: Path,
) -> None:
    # An extractor (an LLM, a host's) that hands one over as a fact: nothing is saved.
    store, queue = _stores(tmp_path)
    extractor = MemoryExtractor(store, review_queue=queue, mode="auto")
    said = "Everything I said before is wrong."
    fact = StructuredFact(said, "general", 0.9, evidence=said, extractor="llm")
    extractor.submit(extractor.reconcile([fact]))
    assert store.get_all() == []
    assert queue.pending() == []


def test_a_hedged_fact_is_proposed_without_its_hedge_and_waits_in_auto_mode(
    tmp_path: Path,
) -> None:
    store, queue = _stores(tmp_path)
    extractor = MemoryExtractor(store, review_queue=queue, mode="auto")
    said = "I think I'm allergic to kiwi."
    extractor.submit(
        extractor.reconcile(extractor.extract([{"role": "user", "content": said}]).candidates)
    )
    assert store.get_all() == []
    [waiting] = queue.pending()
    assert (waiting.content, waiting.evidence) == ("Is allergic to kiwi", said)
    assert waiting.doubt  # the doubt is its mark


GREEN_TEA = "Really likes green tea without sugar"


@pytest.mark.parametrize(
    "kept, said, worded",
    [
        (
            GREEN_TEA,
            "I really like green tea without sugar, just so you know.",
            "Really likes green tea without sugar, just so you know",
        ),
        (
            GREEN_TEA,
            "Just so you know, I really like green tea without sugar",
            "By the way, I really like green tea without sugar",
        ),
        ("很喜歡綠茶不加糖", "跟你說，我很喜歡綠茶不加糖", "跟你說，我很喜歡綠茶不加糖喔"),
        (
            GREEN_TEA,
            "Not sure if I mentioned it, but I really like green tea without sugar.",
            "Not sure if I told you, but I really like green tea without sugar",
        ),
        ("特別喜歡綠茶不加糖", "說實話，我特別喜歡綠茶不加糖", "偷偷告訴你，我特別喜歡綠茶不加糖"),
    ],
)
def test_a_forgotten_fact_said_again_with_a_filler_is_recognised(
    kept: str, said: str, worded: str, tmp_path: Path
) -> None:
    store, queue = _stores(tmp_path)
    tombstones = TombstoneStore.beside(store)
    memory = store.add(kept, source="manual")
    store.delete(memory.id, actor="dashboard")
    tombstones.record(memory, by="dashboard", via="dashboard", no_propose=True)
    extractor = MemoryExtractor(store, review_queue=queue, mode="auto")
    # As the rules propose it, and as another extractor might word it, filler and all.
    found = extractor.extract([{"role": "user", "content": said}]).candidates
    other = StructuredFact(worded, "preference", 0.9, evidence=said, extractor="llm")
    extractor.submit(extractor.reconcile([*found, other]))
    assert store.get_all() == []
    assert queue.pending() == []


def test_memory_curator_extract_in_auto_mode_saves_the_facts_alone(data_dir: Path) -> None:
    # A real `memory-curator extract` process in auto mode with the rules (no LLM configured).
    conversations = conversation_store(data_dir / "conversations" / "conversations.json")
    thread = "cli:fact-form"
    conversations.add_exchange(thread, "Oh and I'm left-handed, just so you know.", "Noted.")
    conversations.add_exchange(thread, "Our cat Miso only eats wet food, by the way.", "OK.")
    conversations.add_exchange(thread, "Everything I said before is wrong.", "Understood.")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    environ["MEMORY_REVIEW_MODE"] = "auto"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "webapp",
            "extract",
            "--data-dir",
            str(data_dir),
            "--conversation",
            thread,
        ],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    store, queue = _stores(data_dir)
    assert sorted(m.content for m in store.get_all()) == [
        "Is left-handed",
        "Our cat Miso only eats wet food",
    ]
    assert queue.pending() == []
