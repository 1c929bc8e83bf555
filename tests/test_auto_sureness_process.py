"""Issue 44 as a person runs it: ``memory-curator extract`` (a real process) in auto mode, with
the rules and then with a local OpenAI-format server on 127.0.0.1, on one conversation holding
each kind: a framed change and a new fact are applied; a source the sentence calls unreliable,
hearsay, doubt, a statement older than the memory kept wait in Review, each marked why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.data import make_settings
from webapp.stores import ConversationStore, MemoryStore

THREAD = "cli:household"
KEPT = {
    "provider": "The internet provider is Comcast",
    "plumber": "The plumber is Joe's Plumbing",
    "car": "As of 2026, the family car is a Honda Civic",
    "gym": "The gym is Planet Fitness",
    "sitter": "The babysitter is Emma",
}
# what the person says, and what the model reads from it (content, evidence)
SAID = {
    "changed": (
        "We switched the internet provider to Sonic last week.",
        "The internet provider is Sonic now",
    ),
    "new": ("The printer is in the study.", "The printer is in the study"),
    "unreliable": (
        "An unverified text from an unknown number says the plumber is FlowRight.",
        "The plumber is FlowRight",
    ),
    "older": (
        "As of 2019, the family car was a Ford Focus.",
        "As of 2019, the family car is a Ford Focus",
    ),
    "doubt": ("I might switch my gym to Equinox, not sure yet.", "The gym is Equinox"),
    "hearsay": ("My sister said the babysitter is Chloe now.", "The babysitter is Chloe"),
}


def _conversation(data: Path, kept: list[str], said: list[str]) -> None:
    settings = make_settings(data.parent)
    memories = MemoryStore.from_settings(settings)
    for text in kept:
        memories.add(text, source="manual")
    conversations = ConversationStore.from_settings(settings)
    for sentence in said:
        conversations.add_exchange(THREAD, sentence, "Noted.")


def _extract(data: Path, **env: str) -> tuple[list[str], list[dict[str, Any]]]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    environ.update(MEMORY_REVIEW_MODE="auto", **env)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "webapp",
            "extract",
            "--conversation",
            THREAD,
            "--data-dir",
            str(data),
        ],
        capture_output=True,
        text=True,
        env=environ,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    memories = json.loads((data / "memories.json").read_text("utf-8"))
    queue = data / "review.json"
    review = json.loads(queue.read_text("utf-8")) if queue.exists() else []
    items = memories["memories"] if isinstance(memories, dict) else memories
    return sorted(m["content"] for m in items), review


def _held_kept(kept: list[str]) -> None:
    """Nothing held reached memory: the kept values stand and none of theirs was added."""
    for key in ("plumber", "car", "gym", "sitter"):
        assert KEPT[key] in kept
    for words in ("FlowRight", "Ford Focus", "Equinox", "Chloe"):
        assert not any(words in text for text in kept), words


# What the rules read (they find facts in their own forms): each kind, and what it becomes.
RULES_KEPT = [
    "My gym is Planet Fitness",
    "The plumber is Joe's Plumbing",
    "As of 2026, the family car is a Honda Civic",
    "The babysitter is Emma",
]
RULES_SAID = [
    "I switched from Planet Fitness to Equinox.",  # a framed change: applied
    "I'm allergic to shellfish.",  # a new fact close to no memory: added
    "Remember that the plumber is FlowRight now, according to an unverified text.",
    "Remember that as of 2019 the family car was a Ford Focus.",
    "Remember that the babysitter might be Chloe.",
]


def test_extract_with_the_rules_applies_only_what_it_is_sure_of(tmp_path):
    data = tmp_path / "data"
    _conversation(data, RULES_KEPT, RULES_SAID)
    kept, review = _extract(data)
    assert kept == sorted(
        [
            "My gym is Equinox",
            "Is allergic to shellfish",
            "The plumber is Joe's Plumbing",
            "As of 2026, the family car is a Honda Civic",
            "The babysitter is Emma",
        ]
    )
    waiting = {i["content"]: i.get("doubt") for i in review if i["status"] == "pending"}
    assert waiting == {
        "The plumber is FlowRight now, according to an unverified text": "unreliable",
        "As of 2019 the family car was a Ford Focus": "older",
        "The babysitter might be Chloe": "hedged",
    }


def test_extract_with_a_local_model_applies_the_change_and_the_new_fact_and_says_why_the_rest_waits(
    tmp_path, openai_server
):
    def reply(payload: dict[str, Any]) -> str:
        prompt = payload["messages"][-1]["content"]
        return json.dumps(
            [
                {"content": fact, "category": "general", "confidence": 0.95, "evidence": sentence}
                for sentence, fact in SAID.values()
                if sentence in prompt
            ]
        )

    openai_server.reply_for = reply
    data = tmp_path / "data"
    _conversation(data, list(KEPT.values()), [sentence for sentence, _ in SAID.values()])
    kept, review = _extract(
        data,
        MEMORY_LLM_PROVIDER="openai",
        MEMORY_LLM_BASE_URL=openai_server.url + "/v1",
        MEMORY_LLM_MODEL="local-model",
        MEMORY_LLM_API_KEY="sk-test",
    )
    _held_kept(kept)
    assert "The internet provider is Sonic now" in kept and KEPT["provider"] not in kept
    assert "The printer is in the study" in kept
    waiting = {item["content"]: item.get("doubt") for item in review if item["status"] == "pending"}
    assert waiting == {
        "The plumber is FlowRight": "unreliable",
        "As of 2019, the family car is a Ford Focus": "older",
        "The gym is Equinox": "hedged",
        "The babysitter is Chloe": "hearsay",
    }
