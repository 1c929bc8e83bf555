"""Issue 22: proposals are facts, and a fact already decided is never proposed again.

`memory-curator extract` runs as a real process over the demo's sample threads and memories;
a person approves (or rejects) every proposal with the review queue, and extraction runs again
over the same threads (every message, as "Extract from all conversations" reads them). The LLM
path talks to a real HTTP server on 127.0.0.1 speaking OpenAI's wire format.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli
from tests.support.llm import FakeLlmServer, openai_body
from tests.support.review import approve
from tests.support.stores import conversation_store, memory_store
from webapp.stores import MemoryStore, ReviewQueue

DEMO = Path(__file__).resolve().parents[1] / "webapp" / "demo_data"
THREADS: dict[str, list[list[str]]] = json.loads((DEMO / "threads.json").read_text("utf-8"))
ALARM_ID = "7f3a9c01d2e7"  # "Weekday alarm is 06:45; on weekends do not run the morning …"
ALARM_AT_SEVEN = "Weekday alarm is 07:00; on weekends do not run the morning routine before 09:00."
YAML_FACT = "写自动化时都用 YAML 格式，不要用 UI 编辑器的截图"
_HEAD = re.compile(r"^(\S+): \d+ new message\(s\) - (\d+) proposal")
# The user's raw words: instructions and fillers that must never be a proposal's content.
RAW = re.compile(
    r"^(?:Switch|Change)\b|from now on|by the way|以后帮我|以後幫我|的时候|的時候", re.I
)


def _stores(data_dir: Path) -> tuple[MemoryStore, ReviewQueue]:
    memories = memory_store(data_dir / "memories.json", max_items=1000)
    return memories, ReviewQueue(data_dir / "review.json", memories)


def _seed(data_dir: Path) -> None:
    """The demo's memories and threads, without its proposals."""
    memories, _ = _stores(data_dir)
    memories.import_records(json.loads((DEMO / "memories.json").read_text("utf-8")))
    conversations = conversation_store(data_dir / "conversations" / "conversations.json")
    for key, exchanges in THREADS.items():
        for user, assistant in exchanges:
            conversations.add_exchange(key, user, assistant)


def _extract_every_thread(data_dir: Path, **env: str) -> dict[str, int]:
    """Extract from each thread, every message (``--conversation``): proposals per thread."""
    counts: dict[str, int] = {}
    for thread in THREADS:
        out = run_cli(
            "extract", "--conversation", thread, data_dir=data_dir, env={**env}, ok=True
        ).stdout
        head = _HEAD.match(out)
        assert head is not None, out
        counts[thread] = int(head.group(2))
    return counts


def _decide_all(data_dir: Path, how: str) -> list[tuple[str, str | None, str]]:
    """Approve (or reject) every pending proposal; return what was decided."""
    _, queue = _stores(data_dir)
    decided = []
    for item in queue.pending():
        decided.append((item.action, item.memory_id, item.content))
        if how == "approve":
            approve(queue, item.id)
        else:
            queue.reject(item.id)
    return decided


# --------------------------------------------------------------------------- the rules
@pytest.mark.parametrize("how", ["approve", "reject"])
def test_rules_propose_nothing_again_once_every_proposal_is_decided(data_dir, how):
    _seed(data_dir)
    first = _extract_every_thread(data_dir)
    assert sum(first.values()) >= 5
    decided = _decide_all(data_dir, how)
    assert not [content for _, _, content in decided if RAW.search(content)], decided

    again = _extract_every_thread(data_dir)

    assert again == dict.fromkeys(THREADS, 0)
    assert _stores(data_dir)[1].pending() == []


def test_the_alarm_change_is_an_update_that_keeps_the_weekend_part(data_dir):
    _seed(data_dir)
    run_cli("extract", "--conversation", "slack:1732050000.777000", data_dir=data_dir, ok=True)
    _, queue = _stores(data_dir)
    proposals = {(i.action, i.memory_id, i.content) for i in queue.pending()}
    assert ("update", ALARM_ID, ALARM_AT_SEVEN) in proposals
    assert not any("Switch" in content for _, _, content in proposals), proposals


def test_the_yaml_instruction_is_a_preference_not_an_update_of_an_approved_memory(data_dir):
    _seed(data_dir)
    memories, queue = _stores(data_dir)
    run_cli("extract", "--conversation", "cli:session-1731990000000", data_dir=data_dir, ok=True)
    [yaml] = [i for i in queue.pending() if "YAML" in i.content]
    assert (yaml.action, yaml.content) == ("add", YAML_FACT)
    approve(queue, yaml.id)
    # The person reworded it when approving another time; the instruction is said again.
    kept = memories.get(queue.get(yaml.id).applied_memory_id)
    memories.update(kept.id, "自动化一律用 YAML 格式编写，不用 UI 编辑器的截图。")
    conversation_store(data_dir / "conversations" / "conversations.json").add_exchange(
        "cli:session-1731990000000",
        "以后帮我写自动化的时候都用 YAML 格式，不要用 UI 编辑器的截图。",
        "好的。",
    )
    run_cli("extract", "--conversation", "cli:session-1731990000000", data_dir=data_dir, ok=True)
    assert not any(i.memory_id == kept.id for i in queue.pending())
    assert memories.get(kept.id).content == "自动化一律用 YAML 格式编写，不用 UI 编辑器的截图。"


# --------------------------------------------------------------------------- the demo
def test_after_approving_the_demo_s_proposals_extraction_proposes_none_of_them_again(
    data_dir,
):
    run_cli("demo", data_dir=data_dir, ok=True)
    decided = _decide_all(data_dir, "approve")
    assert len(decided) >= 5

    _extract_every_thread(data_dir)

    _, queue = _stores(data_dir)
    proposed = [(i.action, i.memory_id, i.content) for i in queue.pending()]
    assert not [p for p in proposed if RAW.search(p[2])], proposed
    # Nothing decided comes back: not the alarm, not the YAML rule, not the tea, not the units.
    for words in ("07:00", "YAML 格式", "無糖綠茶", "metric", "hallway", "oolong"):
        assert not [p for p in proposed if words in p[2]], (words, proposed)
    assert not [p for p in proposed if p[0] != "add"], proposed
    # What is left is new (facts the demo did not propose); once decided, nothing again.
    _decide_all(data_dir, "approve")
    assert _extract_every_thread(data_dir) == dict.fromkeys(THREADS, 0)


# --------------------------------------------------------------------------- the LLM path
class Paraphrasing:
    """A model that reads the conversation and words its facts differently on each call."""

    FACTS: dict[str, list[list[dict[str, Any]]]] = {
        "hallway lights": [
            [{"content": "Prefers the hallway lights at 30% after 22:00"}],
            [{"content": "Likes the hallway lights dimmed to 30% after 22:00"}],
        ],
        "green tea without sugar": [
            [{"content": "Really likes green tea without sugar"}],
            [{"content": "I really like green tea without sugar, by the way"}],
        ],
        "YAML 格式": [
            [{"content": "自动化一律用 YAML 格式编写，不用 UI 编辑器的截图"}],
            [{"content": "以后帮我写自动化的时候都用 YAML 格式，不要用 UI 编辑器的截图"}],
        ],
        "morning routine": [
            [{"action": "update", "id": "@alarm", "content": ALARM_AT_SEVEN}],
            [
                {"action": "update", "id": "@alarm", "content": ALARM_AT_SEVEN},
                {"content": "Switch the morning routine to 07:00 from now on instead of 06:45"},
            ],
        ],
    }

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def __call__(self, payload: dict[str, Any]) -> str:
        prompt = payload["messages"][-1]["content"]
        said = prompt[prompt.index("<conversation>") : prompt.index("</conversation>")]
        alarm = re.search(r"^\[(\w+)\] Weekday alarm", prompt, re.MULTILINE)
        reply = []
        for words, rounds in self.FACTS.items():
            if words in said:
                turn = self.calls.get(words, 0)
                self.calls[words] = turn + 1
                for fact in rounds[min(turn, len(rounds) - 1)]:
                    fact = dict(fact, category="preference", confidence=0.9)
                    fact.setdefault("evidence", words)
                    if fact.get("id") == "@alarm":
                        if alarm is None:
                            continue
                        fact["id"] = alarm.group(1)
                    reply.append(fact)
        return json.dumps(reply, ensure_ascii=False)


@pytest.mark.parametrize("how", ["approve", "reject"])
def test_the_llm_path_proposes_nothing_again_in_other_words(data_dir, how):
    _seed(data_dir)
    conversation_store(data_dir / "conversations" / "conversations.json").add_exchange(
        "slack:tea", "I really like green tea without sugar, by the way.", "Noted."
    )
    model = Paraphrasing()
    with FakeLlmServer(openai_body) as server:
        server.reply_for = model
        env = {
            "MEMORY_LLM_PROVIDER": "openai",
            "MEMORY_LLM_MODEL": "local-model",
            "MEMORY_LLM_BASE_URL": server.url + "/v1",
            "MEMORY_LLM_API_KEY": "sk-test",
            "MEMORY_LLM_TIMEOUT": "10",
        }
        threads = [*THREADS, "slack:tea"]
        for thread in threads:
            run_cli("extract", "--conversation", thread, data_dir=data_dir, env={**env}, ok=True)
        decided = _decide_all(data_dir, how)
        assert {"add", "update"} <= {a for a, _, _ in decided}
        assert sum(model.calls.values()) == 4
        outputs = [
            run_cli("extract", "--conversation", t, data_dir=data_dir, env={**env}, ok=True).stdout
            for t in threads
        ]
    assert sum(model.calls.values()) == 8  # each fact was given again, in other words
    heads = [_HEAD.match(out) for out in outputs]
    assert [int(h.group(2)) if h else -1 for h in heads] == [0] * len(threads), outputs
    assert _stores(data_dir)[1].pending() == []


# ------------------------------------------------------------------ the judge of meaning
def _item(content: str, status: str) -> Any:
    from webapp.stores.review import ReviewItem

    return ReviewItem(
        "r1", "add", content, "preference", 0.9, "rules", "c1", None, None, None, status, "t"
    )


def _memory(content: str) -> Any:
    from datetime import UTC, datetime

    from webapp.stores.memories import Memory

    moment = datetime(2025, 1, 1, tzinfo=UTC)
    return Memory("m1", content, moment, moment, "preference")


@pytest.fixture(scope="module")
def judge() -> Any:
    from webapp.similarity import Judge

    return Judge()


@pytest.mark.parametrize(
    ("kept", "new"),
    [
        ("Is vegetarian", "Doesn't eat meat"),
        ("Goes to bed around 23:00", "Usually asleep by eleven"),
        ("Commutes by train", "Takes the MRT to work"),
    ],
)
@pytest.mark.parametrize("where", ["remembered", "approved", "rejected"])
def test_a_fact_said_in_other_words_is_decided_when_the_judge_says_it_is_the_same(
    judge, kept, new, where
):
    from webapp.extraction.decided import already_decided

    memories = [_memory(kept)] if where == "remembered" else []
    items = [] if where == "remembered" else [_item(kept, where)]
    assert not already_decided(new, memories=memories, items=items)  # words alone: today's
    assert already_decided(new, memories=memories, items=items, judge=judge)


@pytest.mark.parametrize(
    ("kept", "new"),
    [
        ("Alarm at 06:30", "Alarm at 07:00"),  # close, but another value: a change to propose
        ("Is vegetarian", "Eats chicken twice a week"),
        ("Takes the MRT to work", "Takes the bus to the gym on Saturdays"),
    ],
)
def test_a_close_fact_the_judge_does_not_call_the_same_is_proposed(judge, kept, new):
    from webapp.extraction.decided import already_decided

    assert not already_decided(new, memories=[_memory(kept)], items=[], judge=judge)
    assert not already_decided(new, memories=[], items=[_item(kept, "approved")], judge=judge)


def test_a_waiting_item_in_other_words_is_left_to_the_person(judge):
    from webapp.extraction.decided import already_decided

    assert not already_decided(
        "Doesn't eat meat", memories=[], items=[_item("Is vegetarian", "pending")], judge=judge
    )


def test_an_unsure_update_waits_for_a_person_even_in_auto_mode(data_dir: Path, judge: Any) -> None:
    """A new fact close to a kept memory but not the same nor a clear change ("close" in the
    judge's words) is proposed as that memory's update, and never written on its own: applied
    in auto mode it could overwrite another fact (an allergy to penicillin by one to
    cephalosporins)."""
    from webapp.extraction import MemoryExtractor

    store, queue = _stores(data_dir)
    kept = store.add("对青霉素过敏", category="general", source="manual")
    verdict = judge.reconcile("对头孢过敏", [kept.content])
    assert (verdict.action, verdict.reason) == ("update", "close")
    extractor = MemoryExtractor(store, review_queue=queue, mode="auto")
    actions = extractor.reconcile(["对头孢过敏"])
    assert [(a.action, a.id, a.unsure) for a in actions] == [("update", kept.id, True)]
    result = extractor.submit(actions)
    assert result.applied == []
    assert [m.content for m in store.get_all()] == ["对青霉素过敏"]
    assert [(i.content, i.memory_id) for i in queue.pending()] == [("对头孢过敏", kept.id)]
