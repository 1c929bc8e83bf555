"""MCP over HTTP, driven by the MCP Python SDK's own clients (streamable HTTP and SSE) against
``memory-curator serve`` started as a real process on 127.0.0.1: the tools as stdio serves
them, recall's block exactly as a prompt carries it, who may call, and the dashboard kept
serving through a flood of calls."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import filelock
import httpx2
import pytest

from tests.support.auth import TOKEN
from tests.support.mcp_http import Dashboard, call_tool, dashboard, session
from webapp.mcp.http import REQUEST_SLOTS
from webapp.prompts import compose_prompt, for_person
from webapp.stores import MemoryStore, PeopleStore

ID = re.compile(r"\[([0-9a-f]{6,})\]")
TRANSPORTS = ["streamable-http", "sse"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    data = tmp_path_factory.mktemp("mcp-http-data")
    # this machine trusted by name, as Home Assistant is in the add-on: exempt from the
    # server's share of connections per address, so a flood meets MCP's own bound
    with dashboard(
        data, MEMORY_MCP_TOKEN=TOKEN, MEMORY_LOCK_TIMEOUT="3", MEMORY_MCP_TRUSTED="127.0.0.0/8,::1"
    ) as running:
        yield running


@pytest.fixture
def store(served: Dashboard) -> Iterator[MemoryStore]:
    """The dashboard's memory file through the library, emptied before each test."""
    memories = MemoryStore(served.data_dir / "memories.json", lock_timeout=5)
    memories.init()
    memories.delete_many([m.id for m in memories.get_all()])
    yield memories


def url(served: Dashboard, transport: str) -> str:
    return served.sse_url if transport == "sse" else served.mcp_url


def post(served: Dashboard, body: dict[str, Any], **headers: str) -> httpx2.Response:
    """One raw JSON-RPC request to /mcp, as any HTTP client sends it."""
    return httpx2.post(
        served.mcp_url,
        json=body,
        headers={"Accept": "application/json, text/event-stream", **headers},
        timeout=30,
    )


ADD_CALL = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "tools/call",
    "params": {"name": "manage_memory", "arguments": {"action": "add", "content": "Owns a boat."}},
}


# ------------------------------------------------------------------ the tools, as announced
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_lists_the_stdio_tools_with_their_annotations(served: Dashboard, transport: str) -> None:
    async def listed() -> Any:
        async with session(url(served, transport), sse=transport == "sse") as client:
            return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in anyio.run(listed)}
    assert set(tools) == {"manage_memory", "review_memory", "recall"}
    assert tools["manage_memory"].annotations.destructive_hint is True
    assert tools["manage_memory"].annotations.read_only_hint is False
    for name in ("recall", "review_memory"):
        assert tools[name].annotations.read_only_hint is True, name
    assert "start of" in tools["recall"].description
    assert "personal" in tools["recall"].description


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_add_recall_search_update_delete(
    served: Dashboard, store: MemoryStore, transport: str
) -> None:
    async def scenario() -> list[str]:
        async with session(url(served, transport), sse=transport == "sse") as client:

            async def ok(name: str, **arguments: Any) -> str:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.content[0].text
                return result.content[0].text

            added = await ok("manage_memory", action="add", content="Calls the lamp Lumi.")
            memory_id = ID.search(added).group(1)
            recalled = await ok("recall")
            found = await ok("manage_memory", action="search", keyword="lumi")
            updated = await ok(
                "manage_memory", action="update", id=memory_id, content="Calls the lamp Luna."
            )
            deleted = await ok("manage_memory", action="delete", id=memory_id)
            after = await ok("recall")
            return [added, recalled, found, updated, deleted, after]

    added, recalled, found, updated, deleted, after = anyio.run(scenario)
    assert added.startswith("Added [")
    assert recalled == "<long_term_memory>\n- Calls the lamp Lumi.\n</long_term_memory>"
    assert "Calls the lamp Lumi." in found
    assert "Calls the lamp Luna." in updated and "(was: Calls the lamp Lumi.)" in updated
    assert deleted.startswith("Deleted [")
    assert after == "Nothing is remembered yet."
    assert store.get_all() == []


def test_recall_is_exactly_the_block_a_prompt_carries(
    served: Dashboard, store: MemoryStore
) -> None:
    people = PeopleStore(served.data_dir / "people.json", lock_timeout=5)
    ana = people.find("Ana") or people.add("Ana")
    store.add("Our Wi-Fi is called Lighthouse.")
    store.add("Ana takes her coffee black.", person=ana.id)
    store.add("Leo's secret hobby is chess.", person="someone-else")
    store.add("The bins go out on Tuesday.")
    store.add("Was in Tokyo last week.", expires_at=datetime(2020, 1, 1, tzinfo=UTC))

    def block(person: str | None, query: str = "") -> str:
        memories = store.search(query, person=person) if query else store.get_all()
        return compose_prompt(for_person(memories, person), [], "").rstrip("\n")

    async def recalled(**arguments: str) -> str:
        return (await call_tool(served.mcp_url, "recall", arguments))[1]

    assert anyio.run(lambda: recalled(person="Ana")) == block(ana.id)
    assert "coffee black" in block(ana.id) and "chess" not in block(ana.id)
    assert "Tokyo" not in block(ana.id), "an expired memory is not in a prompt"
    household = anyio.run(lambda: recalled())
    assert household == block(None) and "coffee" not in household
    narrowed = anyio.run(lambda: recalled(person="Ana", query="coffee"))
    assert narrowed == "<long_term_memory>\n- Ana takes her coffee black.\n</long_term_memory>"
    stranger = anyio.run(lambda: recalled(person="Nobody-known"))
    assert stranger.startswith(block(None)) and "coffee" not in stranger


def test_a_persons_view_through_http(served: Dashboard, store: MemoryStore) -> None:
    people = PeopleStore(served.data_dir / "people.json", lock_timeout=5)
    mia = people.find("Mia") or people.add("Mia")

    async def scenario() -> tuple[str, str, str]:
        added = await call_tool(
            served.mcp_url,
            "manage_memory",
            {"action": "add", "content": "Is allergic to cats.", "person": "Mia"},
        )
        theirs = await call_tool(
            served.mcp_url, "manage_memory", {"action": "list", "person": "Mia"}
        )
        household = await call_tool(served.mcp_url, "manage_memory", {"action": "list"})
        return added[1], theirs[1], household[1]

    added, theirs, household = anyio.run(scenario)
    assert "Mia's" in added
    assert "Is allergic to cats." in theirs
    assert "Is allergic to cats." not in household
    [memory] = store.get_all()
    assert memory.person == mia.id


# ------------------------------------------------------------------ who may call
def test_a_wrong_token_is_refused_and_changes_nothing(
    served: Dashboard, store: MemoryStore
) -> None:
    before = (served.data_dir / "memories.json").read_bytes()
    for authorization in ("Bearer not-the-token-at-all-0000", "Basic abc", "Bearer", TOKEN):
        answer = post(served, ADD_CALL, Authorization=authorization)
        assert answer.status_code == 401, authorization
        assert answer.headers["WWW-Authenticate"].startswith("Bearer")
    assert (served.data_dir / "memories.json").read_bytes() == before
    # the SDK's client cannot even initialize with a wrong token
    with pytest.raises(BaseException, match="unhandled errors|error response"):
        anyio.run(lambda: call_tool(served.mcp_url, "recall", {}, token="wrong" * 5))
    assert (served.data_dir / "memories.json").read_bytes() == before


def test_the_right_token_is_let_in(served: Dashboard, store: MemoryStore) -> None:
    answer = post(served, ADD_CALL, Authorization=f"Bearer {TOKEN}")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    assert "Added [" in answer.json()["result"]["content"][0]["text"]
    assert [m.content for m in store.get_all()] == ["Owns a boat."]


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "evil.example"}, 421),  # a name rebound to 127.0.0.1 by a web page
        ({"Host": "evil.example:8099"}, 421),
        ({"Origin": "http://evil.example"}, 403),  # a page in a browser
        ({"Host": "localhost"}, 200),
        ({"Host": "127.0.0.1"}, 200),
    ],
)
def test_token_less_calls_keep_to_our_host_names(
    served: Dashboard, store: MemoryStore, headers: dict[str, str], status: int
) -> None:
    answer = post(served, ADD_CALL, **headers)
    assert answer.status_code == status, answer.text
    assert len(store.get_all()) == (1 if status == 200 else 0)


def test_the_dashboard_answers_through_a_flood_of_calls(
    served: Dashboard, store: MemoryStore
) -> None:
    """Every tool call waits on the memory file's lock (another program holds it); of 48 calls
    at once, the MCP slots take some, as many more wait for one, the rest get a quick 503 (and
    the waiters one after SLOT_WAIT), the log says so, and the dashboard's pages still answer."""
    flood = 48
    lock = filelock.FileLock(str(served.data_dir / "memories.json") + ".lock")
    statuses: list[int] = []
    with lock.acquire(timeout=5):
        with ThreadPoolExecutor(flood) as pool:
            calls = [pool.submit(post, served, ADD_CALL) for _ in range(flood)]
            time.sleep(0.5)
            started = time.monotonic()
            health = served.get("/healthz", timeout=10)[0]
            page = served.get("/memories/", timeout=10)[0]
            took = time.monotonic() - started
            time.sleep(0.5)
            # (the pool waits for every call: those holding a slot give up on the lock)
            answers = [call.result() for call in calls]
    statuses = [answer.status_code for answer in answers]
    assert health == 200 and page == 200
    assert took < 2.0, f"the dashboard took {took:.2f} s during the flood"
    # (a waiter may get a slot a served call gave up, when the lock's 3 s ran out)
    assert statuses.count(503) >= flood - REQUEST_SLOTS.threads, statuses
    assert set(statuses) <= {200, 503}, statuses
    busy = next(answer for answer in answers if answer.status_code == 503)
    assert busy.json()["error"].startswith("Busy:") and busy.headers["Retry-After"] == "1"
    served.wait_for_output("MCP call from 127.0.0.1 refused (503): busy")
    # and once the flood is over, calls are served again
    assert post(served, ADD_CALL).status_code == 200


def test_an_untrusted_address_needs_the_token(tmp_path: Path) -> None:
    """127.0.0.1 is not trusted here (MEMORY_MCP_TRUSTED names another address): without the
    token every call is refused, whatever it asks, and nothing is read or changed."""
    data = tmp_path / "data"
    with dashboard(data, MEMORY_MCP_TRUSTED="10.11.12.13", MEMORY_MCP_TOKEN=TOKEN) as running:
        memories = MemoryStore(data / "memories.json", lock_timeout=5)
        memories.add("Keeps the spare key under the mat.")
        before = (data / "memories.json").read_bytes()
        for body in (ADD_CALL, {**ADD_CALL, "params": {"name": "recall", "arguments": {}}}):
            answer = post(running, body)
            assert answer.status_code == 401
            assert "spare key" not in answer.text
        sse = httpx2.get(running.sse_url, timeout=10)
        assert sse.status_code == 401
        assert (data / "memories.json").read_bytes() == before
        _, text = anyio.run(lambda: call_tool(running.mcp_url, "recall", {}, token=TOKEN))
        assert "spare key" in text


WEAK_MCP_TOKENS = {
    "short": "short  token",
    "one letter 16 times": "a" * 16,
    "16 combining marks": "\u0301" * 16,
}


@pytest.mark.parametrize("token", WEAK_MCP_TOKENS.values(), ids=WEAK_MCP_TOKENS.keys())
def test_a_weak_mcp_token_keeps_the_dashboard_and_turns_mcp_off(tmp_path: Path, token: str) -> None:
    """An install whose MCP token is too weak (as 16 × "a" or 16 combining marks were once
    accepted) keeps its dashboard; MCP over HTTP does not start, and the log names the option."""
    with dashboard(tmp_path / "data", MEMORY_MCP_TOKEN=token) as running:
        assert running.get("/healthz")[0] == 200
        assert running.get("/")[0] == 200
        running.wait_for_output("MCP over HTTP is off")
        assert "MEMORY_MCP_TOKEN (add-on option memory_mcp_token)" in running.output
        assert token not in running.output
        headers = [{}, {"Authorization": f"Bearer {token}"}] if token.isascii() else [{}]
        for authorization in headers:
            answer = post(running, ADD_CALL, **authorization)
            assert answer.status_code == 503
            assert "memory_mcp_token" in answer.json()["error"]
        assert httpx2.get(running.sse_url, timeout=10).status_code == 503
        assert running.process.poll() is None
    assert not MemoryStore(tmp_path / "data" / "memories.json").get_all()


def _bearer(running: Dashboard, token: str) -> int:
    return post(running, ADD_CALL, Authorization=f"Bearer {token}").status_code


def test_the_token_file_is_read_again_when_it_changes(tmp_path: Path) -> None:
    """A rotated token works at once and the old one no longer does; an emptied, removed or
    weak token file lets no token in (trusted addresses still may call)."""
    token_file = tmp_path / "mcp-token"
    token_file.write_text(TOKEN + "\n")
    rotated = "another-long-random-token-9876543210"
    with dashboard(
        tmp_path / "data", MEMORY_MCP_TRUSTED="10.11.12.13", MEMORY_MCP_TOKEN_FILE=str(token_file)
    ) as running:
        _, text = anyio.run(lambda: call_tool(running.mcp_url, "recall", {}, token=TOKEN))
        assert text == "Nothing is remembered yet."
        token_file.write_text(rotated + "\n")  # rewritten in place
        assert _bearer(running, TOKEN) == 401
        assert _bearer(running, rotated) == 200
        _, text = anyio.run(lambda: call_tool(running.mcp_url, "recall", {}, token=rotated))
        assert "Owns a boat" in text  # added with the rotated token, once
        running.wait_for_output("changed; it is used now")
        token_file.write_text("")
        assert _bearer(running, rotated) == 401
        token_file.write_text("a" * 20 + "\n")
        assert _bearer(running, "a" * 20) == 401
        replaced = tmp_path / "mcp-token.new"
        replaced.write_text(TOKEN + "\n")
        replaced.replace(token_file)  # an atomic rotation
        assert _bearer(running, TOKEN) == 200
        token_file.unlink()
        assert _bearer(running, TOKEN) == 401
        for said in ("is empty", "different characters", "is gone"):
            running.wait_for_output(said)
        assert TOKEN not in running.output and rotated not in running.output


def test_a_refused_call_is_logged_with_its_address_and_reason(tmp_path: Path) -> None:
    """Home Assistant's setup ends in "cannot_connect" whatever the server said: the log has
    to say which address was refused and why (never the token it sent), once per address and
    reason however often it knocks."""
    wrong = "a-wrong-token-that-must-never-reach-the-log-0123"
    with dashboard(
        tmp_path / "data", MEMORY_MCP_TRUSTED="10.11.12.13", MEMORY_MCP_TOKEN=TOKEN
    ) as running:
        for _ in range(3):
            assert post(running, ADD_CALL).status_code == 401
        assert post(running, ADD_CALL, Authorization=f"Bearer {wrong}").status_code == 401
        running.wait_for_output("refused (401): its token is wrong")
    line = (
        "MCP call from 127.0.0.1 refused (401): it sent no token and its address is not "
        "trusted (MEMORY_MCP_TRUSTED, the add-on's memory_mcp_trusted: 10.11.12.13/32)"
    )
    assert running.output.count(line) == 1, running.output
    assert wrong not in running.output and TOKEN not in running.output


def test_the_token_can_come_from_a_file(tmp_path: Path) -> None:
    token_file = tmp_path / "mcp-token"
    token_file.write_text(TOKEN + "\n")
    with dashboard(
        tmp_path / "data", MEMORY_MCP_TRUSTED="10.11.12.13", MEMORY_MCP_TOKEN_FILE=str(token_file)
    ) as running:
        _, text = anyio.run(lambda: call_tool(running.mcp_url, "recall", {}, token=TOKEN))
        assert text == "Nothing is remembered yet."


def test_a_default_person_takes_calls_that_name_nobody(tmp_path: Path) -> None:
    data = tmp_path / "data"
    people = PeopleStore(data / "people.json", lock_timeout=5)
    kim = people.add("Kim")
    with dashboard(data, MEMORY_MCP_DEFAULT_PERSON="Kim") as running:
        _, added = anyio.run(
            lambda: call_tool(
                running.mcp_url, "manage_memory", {"action": "add", "content": "Runs at six."}
            )
        )
        assert "Kim's" in added
        [memory] = MemoryStore(data / "memories.json").get_all()
        assert memory.person == kim.id
        _, recalled = anyio.run(lambda: call_tool(running.mcp_url, "recall", {}))
        assert "Runs at six." in recalled


# ------------------------------------------------------------------ Home Assistant's pattern
def test_home_assistants_call_pattern_each_call_under_ten_seconds(tmp_path: Path) -> None:
    """A new session for every call (initialize, list tools, call), from the first after the
    dashboard starts (the similarity model cold), each well inside Home Assistant's 10 s."""
    data = tmp_path / "data"
    timings: list[tuple[str, float]] = []
    with dashboard(data) as running:

        async def one(name: str, arguments: dict[str, Any]) -> str:
            started = time.perf_counter()
            async with session(running.mcp_url) as client:
                await client.list_tools()
                result = await client.call_tool(name, arguments)
            timings.append(
                (f"{name} {arguments.get('action', '')}".strip(), time.perf_counter() - started)
            )
            assert not result.is_error, result.content[0].text
            return result.content[0].text

        async def conversation() -> None:
            await one("recall", {})
            added = await one("manage_memory", {"action": "add", "content": "Feeds the cat at 7."})
            await one("manage_memory", {"action": "search", "keyword": "cat"})
            memory_id = ID.search(added).group(1)
            await one(
                "manage_memory",
                {"action": "update", "id": memory_id, "content": "Feeds the cat at 8."},
            )
            await one("recall", {"query": "cat"})
            await one("manage_memory", {"action": "delete", "id": memory_id})

        anyio.run(conversation)
    print("\nHome Assistant's pattern (new session per call), seconds:")
    for what, seconds in timings:
        print(f"  {what:<24} {seconds:.3f}")
    assert all(seconds < 10 for _, seconds in timings), timings


def test_sse_slots_come_back_when_clients_leave(served: Dashboard, store: MemoryStore) -> None:
    """More SSE sessions one after another than there are stream slots: each is let in."""

    async def sessions() -> list[str]:
        return [(await call_tool(served.sse_url, "recall", {}, sse=True))[1] for _ in range(6)]

    assert anyio.run(sessions) == ["Nothing is remembered yet."] * 6


def test_the_dashboard_is_unchanged_beside_mcp(served: Dashboard) -> None:
    status, page = served.get("/memories/")
    assert status == 200 and b"<html" in page
    assert served.get("/mcp-not-a-route")[0] == 404
    assert served.get("/healthz")[0] == 200


def test_mcp_answers_get_with_405_and_holds_no_slot(served: Dashboard) -> None:
    """Stateless: no stream of the server's own messages. A client that opens one (the
    TypeScript SDK does, after initialize) is told 405 at once, not left holding a thread."""
    for _ in range(6):
        answer = httpx2.get(served.mcp_url, headers={"Accept": "text/event-stream"}, timeout=10)
        assert answer.status_code == 405
        assert answer.headers["Allow"] == "POST"
    assert (
        post(served, {**ADD_CALL, "params": {"name": "recall", "arguments": {}}}).status_code == 200
    )


# ------------------------------------------------------------------ JSON-RPC ids
def raw_post(served: Dashboard, body: str, path: str = "/mcp") -> httpx2.Response:
    """A body sent as it is (NaN is no JSON, so no JSON library writes it)."""
    return httpx2.post(
        served.base + path,
        content=body.encode("utf-8"),
        headers={
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        },
        timeout=30,
    )


def _add_call_with_id(given: str) -> str:
    return (
        '{"jsonrpc": "2.0", "id": ' + given + ', "method": "tools/call", "params": {"name": '
        '"manage_memory", "arguments": {"action": "add", "content": "Owns a boat."}}}'
    )


@pytest.mark.parametrize(
    "given, code",
    [
        ("NaN", -32700),
        ("Infinity", -32700),
        ("-Infinity", -32700),
        ("true", -32600),
        ("false", -32600),
        ('{"a": 1}', -32600),
        ("[1]", -32600),
        ("1.5", -32600),
        ("null", -32600),
    ],
)
def test_an_odd_jsonrpc_id_is_answered_with_an_error_and_id_null(
    served: Dashboard, store: MemoryStore, given: str, code: int
) -> None:
    """These ids were taken for a notification: 202, no answer, and the call still ran."""
    answer = raw_post(served, _add_call_with_id(given))
    assert answer.status_code == 400
    body = answer.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert body["error"]["code"] == code
    assert store.get_all() == []  # nothing ran


def test_an_odd_id_in_an_sse_message_is_answered_too(served: Dashboard) -> None:
    answer = raw_post(served, _add_call_with_id("true"), path="/sse/messages/?session_id=00")
    assert answer.status_code == 400 and answer.json()["error"]["code"] == -32600


@pytest.mark.parametrize("given", ['"call-1"', "0", "-3", "9007199254740993"])
def test_string_and_integer_ids_are_answered_with_their_id(
    served: Dashboard, store: MemoryStore, given: str
) -> None:
    answer = raw_post(served, _add_call_with_id(given))
    assert answer.status_code == 200
    assert answer.json()["id"] == json.loads(given)
    assert [m.content for m in store.get_all()] == ["Owns a boat."]


def test_a_notification_is_still_accepted_without_an_answer(served: Dashboard) -> None:
    answer = raw_post(served, '{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    assert answer.status_code == 202 and answer.content == b""
