"""A fake model server for the Assist scenario of tests/ha (Ollama's wire format, the handler
of fake_ollama.py for everything but the chat): it answers by what the user said last, so each
turn of the scenario is told apart by its marker (``[A1]``):

- a structured request (``format``: AI Task's generate data) -> the JSON ``TASK_ANSWER``;
- ``remember: <fact>`` (``forget: <fact>``, ``recall: <query>``) -> ``NOTING`` with that tool
  call, then, once its result came back, ``Done <marker>``;
- ``GET /newer/api/assist/v1/info`` -> what an add-on serving only a newer Assist API answers;
- any path under ``/forbidden/`` -> the add-on's 403 for a Host it does not know;
- ``fail:`` -> HTTP 500 (Home Assistant ends the turn with an error);
- anything else -> ``Reply <marker>``.

Every chat request is kept (``requests``) for the test to read the system prompt it carried."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.ha.fake_ollama import MODEL, NOW, FakeOllama, _Handler

TASK_ANSWER = {"summary": "Nothing to note."}
NOTING = "Let me note that."  # said with a tool call: not the turn's answer
TOOLS = {"remember": "fact", "forget": "fact", "recall": "query"}  # "<tool>: <argument>"
_MARKER = re.compile(r"\[[A-Z]+\d+\]")


def marker(text: str) -> str:
    found = _MARKER.search(text)
    return found.group(0) if found else ""


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The assistant message the fake gives for one chat request."""
    if body.get("format"):
        return {"role": "assistant", "content": json.dumps(TASK_ANSWER)}
    messages = body.get("messages", [])
    users = [m for m in messages if m.get("role") == "user"]
    said = users[-1]["content"] if users else ""
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user") if users else -1
    answered = any(m.get("role") == "tool" for m in messages[last_user + 1 :])
    for tool, argument in TOOLS.items():
        if f"{tool}:" in said and not answered:
            value = said.split(f"{tool}:", 1)[1].strip()
            call = {"function": {"name": tool, "arguments": {argument: value}}}
            return {"role": "assistant", "content": NOTING, "tool_calls": [call]}
    return {"role": "assistant", "content": f"{'Done' if answered else 'Reply'} {marker(said)}"}


# An add-on newer than the integration: it serves the Assist API v2 only, and answers v1 as the
# contract says (404, api_version, the versions it serves).
NEWER = "/newer"
NEWER_INFO = {
    "api": 2,
    "addon_version": "9.0.0",
    "error": {"code": "api_version", "message": "This add-on serves the Assist API v2."},
    "supported": [2],
}


# An add-on refusing the Host the caller named (the Assist API's 403, DNS rebinding guard).
FORBIDDEN = "/forbidden"
FORBIDDEN_ANSWER = {
    "api": 1,
    "addon_version": "0.6.0",
    "error": {"code": "forbidden", "message": "This Host is not one of this server's names."},
}


class _AssistHandler(_Handler):
    def do_GET(self) -> None:
        if self.path == NEWER + "/api/assist/v1/info":
            return self._json(NEWER_INFO, 404)
        if self.path.startswith(FORBIDDEN + "/"):
            return self._json(FORBIDDEN_ANSWER, 403)
        return super().do_GET()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path.startswith(FORBIDDEN + "/"):
            return self._json(FORBIDDEN_ANSWER, 403)
        if self.path != "/api/chat":
            self.server.unknown.append(f"POST {self.path}")
            return self._json({"error": "not found"}, 404)
        self.server.requests.append(body)
        users = [m["content"] for m in body.get("messages", []) if m.get("role") == "user"]
        if users and "fail:" in users[-1]:
            return self._json({"error": "the model failed"}, 500)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.end_headers()
        lines = [
            {"model": MODEL, "created_at": NOW, "message": answer(body), "done": False},
            {
                "model": MODEL,
                "created_at": NOW,
                "done": True,
                "done_reason": "stop",
                "message": {"role": "assistant", "content": ""},
            },
        ]
        for line in lines:
            self.wfile.write(json.dumps(line).encode() + b"\n")
        self.wfile.flush()
        self.close_connection = True


class FakeAssistModel(FakeOllama):
    def __init__(self, port: int = 0) -> None:
        super().__init__(port)
        self.RequestHandlerClass = _AssistHandler
