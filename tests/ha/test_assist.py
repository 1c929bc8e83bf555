"""Real Home Assistant (2026.11, in its chroot) with the Memory Curator integration
(custom_components/memory_curator, copied into Home Assistant's config folder as a user installs
it) and the add-on's Assist API v1 on ``memory-curator serve``, in ONE boot with several phases:

- the config flow: by URL and token (and the form errors of a closed port, a wrong token,
  another service, no URL), and by Supervisor discovery (with the warning step when HA's own
  ``mcp`` integration already reaches the same server);
- an ``ollama`` agent with the "Memory Curator" API: the system prompt the model receives holds
  the speaker's memories and the household's, never the other person's, for two users and a
  satellite device; a ``remember`` tool call lands in that person's memories and is in the next
  session's prompt;
- every exchange reaches its thread once with its speaker (as the device was chosen when it
  was said, the choice changed right after), also across a SIGKILL and restart of
  ``memory-curator serve`` (the integration's queue); an AI Task run is never fed; extraction
  then proposes in Review a fact Alice said as hers, and one said with nobody known as no
  one's;
- an add-on without the Assist API raises a repair issue at setup; diagnostics hide the token.

Everything runs in a private network namespace (only the loopback device); see
test_home_assistant.py for the chroot (``MEMORY_HA_ROOT``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.ha.fake_assist_model import TASK_ANSWER, marker
from tests.support import REPO
from tests.support.cli import clean_env
from tests.support.ha import BINS, CELLO, PEANUTS, ha_ready, run_scenario, seed
from webapp.curator import Curator
from webapp.settings import Settings
from webapp.stores import ConversationStore


def _system_prompt(requests: list[dict[str, Any]], label: str) -> str:
    """The system prompt of the first chat request of the turn marked ``[label]``."""
    for request in requests:
        users = [m["content"] for m in request["messages"] if m["role"] == "user"]
        if users and marker(users[-1]) == f"[{label}]":
            return str(request["messages"][0]["content"])
    raise AssertionError(f"no chat request for [{label}]")


def _tool_result(requests: list[dict[str, Any]], label: str) -> dict[str, Any]:
    """The one tool result Home Assistant sent the model in the turn marked ``[label]``."""
    for request in requests:
        users = [m["content"] for m in request["messages"] if m["role"] == "user"]
        tools = [m for m in request["messages"] if m["role"] == "tool"]
        if users and marker(users[-1]) == f"[{label}]" and tools:
            result: dict[str, Any] = json.loads(tools[-1]["content"])
            return result
    raise AssertionError(f"no tool result for [{label}]")


def test_assist_remembers_for_the_person_speaking(tmp_path: Path) -> None:
    why = ha_ready()
    assert why is None, why
    data = tmp_path / "data"
    people = seed(data)
    out = tmp_path / "out"
    result = run_scenario(data, out)
    log = (out / "home-assistant.log").read_text()
    print(f"\nHome Assistant: booted and went through every phase in {result['seconds']} s")
    seen = result["home_assistant"]
    assert seen is not None, log[-6000:]

    # the config flow: clear form errors, by URL with its token, by discovery with the warning
    errors = {label: got["errors"] for label, got in seen["flow_errors"].items()}
    assert errors == {
        "closed": {"base": "cannot_connect"},
        "wrong_token": {"base": "invalid_auth"},
        "another_service": {"base": "not_memory_curator"},
        "not_a_url": {"base": "invalid_url"},
        "forbidden_host": {"base": "host_refused"},
    }
    assert seen["by_url"]["type"] == "create_entry"
    assert seen["by_url"]["token_kept"] is True
    assert seen["by_url"]["state"] == "ConfigEntryState.LOADED"
    assert "memory_curator" in seen["by_url"]["apis"]
    assert seen["mcp_flow"] == "create_entry"  # HA's own mcp integration still works
    assert seen["discovery"] == {
        "steps": ["hassio_confirm", "mcp_too"],
        "type": "create_entry",
        "again": "already_configured",
    }

    # the prompt the model received: the speaker's memories and the household's, only
    requests = result["chat_requests"]
    shown = {label: _system_prompt(requests, label) for label in ("A1", "B1", "D0", "D1", "A3")}
    assert PEANUTS in shown["A1"] and BINS in shown["A1"] and CELLO not in shown["A1"]
    assert CELLO in shown["B1"] and BINS in shown["B1"] and PEANUTS not in shown["B1"]
    # the device, first seen answering for whoever speaks (nobody here): the household's
    assert BINS in shown["D0"] and PEANUTS not in shown["D0"] and CELLO not in shown["D0"]
    # then chosen for Alice on the add-on's side
    assert PEANUTS in shown["D1"] and BINS in shown["D1"] and CELLO not in shown["D1"]
    # remembered in one session ([A2], by the model's tool call), in the next session's prompt
    assert "Prefers oat milk." in shown["A3"]
    assert "Prefers oat milk." not in shown["A1"]
    settings = Settings.from_env({"MEMORY_DATA_DIR": str(data)}, options_file=data / "none.json")
    curator = Curator.from_settings(settings)
    [oat] = [m for m in curator.memories.get_all() if m.content == "Prefers oat milk."]
    assert oat.person == people["Alice"]
    # recall and forget see the speaker's memories only: Bob cannot forget Alice's, she can
    recalled = _tool_result(requests, "B5")
    assert not recalled["error"]
    assert [m["content"] for m in recalled["data"]["memories"]] == [CELLO]
    refused = _tool_result(requests, "B6")
    assert refused["error"] is True
    assert refused["data"]["error"] == "not_found", refused
    assert PEANUTS not in json.dumps(refused)
    forgotten = _tool_result(requests, "A5")
    assert forgotten["data"]["forgotten"]["content"] == PEANUTS, forgotten
    assert PEANUTS not in [m.content for m in curator.memories.get_all()]
    # the memory server was down for [B2]: the conversation went on without memories
    assert "Memory is unavailable right now" in _system_prompt(requests, "B2")
    assert seen["turns"]["B2"]["speech"] == "Done [B2]"
    down = _tool_result(requests, "B2")  # the remember call while nothing answered
    assert down["error"] is True
    assert down["data"] == {"error": "unavailable", "message": "Memory is unavailable right now."}

    # every exchange in its thread, once, with its speaker; across the restart too
    conversations = ConversationStore.from_settings(settings)
    speakers = {
        "A": people["Alice"],
        "B": people["Bob"],
        "D0": None,
        "D1": people["Alice"],
        "N1": None,  # an agent without the API: sent with nobody known
    }
    # an excluded agent and device; feeding turned off; an error reply; a fault in the feed
    unfed = {"N2", "N4", "N3", "F1", "E1"}
    assert seen["turns"]["E1"]["speech"] == "Reply [E1]"  # the turn did not notice the fault
    assert seen["options"] == ["create_entry"] * 3
    assert seen["turns"]["F1"] == {"error": "ResponseError"}
    everything = [
        t.content
        for c in conversations.list_conversations()
        for t in conversations.get_history(c.id)
    ]
    for label in unfed:
        assert not [said for said in everything if said.startswith(f"[{label}]")], label
    for label, turn in seen["turns"].items():
        if label in unfed:
            continue
        history = conversations.get_history(turn["conversation_id"])
        said = [t for t in history if t.role == "user" and t.content.startswith(f"[{label}]")]
        assert len(said) == 1, (label, history)
        expected = speakers[label] if label in speakers else speakers[label[0]]
        assert said[0].person == expected, label
        # the agent's final reply of that turn (not what it said with its tool call)
        reply = history[history.index(said[0]) + 1]
        assert (reply.role, reply.content) == ("assistant", turn["speech"]), label
    # extraction (rules only, a process on the data folder) proposes what was said: Alice's
    # "I prefer window seats" as hers; "my favourite colour is green", said through the
    # satellite with nobody known, waits with no person for someone to say whose
    extracted = subprocess.run(
        [sys.executable, "-m", "webapp", "extract", "--all", "--data-dir", str(data)],
        cwd=REPO,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert extracted.returncode == 0, extracted.stdout + extracted.stderr
    waiting = {item.content: item.person for item in Curator.from_settings(settings).pending()}
    assert waiting.get("Prefers window seats") == people["Alice"], waiting
    assert "Favourite colour is green" in waiting, waiting
    assert waiting["Favourite colour is green"] is None
    # the exchanges waited in the queue (kept on disk across a reload), then arrived
    assert seen["queued_while_down"] == 2  # [B2] and [B3]
    assert seen["queued_after_reload"] == 2
    # the add-on refused the Host for a while: the entry set up, the exchange [A6] waited
    assert seen["refused_host"] == {"state": "ConfigEntryState.LOADED", "queued": 1, "rejected": 0}
    assert "Memory is unavailable right now" in _system_prompt(requests, "A6")
    # an AI Task run is never fed
    assert seen["ai_task"]["data"] == TASK_ANSWER
    threads = [c.id for c in conversations.list_conversations()]
    assert seen["ai_task"]["conversation_id"] not in threads
    assert not [t for t in threads if "[T1]" in json.dumps(str(conversations.get_history(t)))]

    # diagnostics: the queue emptied, nothing dropped; the token of the entry by URL redacted
    assert seen["diagnostics"]["feed"]["queued"] == 0
    assert seen["diagnostics"]["feed"]["dropped"] == 0
    assert seen["diagnostics_by_url"]["entry"]["data"]["token"] == "**REDACTED**"
    assert result["token"] not in json.dumps(seen["diagnostics_by_url"])

    # an add-on without the Assist API: a repair issue at setup, gone once it is right again
    assert [i["key"] for i in seen["issues_outdated"]] == ["addon_outdated"]
    assert [i["key"] for i in seen["issues_newer"]] == ["integration_outdated"]
    assert seen["issues_after"] == []
    assert seen["entry_state"] == "ConfigEntryState.LOADED"
    # the fake model's server was asked for nothing else than the add-on's info (it stood in
    # for another service in the flow, and for an add-on without the Assist API)
    assert set(result["unknown_requests"]) == {"GET /api/assist/v1/info"}
    for serve_log in result["serve_logs"]:
        assert "Traceback" not in serve_log
