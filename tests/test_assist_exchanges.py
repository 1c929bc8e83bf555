"""Exchanges Home Assistant's Assist delivers late, or twice, over real HTTP against
``memory-curator serve``: stored once per key even when the server is killed with SIGKILL
between the turns' write and the key's; stamped with when they were said (never later than
now), in the thread's time order so extraction still reads one delivered after it ran; one said
before the conversations' max age is refused as expired, not lost unseen; and credited to whose
the device and the user were when it was said, not when it arrived."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import REPO
from tests.support.assist import AssistClient, context
from tests.support.cli import clean_env
from tests.support.data import make_settings
from tests.support.mcp_http import dashboard, free_port
from webapp.curator import Curator
from webapp.extraction import extract_due
from webapp.settings import Settings
from webapp.stores import ConversationStore

# ``serve`` in a process that kills itself (SIGKILL) once an exchange's turns are written and
# before its key is (``exchanges.reached``, the point between the two writes).
KILLED_BETWEEN_WRITES = """
import os, signal, sys
from webapp.stores import exchanges
def reached(step):
    if step == "stored":
        os.kill(os.getpid(), signal.SIGKILL)
exchanges.reached = reached
from webapp.cli import main
main(["serve", "--host", "127.0.0.1", "--port", sys.argv[1]], prog_name="memory-curator")
"""


def _history(settings: Settings, conversation_id: str) -> list[Any]:
    return ConversationStore.from_settings(settings).get_history(conversation_id)


def _keys(settings: Settings) -> dict[str, Any]:
    path = settings.data_dir / "assist-exchanges.json"
    return dict(json.loads(path.read_text())) if path.exists() else {}


def test_a_server_killed_between_the_turns_and_the_key_stores_the_retry_once(
    tmp_path: Path,
) -> None:
    settings = make_settings(tmp_path)
    settings.data_dir.mkdir(parents=True)
    ana = Curator.from_settings(settings).people.add("Ana", identities=(("ha", "u-ana"),))
    port = free_port()
    with (tmp_path / "killed.log").open("wb") as log:
        killed = subprocess.Popen(
            [sys.executable, "-c", KILLED_BETWEEN_WRITES, str(port)],
            cwd=REPO,
            env=clean_env(MEMORY_DATA_DIR=str(settings.data_dir)),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(base + "/healthz", timeout=2)
            break
        except httpx.TransportError:
            assert killed.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
    said = context("u-ana", conversation_id="conv-1")
    with pytest.raises(httpx.TransportError):  # the server died answering
        AssistClient(base).exchange(said, "key-1", "conv-1", "I moved to Lisbon.")
    assert killed.wait(timeout=30) == -signal.SIGKILL
    assert [t.content for t in _history(settings, "conv-1")] == ["I moved to Lisbon.", "Noted."]
    assert "key-1" not in _keys(settings)  # killed before the key's write

    with dashboard(settings.data_dir) as served:  # restarted; the integration retries
        client = AssistClient(served.base)
        again = client.exchange(said, "key-1", "conv-1", "I moved to Lisbon.")
        client.close()
    assert (again["stored"], again.get("duplicate")) == (False, True)
    turns = _history(settings, "conv-1")
    assert [(t.role, t.content) for t in turns] == [
        ("user", "I moved to Lisbon."),
        ("assistant", "Noted."),
    ]
    assert turns[0].person == ana.id
    assert "key-1" in _keys(settings)  # recorded now, for when the turns are trimmed away


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Settings, AssistClient]]:
    settings = make_settings(tmp_path, conversation_max_age_days=7)
    settings.data_dir.mkdir(parents=True)
    with dashboard(settings.data_dir, CONVERSATION_MAX_AGE_DAYS="7") as running:
        client = AssistClient(running.base)
        yield settings, client
        client.close()


def test_a_late_exchange_is_stamped_when_said_and_extraction_still_reads_it(
    served: tuple[Settings, AssistClient],
) -> None:
    settings, api = served
    now = datetime.now(UTC)
    hour_ago = (now - timedelta(hours=1)).replace(microsecond=0)
    assert api.exchange(context(), "k1", "kitchen", "Good morning.", at=hour_ago)["stored"]
    [said, reply] = _history(settings, "kitchen")
    assert said.timestamp == reply.timestamp == hour_ago  # when it was said, not delivered
    # a clock ahead of the add-on's: stamped no later than now
    ahead = api.exchange(context(), "k2", "hall", "Hi.", at=now + timedelta(days=1))
    assert ahead["stored"] and _history(settings, "hall")[0].timestamp <= datetime.now(UTC)

    # extraction read the kitchen; an exchange said before, delivered only now, is read too
    extract_due(settings, all_threads=True, caller=None)
    two_hours_ago = hour_ago - timedelta(hours=1)
    late = api.exchange(
        context(), "k3", "kitchen", "My favourite colour is green.", at=two_hours_ago
    )
    assert late["stored"]
    turns = _history(settings, "kitchen")
    assert [t.content for t in turns][-2] == "My favourite colour is green."
    assert turns[-2].timestamp > hour_ago  # just after what extraction read, in time order
    [result] = [
        r
        for r in extract_due(settings, all_threads=True, caller=None)
        if r.conversation_id == "kitchen"
    ]
    assert result.new_messages == 2
    pending = Curator.from_settings(settings).pending()
    assert [item.content for item in pending] == ["Favourite colour is green"]


def test_an_exchange_said_before_the_max_age_is_refused_as_expired_not_kept_unread(
    served: tuple[Settings, AssistClient],
) -> None:
    settings, api = served
    old = datetime.now(UTC) - timedelta(days=8)
    answer = api.exchange(context(), "k-old", "attic", "My favourite colour is green.", at=old)
    assert (answer["stored"], answer.get("expired")) == (False, True)
    assert _history(settings, "attic") == [] and "k-old" not in _keys(settings)
    assert (
        not (settings.data_dir / "conversations.json").exists()
        or "attic" not in (settings.data_dir / "conversations.json").read_text()
    )
    # said within the max age: kept, with its time
    week = datetime.now(UTC).replace(microsecond=0) - timedelta(days=6)
    assert api.exchange(context(), "k-week", "attic", "Hello.", at=week)["stored"]
    assert _history(settings, "attic")[0].timestamp == week


def test_an_exchange_is_credited_as_the_device_and_user_were_when_it_was_said(
    served: tuple[Settings, AssistClient],
) -> None:
    settings, api = served
    curator = Curator.from_settings(settings)
    ana = curator.add_person("Ana")
    ben = curator.add_person("Ben")
    kitchen = context(device_id="d-kitchen", device_name="Kitchen")
    api.prompt(kitchen)  # the device is seen, answering for whoever speaks
    before_choice = datetime.now(UTC)
    time.sleep(0.05)
    curator.choose_device("d-kitchen", choice="person", person=ana.id)
    # [D0] said before the choice, delivered after it: nobody known then
    assert api.exchange(kitchen, "d0", "c-d0", "Good morning.", at=before_choice)["stored"]
    assert _history(settings, "c-d0")[0].person is None
    # said after it: Ana's
    assert api.exchange(kitchen, "d1", "c-d1", "Hi.")["stored"]
    assert _history(settings, "c-d1")[0].person == ana.id

    # a Home Assistant user linked to Ben after they spoke: not credited to Ben
    zoe = context("u-zoe", user_name="Zoe")
    api.prompt(zoe)
    unlinked_then = datetime.now(UTC)
    time.sleep(0.05)
    curator.link_identity(ben.id, kind="ha", value="u-zoe")
    assert api.exchange(zoe, "z0", "c-z0", "Hello.", at=unlinked_then)["stored"]
    assert _history(settings, "c-z0")[0].person is None
    assert api.exchange(zoe, "z1", "c-z1", "Hello again.")["stored"]
    assert _history(settings, "c-z1")[0].person == ben.id

    # the device's person removed since the exchange was said: nobody's, never another's
    cy = curator.add_person("Cy")
    curator.choose_device("d-kitchen", choice="person", person=cy.id)
    said_for_cy = datetime.now(UTC)
    time.sleep(0.05)
    curator.choose_device("d-kitchen", choice="speaker")
    curator.remove_person(cy.id)
    assert api.exchange(kitchen, "d2", "c-d2", "Bye.", at=said_for_cy)["stored"]
    assert _history(settings, "c-d2")[0].person is None
