"""The LLM provider ``homeassistant`` (the household's own model through an AI Task entity),
against a fake Supervisor on 127.0.0.1 speaking Home Assistant's REST format: extraction as a
real ``memory-curator extract`` process, Needs attention's LLM tier, and the bounds the
provider keeps (its timeout, one call in flight, the scan's budget)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_supervisor import FakeSupervisor
from tests.support.stores import conversation_store, memory_store
from webapp.attention.llm_check import pair_checker_from_settings
from webapp.extraction import LlmConfigError, caller_from_settings
from webapp.extraction.llm import FACTS_REPLY
from webapp.llm import LlmCallError
from webapp.llm.homeassistant import Flight
from webapp.settings import Settings
from webapp.stores import ConversationStore, ReviewQueue

ENTITY = "ai_task.household"
TOKEN = "supervisor-token"
THREAD = "kitchen"
SAID = "Remember that I always use metric units. Also I take my coffee black, every morning."
FACT = {
    "content": "Takes coffee black every morning.",
    "category": "preference",
    "confidence": 0.9,
    "evidence": "I take my coffee black",
}


def _conversations(data_dir: Path) -> ConversationStore:
    return conversation_store(data_dir / "conversations" / "conversations.json")


@pytest.fixture
def seeded(data_dir: Path) -> Path:
    _conversations(data_dir).add_exchange(THREAD, SAID, "Noted.")
    return data_dir


def _env(supervisor: FakeSupervisor | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "CONVERSATION_"))}
    env.pop("SUPERVISOR_TOKEN", None)
    env.update(MEMORY_LLM_PROVIDER="homeassistant", MEMORY_HA_AI_TASK_ENTITY=ENTITY)
    if supervisor is not None:
        env.update(MEMORY_SUPERVISOR_URL=supervisor.url, SUPERVISOR_TOKEN=supervisor.token)
    env.update(extra)
    return {k: v for k, v in env.items() if v != ""}


def _extract(data_dir: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "webapp", "extract", "--conversation", THREAD]
        + ["--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _pending(data_dir: Path) -> set[str]:
    memories = memory_store(data_dir / "memories.json", lock_timeout=10)
    return {item.content for item in ReviewQueue(data_dir / "review.json", memories).pending()}


def _rules_alone(seeded: Path, tmp_path: Path) -> set[str]:
    """What the rules queue from the same thread (the anchor of a run they took over)."""
    copy = tmp_path / "rules-alone"
    shutil.copytree(seeded, copy)
    done = _extract(copy, _env(None, MEMORY_LLM_PROVIDER="none"))
    assert done.returncode == 0, done.stderr
    found = _pending(copy)
    assert found, "the rules find the stated fact"
    return found


def test_the_household_model_proposes_the_facts_through_the_supervisor(seeded):
    with FakeSupervisor(answer=lambda body: {"facts": [FACT]}) as supervisor:
        done = _extract(seeded, _env(supervisor))
    assert done.returncode == 0, done.stderr
    assert FACT["content"] in _pending(seeded)
    (body,) = supervisor.bodies
    assert body["entity_id"] == ENTITY
    assert "I take my coffee black" in body["instructions"]  # the conversation, as the prompt
    facts = body["structure"]["facts"]
    assert facts["required"] is True
    assert facts["selector"]["object"]["multiple"] is True
    assert set(facts["selector"]["object"]["fields"]) >= {"content", "confidence", "action"}
    assert supervisor.refused == []


def test_a_text_answer_is_read_as_any_provider_reply_is(seeded):
    # An entity whose model ignores the structure answers text: parsed as other providers' replies.
    reply = '```json\n[{"content": "Takes coffee black every morning.", "confidence": 0.9}]\n```'
    with FakeSupervisor(answer=lambda body: reply) as supervisor:
        done = _extract(seeded, _env(supervisor))
    assert done.returncode == 0, done.stderr
    assert FACT["content"] in _pending(seeded)


def test_a_slow_model_is_left_at_the_timeout_and_the_rules_take_over(seeded, tmp_path):
    anchor = _rules_alone(seeded, tmp_path)
    with FakeSupervisor(answer=lambda body: {"facts": [FACT]}, delay=20) as supervisor:
        started = time.monotonic()
        done = _extract(seeded, _env(supervisor, MEMORY_LLM_TIMEOUT="1"))
        took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert "did not answer within 1 s" in done.stdout
    assert took < 15, f"the run waited for Home Assistant ({took:.1f} s)"
    assert _pending(seeded) == anchor
    assert FACT["content"] not in _pending(seeded)


@pytest.mark.parametrize(
    ("supervisor_options", "said"),
    [
        ({"status": 500}, "HTTP 500: Sorry, I had a problem talking to the Ollama server"),
        ({"entities": ("ai_task.other",)}, "HTTP 400: AI Task entity ai_task.household not found"),
        ({"token": "another-token"}, "HTTP 401: Unauthorized"),
    ],
)
def test_an_error_answer_is_said_and_the_rules_take_over(
    seeded, tmp_path, supervisor_options, said
):
    anchor = _rules_alone(seeded, tmp_path)
    options: dict[str, Any] = dict(supervisor_options)
    token = options.pop("token", TOKEN)
    with FakeSupervisor(**options) as supervisor:
        env = _env(supervisor, SUPERVISOR_TOKEN=token if token == TOKEN else TOKEN)
        if token != TOKEN:
            supervisor.token = token  # the add-on's token is not the one the Supervisor knows
        done = _extract(seeded, env)
    assert done.returncode == 0, done.stderr
    assert said in done.stdout
    assert _pending(seeded) == anchor


def test_no_entity_chosen_is_a_config_error_and_nothing_is_sent(seeded, monkeypatch):
    before = (seeded / "conversations" / "conversations.json").read_bytes()
    with FakeSupervisor() as supervisor:
        done = _extract(seeded, _env(supervisor, MEMORY_HA_AI_TASK_ENTITY=""))
        # Needs attention goes on with the rules and the model: no checker, nothing asked.
        monkeypatch.setenv("SUPERVISOR_TOKEN", TOKEN)
        settings = Settings.from_env(_env(supervisor, MEMORY_HA_AI_TASK_ENTITY=""))
        assert pair_checker_from_settings(settings) is None
    assert done.returncode == 2
    assert "MEMORY_HA_AI_TASK_ENTITY" in done.stderr
    assert supervisor.bodies == [] and supervisor.refused == []
    assert (seeded / "conversations" / "conversations.json").read_bytes() == before
    with pytest.raises(LlmConfigError) as raised:
        caller_from_settings(settings, {}, shape=FACTS_REPLY)  # and no SUPERVISOR_TOKEN
    assert raised.value.code == "llm_homeassistant_needs_entity"
    named = Settings.from_env(_env(supervisor))
    with pytest.raises(LlmConfigError) as raised:
        caller_from_settings(named, {})
    assert raised.value.code == "llm_homeassistant_needs_token"


def test_needs_attention_asks_the_household_model_about_pairs(data_dir, monkeypatch):
    def verdicts(body: dict[str, Any]) -> Any:
        # A structured answer's numbers come as JSON numbers, 1.0 as well as 1.
        return {"verdicts": [{"pair": 1.0, "verdict": "contradiction"}]}

    with FakeSupervisor(answer=verdicts) as supervisor:
        monkeypatch.setenv("SUPERVISOR_TOKEN", TOKEN)
        settings = Settings.from_env(_env(supervisor)).with_data_dir(data_dir)
        checker = pair_checker_from_settings(settings)
        assert checker is not None and checker.name == ENTITY
        pair = ("Is teetotal.", "Has a glass of wine with dinner.")
        assert checker.check([pair]) == {pair: "contradiction"}
    (body,) = supervisor.bodies
    assert set(body["structure"]) == {"verdicts"}
    assert "Is teetotal." in body["instructions"]


def _caller(supervisor: FakeSupervisor, flight: Flight, **settings: str) -> Any:
    env = _env(supervisor, **settings)
    return caller_from_settings(Settings.from_env(env), env, shape=FACTS_REPLY)


def test_concurrent_scans_never_put_two_calls_in_flight(seeded):
    conversations = _conversations(seeded)
    for number in range(4):
        conversations.add_exchange(f"room-{number}", SAID, "Noted.")
    env = _env(None)
    with FakeSupervisor(answer=lambda body: {"facts": [FACT]}, delay=0.3) as supervisor:
        env.update(MEMORY_SUPERVISOR_URL=supervisor.url, SUPERVISOR_TOKEN=TOKEN)
        settings = Settings.from_env(env).with_data_dir(seeded)
        from webapp.curator import Curator

        errors: list[BaseException] = []

        def scan(thread: str) -> None:
            try:
                os.environ["SUPERVISOR_TOKEN"] = TOKEN
                Curator.from_settings(settings, actor="test").extract(thread)
            except BaseException as exc:  # noqa: BLE001 (reported below)
                errors.append(exc)

        threads = [threading.Thread(target=scan, args=(f"room-{n}",)) for n in range(4)]
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
        finally:
            os.environ.pop("SUPERVISOR_TOKEN", None)
    assert errors == []
    assert len(supervisor.bodies) == 4  # every scan was answered, one after the other
    assert supervisor.most_in_flight == 1
    assert FACT["content"] in _pending(seeded)


def test_a_call_left_at_the_timeout_keeps_its_slot_until_home_assistant_answers():
    flight = Flight()
    with FakeSupervisor(answer=lambda body: {"facts": [FACT]}, delay=2.5) as supervisor:
        caller = _caller(supervisor, flight, MEMORY_LLM_TIMEOUT="1")
        caller.flight = flight
        with pytest.raises(LlmCallError) as first:
            caller.ask("first")
        assert first.value.code == "llm_timeout"
        # The next call waits for the one Home Assistant still runs: never two at once.
        supervisor.delay = 0.0
        caller.timeout = 10
        assert "Takes coffee black" in caller.ask("second")
    assert supervisor.most_in_flight == 1
    assert len(supervisor.bodies) == 2


def test_a_scan_sends_no_more_calls_or_characters_than_its_budget():
    flight = Flight()
    with FakeSupervisor(answer=lambda body: {"facts": []}) as supervisor:
        caller = _caller(supervisor, flight, MEMORY_LLM_PAIRS_PER_SCAN="2")
        caller.flight = flight
        caller.ask("one")
        caller.ask("two")
        with pytest.raises(LlmCallError, match="budget is spent"):
            caller.ask("three")
        assert len(supervisor.bodies) == 2
        small = _caller(supervisor, Flight(), MEMORY_LLM_TOKENS_PER_SCAN="100")
        small.flight = Flight()
        with pytest.raises(LlmCallError, match="budget is spent"):
            small.ask("x" * 401)  # 100 tokens: 400 characters
        assert len(supervisor.bodies) == 2
