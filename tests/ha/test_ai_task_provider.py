"""The LLM provider ``homeassistant`` against real Home Assistant (2026.11, in its chroot): an
``ollama`` entry with an AI Task subentry, backed by a fake model server speaking Ollama's
structured output; a proxy standing in for the Supervisor (``/core/api`` → ``/api`` with a
long-lived token); ``memory-curator extract`` proposes the facts the model gave, through the
real ``ai_task.generate_data`` service, its schema and its REST ``return_response``. One boot,
in a private network namespace (only 127.0.0.1), as tests/ha/test_home_assistant.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.ha.fake_ollama_structured import FACT
from tests.support import REPO
from tests.support.ha import HA_ROOT, ha_ready
from webapp.stores import ConversationStore, MemoryStore, ReviewQueue

THREAD = "kitchen"
SAID = "By the way, I take my coffee black, every morning."
NAMESPACE = (
    "ip link set lo up && ip link set lo multicast on && "
    'ip route add 224.0.0.0/4 dev lo && exec "$0" -m tests.ha.ai_task_scenario "$@"'
)


def test_extraction_asks_the_households_ai_task_entity(tmp_path: Path) -> None:
    why = ha_ready()
    assert why is None, why
    data = tmp_path / "data"
    ConversationStore(data / "conversations" / "conversations.json").add_exchange(
        THREAD, SAID, "Noted."
    )
    out = tmp_path / "out"
    run = subprocess.run(
        ["unshare", "--net", "--", "sh", "-c", NAMESPACE, sys.executable]
        + [str(HA_ROOT), str(data), str(out), THREAD],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads((out / "result.json").read_text())
    log = (out / "home-assistant.log").read_text()
    print(f"\nHome Assistant: booted, configured and answered in {result['seconds']} s")
    assert result["ready"] is not None, log[-5000:]
    extract = result["extract"]
    assert extract["returncode"] == 0, extract
    assert result["forwarded"] == [
        {"path": "/core/api/services/ai_task/generate_data?return_response", "status": 200}
    ], log[-5000:]
    # The model behind the entity got the conversation, and the structure as Ollama's format.
    (request,) = result["chat_requests"]
    sent = json.dumps(request["messages"], ensure_ascii=False)
    assert "I take my coffee black" in sent
    assert request["format"]["properties"]["facts"]["type"] == "array"
    # Its facts reached Review.
    memories = MemoryStore(data / "memories.json")
    pending = ReviewQueue(data / "review.json", memories).pending()
    assert FACT["content"] in [item.content for item in pending], extract["stdout"]
    assert result["unknown_requests"] == []
    assert result["home_assistant"]["entity"] == result["ready"]["entity"]
