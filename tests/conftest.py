"""Fixtures shared by every test module: a throw-away data folder, settings pointing at it, and
fake LLM servers on 127.0.0.1 that speak the providers' wire formats."""

from __future__ import annotations

import io
import json
import os
import queue
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import flask
import pytest
from flask.testing import FlaskClient

from webapp.settings import Settings

REPO = Path(__file__).resolve().parent.parent

# One OpenMP thread per process under pytest-xdist (./test.sh runs a worker per core): the
# similarity model's engine would otherwise start two in every worker and every process a test
# starts, and on a machine with no core to spare its threads spin-wait for each other (the
# extraction tests that start a process per thread took 1.7 times as long). The vectors are
# the same; a value set outside is kept. A host's choice reaches the embedder the same way.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")


class BufferedClient(FlaskClient):
    """Flask's test client, reading each response whole and closing it as a browser would (an
    unbuffered static file response otherwise keeps its file open until garbage collection),
    and closing the request body it built (an upload over 500 KB is spooled to a temporary file
    that Werkzeug's client leaves open)."""

    def open(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("buffered", True)
        response = super().open(*args, **kwargs)
        for sent in (*getattr(response, "history", ()), response):
            body = sent.request.environ.get("wsgi.input")
            if body is not None:
                body.close()
        return response


flask.Flask.test_client_class = BufferedClient


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """An empty data folder; nothing a test does touches ./data or /data."""
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


def make_settings(folder: Path, **changes: Any) -> Settings:
    """Standalone settings for tests: the defaults (nothing from the real environment) with
    ``changes``, every store under ``folder / "data"``."""
    base = Settings.from_env(environ={}, options_file=folder / "no-options.json", cwd=folder)
    return replace(base, **changes).with_data_dir(folder / "data")


@pytest.fixture
def settings(data_dir: Path, tmp_path: Path) -> Settings:
    """Standalone settings (default caps) with every store under ``data_dir``."""
    return make_settings(tmp_path)


def on_disk(memory_file: Path) -> list[dict[str, Any]]:
    """The memories file as parsed JSON, read straight from the disk ([] when it is missing)."""
    if not memory_file.exists():
        return []
    return json.loads(memory_file.read_bytes().decode("utf-8"))


def zip_of(folder: Path, prefix: str = "") -> bytes:
    """A .zip of ``folder``'s files (as a person would upload a skill folder), names under ``prefix``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, prefix + path.relative_to(folder).as_posix())
    return buffer.getvalue()


# ----------------------------------------------------------------- LLM providers, for real
FACTS = '[{"content": "Prefers tea", "category": "preference", "confidence": 0.9}]'


def openai_body(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "local-model",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def anthropic_body(text: str) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


class FakeLlmServer:
    """A real HTTP server on 127.0.0.1 that answers in one provider's wire format."""

    def __init__(self, body_for, reply: str = FACTS, hold_seconds: float = 10) -> None:
        self.body_for = body_for
        self.reply = reply
        # When set, called with each request's JSON payload to choose the reply text.
        self.reply_for: Any = None
        # ok | slow (answers once released) | error (HTTP 500) | garbage | trickle (a valid
        # reply, one byte every ``trickle_seconds``) | huge (a valid reply whose text is
        # ``huge_bytes`` long, sent as fast as it is read; ``declare_length=False`` sends no
        # Content-Length, the end of the body is the end of the connection)
        self.mode = "ok"
        self.trickle_seconds = 1.0
        self.huge_bytes = 50 * 1024 * 1024
        self.huge_status = 200
        self.declare_length = True
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        self.release = threading.Event()
        self.stopped = threading.Event()
        self.active = 0  # requests being answered now
        self.most_active = 0  # the most ever answered at once
        self.bytes_sent = 0
        self._count = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                with server._count:
                    server.active += 1
                    server.most_active = max(server.most_active, server.active)
                try:
                    self._answer()
                finally:
                    with server._count:
                        server.active -= 1

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                payload = json.loads(self.rfile.read(length) or b"null")
                server.requests.append(
                    (self.path, {k.lower(): v for k, v in self.headers.items()}, payload)
                )
                if server.mode == "trickle":
                    text = server.reply_for(payload) if server.reply_for else server.reply
                    self._trickle(json.dumps(server.body_for(text)).encode())
                    return
                if server.mode == "huge":
                    self._huge()
                    return
                if server.mode == "slow":
                    server.release.wait(hold_seconds)
                if server.mode == "error":
                    self._send(500, b'{"error": {"message": "boom", "type": "server_error"}}')
                elif server.mode == "garbage":
                    self._send(200, b"<html>definitely not json", "text/html")
                else:
                    text = server.reply_for(payload) if server.reply_for else server.reply
                    self._send(200, json.dumps(server.body_for(text)).encode())

            def _trickle(self, body: bytes) -> None:
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.flush()
                    for index in range(len(body)):
                        if server.stopped.wait(server.trickle_seconds):
                            return
                        self.wfile.write(body[index : index + 1])
                        self.wfile.flush()
                        server.bytes_sent += 1
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _huge(self) -> None:
                head, tail = json.dumps(server.body_for("@")).encode().split(b"@")
                chunk = b"x" * 65536
                size = server.huge_bytes
                try:
                    self.send_response(server.huge_status)
                    self.send_header("Content-Type", "application/json")
                    if server.declare_length:
                        self.send_header("Content-Length", str(len(head) + size + len(tail)))
                    self.end_headers()
                    self.wfile.write(head)
                    sent = 0
                    while sent < size and not server.stopped.is_set():
                        piece = chunk[: size - sent]
                        self.wfile.write(piece)
                        sent += len(piece)
                        server.bytes_sent += len(piece)
                    self.wfile.write(tail)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> FakeLlmServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.stopped.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def openai_server() -> Iterator[FakeLlmServer]:
    with FakeLlmServer(openai_body) as server:
        yield server


@pytest.fixture
def anthropic_server() -> Iterator[FakeLlmServer]:
    with FakeLlmServer(anthropic_body) as server:
        yield server


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
