"""Fake LLM servers on 127.0.0.1 that speak the providers' wire formats, and an extraction run
as its own process against one (for the deadline and escape tests)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import clean_env
from tests.support.stores import conversation_store, memory_store
from webapp.stores import ReviewQueue

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


# What the regex rules find in the thread: the fallback when the LLM gives nothing.
RULES_FACT = "Prefers the hallway lights at 30% after 22:00"


class Run:
    """One `memory-curator extract --conversation THREAD` process: its output and how long it took."""

    def __init__(self, data_dir: Path, env: dict[str, str], *, limit: float = 120) -> None:
        command = [sys.executable, "-m", "webapp", "extract", "--data-dir", str(data_dir)]
        started = time.monotonic()
        process = subprocess.Popen(
            [*command, "--conversation", THREAD],
            env=clean_env(**env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            self.stdout, self.stderr = process.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            pytest.fail(f"`extract` was still running after {limit:.0f} s")
        self.seconds = time.monotonic() - started
        self.returncode = process.returncode


def pending_contents(data_dir: Path) -> list[str]:
    memories = memory_store(data_dir / "memories.json", lock_timeout=10)
    return [item.content for item in ReviewQueue(data_dir / "review.json", memories).pending()]


def process_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its parent counts as gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return fields[0] != "Z"


THREAD = "slack:1731900000.123456"


def seed_thread(data_dir: Path) -> None:
    store = conversation_store(data_dir / "conversations" / "conversations.json")
    store.add_exchange(
        THREAD,
        "Remember that I prefer the hallway lights at 30% after 22:00.",
        "Got it — after 22:00 I'll set the hallway lights to 30%.",
    )
