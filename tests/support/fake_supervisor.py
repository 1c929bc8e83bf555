"""A fake Supervisor on 127.0.0.1 speaking Home Assistant's REST format for
``POST /core/api/services/ai_task/generate_data?return_response`` (the Supervisor's proxy to
Home Assistant's ``/api``), for the LLM provider ``homeassistant``.

It checks what the real chain checks: the bearer token (the Supervisor answers 401 without
the add-on's token), ``return_response`` (Home Assistant's ``api`` answers 400 without it,
the service supports responses only), and the body the way ``ai_task.generate_data``'s service
schema would (``homeassistant/components/ai_task/services.py``: ``task_name`` and
``instructions`` strings, an optional ``entity_id``, a ``structure`` of fields each with a
``selector`` and an optional ``description`` and ``required``, nothing else; an unknown entity
is a ServiceValidationError, 400). It answers ``{"changed_states": [...], "service_response":
{"conversation_id": ..., "data": ...}}``, ``data`` from ``answer(body)``, after ``delay``
seconds, and counts the calls in flight at once.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PATH = "/core/api/services/ai_task/generate_data"
ENTITY_ID = re.compile(r"^(?!.+__)(?!_)[\da-z_]+(?<!_)\.(?!_)[\da-z_]+(?<!_)$")  # cv.entity_id
# Home Assistant's selectors (homeassistant/helpers/selector.py), the ones a structure may use.
SELECTORS = {"text", "number", "boolean", "select", "object", "date", "datetime", "time"}
SERVICE_KEYS = {"task_name", "instructions", "entity_id", "structure", "attachments"}


def schema_problem(body: Any) -> str | None:
    """What ai_task.generate_data's schema would reject in ``body``, or None."""
    if not isinstance(body, dict):
        return "expected a dictionary"
    extra = set(body) - SERVICE_KEYS
    if extra:
        return f"extra keys not allowed @ data[{sorted(extra)[0]!r}]"
    for key in ("task_name", "instructions"):
        if not isinstance(body.get(key), str):
            return f"required key not provided @ data[{key!r}]"
    if "entity_id" in body and not (
        isinstance(body["entity_id"], str) and ENTITY_ID.match(body["entity_id"])
    ):
        return "Entity ID is an invalid entity ID for dictionary value @ data['entity_id']"
    structure = body.get("structure")
    if structure is not None:
        if not isinstance(structure, dict):
            return "Structure must be a dictionary"
        for name, spec in structure.items():
            if not isinstance(spec, dict) or set(spec) - {"description", "required", "selector"}:
                return f"invalid structure field {name!r}"
            if "required" in spec and not isinstance(spec["required"], bool):
                return f"expected bool for dictionary value @ data['structure'][{name!r}]"
            problem = selector_problem(spec.get("selector"))
            if problem:
                return f"{problem} @ data['structure'][{name!r}]"
    return None


def selector_problem(selector: Any) -> str | None:
    if not isinstance(selector, dict) or len(selector) != 1:
        return "a selector is one type and its config"
    ((kind, config),) = selector.items()
    if kind not in SELECTORS:
        return f"Unknown selector type {kind} found"
    config = config or {}
    if not isinstance(config, dict):
        return "a selector's config is a dictionary"
    if kind == "select" and not isinstance(config.get("options"), list):
        return "required key not provided @ data['options']"
    step = config.get("step", 1)
    if kind == "number" and step != "any" and (not isinstance(step, (int, float)) or step < 1e-3):
        return "invalid step"
    if kind == "object":
        for name, field in (config.get("fields") or {}).items():
            if not isinstance(field, dict) or set(field) - {
                "selector",
                "required",
                "default",
                "label",
            }:
                return f"invalid object field {name!r}"
            problem = selector_problem(field.get("selector"))
            if problem:
                return problem
    return None


class FakeSupervisor:
    """The server: ``url`` is what MEMORY_SUPERVISOR_URL takes."""

    def __init__(
        self,
        token: str = "supervisor-token",
        entities: tuple[str, ...] = ("ai_task.household",),
        answer: Callable[[dict[str, Any]], Any] = lambda body: {"facts": []},
        delay: float = 0.0,
        status: int = 200,
    ) -> None:
        self.token = token
        self.entities = entities
        self.answer = answer
        self.delay = delay
        self.status = status
        self.bodies: list[dict[str, Any]] = []
        self.refused: list[tuple[int, str]] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.finished = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeSupervisor:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _reply(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _refuse(self, status: int, message: str) -> None:
                fake.refused.append((status, message))
                self._reply(status, {"message": message})

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                parts = urlsplit(self.path)
                if self.headers.get("Authorization") != f"Bearer {fake.token}":
                    return self._refuse(401, "Unauthorized")
                if parts.path != PATH:
                    return self._refuse(404, "Not found")
                if "return_response" not in parse_qs(parts.query, keep_blank_values=True):
                    return self._refuse(
                        400,
                        "Service call requires responses but caller did not ask for "
                        "responses. Add ?return_response to query parameters.",
                    )
                try:
                    body = json.loads(raw)
                except ValueError:
                    return self._refuse(400, "Data should be valid JSON.")
                problem = schema_problem(body)
                if problem:
                    return self._refuse(400, f"Invalid data: {problem}")
                entity = body.get("entity_id")
                if entity not in fake.entities:
                    return self._refuse(400, f"AI Task entity {entity} not found")
                with fake._lock:
                    fake.bodies.append(body)
                    fake.in_flight += 1
                    fake.most_in_flight = max(fake.most_in_flight, fake.in_flight)
                try:
                    time.sleep(fake.delay)
                    if fake.status != 200:
                        return self._refuse(
                            fake.status, "Sorry, I had a problem talking to the Ollama server"
                        )
                    data = fake.answer(body)
                    self._reply(
                        200,
                        {
                            "changed_states": [
                                {"entity_id": entity, "state": "2026-11-05T10:00:00+00:00"}
                            ],
                            "service_response": {"conversation_id": "01JX", "data": data},
                        },
                    )
                finally:
                    with fake._lock:
                        fake.in_flight -= 1
                        fake.finished += 1

        return Handler
