"""``memory-curator mcp`` over stdio: through the MCP SDK's own client (``connect``,
``McpClient``) and line by line for bytes a real client never sends (``RawServer``)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from anyio.from_thread import BlockingPortal
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.support import REPO
from webapp.mcp.tool import TOOL_NAME


class RawServer:
    """``python -m webapp mcp`` spoken to line by line, for bytes a real client never sends
    (``with RawServer(data_dir) as server``: started and initialized; closed on exit)."""

    def __init__(self, server_dir: Path) -> None:
        self.args = [sys.executable, "-m", "webapp", "mcp", "--data-dir", str(server_dir)]
        self.returncode: int | None = None

    def __enter__(self) -> RawServer:
        self.process = subprocess.Popen(
            self.args,
            cwd=REPO,
            env={k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.reader = threading.Thread(target=self._read_lines, daemon=True)
        self.reader.start()
        self.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw-test", "version": "1"},
                    },
                }
            ).encode()
        )
        self.answers_until(1)
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        return self

    def send(self, line: bytes) -> None:
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def answer(self, timeout: float = 15) -> dict[str, Any] | None:
        """The next response (a message with an id), or None when none comes in ``timeout``."""
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                return None
            assert line, "the server closed its output"
            message: dict[str, Any] = json.loads(line)
            if "id" in message:
                return message

    def answers_until(self, request_id: int) -> dict[int, dict[str, Any]]:
        """Responses by id, read until the one for ``request_id`` arrives."""
        answers: dict[int, dict[str, Any]] = {}
        while request_id not in answers:
            # A generous bound only so that a broken server fails the test instead of hanging it.
            line = self.lines.get(timeout=60)
            assert line, "the server closed its output"
            message = json.loads(line)
            if "id" in message:
                answers[message["id"]] = message
        return answers

    def _read_lines(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def __exit__(self, *exc: object) -> None:
        self.process.stdin.close()
        try:
            self.returncode = self.process.wait(timeout=60)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self.reader.join(timeout=60)
            self.process.stdout.close()


@asynccontextmanager
async def connect(
    server_dir: Path, errlog: Any, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    """Start ``python -m webapp mcp`` and yield an initialized client session (``env``
    replaces the settings this module's tests use)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "webapp", "mcp", "--data-dir", str(server_dir)],
        env={
            "MEMORY_MAX_ITEMS": str(MAX_ITEMS),
            "MEMORY_MAX_CHARS": str(MAX_CHARS),
            "MEMORY_LOCK_TIMEOUT": "1",
            **(env or {}),
        },
        cwd=REPO,
    )
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


class McpClient:
    """A synchronous face on the async client session, for plain pytest tests."""

    def __init__(self, portal: BlockingPortal, session: ClientSession) -> None:
        self.portal = portal
        self.session = session

    def list_tools(self) -> Any:
        return self.portal.call(self.session.list_tools)

    def call(self, name: str = TOOL_NAME, **arguments: Any) -> tuple[bool, str]:
        """Call a tool; (is_error, text)."""
        result = self.portal.call(self.session.call_tool, name, arguments)
        assert len(result.content) == 1 and result.content[0].type == "text"
        return result.is_error, result.content[0].text

    def ok(self, name: str = TOOL_NAME, **arguments: Any) -> str:
        is_error, text = self.call(name, **arguments)
        assert not is_error, text
        return text

    def error(self, name: str = TOOL_NAME, **arguments: Any) -> str:
        is_error, text = self.call(name, **arguments)
        assert is_error, text
        return text


MAX_ITEMS = 5


MAX_CHARS = 300
