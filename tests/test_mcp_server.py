"""The manage_memory MCP server, driven as a real subprocess through the SDK's own stdio client.

One server process serves the whole module (start-up costs about a second); before each
test the memory file is emptied through a dashboard-side MemoryStore, so the tests stay
independent while the server keeps its one store and must notice every outside change.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import filelock
import pytest
from anyio.from_thread import start_blocking_portal

from tests.support.data import on_disk
from tests.support.mcp_stdio import MAX_CHARS, MAX_ITEMS, McpClient, RawServer, connect
from tests.support.review import approve
from tests.support.stores import memory_store
from webapp.mcp.tool import ACTIONS, TOOL_NAME
from webapp.stores import CATEGORIES, MemoryStore, Proposal, ReviewQueue

REPO = Path(__file__).resolve().parent.parent
ID = re.compile(r"\[([0-9a-f]+)\]")


@pytest.fixture(scope="module")
def server_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-data")


@pytest.fixture(scope="module")
def client(server_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpClient]:
    errlog_path = tmp_path_factory.mktemp("mcp-log") / "server-stderr.txt"
    with open(errlog_path, "w+", encoding="utf-8") as errlog:
        with start_blocking_portal(backend="asyncio") as portal:
            with portal.wrap_async_context_manager(connect(server_dir, errlog)) as session:
                yield McpClient(portal, session)
        errlog.seek(0)
        stderr = errlog.read()
    # The server logs tracebacks only for failures it did not foresee.
    assert "Traceback" not in stderr, stderr


@pytest.fixture
def memory_file(server_dir: Path) -> Path:
    return server_dir / "memories.json"


@pytest.fixture
def dashboard(memory_file: Path) -> MemoryStore:
    """The store as the web dashboard in another process would open it."""
    return memory_store(memory_file, max_items=MAX_ITEMS, max_chars=MAX_CHARS, actor="dashboard")


@pytest.fixture(autouse=True)
def empty_store(client: McpClient, dashboard: MemoryStore, memory_file: Path) -> None:
    """Each test starts from an empty, well-formed memory file."""
    if memory_file.exists():
        try:
            json.loads(memory_file.read_bytes())
        except ValueError:
            memory_file.write_bytes(b"[]\n")
    dashboard.init()  # the first test of a worker may run before anything created the file
    dashboard.delete_many([m.id for m in dashboard.get_all()])


def added_id(text: str) -> str:
    assert text.startswith("Added ["), text
    return ID.search(text).group(1)


# ------------------------------------------------------------------ the tool as announced
def test_lists_manage_memory_with_a_precise_schema(client: McpClient) -> None:
    tools = client.list_tools().tools
    assert [tool.name for tool in tools] == ["manage_memory", "review_memory", "recall"]
    assert tools[0].annotations.read_only_hint is False
    schema = tools[0].input_schema
    assert schema["type"] == "object"
    assert schema["required"] == ["action"]
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {
        "action",
        "content",
        "category",
        "id",
        "keyword",
        "person",
        "confirm_secret",
        "confirm_similar",
    }
    assert schema["properties"]["action"]["enum"] == list(ACTIONS)
    assert schema["properties"]["category"]["enum"] == list(CATEGORIES)
    assert schema["properties"]["confirm_secret"]["type"] == "boolean"
    assert all(
        prop["type"] == "string"
        for name, prop in schema["properties"].items()
        if name not in ("confirm_secret", "confirm_similar")
    )
    assert schema["properties"]["confirm_similar"]["type"] == "boolean"


def test_description_tells_the_model_what_to_remember(client: McpClient) -> None:
    description = client.list_tools().tools[0].description
    for guidance in (
        "durable",
        "long-term",
        "not store one-off requests",
        "secrets",
        "Search before adding",
        "update that memory",
    ):
        assert guidance in description
    for action in ACTIONS:
        assert f"- {action}:" in description


# ------------------------------------------------------------------ secrets
def test_adding_a_secret_is_refused_with_its_code_until_confirmed(
    client: McpClient, memory_file: Path
) -> None:
    text = client.error(action="add", content="The garage door code is 4821")
    assert text.startswith("Refused (memory_secret):")
    assert "The garage door code is ••••" in text and "4821" not in text
    assert '"confirm_secret": true' in text
    assert "Has a garage door code (not kept in memory)." in text
    assert on_disk(memory_file) == []
    added = client.ok(action="add", content="The garage door code is 4821", confirm_secret=True)
    assert added.startswith("Added [")
    assert [r["content"] for r in on_disk(memory_file)] == ["The garage door code is 4821"]


def test_updating_a_memory_to_hold_a_secret_is_refused_until_confirmed(
    client: McpClient, dashboard: MemoryStore
) -> None:
    memory = dashboard.add("Has a Wi-Fi password.")
    text = client.error(action="update", id=memory.id, content="Wi-Fi password: tulip-Rocket-88")
    assert text.startswith("Refused (memory_secret):") and "tulip-Rocket-88" not in text
    assert dashboard.get(memory.id).content == "Has a Wi-Fi password."
    client.ok(
        action="update",
        id=memory.id,
        content="Wi-Fi password: tulip-Rocket-88",
        confirm_secret=True,
    )
    assert dashboard.get(memory.id).content == "Wi-Fi password: tulip-Rocket-88"


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_confirm_secret_must_be_true_or_false(client: McpClient, value: Any) -> None:
    arguments = {"action": "add", "content": "PIN 0917", "confirm_secret": value}
    if value is None:
        assert client.error(**arguments).startswith("Refused (memory_secret):")
    else:
        assert 'The argument "confirm_secret" must be true or false' in client.error(**arguments)


# ------------------------------------------------------------------ each action
def test_add_writes_the_file_and_the_dashboard_sees_it(
    client: McpClient, dashboard: MemoryStore, memory_file: Path
) -> None:
    text = client.ok(
        action="add", content="  Calls the living-room lamp 'Luna'.  ", category="tool"
    )
    memory_id = added_id(text)
    assert text.splitlines() == [
        f"Added [{memory_id}] (tool) Calls the living-room lamp 'Luna'.",
        f"Memory use: 1/{MAX_ITEMS} items, 34/{MAX_CHARS} chars.",
    ]
    [record] = on_disk(memory_file)
    assert record["id"] == memory_id
    assert record["content"] == "Calls the living-room lamp 'Luna'."
    assert record["category"] == "tool"
    assert record["source"] == "mcp"
    assert record["createdAt"].endswith("Z")
    assert dashboard.get(memory_id).content == "Calls the living-room lamp 'Luna'."
    [entry] = dashboard.history(memory_id)
    assert (entry["actor"], entry["action"]) == ("mcp", "add")


def test_add_without_a_category_files_it_under_general(
    client: McpClient, memory_file: Path
) -> None:
    memory_id = added_id(client.ok(action="add", content="Has a cat named Miso."))
    [record] = on_disk(memory_file)
    assert record["category"] == "general"
    assert f"[{memory_id}] (general) Has a cat named Miso." in client.ok(action="list")


def test_adding_the_same_fact_twice_keeps_one_copy(client: McpClient, memory_file: Path) -> None:
    memory_id = added_id(client.ok(action="add", content="Wakes up at 6:30 on weekdays."))
    again = client.ok(action="add", content="wakes up at 6:30 on weekdays.  ")
    assert again.startswith(f"Already remembered: [{memory_id}]")
    assert [r["id"] for r in on_disk(memory_file)] == [memory_id]


def test_list_shows_ids_categories_and_usage(client: McpClient, dashboard: MemoryStore) -> None:
    assert client.ok(action="list") == (
        f"No memories yet.\nMemory use: 0/{MAX_ITEMS} items, 0/{MAX_CHARS} chars."
    )
    first = dashboard.add("Prefers metric units.", category="preference")
    second = dashboard.add("喜歡喝綠茶", category="preference")
    chars = len(first.content) + len(second.content)
    assert client.ok(action="list").splitlines() == [
        "2 memories:",
        f"[{first.id}] (preference) Prefers metric units. — origin not recorded",
        f"[{second.id}] (preference) 喜歡喝綠茶 — origin not recorded",
        f"Memory use: 2/{MAX_ITEMS} items, {chars}/{MAX_CHARS} chars.",
    ]


@pytest.mark.parametrize(
    ("keyword", "expected"),
    [
        ("GREEN TEA", ["Likes green tea in the morning."]),
        ("綠茶", ["喜歡喝綠茶", "晚上不喝绿茶"]),  # traditional and simplified find each other
        ("绿茶", ["喜歡喝綠茶", "晚上不喝绿茶"]),
        ("喜欢", ["喜歡喝綠茶"]),
        ("不喝綠", ["晚上不喝绿茶"]),
        ("茶", ["喜歡喝綠茶", "晚上不喝绿茶"]),
        ("coffee", []),
    ],
)
def test_search_finds_memories_containing_the_keyword(
    client: McpClient, dashboard: MemoryStore, keyword: str, expected: list[str]
) -> None:
    stored = {
        m.content: m
        for m in (
            dashboard.add(text, category="preference")
            for text in ("Likes green tea in the morning.", "喜歡喝綠茶", "晚上不喝绿茶")
        )
    }
    text = client.ok(action="search", keyword=keyword)
    if not expected:
        assert text == f'No memory contains "{keyword}".'
        return
    lines = text.splitlines()
    noun = "memory contains" if len(expected) == 1 else "memories contain"
    assert lines[0] == f'{len(expected)} {noun} "{keyword}":'
    assert lines[1:] == [
        f"[{stored[c].id}] (preference) {c} — origin not recorded" for c in expected
    ]


def test_search_matches_every_word_in_any_order(client: McpClient, dashboard: MemoryStore) -> None:
    both = dashboard.add("Drinks coffee in the morning, green tea after lunch.")
    dashboard.add("Prefers green tea.")
    chinese = dashboard.add("早上喝咖啡，下午喝綠茶")
    text = client.ok(action="search", keyword="tea coffee")
    assert text.splitlines()[1:] == [f"[{both.id}] (general) {both.content} — origin not recorded"]
    assert f"[{chinese.id}]" in client.ok(action="search", keyword="绿茶 咖啡")


def test_update_changes_content_and_category(
    client: McpClient, dashboard: MemoryStore, memory_file: Path
) -> None:
    memory = dashboard.add("Likes green tea.", category="general")
    text = client.ok(
        action="update",
        id=f"[{memory.id}]",
        content="Prefers black tea now.",
        category="preference",
    )
    assert text.splitlines()[:2] == [
        f"Updated [{memory.id}] (preference) Prefers black tea now.",
        "(was: Likes green tea.)",
    ]
    [record] = on_disk(memory_file)
    assert (record["content"], record["category"]) == ("Prefers black tea now.", "preference")
    assert record["createdAt"] == memory.to_dict()["createdAt"]
    assert dashboard.get(memory.id).content == "Prefers black tea now."
    entry = dashboard.history(memory.id)[-1]
    assert (entry["actor"], entry["action"]) == ("mcp", "update")
    assert entry["before"]["content"] == "Likes green tea."
    assert entry["after"]["content"] == "Prefers black tea now."


def test_update_to_the_same_text_changes_nothing(
    client: McpClient, dashboard: MemoryStore, memory_file: Path
) -> None:
    memory = dashboard.add("Works from home on Fridays.", category="workflow")
    before = memory_file.read_bytes()
    text = client.ok(action="update", id=memory.id, content="Works from home on Fridays.")
    assert (
        text
        == f"No change: [{memory.id}] (workflow) Works from home on Fridays. already says that."
    )
    assert memory_file.read_bytes() == before
    assert [e["actor"] for e in dashboard.history(memory.id)] == ["dashboard"]


def test_delete_removes_it_from_the_file(
    client: McpClient, dashboard: MemoryStore, memory_file: Path
) -> None:
    keep = dashboard.add("Speaks Dutch and English.")
    gone = dashboard.add("Is planning a trip to Kyoto.", category="project")
    text = client.ok(action="delete", id=gone.id)
    assert text.splitlines()[0] == f"Deleted [{gone.id}] (project) Is planning a trip to Kyoto."
    assert [r["id"] for r in on_disk(memory_file)] == [keep.id]
    assert dashboard.get(gone.id) is None
    entry = dashboard.history(gone.id)[-1]
    assert (entry["actor"], entry["action"]) == ("mcp", "delete")
    assert gone.id not in client.ok(action="list")


def test_a_memory_deleted_through_the_tool_is_remembered_as_forgotten_by_mcp(
    client: McpClient, dashboard: MemoryStore
) -> None:
    from webapp.stores.tombstones import TombstoneStore

    gone = dashboard.add("Is allergic to walnuts.")
    client.ok(action="delete", id=gone.id)
    tombstone = TombstoneStore.beside(dashboard).for_memory(gone.id)
    assert tombstone is not None
    assert (tombstone.content, tombstone.deleted_by, tombstone.via) == (
        "Is allergic to walnuts.",
        "mcp",
        "mcp",
    )


def test_sees_changes_the_dashboard_makes(client: McpClient, dashboard: MemoryStore) -> None:
    memory = dashboard.add("Calls the bedroom heater 'Toasty'.", category="tool")
    assert "Toasty" in client.ok(action="search", keyword="heater")
    dashboard.update(memory.id, "Calls the bedroom heater 'Blaze'.")
    assert f"[{memory.id}] (tool) Calls the bedroom heater 'Blaze'." in client.ok(
        action="search", keyword="heater"
    )
    dashboard.delete(memory.id)
    assert client.ok(action="search", keyword="heater") == 'No memory contains "heater".'


def test_hostile_text_is_stored_as_plain_text(client: McpClient, memory_file: Path) -> None:
    content = '<script>alert(1)</script> ../../etc/passwd "quotes" & ampersands'
    memory_id = added_id(client.ok(action="add", content=content))
    assert on_disk(memory_file)[0]["content"] == content
    assert f"[{memory_id}] (general) {content}" in client.ok(action="list")


# ------------------------------------------------------------------ review_memory
@pytest.fixture
def review_queue(server_dir: Path, dashboard: MemoryStore) -> Iterator[ReviewQueue]:
    queue = ReviewQueue(server_dir / "review.json", dashboard, lock_timeout=5)
    yield queue
    (server_dir / "review.json").unlink(missing_ok=True)


def test_list_and_search_say_where_each_memory_came_from(
    client: McpClient, dashboard: MemoryStore, review_queue: ReviewQueue
) -> None:
    client.ok(action="add", content="Calls the hallway lamp 'Nova'.")
    typed = dashboard.add("Hallway lamp at 30% after 22:00.", source="dashboard")
    old = dashboard.add("Hallway plant needs water.", source="slack")
    [item] = review_queue.submit(
        [Proposal("add", "Hallway door stays locked.", extractor="llm", model="openai/gpt-x")],
        conversation_id="slack:C1:1.2",
    )
    extracted = dashboard.get(approve(review_queue, item.id, actor="alice").applied_memory_id)
    told = next(m for m in dashboard.get_all() if "Nova" in m.content)
    expected = [
        f"[{told.id}] (general) {told.content} — told through manage_memory",
        f"[{typed.id}] (general) {typed.content} — typed in the dashboard",
        f"[{old.id}] (general) {old.content} — source: slack",
        f"[{extracted.id}] (general) {extracted.content} — extracted by LLM openai/gpt-x "
        f"from conversation slack:C1:1.2, approved by alice",
    ]
    assert client.ok(action="list").splitlines()[1:-1] == expected
    assert client.ok(action="search", keyword="hallway").splitlines()[1:] == expected


def test_review_memory_is_read_only_and_takes_no_arguments(client: McpClient) -> None:
    review = {tool.name: tool for tool in client.list_tools().tools}["review_memory"]
    assert review.annotations.read_only_hint is True
    assert review.input_schema == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


def test_review_memory_lists_pending_facts(
    client: McpClient, dashboard: MemoryStore, review_queue: ReviewQueue
) -> None:
    assert client.ok(name="review_memory") == "No facts wait for review."
    lamp = dashboard.add("Calls the desk lamp 'Lamp'.", category="tool")
    tea, rename, dropped = review_queue.submit(
        [
            Proposal("add", "喜歡喝綠茶", category="preference", confidence=0.9, extractor="llm"),
            Proposal(
                "update",
                "Calls the desk lamp 'Luna'.",
                category="tool",
                memory_id=lamp.id,
                current_content=lamp.content,
                confidence=0.75,
                extractor="llm",
            ),
            Proposal("add", "Is tired today.", extractor="regex"),
        ]
    )
    review_queue.reject(dropped.id)
    lines = client.ok(name="review_memory").splitlines()
    assert lines[0] == "2 facts wait for review (the user decides in the dashboard):"
    assert sorted(lines[1:]) == sorted(
        [
            f"[{tea.id}] add (preference) 喜歡喝綠茶 (confidence 0.90)",
            f"[{rename.id}] update [{lamp.id}] (tool) Calls the desk lamp 'Luna'. "
            f"(now: Calls the desk lamp 'Lamp'.) (confidence 0.75)",
        ]
    )
    assert dashboard.get(lamp.id).content == "Calls the desk lamp 'Lamp'."


def test_review_memory_reports_a_damaged_review_file(
    client: McpClient, server_dir: Path, review_queue: ReviewQueue
) -> None:
    (server_dir / "review.json").write_bytes(b"{not json")
    assert f"The store file {server_dir / 'review.json'} is damaged" in client.error(
        name="review_memory"
    )
    assert (server_dir / "review.json").read_bytes() == b"{not json"


# ------------------------------------------------------------------ errors the model can act on
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, 'The argument "action" is required'),
        ({"action": "remember"}, 'Unknown action "remember"; use one of add, list, search'),
        ({"action": "add"}, 'The action "add" needs the argument "content"'),
        ({"action": "add", "content": "   "}, "Memory content cannot be empty."),
        ({"action": "add", "content": "a\x00b"}, "cannot contain NUL"),
        (
            {"action": "add", "content": "x", "category": "secret"},
            'Unknown category "secret"; use one of preference, project, workflow',
        ),
        ({"action": "add", "content": 42}, 'The argument "content" must be a string'),
        ({"action": "add", "text": "Likes tea"}, "Unknown argument(s): text."),
        ({"action": "search"}, 'The action "search" needs the argument "keyword"'),
        ({"action": "search", "keyword": "  "}, "The keyword is empty"),
        ({"action": "update", "content": "x"}, 'The action "update" needs the argument "id"'),
        ({"action": "update", "id": "abc"}, 'The action "update" needs the argument "content"'),
        ({"action": "delete"}, 'The action "delete" needs the argument "id"'),
        ({"action": "add", "content": "mojibake \ufffd\ufffd"}, "was not valid UTF-8"),
    ],
)
def test_bad_arguments_are_tool_errors(
    client: McpClient, memory_file: Path, arguments: dict[str, Any], message: str
) -> None:
    assert message in client.error(**arguments)
    assert on_disk(memory_file) == []


@pytest.mark.parametrize("action", ["update", "delete"])
def test_unknown_id_is_a_tool_error(client: McpClient, dashboard: MemoryStore, action: str) -> None:
    dashboard.add("Has two kids.")
    text = client.error(action=action, id="feedfacecafe", content="Has three kids.")
    assert text == (
        'No memory has the id "feedfacecafe". Use the action "list" or "search" '
        "to find the right id."
    )
    assert [m.content for m in dashboard.get_all()] == ["Has two kids."]


def test_unknown_tool_is_a_tool_error(client: McpClient) -> None:
    is_error, text = client.call("forget_everything", action="list")
    assert is_error and 'Unknown tool "forget_everything"' in text


def test_full_memory_says_how_full_and_what_to_do(
    client: McpClient, dashboard: MemoryStore, memory_file: Path
) -> None:
    for number in range(MAX_ITEMS):
        dashboard.add(f"Fact number {number}.")
    before = memory_file.read_bytes()
    text = client.error(action="add", content="One fact too many.")
    assert f"{MAX_ITEMS} of {MAX_ITEMS} memories are used" in text
    assert '"delete" or "update"' in text
    assert memory_file.read_bytes() == before


def test_too_many_characters_is_a_full_memory_error(
    client: McpClient, dashboard: MemoryStore, memory_file: Path
) -> None:
    dashboard.add("Short fact.")
    # Longer than the whole store may hold: refused as every door refuses it (too long).
    text = client.error(action="add", content="x" * 100_000)
    assert f"This is 100,000 characters; one memory can hold at most {MAX_CHARS}" in text
    assert "Now 0/0" not in text  # no made-up usage figures
    text = client.error(action="add", content="y" * (MAX_CHARS - 5))
    assert f"11 of {MAX_CHARS} characters are used and this needs {MAX_CHARS - 5} more" in text
    assert [r["content"] for r in on_disk(memory_file)] == ["Short fact."]


def test_corrupt_file_is_a_tool_error_and_left_untouched(
    client: McpClient, memory_file: Path
) -> None:
    damaged = b'[{"id": "a1", "content": "Likes tea"'
    memory_file.write_bytes(damaged)
    for arguments in (
        {"action": "list"},
        {"action": "search", "keyword": "tea"},
        {"action": "add", "content": "Likes coffee."},
    ):
        text = client.error(**arguments)
        assert f"The store file {memory_file} is damaged" in text
        assert "memory-curator repair" in text
    assert memory_file.read_bytes() == damaged
    memory_file.write_bytes(b"[]\n")  # repaired by a person: the same server carries on
    assert added_id(client.ok(action="add", content="Likes coffee."))


def test_busy_lock_is_a_tool_error_and_reads_still_work(
    client: McpClient, dashboard: MemoryStore, memory_file: Path
) -> None:
    memory = dashboard.add("Goes running on Sundays.", category="workflow")
    before = memory_file.read_bytes()
    with filelock.FileLock(f"{memory_file}.lock", timeout=0):
        text = client.error(action="add", content="Likes jazz.")
        assert f"The store file {memory_file} is busy" in text
        assert "retry" in text
        assert "busy" in client.error(action="delete", id=memory.id)
        assert f"[{memory.id}]" in client.ok(action="list")
    assert memory_file.read_bytes() == before
    added_id(client.ok(action="add", content="Likes jazz."))
    assert len(on_disk(memory_file)) == 2


def test_other_commands_do_not_load_the_mcp_sdk() -> None:
    """Only `memory-curator mcp` pays for importing the SDK."""
    probe = (
        "import sys, webapp.cli; print(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_garbage_on_the_wire_never_stops_the_server(tmp_path: Path) -> None:
    """Raw JSON-RPC lines the SDK client would refuse to send: the server answers what it can."""
    with RawServer(tmp_path) as server:
        server.send(_call(2, {"action": "add", "content": "x"}).replace(b'"x"', b'"bad \xff\xfe"'))
        server.send(b"this is not JSON")
        server.send(_call(3, {"action": "add", "content": "x"}).replace(b'"x"', b'"\\ud800"'))
        server.send(_call(4, "not an object"))
        server.send(_call(5, {"action": "list"}))
        answers = server.answers_until(5)
    invalid_utf8 = answers[2]["result"]
    assert invalid_utf8["isError"] is True
    assert "was not valid UTF-8" in invalid_utf8["content"][0]["text"]
    assert "error" in answers[4] or answers[4]["result"]["isError"] is True
    assert answers[5]["result"]["content"][0]["text"].startswith("No memories yet.")
    assert not (tmp_path / "memories.json").exists()
    assert server.returncode == 0


def _call(request_id: int, arguments: Any) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": TOOL_NAME, "arguments": arguments},
        }
    ).encode()


def test_review_memory_says_which_pending_fact_the_user_deleted_before(
    client: McpClient, dashboard: MemoryStore, review_queue: ReviewQueue
) -> None:
    from webapp.curator import Curator
    from webapp.settings import Settings
    from webapp.stores.tombstones import TombstoneStore

    gone = dashboard.add("Likes jasmine tea.")
    curator = Curator(Settings().with_data_dir(dashboard.path.parent), via="dashboard")
    curator.forget(gone.id, actor="alice")
    tombstone = TombstoneStore.beside(dashboard).for_memory(gone.id)
    [item] = review_queue.submit(
        [Proposal("add", "Enjoys jasmine tea.", tombstone_id=tombstone.id)]
    )
    assert client.ok(name="review_memory").splitlines()[1:] == [
        f"[{item.id}] add (general) Enjoys jasmine tea. (the user deleted this fact before)"
    ]
