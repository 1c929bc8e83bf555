"""The seed's names keep their meaning for host programs (issue 32, "The seed's extraction
contracts hold").

A host program written against the seed imports only the public packages and calls
``MemoryExtractor.extract_candidates`` (the rules' facts, a list), ``extract_candidates_smartly``
(its own LLM extractor's facts through ``extract_facts(messages)``, or the rules'),
``reconcile``, ``LlmMemoryExtractor.extract_facts``, the stores' and the prompt builders'
seed methods. Each case here is what such a program relies on; the ones marked "the measured
break" failed before the fix (``extract_candidates`` returned an ``Extracted`` object and an
extractor implementing only ``extract_facts`` crashed ``MemoryExtractor``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.support.llm import FakeLlmServer
from webapp import library
from webapp import stores as webapp_stores
from webapp.extraction import (
    LlmMemoryExtractor,
    MemoryExtractor,
    OpenAiCaller,
    ReconcileAction,
    ReviewQueue,
    StructuredFact,
)
from webapp.prompts import build_prompt_with_history, build_prompt_with_memory
from webapp.stores import CATEGORIES, ConversationStore, MemoryStore

SEED_CATEGORIES = ("preference", "project", "workflow", "tool", "convention", "general")


@pytest.fixture
def store(data_dir: Path) -> MemoryStore:
    return MemoryStore(data_dir / "memories.json", max_items=100, max_chars=10000, lock_timeout=5)


def _user(*texts: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text} for text in texts]


class HostError(RuntimeError):
    """What a host's own extractor raises when its LLM is down."""


class HostLlmExtractor:
    """A host program's own LLM extractor: it implements the seed's interface and nothing else
    (no ``extract``, no ``label``, no ``memories=`` or ``max_messages=`` arguments)."""

    def __init__(self, answer: Any = None, *, fails: bool = False) -> None:
        self.answer = answer
        self.fails = fails
        self.seen: list[list[Any]] = []

    def extract_facts(self, messages):  # exactly the seed's signature
        self.seen.append(list(messages))
        if self.fails:
            raise HostError("the host's LLM is down")
        return self.answer


HOST_FACTS = [
    {
        "content": "Prefers answers in bullet points",
        "category": "preference",
        "confidence": 0.9,
        "evidence": "just give me bullet points",
    },
    {"content": "Works on the garden-irrigation project", "category": "project"},
]


# ----------------------------------------------------------------- extract_candidates
def test_extract_candidates_is_the_rules_facts_as_a_list_of_text(store):
    """The measured break: it returned an ``Extracted`` object of the LLM-or-rules run."""
    messages = _user("I always use metric units.", "What time is it?") + [
        {"role": "assistant", "content": "I prefer tea."}
    ]
    candidates = MemoryExtractor(store).extract_candidates(messages)
    assert candidates == ["Always uses metric units"]
    assert all(isinstance(c, str) for c in candidates)


def test_extract_candidates_never_asks_the_llm(store):
    """The rules' extraction: an injected LLM extractor is not called."""
    host = HostLlmExtractor(HOST_FACTS)
    extractor = MemoryExtractor(store, llm_extractor=host)
    assert extractor.extract_candidates(_user("記住我喜歡綠茶。")) == ["喜歡綠茶"]
    assert host.seen == []


def test_extract_candidates_keeps_no_secret(store):
    said = _user("Remember that my garage door code is 4821.", "I prefer tea.")
    candidates = MemoryExtractor(store).extract_candidates(said)
    assert candidates == ["Prefers tea"]
    assert not any("4821" in c for c in candidates)


# ----------------------------------------------------------------- extract_candidates_smartly
def test_smart_extraction_uses_a_hosts_own_extractor_through_extract_facts_alone(store):
    """The measured break: MemoryExtractor called ``.extract(...)``, which a host's extractor
    implementing the seed's interface does not have (AttributeError)."""
    host = HostLlmExtractor(HOST_FACTS)
    messages = _user("just give me bullet points", "I prefer tea.")
    facts = MemoryExtractor(store, llm_extractor=host).extract_candidates_smartly(messages)
    assert host.seen == [messages]  # the messages, and nothing else
    assert [(f.content, f.category, f.confidence, f.evidence) for f in facts] == [
        (
            "Prefers answers in bullet points",
            "preference",
            0.9,
            "just give me bullet points",
        ),
        ("Works on the garden-irrigation project", "project", 1.0, None),
    ]
    assert all(isinstance(f, StructuredFact) and f.extractor == "llm" for f in facts)


def test_smart_extraction_takes_a_hosts_structured_facts_as_they_are(store):
    said = [StructuredFact("Prefers oat milk", "preference", 0.8, evidence="oat milk please")]
    host = HostLlmExtractor(said)
    facts = MemoryExtractor(store, llm_extractor=host).extract_candidates_smartly(_user("hi"))
    assert facts == said
    assert facts[0].evidence == "oat milk please"


@pytest.mark.parametrize("answer", [None, []], ids=["none", "empty"])
def test_smart_extraction_falls_back_to_the_rules_when_the_host_finds_nothing(store, answer):
    """The measured break (None and [] alike: the call itself crashed)."""
    host = HostLlmExtractor(answer)
    facts = MemoryExtractor(store, llm_extractor=host).extract_candidates_smartly(
        _user("I prefer tea.")
    )
    assert len(host.seen) == 1
    assert [(f.content, f.category, f.extractor) for f in facts] == [
        ("Prefers tea", "preference", "regex")
    ]


def test_a_hosts_extractor_that_raises_raises_its_own_error(store):
    """The measured break: the host got an AttributeError about a method it never had instead
    of its own error. The rules do not hide a host's failure; nothing is written."""
    host = HostLlmExtractor(fails=True)
    extractor = MemoryExtractor(store, llm_extractor=host)
    with pytest.raises(HostError, match="the host's LLM is down"):
        extractor.extract_candidates_smartly(_user("I prefer tea."))
    assert len(host.seen) == 1
    assert store.get_all() == []


def test_smart_extraction_without_an_llm_is_the_rules(store):
    facts = MemoryExtractor(store).extract_candidates_smartly(_user("記住我喜歡綠茶。"))
    assert [(f.content, f.category, f.extractor) for f in facts] == [
        ("喜歡綠茶", "preference", "regex")
    ]


def test_a_hosts_extractor_runs_the_whole_seed_pipeline_into_review(store, data_dir):
    """extract_candidates_smartly → reconcile → submit with a host's extractor: the facts wait
    in the review queue, marked as the LLM's (the measured break: it crashed at the first
    step)."""
    queue = ReviewQueue(data_dir / "review.json", store)
    extractor = MemoryExtractor(
        store, llm_extractor=HostLlmExtractor(HOST_FACTS), review_queue=queue
    )
    facts = extractor.extract_candidates_smartly(_user("just give me bullet points"))
    submitted = extractor.submit(extractor.reconcile(facts), conversation_id="host:1")
    assert [(i.content, i.category, i.extractor) for i in submitted.queued] == [
        ("Prefers answers in bullet points", "preference", "llm"),
        ("Works on the garden-irrigation project", "project", "llm"),
    ]
    assert store.get_all() == []  # manual mode: nothing reaches memory before a person approves


def test_a_secret_a_hosts_extractor_writes_down_is_not_a_candidate(store):
    host = HostLlmExtractor(
        [{"content": "Wi-Fi password is tulip-Rocket-88", "category": "general"}]
    )
    facts = MemoryExtractor(store, llm_extractor=host).extract_candidates_smartly(_user("x"))
    assert [(f.content, f.withheld) for f in facts] == [
        ("Has a Wi-Fi password (not kept in memory).", "password")
    ]


# ----------------------------------------------------------------- LlmMemoryExtractor.extract_facts
def _caller(server: FakeLlmServer) -> OpenAiCaller:
    return OpenAiCaller(model="local-model", base_url=server.url + "/v1", api_key="sk-t", timeout=5)


def test_extract_facts_asks_an_openai_compatible_server_and_returns_its_facts(openai_server):
    openai_server.reply = json.dumps(
        [
            {"content": "Prefers tea", "category": "preference", "confidence": 0.9},
            {"content": "Maybe likes jazz", "category": "preference", "confidence": 0.4},
            {"content": "Uses Home Assistant", "category": "gadgets", "confidence": 0.8},
        ]
    )
    messages = _user("I prefer tea.", "my whole house runs on Home Assistant")
    facts = LlmMemoryExtractor(_caller(openai_server)).extract_facts(messages)
    # Below 0.7 is dropped; an unknown category is "general".
    assert facts == [
        StructuredFact("Prefers tea", "preference", 0.9),
        StructuredFact("Uses Home Assistant", "general", 0.8),
    ]
    [(path, _, payload)] = openai_server.requests
    assert path == "/v1/chat/completions"
    [sent] = payload["messages"]
    assert sent["role"] == "user"
    assert "[User]: I prefer tea." in sent["content"]
    assert "[User]: my whole house runs on Home Assistant" in sent["content"]


@pytest.mark.parametrize("mode", ["error", "garbage"])
def test_extract_facts_is_none_when_the_server_fails(openai_server, mode):
    openai_server.mode = mode
    assert LlmMemoryExtractor(_caller(openai_server)).extract_facts(_user("I prefer tea.")) is None


def test_the_built_in_extractor_drives_smart_extraction_over_http(openai_server, store):
    extractor = MemoryExtractor(store, llm_extractor=LlmMemoryExtractor(_caller(openai_server)))
    facts = extractor.extract_candidates_smartly(_user("this code is too ugly"))
    assert [(f.content, f.extractor) for f in facts] == [("Prefers tea", "llm")]
    openai_server.mode = "error"  # the LLM fails: the rules' facts
    facts = extractor.extract_candidates_smartly(_user("I always use metric units."))
    assert [(f.content, f.extractor) for f in facts] == [("Always uses metric units", "regex")]


# ----------------------------------------------------------------- reconcile
def test_reconcile_skips_what_is_known_updates_a_close_variant_and_adds_the_new(store):
    vim = store.add("User prefers vim", category="tool")
    extractor = MemoryExtractor(store)
    assert extractor.reconcile(["user prefers VIM", "User  prefers vim!"]) == []  # skip
    [update] = extractor.reconcile(["User prefers neovim instead of vim"])
    assert update == ReconcileAction("update", vim.id, "User prefers neovim instead of vim", "tool")
    assert update.current_content == "User prefers vim"
    [add] = extractor.reconcile(["Lives in Lisbon"])
    assert add == ReconcileAction("add", None, "Lives in Lisbon", "general")
    assert [m.content for m in store.get_all()] == ["User prefers vim"]  # reconcile writes nothing


def test_reconcile_takes_the_candidates_of_both_extractions_and_their_categories(store):
    extractor = MemoryExtractor(store, llm_extractor=HostLlmExtractor(HOST_FACTS))
    texts = extractor.extract_candidates(_user("I always use metric units."))
    assert extractor.reconcile(texts, ["convention"]) == [
        ReconcileAction("add", None, "Always uses metric units", "convention")
    ]
    facts = extractor.extract_candidates_smartly(_user("just give me bullet points"))
    assert [(a.action, a.content, a.category) for a in extractor.reconcile(facts)] == [
        ("add", "Prefers answers in bullet points", "preference"),
        ("add", "Works on the garden-irrigation project", "project"),
    ]


# ----------------------------------------------------------------- categories
def test_the_categories_are_the_seeds():
    assert tuple(CATEGORIES) == SEED_CATEGORIES


def test_every_extracted_fact_has_one_of_the_categories(store):
    host = HostLlmExtractor([{"content": "Owns a cat named Miso", "category": "pets"}])
    llm_facts = MemoryExtractor(store, llm_extractor=host).extract_candidates_smartly(_user("x"))
    rule_facts = MemoryExtractor(store).extract_candidates_smartly(
        _user("I prefer tea.", "記住我喜歡綠茶。", "From now on, write my automations in YAML.")
    )
    assert [f.category for f in llm_facts] == ["general"]
    assert rule_facts and all(f.category in SEED_CATEGORIES for f in rule_facts)


# ----------------------------------------------------------------- the seed's stores
@pytest.fixture(params=["raw", "curated"])
def seed_store(request: pytest.FixtureRequest, data_dir: Path) -> Any:
    """The seed's MemoryStore: the raw store (the curator's own) and the public library's
    curated one (``webapp.library``), built with the seed's constructor."""
    kind = webapp_stores.MemoryStore if request.param == "raw" else library.MemoryStore
    return kind(data_dir / "memories.json", max_items=100, max_chars=10000, lock_timeout=5)


def test_memory_store_add_get_all_update_delete_search(seed_store):
    store = seed_store
    tea = store.add("Likes green tea", category="preference")
    store.add("我喜歡喝無糖綠茶")
    assert [(m.content, m.category) for m in store.get_all()] == [
        ("Likes green tea", "preference"),
        ("我喜歡喝無糖綠茶", "general"),
    ]
    assert [m.content for m in store.search("GREEN")] == ["Likes green tea"]
    assert [m.content for m in store.search("綠茶")] == ["我喜歡喝無糖綠茶"]
    updated = store.update(tea.id, "Likes green tea without sugar")
    assert updated is not None and updated.id == tea.id
    assert store.get(tea.id).content == "Likes green tea without sugar"
    assert store.update("no-such-id", "x") is None
    assert store.delete(tea.id) is True
    assert store.delete(tea.id) is False
    assert [m.content for m in store.get_all()] == ["我喜歡喝無糖綠茶"]
    with pytest.raises(ValueError):
        store.add("   ")


def test_conversation_store_add_exchange_get_history_clear_cleanup(data_dir):
    conversations = ConversationStore(
        data_dir / "conversations.json", max_turns=4, max_chars=8000, max_age_days=7
    )
    conversations.add_exchange("t", "What's the weather?", "Light rain after 15:00.")
    conversations.add_exchange("t", "And tomorrow?", "Sunny.")
    conversations.add_exchange("t", "Thanks", "You're welcome.")
    history = conversations.get_history("t")
    assert [(turn.role, turn.content) for turn in history] == [  # the newest max_turns
        ("user", "And tomorrow?"),
        ("assistant", "Sunny."),
        ("user", "Thanks"),
        ("assistant", "You're welcome."),
    ]
    assert conversations.get_history("unknown") == []
    assert conversations.clear("t") is True
    assert conversations.get_history("t") == []
    assert conversations.clear("t") is False

    conversations.add_exchange("fresh", "hi", "hello")
    stale = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - 30 * 86400))
    data = json.loads(conversations.path.read_text("utf-8"))
    data["stale"] = {
        "turns": [{"role": "user", "content": "hi", "timestamp": stale}],
        "createdAt": stale,
        "trimmed": 0,
    }
    conversations.path.write_text(json.dumps(data), "utf-8")
    assert conversations.cleanup() == 1  # idle longer than max_age_days
    assert [t.content for t in conversations.get_history("fresh")] == ["hi", "hello"]
    assert conversations.get_history("stale") == []


def test_the_prompt_builders_write_the_seeds_blocks(store):
    store.add("Prefers concise answers without emoji.")
    history: Iterable[dict[str, str]] = [
        {"role": "user", "content": "What's the weather?"},
        {"role": "assistant", "content": "Light rain after 15:00."},
    ]
    with_memory = build_prompt_with_memory(store.get_all(), "And tomorrow?")
    assert with_memory == (
        "<long_term_memory>\n- Prefers concise answers without emoji.\n</long_term_memory>\n\n"
        "And tomorrow?"
    )
    assert build_prompt_with_history(history, with_memory) == (
        "<conversation_history>\n[User]: What's the weather?\n"
        "[Assistant]: Light rain after 15:00.\n</conversation_history>\n\n" + with_memory
    )
    assert build_prompt_with_memory([], "hi") == "hi"
    assert build_prompt_with_history([], "hi") == "hi"
