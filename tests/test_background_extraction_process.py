"""Issue 36, item 1, as a household meets it: real processes, nobody presses anything.

``memory-curator serve`` runs on 127.0.0.1 over a temporary data folder with its defaults
(the seed's pacing: 4 new messages and 60 s; the caps: 20 turns). A separate host program
that only uses the library adds 13 exchanges with a fact in the first one — by the time the
thread is read, the 20-turn cap has dropped that exchange from the window. Within a minute of
the pacing the fact waits in Review (manual mode) or is saved (auto mode), and so is a fact
said in the last exchange: nothing that was said is lost to the trim. The server stops
cleanly on SIGTERM, leaving no claim behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.web import LiveServer, start_server
from webapp.curator import Curator
from webapp.settings import Settings

FACT = "Is allergic to penicillin"
LAST_FACT = "Favourite colour is green"
THREAD = "slack:1700000000.000100"
# Pacing plus the server's look (MEMORY_AUTO_EXTRACT_EVERY, 15 s by default) plus a margin.
WITHIN = 60 + 15 + 10

HOST = """
import sys
from webapp.settings import Settings
from webapp.stores import ConversationStore
thread = sys.argv[1]
conversations = ConversationStore.from_settings(Settings.from_env())
conversations.add_exchange(thread, "I'm allergic to penicillin.", "Noted, I'll keep that in mind.")
for i in range(1, 12):
    conversations.add_exchange(thread, f"What's the weather like on day {i}?", "Sunny, 21 degrees.")
conversations.add_exchange(thread, "My favourite colour is green.", "Lovely.")
print(len(conversations.get_history(thread)))
"""


def _host_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "CONVERSATION_"))}
    env["MEMORY_DATA_DIR"] = str(data_dir)
    return env


def host_adds_13_exchanges(data_dir: Path, thread: str = THREAD) -> None:
    """A host program (its own process, the library only) adds the thread."""
    done = subprocess.run(
        [sys.executable, "-c", HOST, thread],
        env=_host_env(data_dir),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "20"  # the window the prompt gets is trimmed, as before


def _settings(data_dir: Path, **env: str) -> Settings:
    return Settings.from_env(
        environ={"MEMORY_DATA_DIR": str(data_dir), **env},
        options_file=data_dir / "no-options.json",
    )


def wait_for(found, seconds: float) -> float:
    """Seconds until ``found()`` is true (fails after ``seconds``)."""
    start = time.monotonic()
    while not found():
        assert time.monotonic() - start < seconds, f"not within {seconds} s"
        time.sleep(0.5)
    return time.monotonic() - start


def stop(server: LiveServer) -> int:
    os.killpg(server.process.pid, signal.SIGTERM)
    code = server.process.wait(timeout=15)
    if server.process.stdout:
        server.process.stdout.close()
    return code


def test_a_fact_trimmed_from_a_hosts_thread_waits_in_review_with_nobody_pressing(tmp_path):
    data = tmp_path / "data"
    server = start_server(data, {"MEMORY_AUTO_EXTRACT": "true"})  # the default, said aloud
    try:
        curator = Curator(_settings(data))
        time.sleep(1)  # the server has looked once: nothing there yet
        host_adds_13_exchanges(data)
        conversations = curator.conversations
        said = [t.content for t in conversations.get_history(THREAD)]
        assert "I'm allergic to penicillin." not in said  # trimmed from the window

        def waiting_in_review() -> set[str]:
            return {item.content for item in curator.review.pending()}

        took = wait_for(lambda: {FACT, LAST_FACT} <= waiting_in_review(), WITHIN)
        items = {i.content: i for i in curator.review.pending()}
        assert items[FACT].conversation_id == THREAD
        # Read: nothing is kept aside any more, the window is as the prompt gets it.
        wait_for(lambda: len(conversations.turns_to_read(THREAD)) == 20, 10)
        print(f"both facts waited in Review {took:.1f} s after the host's last exchange")
    finally:
        code = stop(server)
    assert code in (0, -signal.SIGTERM)
    state = json.loads((data / "extraction-state.json").read_text("utf-8"))
    assert all("claim" not in entry for entry in state.values())


def test_in_auto_mode_the_fact_is_saved_from_a_thread_added_with_no_dashboard_running(tmp_path):
    data = tmp_path / "data"
    host_adds_13_exchanges(data)  # nobody runs the dashboard yet: the trim must keep it
    server = start_server(data, {"MEMORY_AUTO_EXTRACT": "true", "MEMORY_REVIEW_MODE": "auto"})
    try:
        curator = Curator(_settings(data, MEMORY_REVIEW_MODE="auto"))

        def saved() -> set[str]:
            return {memory.content for memory in curator.memories.get_all()}

        took = wait_for(lambda: {FACT, LAST_FACT} <= saved(), WITHIN)
        print(f"both facts saved {took:.1f} s after the server started")
        history = (data / "memories.history.jsonl").read_text("utf-8")
        assert '"background"' in history  # the history log says who extracted
    finally:
        stop(server)


def test_with_auto_extract_off_the_server_reads_nothing(tmp_path):
    data = tmp_path / "data"
    host_adds_13_exchanges(data)
    server = start_server(data, {"MEMORY_AUTO_EXTRACT": "false", "MEMORY_AUTO_EXTRACT_EVERY": "1"})
    try:
        time.sleep(4)
        curator = Curator(_settings(data))
        assert curator.review.pending() == []
        # ...and what the trim dropped is still kept for the extraction someone runs later
        assert len(curator.conversations.turns_to_read(THREAD)) == 26
    finally:
        stop(server)
