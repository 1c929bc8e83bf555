"""Issue 43, item 1: extraction never drops what it has not read.

An LLM call gets a window of a thread (``LlmMemoryExtractor.max_messages``, 20). A long thread
is read window by window, oldest first, at most ``max_calls`` calls a run; what no call read
stays unread (and kept aside when trimmed) and is read by the next run, which is due at once.
The LLM here is a real HTTP server on 127.0.0.1 speaking OpenAI's wire format; it proposes a
fact for each "Remember that …" it is shown, and the test records which messages it saw.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest

from tests.support.data import make_settings
from tests.support.llm import FakeLlmServer
from tests.support.web import CsrfClient
from webapp import create_app
from webapp.curator import Curator
from webapp.curator.background import BackgroundExtraction
from webapp.extraction.report import describe_result
from webapp.extraction.waiting import waiting
from webapp.settings import Settings
from webapp.stores import ConversationStore

THREAD = "cli:kitchen"
EARLY = "Remember that I'm allergic to penicillin."
EARLY_FACT = "Is allergic to penicillin"
LATE = "Remember that my favourite colour is green."
LATE_FACT = "Favourite colour is green"
FACTS = {"allergic to penicillin": EARLY_FACT, "favourite colour is green": LATE_FACT}
_USER_LINE = re.compile(r"^\[User\]: (.*)$", re.MULTILINE)


def filler(i: int) -> str:
    return f"What's the weather like on day {i}?"


class Model:
    """What the fake LLM does: a fact for each "Remember that …" in the conversation it is
    shown, and a record of every user message it saw."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, payload: dict[str, Any]) -> str:
        prompt = payload["messages"][-1]["content"]
        block = prompt[prompt.index("<conversation>") : prompt.index("</conversation>")]
        said = _USER_LINE.findall(block)
        self.seen += said
        facts = [
            {"content": fact, "category": "general", "confidence": 0.95, "evidence": line}
            for line in said
            for words, fact in FACTS.items()
            if words in line
        ]
        return json.dumps(facts)


@pytest.fixture
def model(openai_server: FakeLlmServer) -> Model:
    openai_server.reply_for = model = Model()
    return model


def _llm(settings: Settings, server: FakeLlmServer) -> Settings:
    return replace(
        settings,
        llm_provider="openai",
        llm_model="local-model",
        llm_base_url=server.url + "/v1",
        llm_api_key="sk-test",
        llm_timeout=10,
    )


def _thread(conversations: ConversationStore, exchanges: int) -> list[str]:
    """The fact in the first exchange, small talk, another fact in the last; the user's words."""
    said = [EARLY, *(filler(i) for i in range(1, exchanges - 1)), LATE]
    for text in said:
        conversations.add_exchange(THREAD, text, "Noted.")
    return said


def _pending(curator: Curator) -> list[str]:
    return [item.content for item in curator.review.pending()]


def _unread_user_turns(settings: Settings, conversations: ConversationStore) -> list[str]:
    seen = waiting(settings, conversations)
    if not seen.threads:
        return []
    return [
        t.content
        for t in conversations.turns_to_read(THREAD)[-seen.threads[0].unread :]
        if t.role == "user"
    ]


@pytest.mark.parametrize(
    ("cap", "kept_aside"),
    [(20, True), (200, False)],  # trimmed from the window (kept aside) / plainly unread
)
def test_the_background_proposes_a_fact_said_early_in_a_long_thread(
    tmp_path, openai_server, model, cap, kept_aside
):
    settings = _llm(make_settings(tmp_path, conversation_max_turns=cap), openai_server)
    conversations = ConversationStore.from_settings(settings)
    said = _thread(conversations, exchanges=13)  # 26 messages: more than one window of 20
    assert (conversations.list_conversations()[0].kept_aside > 0) is kept_aside
    curator = Curator.from_settings(settings)

    (result,) = BackgroundExtraction(curator).run_once()

    assert result.ran and result.extractor == "llm"
    assert sorted(_pending(curator)) == sorted([EARLY_FACT, LATE_FACT])
    assert sorted(model.seen) == sorted(said)  # every user message reached the model, once
    assert waiting(settings, conversations).threads == ()


def test_a_thread_beyond_the_bound_is_read_over_the_next_runs_and_nothing_is_dropped(
    tmp_path, openai_server, model
):
    settings = _llm(make_settings(tmp_path), openai_server)  # the window of 20 turns
    conversations = ConversationStore.from_settings(settings)
    said = _thread(conversations, exchanges=80)  # 160 messages: beyond one run's calls
    curator = Curator.from_settings(settings)
    background = BackgroundExtraction(curator)

    (first,) = background.run_once()

    assert first.ran and EARLY_FACT in _pending(curator)
    assert first.left_unread == 100  # 3 calls of 20 messages read the first 60
    assert "100 newer message(s) left unread" in describe_result(first)
    # Nothing the model did not see is marked read, nor dropped from what trimming kept.
    unread = _unread_user_turns(settings, conversations)
    assert unread and set(unread).isdisjoint(model.seen)
    assert model.seen + unread == said
    assert waiting(settings, conversations).due == (THREAD,)  # the rest is due at once

    runs = 1
    while waiting(settings, conversations).threads and runs < 10:
        background.run_once()
        runs += 1
    assert runs <= 4  # bounded: a few runs read all of it
    assert model.seen == said  # each message once, in order
    assert sorted(_pending(curator)) == sorted([EARLY_FACT, LATE_FACT])
    assert waiting(settings, conversations).threads == ()


def test_a_failed_call_leaves_the_rest_to_the_rules(tmp_path, openai_server):
    """The model answers the first window, then fails: the rules read what it did not."""
    settings = _llm(make_settings(tmp_path, conversation_max_turns=200), openai_server)
    conversations = ConversationStore.from_settings(settings)
    model = Model()
    calls = []

    def first_only(payload: dict[str, Any]) -> str:
        calls.append(1)
        return model(payload) if len(calls) == 1 else "not json at all"

    openai_server.reply_for = first_only
    for text in [EARLY, *(filler(i) for i in range(1, 15)), "I'm allergic to cats."]:
        conversations.add_exchange(THREAD, text, "Noted.")
    curator = Curator.from_settings(settings)

    (result,) = BackgroundExtraction(curator).run_once()

    assert len(calls) == 2 and result.llm_problem is not None
    pending = _pending(curator)
    assert EARLY_FACT in pending  # the model's, from the first window
    assert any("allergic to cats" in fact for fact in pending)  # the rules', from the rest
    assert waiting(settings, conversations).threads == ()


def test_the_extract_command_reads_a_long_thread_whole(tmp_path, openai_server, model):
    data = tmp_path / "data"
    settings = make_settings(tmp_path)
    said = _thread(ConversationStore.from_settings(settings), exchanges=13)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    environ.update(
        MEMORY_LLM_PROVIDER="openai",
        MEMORY_LLM_BASE_URL=openai_server.url + "/v1",
        MEMORY_LLM_MODEL="local-model",
        MEMORY_LLM_API_KEY="sk-test",
    )
    for args in (["--conversation", THREAD], ["--all"]):
        done = subprocess.run(
            [sys.executable, "-m", "webapp", "extract", *args, "--data-dir", str(data)],
            capture_output=True,
            text=True,
            env=environ,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    review = json.loads((data / "review.json").read_text("utf-8"))
    assert sorted(item["content"] for item in review) == sorted([EARLY_FACT, LATE_FACT])
    assert sorted(set(model.seen)) == sorted(said)
    assert waiting(settings).threads == ()


UNREAD_NOTICE = {
    "en": "100 newer messages are left unread: more than the LLM reads in one run.",
    "zh-TW": "另有 100 則較新的訊息尚未讀取",
    "zh-CN": "另有 100 条较新的消息尚未读取",
}


@pytest.mark.parametrize("language", UNREAD_NOTICE)
def test_the_dashboard_says_what_waits_for_the_next_run(tmp_path, openai_server, model, language):
    """The button's extraction (every message, forced) reads the first 60 of a long thread's
    unread messages and says, in the page's language, that the rest waits."""
    settings = _llm(make_settings(tmp_path), openai_server)
    said = _thread(ConversationStore.from_settings(settings), exchanges=80)
    app = create_app(settings)
    app.config.update(TESTING=True)
    client = CsrfClient(app.test_client())
    answer = client.post(
        f"/conversations/extract/{THREAD}", htmx=True, headers={"Accept-Language": language}
    ).get_data(as_text=True)
    assert UNREAD_NOTICE[language] in html.unescape(answer), answer
    assert model.seen == said[:30]  # 60 messages, 30 of them the user's
    assert EARLY_FACT in _pending(Curator.from_settings(settings))
    assert waiting(settings).due == (THREAD,)
