"""Issue 44, item 4: what the rules propose is the fact alone, in fact form.

No fillers ("just so you know", 跟你說), no hedge words (the doubt is the proposal's mark, read
from the sentence it came from), no "remember that"; an instruction is the preference it
implies, the user's first person becomes the person, a household subject stays; an
instruction about memory itself is never a fact. Tombstones are matched on the same form, so a
forgotten fact said again with a filler is recognised. The development set is
tests/data/judgement/fact_form.dev.json (en, 繁體, 简体; written with the rules).
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
from webapp.phrasing import fact_form, is_memory_instruction
from webapp.stores import MemoryStore, ReviewQueue
from webapp.stores.tombstones import TombstoneStore
from webapp.text import same_fact_key

DEV = Path(__file__).parent / "data" / "judgement" / "fact_form.dev.json"


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


def test_the_development_set_of_fact_forms(tmp_path: Path) -> None:
    cases = json.loads(DEV.read_text("utf-8"))["items"]
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
    print(f"\nfact form (dev): {len(cases) - len(wrong)} of {len(cases)} acceptable")
    assert wrong == []


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
