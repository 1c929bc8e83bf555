"""MemoryExtractor: LLM-or-regex candidates, reconcile against memory, submit, pacing state."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC
from pathlib import Path

import pytest

from tests.support.stores import memory_store
from webapp.extraction import (
    ExtractionState,
    LlmMemoryExtractor,
    ManualModeError,
    MemoryExtractor,
    ReconcileAction,
    StructuredFact,
    extract_conversation,
    extract_due,
)
from webapp.extraction.run import stores_for
from webapp.stores import MemoryFullError, MemoryStore, NotFoundError, ReviewQueue

LLM_REPLY = json.dumps(
    [
        {
            "content": "Prefers concise code",
            "category": "preference",
            "confidence": 0.85,
            "evidence": "this code is too ugly",
        }
    ]
)


class FixedCaller:
    def __init__(self, reply: str | None) -> None:
        self.reply = reply
        self.calls = 0

    def call(self, prompt: str) -> str | None:
        self.calls += 1
        return self.reply


@pytest.fixture
def store(data_dir: Path) -> MemoryStore:
    return memory_store(data_dir / "memories.json")


@pytest.fixture
def queue(data_dir: Path, store: MemoryStore) -> ReviewQueue:
    return ReviewQueue(data_dir / "review.json", store)


def _user(*texts: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text} for text in texts]


# ----------------------------------------------------------------- candidates
def test_extraction_without_an_llm_is_the_regex_over_user_messages(store):
    messages = _user("I always use metric units.", "What time is it?") + [
        {"role": "assistant", "content": "I prefer tea."}
    ]
    facts = MemoryExtractor(store).extract_candidates_smartly(messages)
    assert [fact.content for fact in facts] == ["Always uses metric units"]


def test_smart_extraction_uses_only_the_llm_when_it_answers(store):
    extractor = MemoryExtractor(store, llm_extractor=LlmMemoryExtractor(FixedCaller(LLM_REPLY)))
    facts = extractor.extract_candidates_smartly(_user("this code is too ugly", "I prefer tea."))
    assert facts == [StructuredFact("Prefers concise code", "preference", 0.85)]
    assert facts[0].extractor == "llm"


@pytest.mark.parametrize("reply", [None, "not json", "[]"])
def test_smart_extraction_falls_back_to_regex(store, reply):
    caller = FixedCaller(reply)
    extractor = MemoryExtractor(store, llm_extractor=LlmMemoryExtractor(caller))
    facts = extractor.extract_candidates_smartly(_user("I prefer tea."))
    assert caller.calls == 1
    assert [(f.content, f.category, f.extractor) for f in facts] == [
        ("Prefers tea", "preference", "regex")
    ]


def test_smart_extraction_without_llm_is_the_regex(store):
    facts = MemoryExtractor(store).extract_candidates_smartly(_user("記住我喜歡綠茶。"))
    assert [(f.content, f.category) for f in facts] == [("喜歡綠茶", "preference")]


class HostExtractor:
    """A host program's extractor: the seed's ``extract_facts(messages)`` and nothing else."""

    def __init__(self, answer: object) -> None:
        self.answer = answer

    def extract_facts(self, messages):
        return self.answer


def test_the_run_takes_a_hosts_own_extractor_and_says_no_llm_problem(store):
    answer = [{"content": "Prefers short replies", "category": "preference", "confidence": 0.8}]
    extracted = MemoryExtractor(store, llm_extractor=HostExtractor(answer)).extract(_user("x"))
    assert [(f.content, f.extractor) for f in extracted.candidates] == [
        ("Prefers short replies", "llm")
    ]
    assert (extracted.llm_problem, extracted.cut) == (None, 0)


def test_the_run_with_a_host_extractor_that_finds_nothing_is_every_rule(store):
    """Changes of mind too: the run's rules, not only the facts stated outright."""
    tea = store.add("Likes green tea.")
    extractor = MemoryExtractor(store, llm_extractor=HostExtractor(None))
    actions = extractor.reconcile(
        extractor.extract(_user("Forget that I like green tea.")).candidates
    )
    assert [(a.action, a.id) for a in actions] == [("delete", tea.id)]


def test_both_seed_extractions_take_at_most_max_facts(store):
    said = _user("I prefer tea.", "I always use metric units.", "I prefer dark mode.")
    many = [{"content": f"Fact number {n}"} for n in range(5)]
    extractor = MemoryExtractor(store, llm_extractor=HostExtractor(many), max_facts=2)
    assert extractor.extract_candidates(said) == ["Prefers tea", "Always uses metric units"]
    assert [f.content for f in extractor.extract_candidates_smartly(said)] == [
        "Fact number 0",
        "Fact number 1",
    ]
    assert extractor.extract(said).cut == 3


@pytest.mark.parametrize(
    "answer",
    [
        "Prefers tea",  # a string, not a list of facts
        {"content": "Prefers tea"},  # one dict, not a list
        [{"content": ""}, {"content": "x", "confidence": 2}, {"action": "drop", "content": "y"}],
        [{"action": "delete"}, 42, None],
    ],
    ids=["string", "dict", "unusable-items", "no-id-and-junk"],
)
def test_an_unusable_host_answer_runs_the_rules(store, answer):
    extractor = MemoryExtractor(store, llm_extractor=HostExtractor(answer))
    facts = extractor.extract_candidates_smartly(_user("I prefer tea."))
    assert [(f.content, f.extractor) for f in facts] == [("Prefers tea", "regex")]


# ----------------------------------------------------------------- reconcile
def test_known_fact_yields_no_action(store):
    store.add("User prefers vim.")
    assert MemoryExtractor(store).reconcile(["user prefers VIM", "User  prefers vim!"]) == []


def test_the_same_fact_in_the_other_chinese_script_yields_no_action(store):
    store.add("我喜歡喝無糖綠茶")
    assert MemoryExtractor(store).reconcile(["我喜欢喝无糖绿茶"]) == []


def test_close_variant_yields_update_of_that_memory(store):
    store.add("Lives in Lisbon")
    vim = store.add("User prefers vim", category="tool")
    [action] = MemoryExtractor(store).reconcile(["User prefers neovim instead of vim"])
    assert action == ReconcileAction("update", vim.id, "User prefers neovim instead of vim", "tool")
    assert action.current_content == "User prefers vim"


def test_close_variant_in_chinese_yields_update(store):
    memory = store.add("我习惯用 Vim 编辑配置文件")
    [action] = MemoryExtractor(store).reconcile(["我习惯用 VS Code 编辑配置文件"])
    assert (action.action, action.id) == ("update", memory.id)


@pytest.mark.parametrize(
    "memory, candidate",
    [
        ("Prefers dark mode everywhere", "Prefers dark mode"),
        ("Weekday alarm at 06:45, weekend alarm at 09:00", "Weekday alarm at 06:45"),
        ("喜歡喝無糖綠茶，冬天喝熱的", "喜歡喝無糖綠茶"),
    ],
)
def test_a_fact_the_memory_already_says_with_more_is_no_change(store, memory, candidate):
    """Replacing the memory with the shorter restatement would only lose words."""
    store.add(memory)
    assert MemoryExtractor(store).reconcile([candidate]) == []


@pytest.mark.parametrize(
    "memory, candidate",
    [
        ("Likes coffee in the morning", "Does not like coffee in the morning anymore"),
        ("Alarm at 06:45 on weekdays", "Alarm at 07:00 on weekdays"),
    ],
)
def test_a_shorter_fact_that_changes_a_value_or_says_no_is_still_proposed(store, memory, candidate):
    current = store.add(memory)
    actions = MemoryExtractor(store).reconcile([candidate])
    assert [a.id for a in actions if a.action == "update"] == [current.id]


def test_new_fact_yields_add_with_general_by_default(store):
    store.add("User prefers vim")
    assert MemoryExtractor(store).reconcile(["My daughter's name is Ana"]) == [
        ReconcileAction("add", None, "My daughter's name is Ana", "general")
    ]


def test_categories_flow_into_add_actions(store):
    extractor = MemoryExtractor(store)
    by_list = extractor.reconcile(["Uses tmux", "Deploys on Fridays"], ["tool", "workflow"])
    by_map = extractor.reconcile(["Uses tmux"], {"Uses tmux": "tool"})
    by_fact = extractor.reconcile([StructuredFact("Names branches feat/x", "convention", 0.9)])
    bad = extractor.reconcile(["Uses tmux"], ["nonsense"])
    assert [a.category for a in by_list] == ["tool", "workflow"]
    assert [a.category for a in by_map] == ["tool"]
    assert [a.category for a in by_fact] == ["convention"]
    assert [a.category for a in bad] == ["general"]


def test_duplicate_candidates_in_one_batch_give_one_action(store):
    assert len(MemoryExtractor(store).reconcile(["Uses tmux", "uses TMUX."])) == 1


def test_apply_writes_adds_and_updates_as_extracted(store):
    old = store.add("User prefers vim", category="tool")
    extractor = MemoryExtractor(store)
    extractor.apply(
        extractor.reconcile(["User prefers neovim instead of vim", "Uses tmux"], ["tool", "tool"])
    )
    memories = {m.content: m for m in store.get_all()}
    assert set(memories) == {"User prefers neovim instead of vim", "Uses tmux"}
    assert memories["User prefers neovim instead of vim"].id == old.id
    assert memories["Uses tmux"].source == "extracted"
    assert store.history()[-1]["actor"] == "extractor"


# ----------------------------------------------------------------- submit
def test_manual_mode_queues_and_writes_nothing(store, queue):
    extractor = MemoryExtractor(store, review_queue=queue)
    result = extractor.submit(
        extractor.reconcile(["Uses tmux"], ["tool"]),
        conversation_id="slack:1",
        evidence="I use tmux daily.",
    )
    assert store.get_all() == []
    [item] = queue.pending()
    assert (item.content, item.category, item.conversation_id, item.evidence, item.status) == (
        "Uses tmux",
        "tool",
        "slack:1",
        "I use tmux daily.",
        "pending",
    )
    assert result.queued == [item]


def test_manual_mode_without_queue_is_a_clear_error(store):
    with pytest.raises(ManualModeError):
        MemoryExtractor(store).submit([ReconcileAction("add", None, "Uses tmux")])


def test_auto_mode_applies(store, queue):
    extractor = MemoryExtractor(store, review_queue=queue, mode="auto")
    result = extractor.submit(extractor.reconcile(["Uses tmux"], ["tool"]))
    assert [m.content for m in store.get_all()] == ["Uses tmux"]
    assert result.applied[0].source == "extracted" and queue.pending() == []


def test_auto_mode_queues_what_does_not_fit_a_full_store(data_dir):
    store = memory_store(data_dir / "memories.json", max_items=1)
    queue = ReviewQueue(data_dir / "review.json", store)
    extractor = MemoryExtractor(store, review_queue=queue, mode="auto")
    result = extractor.submit(extractor.reconcile(["Uses tmux", "Prefers tea"]))
    assert [m.content for m in result.applied] == ["Uses tmux"]
    assert [i.content for i in result.queued] == ["Prefers tea"]


def test_auto_mode_full_store_without_queue_raises(data_dir):
    store = memory_store(data_dir / "memories.json", max_items=1)
    extractor = MemoryExtractor(store, mode="auto")
    with pytest.raises(MemoryFullError):
        extractor.submit(extractor.reconcile(["Uses tmux", "Prefers tea"]))


def test_unknown_mode_is_refused(store):
    with pytest.raises(ValueError, match="manual or auto"):
        MemoryExtractor(store, mode="yolo")


# ----------------------------------------------------------------- pacing
class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def test_should_extract_needs_four_new_messages_and_sixty_seconds(data_dir):
    clock = Clock()
    state = ExtractionState(data_dir / "extraction-state.json", clock=clock)
    assert not state.should_extract("c", 3)
    assert state.should_extract("c", 4)
    state.mark_extracted("c")
    clock.now += 59.9
    assert not state.should_extract("c", 10)
    clock.now += 0.1
    assert state.should_extract("c", 4)
    assert not state.should_extract("c", 3)


def test_pacing_state_lives_in_a_file_shared_by_processes(data_dir, store, queue):
    extractor = MemoryExtractor(store, review_queue=queue)
    assert extractor.state.path == data_dir / "extraction-state.json"
    code = (
        "import sys; from webapp.extraction import ExtractionState; "
        "ExtractionState(sys.argv[1]).mark_extracted('slack:1')"
    )
    subprocess.run([sys.executable, "-c", code, str(extractor.state.path)], check=True)
    assert not extractor.should_extract("slack:1", 10)
    assert extractor.should_extract("slack:2", 10)


# ----------------------------------------------------------------- one conversation, end to end
def _thread(settings, key="slack:1", *exchanges):
    _, conversations, _ = stores_for(settings)
    for user, assistant in exchanges:
        conversations.add_exchange(key, user, assistant)


def test_extract_conversation_queues_regex_facts(settings):
    _thread(settings, "slack:1", ("I always use metric units.", "Noted."), ("Weather?", "Rain."))
    result = extract_conversation(settings, "slack:1", caller=None)
    assert result.ran and result.extractor == "regex"
    assert [i.content for i in result.queued] == ["Always uses metric units"]
    again = extract_conversation(settings, "slack:1", caller=None)
    assert again.queued == [] and again.skipped == 1


def test_extract_conversation_with_llm_in_auto_mode_applies(settings):
    from dataclasses import replace

    _thread(settings, "cli:session-1", ("這寫法太醜了", "我改短一點。"))
    auto = replace(settings, review_mode="auto")
    result = extract_conversation(auto, "cli:session-1", caller=FixedCaller(LLM_REPLY))
    assert result.extractor == "llm"
    memories, _, _ = stores_for(settings)
    assert [(m.content, m.category, m.source) for m in memories.get_all()] == [
        ("Prefers concise code", "preference", "extracted")
    ]


def test_extract_conversation_unknown_thread_is_not_found(settings):
    with pytest.raises(NotFoundError):
        extract_conversation(settings, "slack:nope", caller=None)


def test_extract_due_reads_only_new_messages_and_respects_pacing(settings):
    _thread(settings, "slack:1", ("I prefer tea.", "ok"))
    [first] = extract_due(settings, caller=None)
    assert not first.ran and "not due" in first.reason
    [forced] = extract_due(settings, all_threads=True, caller=None)
    assert [i.content for i in forced.queued] == ["Prefers tea"]
    [after] = extract_due(settings, all_threads=True, caller=None)
    assert after.reason == "no new messages"


def test_auto_mode_run_twice_at_once_adds_the_fact_once(data_dir):
    """Two processes (the dashboard's Extract facts and `memory-curator extract`) reconcile
    against the same memory before either writes; the fact must still be stored once."""
    first = MemoryExtractor(
        memory_store(data_dir / "memories.json"),
        mode="auto",
    )
    second = MemoryExtractor(
        memory_store(data_dir / "memories.json"),
        mode="auto",
    )
    both = [first.reconcile(["Uses tmux", "Prefers tea"]), second.reconcile(["Uses tmux"])]
    assert first.submit(both[0]).applied and len(both[1]) == 1
    result = second.submit(both[1])
    assert sorted(m.content for m in first.store.get_all()) == ["Prefers tea", "Uses tmux"]
    assert result.applied == [] and result.skipped == 1
    assert second.apply(first.reconcile(["Uses tmux"]) or both[1]) == []


def test_a_nul_or_lone_surrogate_in_a_message_does_not_stop_extraction(settings):
    """Messages a host stored with a NUL (pasted binary) or a lone surrogate (JSON's "\\ud800"
    written by another program) are extracted without them, not a crash of the whole run."""
    _thread(
        settings, "slack:1", ("I prefer green tea\x00 with honey.", "Noted."), ("Weather?", "Rain.")
    )
    path = settings.conversation_file
    path.write_text(
        path.read_text(encoding="utf-8").replace("honey", "honey\\ud800"), encoding="utf-8"
    )
    result = extract_conversation(settings, "slack:1", caller=None)
    assert [i.content for i in result.queued] == ["Prefers green tea with honey"]
    llm = LlmMemoryExtractor(
        FixedCaller(
            json.dumps(
                [
                    {
                        "content": "Prefers tea\ud800",
                        "category": "preference",
                        "confidence": 0.9,
                        "evidence": "tea\x00, always",
                    }
                ]
            )
        )
    )
    store = memory_store(settings.memory_file, max_items=10, max_chars=1000)
    queue = ReviewQueue(settings.review_file, store)
    extractor = MemoryExtractor(store, llm_extractor=llm, review_queue=queue)
    facts = extractor.extract(_user("whatever")).candidates
    [item] = extractor.submit(extractor.reconcile(facts)).queued
    assert (item.content, item.evidence) == ("Prefers tea", "tea, always")


def test_messages_with_microsecond_timestamps_are_not_new_again_after_a_run(settings):
    """A host that writes Python isoformat() times (microseconds): once read, a message is
    not counted as new on every later run."""
    from datetime import datetime, timedelta

    start = datetime.now(UTC) - timedelta(minutes=5)
    turns = [
        {
            "role": role,
            "content": text,
            "timestamp": (start + timedelta(seconds=i, microseconds=123_456)).isoformat(),
        }
        for i, (role, text) in enumerate(
            [
                ("user", "I always use metric units."),
                ("assistant", "Noted."),
                ("user", "Weather?"),
                ("assistant", "Rain."),
            ]
        )
    ]
    settings.conversation_file.parent.mkdir(parents=True, exist_ok=True)
    settings.conversation_file.write_text(
        json.dumps({"slack:1": {"turns": turns}}), encoding="utf-8"
    )
    [first] = extract_due(settings, all_threads=True, caller=None)
    assert first.ran and first.new_messages == 4
    [again] = extract_due(settings, all_threads=True, caller=None)
    assert (again.ran, again.new_messages) == (False, 0)
