"""Hostile JSON-RPC on the MCP server's stdin: every request with an id gets an answer (a
JSON-RPC error or a tool error) and the server keeps serving."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from .conftest import RawServer

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
