"""A fake model server speaking Ollama's wire format (``/api/tags``, streaming ``/api/chat``),
for Home Assistant's ``ollama`` integration in tests/ha: the first turn of a conversation asks
for ``TOOL_CALLS`` at once, the next, once their results came back, answers with ``FINAL``.
Every chat request is kept (``requests``) for the test to read."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "memory-test:latest"
FINAL = "All four memory tools answered."
# What a model asks of the memory server at once (Home Assistant runs them together).
TOOL_CALLS: list[dict[str, Any]] = [
    {"name": "recall", "arguments": {}},
    {"name": "manage_memory", "arguments": {"action": "search", "keyword": "plant"}},
    {"name": "review_memory", "arguments": {}},
    {"name": "manage_memory", "arguments": {"action": "add", "content": "Likes green tea."}},
]
NOW = "2026-11-28T12:00:00Z"


class FakeOllama(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.unknown: list[str] = []

    def start(self) -> FakeOllama:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: FakeOllama

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _json(self, body: Any, status: int = 200) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/api/tags":
            details = {"format": "gguf", "family": "test", "parameter_size": "1B"}
            model = {
                "name": MODEL,
                "model": MODEL,
                "modified_at": NOW,
                "size": 1,
                "digest": "0" * 64,
                "details": details,
            }
            return self._json({"models": [model]})
        if self.path == "/api/version":
            return self._json({"version": "0.12.0"})
        self.server.unknown.append(f"GET {self.path}")
        self._json({"error": "not found"}, 404)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path != "/api/chat":
            self.server.unknown.append(f"POST {self.path}")
            return self._json({"error": "not found"}, 404)
        self.server.requests.append(body)
        answered = any(message.get("role") == "tool" for message in body.get("messages", []))
        if answered:
            chunks = [{"role": "assistant", "content": FINAL}]
        else:
            calls = [{"function": call} for call in TOOL_CALLS]
            chunks = [{"role": "assistant", "content": "", "tool_calls": calls}]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.end_headers()
        for message in chunks:
            line = {"model": MODEL, "created_at": NOW, "message": message, "done": False}
            self.wfile.write(json.dumps(line).encode() + b"\n")
        done = {
            "model": MODEL,
            "created_at": NOW,
            "done": True,
            "done_reason": "stop",
            "message": {"role": "assistant", "content": ""},
        }
        self.wfile.write(json.dumps(done).encode() + b"\n")
        self.wfile.flush()
        self.close_connection = True
