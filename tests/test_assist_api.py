"""The Assist API v1 over real HTTP against ``memory-curator serve`` on 127.0.0.1, as the Home
Assistant integration calls it: whose memory a request gets (device choice > linked user >
household), privacy in the prompt, the tools and their refusals, bad bodies, the gate, and
exchanges stored once per key (across a restart, and two servers racing one key)."""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.assist import V1, AssistClient, context, dumps
from tests.support.auth import TOKEN
from tests.support.data import make_settings, on_disk
from tests.support.mcp_http import Dashboard, dashboard
from webapp import __version__
from webapp.curator import Curator
from webapp.language.moments import read_time
from webapp.settings import Settings
from webapp.stores import ConversationStore


class Home:
    """A served data folder: Ana (Home Assistant user u-ana) and Ben (u-ben), each with a
    private memory, and one memory of the household."""

    def __init__(self, settings: Settings, served: Dashboard) -> None:
        self.settings = settings
        self.served = served
        self.api = AssistClient(served.base)
        self.curator = Curator.from_settings(settings)
        self.ana = self.curator.people.add("Ana", identities=(("ha", "u-ana"),))
        self.ben = self.curator.people.add("Ben", identities=(("ha", "u-ben"),))
        self.anas = self.curator.remember("Is allergic to penicillin.", person=self.ana.id)
        self.bens = self.curator.remember("Plays the cello on Sundays.", person=self.ben.id)
        self.shared = self.curator.remember("The bins go out on Tuesday.")

    def files(self) -> dict[str, bytes]:
        data = self.settings.data_dir
        return {p.name: p.read_bytes() for p in sorted(data.glob("*.json"))}


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    settings = make_settings(tmp_path)
    settings.data_dir.mkdir(parents=True)
    with dashboard(settings.data_dir) as served:
        made = Home(settings, served)
        yield made
        made.api.close()


def block(*facts: str) -> str:
    return "<long_term_memory>\n" + "".join(f"- {f}\n" for f in facts) + "</long_term_memory>\n\n"


# ------------------------------------------------------------------ whose memory
def test_each_linked_user_gets_their_own_and_the_households_memory(home: Home) -> None:
    ana = home.api.prompt(context("u-ana", user_name="Ana"))
    assert ana["speaker"] == {"scope": "person", "name": "Ana"}
    assert ana["prompt"] == block(home.anas.content, home.shared.content)
    assert (ana["api"], ana["addon_version"]) == (1, __version__)
    ben = home.api.prompt(context("u-ben"))
    assert ben["speaker"] == {"scope": "person", "name": "Ben"}
    assert ben["prompt"] == block(home.bens.content, home.shared.content)
    # exactly the block the dashboard's prompt preview shows for that person
    status, page = home.served.get(f"/prompt/?person={home.ana.id}")
    assert status == 200 and html.escape(ana["prompt"].rstrip("\n"), quote=False) in page.decode()


def test_an_unlinked_user_gets_the_households_only_and_is_recorded(home: Home) -> None:
    zoe = home.api.prompt(context("u-zoe", user_name="Zoe"))
    assert zoe["speaker"] == {"scope": "household", "name": None}
    assert zoe["prompt"] == block(home.shared.content)
    unlinked = Curator.from_settings(home.settings).people.unlinked()
    assert [(i.kind, i.value, i.label) for i in unlinked] == [("ha", "u-zoe", "Zoe")]
    nobody = home.api.prompt(context())
    assert nobody["speaker"]["scope"] == "household"
    assert nobody["prompt"] == block(home.shared.content)


def test_a_device_chosen_on_the_people_page_wins_over_the_user(home: Home) -> None:
    kitchen = context("u-ana", device_id="dev-kitchen", device_name="Kitchen satellite")
    # first seen: recorded, answering for whoever speaks (Ana here)
    assert home.api.prompt(kitchen)["speaker"]["name"] == "Ana"
    device = Curator.from_settings(home.settings).people.device("dev-kitchen")
    assert device is not None and (device.label, device.choice) == ("Kitchen satellite", "speaker")
    home.curator.choose_device("dev-kitchen", choice="household")
    household = home.api.prompt(kitchen)
    assert household["speaker"] == {"scope": "household", "name": None}
    assert household["prompt"] == block(home.shared.content)
    assert home.api.tool("recall", kitchen)["result"]["memories"] == [
        {"id": home.shared.id, "content": home.shared.content, "scope": "household"}
    ]
    home.curator.choose_device("dev-kitchen", choice="person", person=home.ben.id)
    ben = home.api.prompt(kitchen)
    assert ben["speaker"] == {"scope": "person", "name": "Ben"}
    assert ben["prompt"] == block(home.bens.content, home.shared.content)
    # a person the device answered for is removed: the household's, not whoever speaks
    cleo = home.curator.add_person("Cleo")
    home.curator.choose_device("dev-kitchen", choice="person", person=cleo.id)
    assert home.api.prompt(kitchen)["speaker"]["name"] == "Cleo"
    home.curator.remove_person(cleo.id)
    assert home.api.prompt(kitchen)["speaker"] == {"scope": "household", "name": None}


# ------------------------------------------------------------------ privacy in the tools
def test_another_persons_memory_is_as_unknown_as_one_that_does_not_exist(home: Home) -> None:
    ben = context("u-ben")
    recalled = home.api.tool("recall", ben)["result"]["memories"]
    assert home.anas.id not in json.dumps(recalled)
    theirs = home.api.tool("forget", ben, memory_id=home.anas.id)
    nothing = home.api.tool("forget", ben, memory_id="0123456789ab")
    assert theirs["ok"] is nothing["ok"] is False
    assert theirs["error"]["code"] == nothing["error"]["code"] == "not_found"
    assert theirs["error"]["message"].replace(home.anas.id, "ID") == nothing["error"][
        "message"
    ].replace("0123456789ab", "ID")
    by_text = home.api.tool("forget", ben, fact="penicillin")
    assert by_text["error"]["code"] == "not_found"
    assert "Ana" not in json.dumps(by_text) and home.anas.id not in json.dumps(by_text)
    # the same fact said by Ben is his own, never "already known" through Ana's
    said = home.api.tool("remember", ben, fact="Is allergic to penicillin.")
    assert said["ok"] and said["result"]["outcome"] == "added"
    assert said["result"]["memory"]["id"] != home.anas.id
    assert home.curator.memories.get(home.anas.id) is not None
    household_device = context("u-ana", device_id="hall")
    home.curator.people.seen_device("hall")
    home.curator.choose_device("hall", choice="household")
    gone = home.api.tool("forget", household_device, memory_id=home.anas.id)
    assert gone["error"]["code"] == "not_found"


def test_the_tools_keep_to_the_speaker_with_the_rules_of_every_door(home: Home) -> None:
    ana = context("u-ana")
    added = home.api.tool("remember", ana, fact="Likes green tea.")
    assert added["result"] == {
        "outcome": "added",
        "memory": {
            "id": added["result"]["memory"]["id"],
            "content": "Likes green tea.",
            "scope": "person",
        },
    }
    again = home.api.tool("remember", ana, fact="likes green tea")
    assert again["result"]["outcome"] == "already_known"
    assert again["result"]["memory"]["id"] == added["result"]["memory"]["id"]
    secret = home.api.tool("remember", ana, fact="The garage door code is 4821.")
    assert (secret["ok"], secret["error"]["code"]) == (False, "memory_secret")
    markup = "<script>alert(1)</script> Likes <b>bold</b> jazz"
    kept = home.api.tool("remember", context(), fact=markup)
    assert kept["result"]["memory"] == {
        "id": kept["result"]["memory"]["id"],
        "content": markup,
        "scope": "household",
    }
    home.api.tool("remember", ana, fact="Likes black tea in the morning.")
    several = home.api.tool("forget", ana, fact="tea")
    assert several["error"]["code"] == "ambiguous"
    assert {c["content"] for c in several["candidates"]} == {
        "Likes green tea.",
        "Likes black tea in the morning.",
    }
    one = home.api.tool("forget", ana, fact="green tea")
    assert one["result"]["forgotten"]["content"] == "Likes green tea."
    assert "Likes green tea." not in [m["content"] for m in on_disk(home.settings.memory_file)]
    everything = home.api.tool("recall", ana)["result"]
    assert [m["content"] for m in everything["memories"]][0] == "Likes black tea in the morning."
    assert everything["more"] == 0


# ------------------------------------------------------------------ bad input, the gate
BAD_BODIES: list[tuple[str, str, bytes]] = [
    ("/prompt", "not UTF-8", b'{"context": {"user_id": "\xff\xfe"}}'),
    ("/prompt", "not JSON", b"{context"),
    ("/prompt", "NaN", b'{"context": {}, "x": NaN}'),
    ("/prompt", "an array", b"[]"),
    ("/prompt", "no context", b"{}"),
    ("/prompt", "context is text", dumps({"context": "u-ana"})),
    ("/prompt", "a number for a user", dumps({"context": {"user_id": 5}})),
    ("/prompt", "an absurd user id", dumps({"context": {"user_id": "u" * 10_000}})),
    (
        "/tools/remember",
        "fact is a number",
        dumps({"context": {"user_id": "u-new"}, "arguments": {"fact": 5}}),
    ),
    (
        "/tools/remember",
        "arguments an array",
        dumps({"context": {"user_id": "u-new"}, "arguments": []}),
    ),
    (
        "/tools/remember",
        "a fact too long",
        dumps({"context": {"user_id": "u-new"}, "arguments": {"fact": "x" * 200_000}}),
    ),
    (
        "/tools/remember",
        "huge",
        dumps({"context": {"user_id": "u-new"}, "arguments": {"fact": "y" * 600_000}}),
    ),
    (
        "/tools/forget",
        "nothing to forget",
        dumps({"context": {"user_id": "u-new"}, "arguments": {}}),
    ),
    (
        "/exchanges",
        "no key",
        dumps(
            {
                "context": {"device_id": "d-new"},
                "conversation_id": "c",
                "user_text": "a",
                "reply": "b",
                "at": "2026-11-28T20:00:00Z",
            }
        ),
    ),
    (
        "/exchanges",
        "a bad time",
        dumps(
            {
                "context": {"device_id": "d-new"},
                "key": "k",
                "conversation_id": "c",
                "user_text": "a",
                "reply": "b",
                "at": "Tuesday",
            }
        ),
    ),
    *[
        (
            "/exchanges",
            f"a time outside the calendar in UTC ({said})",
            dumps(
                {
                    "context": {"device_id": "d-new"},
                    "key": "k",
                    "conversation_id": "c",
                    "user_text": "a",
                    "reply": "b",
                    "at": said,
                }
            ),
        )
        for said in ("0001-01-01T00:00+14:00", "9999-12-31T23:59:59-14:00")
    ],
    (
        "/exchanges",
        "a key too long",
        dumps(
            {
                "context": {"device_id": "d-new"},
                "key": "k" * 201,
                "conversation_id": "c",
                "user_text": "a",
                "reply": "b",
                "at": "2026-11-28T20:00:00Z",
            }
        ),
    ),
]


def test_bad_bodies_get_400_with_a_clear_message_and_write_nothing(home: Home) -> None:
    before = home.files()
    for path, what, body in BAD_BODIES:
        answer = home.api.raw(path, body)
        assert answer.status_code == 400, (what, answer.text)
        got = answer.json()
        assert got["error"]["code"] == "bad_request", what
        assert got["api"] == 1 and len(got["error"]["message"]) > 20, what
    plain = home.api.raw("/prompt", dumps({"context": {}}), content_type="text/plain")
    assert plain.status_code == 400 and "application/json" in plain.json()["error"]["message"]
    assert home.files() == before


def test_unknown_tools_and_versions_are_named(home: Home) -> None:
    tool = home.api.post("/tools/delete_everything", {"context": {}, "arguments": {}})
    assert tool.status_code == 404 and tool.json()["error"]["code"] == "bad_request"
    v2 = httpx.get(home.served.base + "/api/assist/v2/info")
    assert v2.status_code == 404
    assert v2.json()["error"]["code"] == "api_version" and v2.json()["supported"] == [1]
    info = httpx.get(home.served.base + V1 + "/info").json()
    assert info == {
        "api": 1,
        "addon_version": __version__,
        "service": "memory_curator",
        "supported": [1],
    }


def test_a_caller_neither_trusted_nor_with_the_token_gets_401_json(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with dashboard(data, MEMORY_MCP_TRUSTED="10.9.9.9", MEMORY_MCP_TOKEN=TOKEN) as served:
        for headers in ({}, {"Authorization": "Bearer wrong-token-wrong-token-wrong"}):
            answer = httpx.post(served.base + V1 + "/prompt", json={"context": {}}, headers=headers)
            assert answer.status_code == 401
            assert answer.json()["error"]["code"] == "unauthorized"
        with_token = AssistClient(served.base, token=TOKEN)
        assert with_token.prompt(context())["speaker"]["scope"] == "household"
        with_token.close()
    assert not (data / "people.json").exists() or "u-" not in (data / "people.json").read_text()


# ------------------------------------------------------------------ exchanges
def _threads(settings: Settings, conversation_id: str) -> list[Any]:
    return ConversationStore.from_settings(settings).get_history(conversation_id)


def test_an_exchange_sent_twice_is_stored_once_even_across_a_restart(home: Home) -> None:
    ana = context("u-ana", device_id="dev-1", conversation_id="conv-1")
    assert home.api.exchange(ana, "key-1", "conv-1", "I moved to Lisbon.")["stored"] is True
    twice = home.api.exchange(ana, "key-1", "conv-1", "I moved to Lisbon.")
    assert (twice["stored"], twice["duplicate"]) == (False, True)
    turns = _threads(home.settings, "conv-1")
    assert [(t.role, t.content) for t in turns] == [
        ("user", "I moved to Lisbon."),
        ("assistant", "Noted."),
    ]
    assert turns[0].person == home.ana.id
    nobody = home.api.exchange(context("u-stranger"), "key-2", "conv-2", "Hello.")
    assert nobody["stored"] and _threads(home.settings, "conv-2")[0].person is None
    home.served.process.terminate()
    home.served.process.wait(timeout=20)
    with dashboard(home.settings.data_dir) as again:
        client = AssistClient(again.base)
        after = client.exchange(ana, "key-1", "conv-1", "I moved to Lisbon.")
        client.close()
    assert after == {"api": 1, "addon_version": __version__, "stored": False, "duplicate": True}
    assert len(_threads(home.settings, "conv-1")) == 2
    keys = json.loads((home.settings.data_dir / "assist-exchanges.json").read_text())
    assert keys["key-1"]["device"] == "dev-1" and keys["key-1"]["agent"] == "conversation.ollama"


def test_two_servers_racing_one_key_store_it_once(home: Home) -> None:
    with dashboard(home.settings.data_dir) as other:
        clients = [AssistClient(home.served.base), AssistClient(other.base)]
        answers: list[Any] = []
        for round_ in range(8):
            start = threading.Barrier(4)

            def send(client: AssistClient, key: str, start: threading.Barrier) -> None:
                start.wait()
                answers.append(client.exchange(context(), key, key, "Hi."))

            threads = [
                threading.Thread(target=send, args=(c, f"race-{round_}", start))
                for c in clients * 2
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        for client in clients:
            client.close()
    assert sum(1 for a in answers if a["stored"]) == 8
    for round_ in range(8):
        assert len(_threads(home.settings, f"race-{round_}")) == 2, round_


def test_with_mcp_settings_that_cannot_be_used_the_api_says_which(tmp_path: Path) -> None:
    with dashboard(tmp_path / "data", MEMORY_MCP_TOKEN="short") as served:
        answer = httpx.get(served.base + V1 + "/info", timeout=30)
        assert served.get("/healthz")[0] == 200
    assert answer.status_code == 503
    assert answer.json()["error"]["code"] == "unavailable"
    assert "MEMORY_MCP_TOKEN" in answer.json()["error"]["message"]


def test_a_damaged_people_file_is_answered_in_json_and_left_as_it_is(home: Home) -> None:
    damaged = b'{"people": {"x": '
    people = home.settings.data_dir / "people.json"
    people.write_bytes(damaged)
    answer = home.api.post("/prompt", {"context": context("u-ana")})
    assert answer.status_code == 500
    assert answer.json()["error"]["code"].startswith("store_corrupt")
    assert "repair" in answer.json()["error"]["message"]
    assert people.read_bytes() == damaged


def test_an_exchange_time_is_read_as_the_files_read_it(home: Home) -> None:
    """``at`` is read by the one ISO 8601 reader (``language.moments.iso_time``): a lower-case
    "z" or spaces around the time are the time the files would read (400 before); a time
    without its zone is still refused, and nothing is stored for it."""
    ana = context("u-ana", device_id="dev-1", conversation_id="conv-z")

    def send(key: str, said: str) -> httpx.Response:
        body = {
            "key": key,
            "conversation_id": "conv-z",
            "user_text": f"Said at {said}.",
            "reply": "Noted.",
            "at": said,
            "context": ana,
        }
        return home.api.post("/exchanges", body)

    for key, said in (("z-1", " 2026-11-28T20:04:16z "), ("z-2", "2026-11-28T20:05:16.5Z")):
        answer = send(key, said)
        assert answer.status_code == 200 and answer.json()["stored"] is True, answer.text
    said_at = [t.timestamp for t in _threads(home.settings, "conv-z") if t.role == "user"]
    assert said_at == [read_time("2026-11-28T20:04:16Z"), read_time("2026-11-28T20:05:16.5Z")]
    before = home.files()
    naive = send("z-3", "2026-11-28T20:06:16")
    assert naive.status_code == 400 and "time zone" in naive.json()["error"]["message"]
    assert home.files() == before
