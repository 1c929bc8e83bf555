"""Issue 35, item 17 (second half): in auto mode an LLM's update overwrote an edit saved while
the LLM was thinking. Now the update carries the version of the memory the run read before
asking the LLM, and is applied only while the memory is still at it; otherwise it waits in
Review, showing the edited text it would replace.

Real processes throughout: ``memory-curator extract`` against a slow OpenAI-format server on
127.0.0.1, and the edit made by another ``memory-curator`` process during the call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support import REPO
from tests.support.cli import run_cli
from tests.support.llm import FakeLlmServer, openai_body
from webapp.stores import MemoryStore
from webapp.stores.timefmt import to_iso

THREAD = "cli:kitchen"


def base_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "CONVERSATION_"))}


def seed(data_dir: Path) -> dict[str, str]:
    """Two memories and a thread in which the user changes their mind about the first."""
    store = MemoryStore(data_dir / "memories.json", lock_timeout=5)
    ids = {
        "coffee": store.add("Drinks coffee every morning").id,
        "walk": store.add("Walks the dog at seven").id,
    }
    said = to_iso(datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1))
    turns = []
    for text in (
        "I no longer drink coffee in the morning, I switched to tea.",
        "And I walk the dog at eight now.",
    ):
        turns.append({"role": "user", "content": text, "timestamp": said})
        turns.append({"role": "assistant", "content": "Noted.", "timestamp": said})
    folder = data_dir / "conversations"
    folder.mkdir()
    thread = {"turns": turns, "createdAt": said, "trimmed": False}
    (folder / "conversations.json").write_text(json.dumps({THREAD: thread}), "utf-8")
    return ids


def llm_reply(ids: dict[str, str]) -> str:
    return json.dumps(
        [
            {
                "action": "update",
                "id": ids["coffee"],
                "content": "Drinks tea every morning",
                "category": "preference",
                "confidence": 0.9,
                "evidence": "I switched to tea",
            },
            {
                "action": "update",
                "id": ids["walk"],
                "content": "Walks the dog at eight",
                "category": "general",
                "confidence": 0.9,
                "evidence": "I walk the dog at eight now",
            },
        ]
    )


def start_extract(data_dir: Path, server: FakeLlmServer) -> subprocess.Popen[str]:
    env = {
        **base_env(),
        "MEMORY_EMBEDDER": "lexical",
        "MEMORY_REVIEW_MODE": "auto",
        "MEMORY_LLM_PROVIDER": "openai",
        "MEMORY_LLM_MODEL": "local-model",
        "MEMORY_LLM_BASE_URL": server.url + "/v1",
        "MEMORY_LLM_API_KEY": "sk-test",
        "MEMORY_LLM_TIMEOUT": "60",
    }
    command = [sys.executable, "-m", "webapp", "extract", "--conversation", THREAD]
    return subprocess.Popen(
        [*command, "--data-dir", str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )


def wait_for_the_call(server: FakeLlmServer, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not server.requests:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the LLM was never asked"
        time.sleep(0.05)


def pending(data_dir: Path) -> list[dict]:
    path = data_dir / "review.json"
    if not path.exists():
        return []
    data = json.loads(path.read_text("utf-8"))
    items = data["items"] if isinstance(data, dict) else data
    return [item for item in items if item.get("status", "pending") == "pending"]


# How the memory is changed while the LLM thinks: its words, its category, or both.
EDITS = {
    "words": ("Drinks espresso every morning", None),
    "category": (None, "workflow"),
    "words-and-category": ("Drinks a double espresso every morning", "preference"),
    # The edit already says what the LLM would change: kept, and nothing is proposed again.
    "words-saying-it-already": ("Drinks green tea every morning", None),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edit_saved_during_the_llm_call_is_kept_and_the_update_waits_in_review(data_dir, edit):
    ids = seed(data_dir)
    words, category = EDITS[edit]
    with FakeLlmServer(openai_body) as server:
        server.mode = "slow"
        server.reply = llm_reply(ids)
        extract = start_extract(data_dir, server)
        try:
            wait_for_the_call(server, extract)
            # A person edits the memory through another door while the LLM is thinking.
            args = ["memories", "update", ids["coffee"], words or "Drinks coffee every morning"]
            if category:
                args += ["--category", category]
            edited = run_cli(*args, data_dir=data_dir, env={"MEMORY_EMBEDDER": "lexical"})
            assert edited.returncode == 0, edited.stdout + edited.stderr
            server.release.set()
            out, err = extract.communicate(timeout=60)
        finally:
            if extract.poll() is None:
                extract.kill()
                extract.communicate()
    assert extract.returncode == 0, err
    store = MemoryStore(data_dir / "memories.json", lock_timeout=5)
    kept = store.get(ids["coffee"])
    assert kept is not None
    assert kept.content == (words or "Drinks coffee every morning"), "the edit was overwritten"
    if category:
        assert kept.category == category
    # The update of the memory nobody touched was applied, as auto mode does.
    walk = store.get(ids["walk"])
    assert walk is not None and walk.content == "Walks the dog at eight"
    # The LLM's change waits for a person, who sees the text it would replace now.
    waiting = [item for item in pending(data_dir) if item.get("memoryId") == ids["coffee"]]
    if edit == "words-saying-it-already":
        assert waiting == []
        return
    assert len(waiting) == 1, pending(data_dir)
    assert waiting[0]["content"] == "Drinks tea every morning"
    assert waiting[0].get("currentContent") == kept.content


def test_without_an_edit_during_the_call_both_updates_are_applied(data_dir):
    """The control: the same run, nobody editing, applies the LLM's updates (auto mode)."""
    ids = seed(data_dir)
    with FakeLlmServer(openai_body) as server:
        server.reply = llm_reply(ids)
        extract = start_extract(data_dir, server)
        out, err = extract.communicate(timeout=60)
    assert extract.returncode == 0, err
    store = MemoryStore(data_dir / "memories.json", lock_timeout=5)
    assert store.get(ids["coffee"]).content == "Drinks tea every morning"
    assert store.get(ids["walk"]).content == "Walks the dog at eight"
    assert pending(data_dir) == []
