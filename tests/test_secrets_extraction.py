"""Secrets never become memories through extraction: `memory-curator extract` run as a real
process over a conversation file that holds a door code, a Wi-Fi password and a plain fact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from webapp.stores import MemoryStore, ReviewQueue

THREAD = "slack:secrets"
MESSAGES = [
    ("user", "Remember that the garage door code is 4821."),
    ("assistant", "Noted."),
    ("user", "記住我家Wi-Fi密碼是 tulip-Rocket-88"),
    ("assistant", "好的。"),
    ("user", "I prefer oat milk in my coffee."),
    ("assistant", "Got it."),
]
SECRETS = ("4821", "tulip-Rocket-88")


def write_thread(data_dir: Path) -> None:
    folder = data_dir / "conversations"
    folder.mkdir(parents=True, exist_ok=True)
    now = int(time.time() * 1000) - 60_000
    turns = [
        {"role": role, "content": text, "timestamp": now + i * 1000}
        for i, (role, text) in enumerate(MESSAGES)
    ]
    (folder / "conversations.json").write_text(
        json.dumps({THREAD: turns}, ensure_ascii=False), "utf-8"
    )


def extract(data_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-m", "webapp", "extract", "--all", "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
    )


def stores(data_dir: Path) -> tuple[MemoryStore, ReviewQueue]:
    memories = MemoryStore(data_dir / "memories.json", lock_timeout=5)
    return memories, ReviewQueue(data_dir / "review.json", memories)


def on_disk_text(data_dir: Path) -> str:
    """Every file the run wrote except the conversations it read."""
    return "".join(
        p.read_text("utf-8")
        for p in data_dir.rglob("*")
        if p.is_file() and "conversations" not in p.parts
    )


def test_extraction_proposes_the_fact_without_the_secret_and_says_why(data_dir: Path) -> None:
    write_thread(data_dir)
    result = extract(data_dir)
    assert result.returncode == 0, result.stderr
    _, queue = stores(data_dir)
    pending = {item.content: item for item in queue.pending()}
    assert set(pending) == {
        "Has a garage door code (not kept in memory).",
        "有Wi-Fi密碼（內容不存在記憶裡）。",
        "Prefers oat milk in their coffee",
    }
    door = pending["Has a garage door code (not kept in memory)."]
    assert door.withheld == "access_code"
    assert door.evidence == "Remember that the garage door code is ••••."
    assert pending["有Wi-Fi密碼（內容不存在記憶裡）。"].withheld == "password"
    assert pending["Prefers oat milk in their coffee"].withheld is None
    for secret in SECRETS:
        assert secret not in result.stdout
        assert secret not in on_disk_text(data_dir)
    assert "held back: access_code" in result.stdout


def test_auto_mode_never_saves_a_secret_and_sends_it_to_review(data_dir: Path) -> None:
    write_thread(data_dir)
    result = extract(data_dir, MEMORY_REVIEW_MODE="auto")
    assert result.returncode == 0, result.stderr
    memories, queue = stores(data_dir)
    assert [m.content for m in memories.get_all()] == ["Prefers oat milk in their coffee"]
    assert {item.withheld for item in queue.pending()} == {"access_code", "password"}
    for secret in SECRETS:
        assert secret not in on_disk_text(data_dir)


class SecretRepeatingLlm:
    """An LLM that ignores the prompt's rule and writes the secret down (and one plain fact)."""

    def call(self, prompt: str) -> str | None:
        return json.dumps(
            [
                {
                    "content": "Wi-Fi password is tulip-Rocket-88.",
                    "category": "general",
                    "confidence": 0.95,
                    "evidence": "my Wi-Fi password is tulip-Rocket-88",
                },
                {"content": "Prefers oat milk.", "category": "preference", "confidence": 0.9},
            ]
        )


def test_an_llm_fact_holding_a_secret_is_proposed_without_it(data_dir: Path) -> None:
    from webapp.extraction import LlmMemoryExtractor, MemoryExtractor

    memories, queue = stores(data_dir)
    extractor = MemoryExtractor(
        memories, llm_extractor=LlmMemoryExtractor(SecretRepeatingLlm()), review_queue=queue
    )
    said = [{"role": "user", "content": "my Wi-Fi password is tulip-Rocket-88"}]
    facts = extractor.extract(said).candidates
    extractor.submit(extractor.reconcile(facts), conversation_id=THREAD)
    pending = {item.content: item for item in queue.pending()}
    assert set(pending) == {"Has a Wi-Fi password (not kept in memory).", "Prefers oat milk."}
    assert pending["Has a Wi-Fi password (not kept in memory)."].withheld == "password"
    assert pending["Has a Wi-Fi password (not kept in memory)."].evidence == (
        "my Wi-Fi password is ••••"
    )
    assert "tulip-Rocket-88" not in (data_dir / "review.json").read_text("utf-8")
