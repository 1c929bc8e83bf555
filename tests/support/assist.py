"""Calls to the Assist API over real HTTP, as the Home Assistant integration makes them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx

V1 = "/api/assist/v1"


def context(
    user_id: str | None = None,
    *,
    user_name: str | None = None,
    device_id: str | None = None,
    device_name: str | None = None,
    conversation_id: str | None = None,
) -> dict[str, Any]:
    """The ``context`` the integration sends (Home Assistant's LLM context)."""
    return {
        "user_id": user_id,
        "user_name": user_name,
        "device_id": device_id,
        "device_name": device_name,
        "language": "en",
        "agent_id": "conversation.ollama",
        "conversation_id": conversation_id,
    }


class AssistClient:
    """An HTTP client of one running server's Assist API."""

    def __init__(self, base: str, token: str | None = None) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=base + V1, headers=headers, timeout=30)

    def close(self) -> None:
        self.http.close()

    def post(self, path: str, body: Any) -> httpx.Response:
        return self.http.post(path, json=body)

    def raw(
        self, path: str, content: bytes, content_type: str = "application/json"
    ) -> httpx.Response:
        return self.http.post(path, content=content, headers={"Content-Type": content_type})

    def prompt(self, ctx: dict[str, Any]) -> dict[str, Any]:
        answer = self.post("/prompt", {"context": ctx})
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def tool(self, name: str, ctx: dict[str, Any], **arguments: Any) -> dict[str, Any]:
        answer = self.post(f"/tools/{name}", {"context": ctx, "arguments": arguments})
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def exchange(
        self,
        ctx: dict[str, Any],
        key: str,
        conversation_id: str,
        said: str,
        at: datetime | None = None,
    ) -> Any:
        """Send an exchange said at ``at`` (now when None), as the integration's queue does."""
        body = {
            "key": key,
            "conversation_id": conversation_id,
            "user_text": said,
            "reply": "Noted.",
            "at": (at or datetime.now(UTC)).isoformat(),
            "context": ctx,
        }
        answer = self.post("/exchanges", body)
        assert answer.status_code == 200, answer.text
        return answer.json()


def dumps(body: Any) -> bytes:
    return json.dumps(body).encode("utf-8")
