"""Hostile JSON-RPC on the MCP server's stdin: every request with an id gets an answer (a
JSON-RPC error or a tool error) and the server keeps serving."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from tests.support.mcp_stdio import RawServer

REPO = Path(__file__).resolve().parent.parent


def call(request_id: int, arguments: str) -> bytes:
    return (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
        f'"params": {{"name": "manage_memory", "arguments": {arguments}}}}}'
    ).encode()


HOSTILE = {
    "lone surrogate in content": call(10, '{"action": "add", "content": "\\ud800"}'),
    "lone surrogate in keyword": call(11, '{"action": "search", "keyword": "x\\udfff"}'),
    "unparsable JSON": b'{"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {',
    "params not an object": b'{"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": [1]}',
    "params a string": b'{"jsonrpc": "2.0", "id": 14, "method": "tools/list", "params": "x"}',
    "arguments 100,000 deep": call(
        15, '{"action": "list", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    ),
    "number over 4300 digits": call(16, '{"action": "list", "x": ' + "9" * 5000 + "}"),
    "invalid UTF-8": call(17, b'{"action": "add", "content": "' + b"\xff\xfe" + b'"}'),
}


@pytest.fixture(scope="module")
def raw_server(tmp_path_factory: pytest.TempPathFactory):
    """One server for every hostile line: each test also shows it still serves after them."""
    with RawServer(tmp_path_factory.mktemp("mcp") / "data") as server:
        yield server


@pytest.mark.parametrize("line", HOSTILE.values(), ids=HOSTILE.keys())
def test_every_hostile_request_gets_an_answer_and_the_server_keeps_serving(raw_server, line):
    request_id = int(line.split(b'"id": ')[1].split(b",")[0])
    raw_server.send(line)
    answer = raw_server.answer()
    assert answer is not None, "no answer: the assistant would hang"
    assert answer["id"] == request_id
    assert "error" in answer or answer["result"]["isError"] is True, answer
    text = json.dumps(answer)
    assert "Traceback" not in text

    raw_server.send(call(99, '{"action": "add", "content": "still here"}'))
    after = raw_server.answer()
    assert after is not None and after["id"] == 99 and not after["result"].get("isError"), after


def test_a_request_without_an_id_that_does_not_parse_is_answered_with_a_null_id(raw_server):
    raw_server.send(b"this is not json at all")
    answer = raw_server.answer()
    assert answer == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": answer["error"]["message"]},
    }
    raw_server.send(b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}')
    assert raw_server.answer()["id"] == 5


def test_the_sdk_client_gets_an_error_for_arguments_nested_too_deep(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "webapp", "mcp", "--data-dir", str(tmp_path / "data")],
        env={},
        cwd=REPO,
    )
    nested: list[Any] = []
    deep = nested
    for _ in range(200):
        deep.append([])
        deep = deep[0]

    async def scenario() -> str:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    with anyio.fail_after(20):
                        with pytest.raises(MCPError, match="nested too deep"):
                            await session.call_tool(
                                "manage_memory", {"action": "list", "x": nested}
                            )
                        added = await session.call_tool(
                            "manage_memory", {"action": "add", "content": "after the bomb"}
                        )
                    return added.content[0].text

    assert anyio.run(scenario).startswith("Added [")


# A request id the server cannot echo: JSON-RPC answers an unusable id with a null one.
UNUSABLE_IDS = {
    "a lone high surrogate": b'{"jsonrpc":"2.0","id":"\\ud800","method":"tools/list"}',
    "a lone low surrogate": b'{"jsonrpc":"2.0","id":"a\\udfff","method":"ping"}',
    "a surrogate behind a good id": b'{"jsonrpc":"2.0","id":12,"id":"\\ud800","method":"tools/list"}',
    "a surrogate in a line cut short": b'{"jsonrpc":"2.0","id":"\\ud800","method":"tools/list",',
    "a surrogate in a depth bomb": b'{"jsonrpc":"2.0","id":"\\ud800","x":'
    + b"[" * 500
    + b"]" * 500,
    "a fraction": b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}',
    "a list": b'{"jsonrpc":"2.0","id":[1],"method":"tools/list"}',
}


@pytest.mark.parametrize("line", UNUSABLE_IDS.values(), ids=UNUSABLE_IDS.keys())
def test_a_request_with_an_unusable_id_is_answered_with_a_null_id(raw_server, line):
    raw_server.send(line)
    answer = raw_server.answer()
    assert answer is not None, "no answer: the server exited or dropped the request"
    assert answer["id"] is None
    assert answer["error"]["code"] in (-32700, -32600), answer

    raw_server.send(b'{"jsonrpc": "2.0", "id": 98, "method": "tools/list"}')
    after = raw_server.answer()
    assert after is not None and after["id"] == 98 and "result" in after, after


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_is_no_json_and_answered_as_a_parse_error(raw_server, constant):
    """Python's json reads NaN, JSON has none: an id of NaN was taken for an unusable id
    (-32600), NaN in the arguments for a number."""
    for line, echoed in (
        (f'{{"jsonrpc":"2.0","id":{constant},"method":"tools/list"}}'.encode(), None),
        (call(19, '{"action": "list", "x": ' + constant + "}"), 19),
    ):
        raw_server.send(line)
        answer = raw_server.answer()
        assert answer is not None, "no answer: the server exited or dropped the request"
        assert answer["id"] == echoed and answer["error"]["code"] == -32700, answer
        assert f"{constant} is not JSON" in answer["error"]["message"]


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":"\\ud800","result":{}}',
        b'{"jsonrpc":"2.0","id":"\\ud800","error":{"code":1,"message":"\\udc00"}}',
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\\ud800"}}',
    ],
    ids=["a response", "an error", "a notification"],
)
def test_a_message_that_wants_no_answer_gets_none_even_when_it_cannot_be_read(raw_server, line):
    raw_server.send(line)
    raw_server.send(b'{"jsonrpc": "2.0", "id": 97, "method": "tools/list"}')
    after = raw_server.answer()
    assert after is not None, "the server exited"
    assert after["id"] == 97 and "result" in after, after


def test_a_line_over_the_size_limit_is_refused_without_holding_it(raw_server):
    """A 64 MB line once took the server to six times that in memory; now it keeps at most
    the limit of it, answers with the request's id and serves on."""
    size = 64 * 1024 * 1024
    peak_before = peak_memory(raw_server.process.pid)
    raw_server.send(
        b'{"jsonrpc": "2.0", "id": 96, "method": "tools/call", "params": {"name": '
        b'"manage_memory", "arguments": {"action": "add", "content": "' + b"a" * size + b'"}}}'
    )
    answer = raw_server.answer(timeout=60)
    assert answer is not None and answer["id"] == 96, answer
    assert answer["error"]["code"] == -32600
    assert "too long" in answer["error"]["message"]
    assert peak_memory(raw_server.process.pid) - peak_before < size / 2

    raw_server.send(call(95, '{"action": "search", "keyword": "aaaa"}'))
    after = raw_server.answer()
    assert after is not None and after["id"] == 95, after
    assert after["result"]["content"][0]["text"] == 'No memory contains "aaaa".'


def peak_memory(pid: int) -> int:
    """The process's peak resident memory in bytes (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc")


@dataclass
class RawLine:
    """A message the SDK client's transport writes exactly as given (it calls
    ``model_dump_json`` on each message): JSON text the client itself would refuse to make."""

    text: str

    def model_dump_json(self, **_: Any) -> str:
        return self.text


def test_the_sdk_client_is_served_after_a_request_whose_id_is_a_lone_surrogate(
    tmp_path: Path,
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "webapp", "mcp", "--data-dir", str(tmp_path / "data")],
        env={},
        cwd=REPO,
    )

    async def scenario() -> tuple[list[str], str]:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    with anyio.fail_after(20):
                        await write.send(
                            SessionMessage(
                                RawLine('{"jsonrpc":"2.0","id":"\\ud800","method":"tools/list"}')  # type: ignore[arg-type]
                            )
                        )
                        tools = await session.list_tools()
                        added = await session.call_tool(
                            "manage_memory", {"action": "add", "content": "still serving"}
                        )
                    return [tool.name for tool in tools.tools], added.content[0].text

    names, added = anyio.run(scenario)
    assert "manage_memory" in names
    assert added.startswith("Added [")


def test_a_stored_memory_with_a_lone_surrogate_is_listed_and_searched(tmp_path: Path) -> None:
    """Another program wrote a lone surrogate into the file: the model sees U+FFFD in its
    place and the server keeps serving."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "memories.json").write_text(
        '[{"id": "bad000000001", "content": "Likes tea \\ud800 a lot", '
        '"createdAt": "2024-01-01T00:00:00.000Z", "updatedAt": "2024-01-01T00:00:00.000Z", '
        '"category": "preference"}]\n',
        encoding="ascii",
    )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "webapp", "mcp", "--data-dir", str(data)],
        env={},
        cwd=REPO,
    )

    async def scenario() -> list[str]:
        texts = []
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    with anyio.fail_after(20):
                        for arguments in (
                            {"action": "list"},
                            {"action": "search", "keyword": "tea"},
                            {"action": "search", "keyword": "coffee"},
                        ):
                            result = await session.call_tool("manage_memory", arguments)
                            texts.append(result.content[0].text)
        return texts

    listed, found, after = anyio.run(scenario)
    assert "[bad000000001] (preference) Likes tea \ufffd a lot" in listed
    assert "Likes tea \ufffd a lot" in found
    assert after == 'No memory contains "coffee".'


def test_every_outgoing_message_is_made_serializable() -> None:
    """The layer under every answer: a lone surrogate anywhere in a message (a tool's text,
    an error, an id) becomes U+FFFD instead of stopping the SDK's writer."""
    from webapp.mcp.screening import serializable

    message = types.JSONRPCResponse(
        jsonrpc="2.0",
        id="r\ud800",
        result={"content": [{"type": "text", "text": "a\udfffb"}], "isError": False},
    )
    out = serializable(SessionMessage(message))
    written = out.message.model_dump_json(by_alias=True, exclude_unset=True)
    assert json.loads(written) == {
        "jsonrpc": "2.0",
        "id": "r\ufffd",
        "result": {"content": [{"type": "text", "text": "a\ufffdb"}], "isError": False},
    }
    fine = SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=1, result={}))
    assert serializable(fine) is fine
