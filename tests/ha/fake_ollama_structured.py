"""A fake model server speaking Ollama's wire format (``/api/tags``, ``/api/version``,
streaming ``/api/chat``) for an AI Task entity: a request with ``format`` (the JSON schema
Home Assistant made of the task's structure) is answered with ``ANSWER`` as JSON in
``message.content``, as Ollama's structured output does. Every chat request is kept."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "household-test:latest"
NOW = "2026-11-28T12:00:00Z"
FACT = {
    "content": "Takes coffee black every morning.",
    "category": "preference",
    "confidence": 0.9,
    "evidence": "I take my coffee black",
}
ANSWER = {"facts": [FACT]}


class StructuredOllama(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.unknown: list[str] = []

    def start(self) -> StructuredOllama:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: StructuredOllama

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
        content = json.dumps(ANSWER) if body.get("format") else "[]"
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.end_headers()
        for line in (
            {
                "model": MODEL,
                "created_at": NOW,
                "done": False,
                "message": {"role": "assistant", "content": content},
            },
            {
                "model": MODEL,
                "created_at": NOW,
                "done": True,
                "done_reason": "stop",
                "message": {"role": "assistant", "content": ""},
            },
        ):
            self.wfile.write(json.dumps(line).encode() + b"\n")
        self.wfile.flush()
        self.close_connection = True
