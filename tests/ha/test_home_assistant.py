"""Real Home Assistant (2026.11, in its own chroot: it needs Python 3.14) using the memory
server through its own ``mcp`` integration, as a household sets it up: the integration added by
its config flow with the server's URL, an ``ollama`` conversation agent with that MCP server's
tools, and a model (a fake speaking Ollama's wire format) that asks for four tool calls at
once, which Home Assistant runs together, each in an MCP session of its own.

Everything runs in a private network namespace (only the loopback device): Home Assistant's
built-in integrations reach for the internet once started, and nothing here may leave
127.0.0.1. The chroot is built by scripts/ha-root.sh (``scripts/setup.sh test`` does it) in
``MEMORY_HA_ROOT`` (default /var/cache/memory-curator/ha-root)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.ha.fake_ollama import FINAL, TOOL_CALLS
from tests.support import REPO
from tests.support.ha import HA_ROOT, ha_ready
from webapp.stores import MemoryStore

# Only the loopback device, up, with multicast (Home Assistant's zeroconf resolver joins a
# multicast group on it), then the scenario: the memory server, the fake model, Home Assistant.
NAMESPACE = (
    "ip link set lo up && ip link set lo multicast on && "
    'ip route add 224.0.0.0/4 dev lo && exec "$0" -m tests.ha.scenario "$@"'
)


def _tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results Home Assistant sent the model, as it sends them (JSON in a message)."""
    return [json.loads(m["content"]) for m in request["messages"] if m.get("role") == "tool"]


def test_home_assistants_assist_gets_every_result_of_four_calls_at_once(tmp_path: Path) -> None:
    why = ha_ready()
    assert why is None, why
    data = tmp_path / "data"
    MemoryStore(data / "memories.json").add("Waters the fern on Sundays.")
    out = tmp_path / "out"
    run = subprocess.run(
        [
            "unshare",
            "--net",
            "--",
            "sh",
            "-c",
            NAMESPACE,
            sys.executable,
            str(HA_ROOT),
            str(data),
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads((out / "result.json").read_text())
    log = (out / "home-assistant.log").read_text()
    print(f"\nHome Assistant: booted, configured and answered in {result['seconds']} s")
    seen = result["home_assistant"]
    assert seen is not None, log[-5000:]
    # set up from discovery (the add-on's announcement), confirmed by the household
    assert seen["mcp_discovery_step"] == "hassio_confirm"
    assert seen["mcp_flow"] == {"type": "create_entry", "errors": None}
    # the tools' hints as Home Assistant itself read them
    reading = {"read_only": True, "destructive": False, "idempotent": True, "open_world": False}
    assert seen["tools"]["recall"] == reading
    assert seen["tools"]["review_memory"] == reading
    assert seen["tools"]["manage_memory"]["destructive"] is True
    # the model asked for four calls at once; the next request carried all four results back
    first, second = result["chat_requests"]
    assert not _tool_results(first)
    results = _tool_results(second)
    assert len(results) == len(TOOL_CALLS), results
    failed = [r for r in results if r["error"] or r["data"].get("isError")]
    assert not failed, failed
    texts = [r["data"]["content"][0]["text"] for r in results]
    assert "Waters the fern on Sundays." in texts[0]  # recall
    assert texts[3].startswith("Added [")  # manage_memory add
    assert seen["answer"] == {
        "type": "IntentResponseType.ACTION_DONE",
        "speech": FINAL,
        "error_code": None,
    }
    assert "Likes green tea." in [m.content for m in MemoryStore(data / "memories.json").get_all()]
    assert "refused" not in (out / "serve.log").read_text()
    assert result["unknown_requests"] == []
