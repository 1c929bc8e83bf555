"""A real ``memory-curator serve`` process and the MCP Python SDK's own HTTP clients, for the
tests of MCP over HTTP and of the Assist API."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from tests.support import REPO
from tests.support.cli import clean_env

TOKEN = "a-long-random-token-for-the-tests-0123456789"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Dashboard:
    """A running ``memory-curator serve`` on 127.0.0.1; ``output`` is what it printed."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, data_dir: Path) -> None:
        self.process = process
        self.port = port
        self.data_dir = data_dir
        self.base = f"http://127.0.0.1:{port}"
        self.mcp_url = f"{self.base}/mcp"
        self.sse_url = f"{self.base}/sse"
        self._lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.append(line.decode("utf-8", errors="replace"))

    def close(self) -> None:
        """Read what the stopped process printed to the end, and close the pipe."""
        self._reader.join(timeout=10)
        assert self.process.stdout is not None
        self.process.stdout.close()

    @property
    def output(self) -> str:
        return "".join(self._lines)

    def get(self, path: str, timeout: float = 10) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(self.base + path, timeout=timeout) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def wait_for_output(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output:
            assert time.monotonic() < deadline, f"never printed {text!r}:\n{self.output}"
            time.sleep(0.1)


@contextmanager
def dashboard(
    data_dir: Path, *, threads: int = 8, wait: bool = True, **env: str
) -> Iterator[Dashboard]:
    """Start ``memory-curator serve`` over ``data_dir`` with the settings ``env``; stop it after."""
    port = free_port()
    environ = clean_env(**env)
    environ.setdefault("MEMORY_DATA_DIR", str(data_dir))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "webapp",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--threads",
            str(threads),
        ],
        cwd=REPO,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    served = Dashboard(process, port, data_dir)
    try:
        if wait:
            deadline = time.monotonic() + 60
            while True:
                assert process.poll() is None, served.output
                try:
                    served.get("/healthz", timeout=2)  # any answer: it serves
                    break
                except OSError:
                    pass
                assert time.monotonic() < deadline, f"the dashboard did not start:\n{served.output}"
                time.sleep(0.1)
        yield served
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        served.close()


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


async def call_tool(
    url: str, name: str, arguments: dict[str, Any], *, token: str | None = None, sse: bool = False
) -> tuple[bool, str]:
    """One call in a session of its own, as Home Assistant makes it: (is_error, text)."""
    async with session(url, token=token, sse=sse) as client:
        result = await client.call_tool(name, arguments)
    assert len(result.content) == 1 and result.content[0].type == "text"
    return bool(result.is_error), result.content[0].text


@asynccontextmanager
async def session(
    url: str, *, token: str | None = None, sse: bool = False
) -> AsyncIterator[ClientSession]:
    """An initialized ClientSession over streamable HTTP (or SSE with ``sse``)."""
    if sse:
        async with sse_client(url, headers=_headers(token)) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                yield client
        return
    async with httpx2.AsyncClient(headers=_headers(token), timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                yield client


async def _raise_on_post_error(response: httpx2.Response) -> None:
    if response.request.method == "POST":
        response.raise_for_status()


async def home_assistant_call(
    url: str, name: str, arguments: dict[str, Any], *, token: str | None = None
) -> tuple[bool, str]:
    """One tool call exactly as Home Assistant's ``mcp`` integration makes it: a client of its
    own with httpx's default timeouts (5 s to read) that raises on a failed POST, a new
    session (initialize, call, close): (is_error, text)."""
    async with httpx2.AsyncClient(
        headers=_headers(token), event_hooks={"response": [_raise_on_post_error]}
    ) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                result = await client.call_tool(name, arguments)
    assert len(result.content) == 1 and result.content[0].type == "text"
    return bool(result.is_error), result.content[0].text
