"""No secret is sent to the LLM (issue 35, item 13): the transcript and the memories listed in
the extraction prompt reach a real OpenAI-compatible server on 127.0.0.1 with every secret
replaced by a marker; what the LLM answers with a marker comes back as the words that were
said, so the fact is still stored without the secret and its quote still names the speaker.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import openai  # noqa: F401 - imported in the main thread, before any server thread runs
import pytest

from tests.support.llm import FakeLlmServer
from webapp.attention.llm_check import batch_prompt
from webapp.extraction import LlmMemoryExtractor, OpenAiCaller
from webapp.extraction.candidates import without_secret
from webapp.stores import MemoryStore

# (what the user says, the secret's words) — keyword, no keyword, digit words, full-width.
SAID = [
    ("Remember the garage door code is 4821", "4821"),
    ("Front door keypad: seven three nine one", "seven three nine one"),
    ("The wifi is Lighthouse!2024", "Lighthouse!2024"),
    ("My OpenAI key is sk-proj-tg3SUunWZTRTpysCW9f4CA96qeGs6R3uYEIi75qB", "tg3SUunWZTRTpysCW9f4"),
    ("大門密碼是四八二一", "四八二一"),
    ("信用卡 ４５３９ １４８８ ０３４３ ６４６７", "４５３９ １４８８ ０３４３ ６４６７"),
    ("门禁 2580，快递放门口", "2580"),
]


def _caller(server: FakeLlmServer) -> OpenAiCaller:
    return OpenAiCaller(
        model="local-model", base_url=server.url + "/v1", api_key="sk-test", timeout=5
    )


def _sent(server: FakeLlmServer) -> str:
    """Everything the server received, as one text."""
    return json.dumps([payload for _, _, payload in server.requests], ensure_ascii=False)


def _echo_first_user_line(payload: dict) -> str:
    """The LLM's answer: the user's first line as the fact and as its quote, markers kept."""
    prompt = payload["messages"][0]["content"]
    said = re.search(r"\[User\]: (.*)", prompt).group(1)  # type: ignore[union-attr]
    return json.dumps(
        [{"content": said, "category": "general", "confidence": 0.9, "evidence": said}],
        ensure_ascii=False,
    )


@pytest.mark.parametrize(("said", "secret"), SAID)
def test_the_transcript_reaches_the_llm_with_its_secret_masked(
    openai_server: FakeLlmServer, said: str, secret: str
) -> None:
    openai_server.reply_for = _echo_first_user_line
    messages = [{"role": "user", "content": said}, {"role": "assistant", "content": "Noted."}]
    facts = LlmMemoryExtractor(_caller(openai_server)).extract_facts(messages)
    sent = _sent(openai_server)
    assert len(openai_server.requests) == 1
    assert secret not in sent
    assert "[secret 1]" in sent
    # The answer's marker is put back: the quote is the user's own words, so the speaker is
    # found, and the fact offered for memory holds no secret.
    [fact] = facts or []
    assert fact.evidence == said
    kept = without_secret(fact)
    assert secret not in kept.content and kept.withheld is not None


def test_the_memories_listed_for_a_change_of_mind_are_sent_masked(
    openai_server: FakeLlmServer, tmp_path: Path
) -> None:
    store = MemoryStore(tmp_path / "memories.json", lock_timeout=5).init()
    kept = store.add("The alarm code is 9157")  # a secret the person chose to keep
    openai_server.reply = "[]"
    LlmMemoryExtractor(_caller(openai_server)).extract_facts(
        [{"role": "user", "content": "We changed the alarm code."}], memories=store.get_all()
    )
    sent = _sent(openai_server)
    assert f"[{kept.id}] The alarm code is [secret 1]" in sent
    assert "9157" not in sent


def test_the_same_secret_gets_the_same_marker_and_a_marker_of_another_prompt_stays(
    openai_server: FakeLlmServer,
) -> None:
    openai_server.reply = json.dumps(
        [
            {
                "content": "The garage door code is [secret 1] and [secret 7]",
                "category": "general",
                "confidence": 0.9,
            }
        ]
    )
    messages = [
        {"role": "user", "content": "The garage door code is 4821"},
        {"role": "user", "content": "Again: the garage door code is 4821"},
    ]
    [fact] = LlmMemoryExtractor(_caller(openai_server)).extract_facts(messages) or []
    [(_, _, payload)] = openai_server.requests
    prompt = payload["messages"][0]["content"]
    transcript = prompt[prompt.index("<conversation>") :]
    assert transcript.count("[secret 1]") == 2 and "[secret 2]" not in transcript
    assert fact.content == "The garage door code is 4821 and [secret 7]"


def test_the_pair_check_sends_memories_masked() -> None:
    prompt = batch_prompt([("The alarm code is 9157", "Alarm code: 9157 (new)")])
    assert "9157" not in prompt and "••••" in prompt


def _echo_last_user_line(payload: dict) -> str:
    """The LLM's answer: the user's last line as the fact and as its quote, markers kept."""
    prompt = payload["messages"][0]["content"]
    said = re.findall(r"\[User\]: (.*)", prompt)[-1]
    return json.dumps(
        [{"content": said, "category": "general", "confidence": 0.9, "evidence": said}],
        ensure_ascii=False,
    )


# (the user's turn, the assistant's question, the reply, whether the reply is a secret)
ASKED = [
    ("I changed the Wi-Fi password.", "What did you change it to?", "Quokka4417", True),
    ("", "What's the code for the side gate?", "It's 6 0 3 8.", True),
    ("我把信箱密碼改了。", "新的是什麼？", "Pumpkin88", True),
    ("We got a new router.", "What's the network called?", "Quokka_Home", False),
    ("I changed the Wi-Fi password.", "What is it?", "It's on the sticker.", False),
]


@pytest.mark.parametrize(("first", "question", "reply", "secret"), ASKED)
def test_a_reply_is_masked_by_the_question_before_it(
    openai_server: FakeLlmServer, first: str, question: str, reply: str, secret: bool
) -> None:
    openai_server.reply_for = _echo_last_user_line
    messages = [{"role": "user", "content": first}] if first else []
    messages += [{"role": "assistant", "content": question}, {"role": "user", "content": reply}]
    [fact] = LlmMemoryExtractor(_caller(openai_server)).extract_facts(messages) or []
    value = reply.removeprefix("It's ").rstrip(".")
    sent = _sent(openai_server)
    if not secret:
        assert value in sent and fact.content == reply and fact.withheld is None
        return
    assert value not in sent and "[secret 1]" in sent
    # Kept without the value, the quote masked where the words alone would not tell.
    assert value not in fact.content and fact.withheld is not None
    assert value not in (fact.evidence or "") and "••••" in (fact.evidence or "")
    assert without_secret(fact).content == fact.content
