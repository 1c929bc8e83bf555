"""The household's own model: the LLM provider ``homeassistant``, which asks an AI Task entity
of Home Assistant (``ai_task.generate_data``) through the Supervisor's proxy to its REST API.

``POST {supervisor_url}/core/api/services/ai_task/generate_data?return_response`` with the
add-on's ``SUPERVISOR_TOKEN`` as its bearer token; the body names the entity
(``MEMORY_HA_AI_TASK_ENTITY``), the task and the prompt as its instructions and, when the
caller expects a list of records (the facts of a conversation, the verdicts on pairs of
memories), a ``structure`` describing them with Home Assistant's selectors, so that the
entity's model answers that shape (Ollama's ``format``, OpenAI's structured output). Home
Assistant answers ``{"changed_states": [...], "service_response": {"conversation_id": ...,
"data": ...}}``: ``data`` is the structured answer (given on as JSON text, for the parsers
that read every provider's reply) or, without a structure, the model's text.

Home Assistant shields a service call from cancellation and counts no tokens, so this caller
bounds itself:

- one call in flight in this process (``FLIGHT``, across threads): a call that finds one under
  way waits for it within its own deadline, then fails;
- ``timeout`` seconds for a call: then the caller stops waiting (``llm_timeout``); Home
  Assistant may still finish, and the slot stays taken until it has answered, or for
  ``HOLD`` × ``timeout`` seconds at most, so that a slow model never has two calls at once;
- per scan, a window of ``MEMORY_LLM_SECONDS_PER_SCAN`` seconds: at most
  ``MEMORY_LLM_PAIRS_PER_SCAN`` calls and ``MEMORY_LLM_TOKENS_PER_SCAN`` × 4 characters of
  prompt (a call beyond them fails at once, before anything is sent);
- a reply is read up to ``max_reply_bytes``.

A failed call raises LlmCallError, and the rules take over as for any provider.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

import httpx

from ..stores import loads_bounded
from .calls import LlmCallError, llm_call_failed, llm_reply_too_large, llm_timeout

log = logging.getLogger(__name__)

SERVICE_PATH = "/core/api/services/ai_task/generate_data?return_response"
# How long a call Home Assistant still runs after the caller stopped waiting keeps the slot:
# until its answer comes, or this many times MEMORY_LLM_TIMEOUT.
HOLD = 4
CHARS_PER_TOKEN = 4  # MEMORY_LLM_TOKENS_PER_SCAN in characters: Home Assistant counts none
ERROR_TEXT_BYTES = 2000


@dataclass(frozen=True)
class ReplyShape:
    """The shape a caller expects, as an AI Task ``structure``: one field, ``field``, holding a
    list of records with ``items`` (name → an object selector's field: ``selector`` and
    ``required``). The caller gets that list back as JSON text."""

    task_name: str
    field: str
    description: str
    items: Mapping[str, Mapping[str, Any]]

    def structure(self) -> dict[str, Any]:
        """The ``structure`` of ``ai_task.generate_data``."""
        return {
            self.field: {
                "description": self.description,
                "required": True,
                "selector": {"object": {"multiple": True, "fields": dict(self.items)}},
            }
        }

    def note(self) -> str:
        """What the instructions add, so the prompt's "a JSON array" and the shape agree."""
        return f'\nGive that JSON array as the value of "{self.field}".'


@dataclass(frozen=True)
class ScanBudget:
    """What one scan (a window of ``seconds``) may send: calls and characters of prompt."""

    calls: int
    chars: int
    seconds: float


class Flight:
    """One call in flight in this process, and the calls and characters of the scan window."""

    def __init__(self) -> None:
        self._free = threading.Condition()
        self._busy = False
        self._window_start = float("-inf")
        self._calls = 0
        self._chars = 0

    def take(self, deadline: float, prompt_chars: int, budget: ScanBudget) -> None:
        """Take the slot (waiting until ``deadline`` for a call under way) and spend this
        call from the scan's budget; LlmCallError when either cannot be done."""
        with self._free:
            while self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise llm_call_failed(
                        "Home Assistant: another call to the AI Task entity is still under "
                        "way (one at a time)."
                    )
                self._free.wait(left)
            now = time.monotonic()
            if now - self._window_start >= budget.seconds:
                self._window_start, self._calls, self._chars = now, 0, 0
            if self._calls + 1 > budget.calls or self._chars + prompt_chars > budget.chars:
                raise llm_call_failed(
                    f"Home Assistant: this scan's budget is spent ({self._calls} calls, "
                    f"{self._chars:,} characters in {budget.seconds:g} s; "
                    "MEMORY_LLM_PAIRS_PER_SCAN, MEMORY_LLM_TOKENS_PER_SCAN)."
                )
            self._calls += 1
            self._chars += prompt_chars
            self._busy = True

    def give_back(self) -> None:
        with self._free:
            self._busy = False
            self._free.notify()


FLIGHT = Flight()


class HomeAssistantCaller:
    """Asks Home Assistant's AI Task entity ``entity_id``; ``ask`` returns the reply's text or
    raises LlmCallError, ``call`` returns None instead."""

    provider = "Home Assistant"

    def __init__(
        self,
        *,
        entity_id: str,
        supervisor_url: str,
        token: str,
        timeout: float,
        max_reply_bytes: int,
        budget: ScanBudget,
        shape: ReplyShape | None = None,
        flight: Flight = FLIGHT,
    ) -> None:
        self.entity_id = entity_id
        self.url = supervisor_url.rstrip("/") + SERVICE_PATH
        self.token = token
        self.timeout = timeout
        self.max_reply_bytes = max_reply_bytes
        self.budget = budget
        self.shape = shape
        self.flight = flight

    def body(self, prompt: str) -> dict[str, Any]:
        """The service call's data."""
        body: dict[str, Any] = {
            "entity_id": self.entity_id,
            "task_name": self.shape.task_name if self.shape else "memory curator",
            "instructions": prompt + (self.shape.note() if self.shape else ""),
        }
        if self.shape is not None:
            body["structure"] = self.shape.structure()
        return body

    def call(self, prompt: str) -> str | None:
        try:
            return self.ask(prompt)
        except LlmCallError as exc:
            log.warning("%s", exc)
            return None

    def ask(self, prompt: str) -> str:
        deadline = time.monotonic() + self.timeout
        body = self.body(prompt)
        self.flight.take(deadline, len(body["instructions"]), self.budget)
        answer: Future[bytes] = Future()
        worker = threading.Thread(
            target=self._post, args=(body, answer), name="ha-ai-task", daemon=True
        )
        try:
            worker.start()
        except BaseException:
            self.flight.give_back()
            raise
        try:
            raw = answer.result(timeout=max(0.0, deadline - time.monotonic()))
        except FutureTimeout:
            log.info("Home Assistant may still finish the call the caller stopped waiting for")
            raise llm_timeout(self.timeout) from None
        return self._text(raw)

    def _post(self, body: dict[str, Any], answer: Future[bytes]) -> None:
        """The request, in a thread of its own that holds the slot until Home Assistant has
        answered (or ``HOLD`` × ``timeout`` seconds have passed)."""
        give_up = time.monotonic() + HOLD * self.timeout
        try:
            answer.set_result(self._send(body, give_up))
        except LlmCallError as exc:
            answer.set_exception(exc)
        except Exception as exc:  # any transport error means "the call failed"
            answer.set_exception(llm_call_failed(f"{self.provider}: {exc}"))
        finally:
            self.flight.give_back()

    def _send(self, body: dict[str, Any], give_up: float) -> bytes:
        headers = {
            "Authorization": f"Bearer {self.token}",
            "Accept-Encoding": "identity",  # a compressed reply could unpack to far more
        }
        wait = httpx.Timeout(HOLD * self.timeout)
        with httpx.Client(timeout=wait) as client:
            with client.stream("POST", self.url, json=body, headers=headers) as response:
                if response.status_code >= 400:
                    said = _first_bytes(response, ERROR_TEXT_BYTES).decode("utf-8", "replace")
                    raise llm_call_failed(
                        f"{self.provider}: HTTP {response.status_code}: {_message(said)}".strip()
                    )
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > self.max_reply_bytes:
                    raise llm_reply_too_large(self.max_reply_bytes)
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_raw():
                    size += len(chunk)
                    if size > self.max_reply_bytes:
                        raise llm_reply_too_large(self.max_reply_bytes)
                    if time.monotonic() > give_up:
                        raise llm_timeout(HOLD * self.timeout)
                    chunks.append(chunk)
                return b"".join(chunks)

    def _text(self, raw: bytes) -> str:
        """The reply's text: the structured data as JSON (the list of ``shape.field``), or
        the model's text."""
        try:
            data = loads_bounded(raw.decode("utf-8", "replace"))["service_response"]["data"]
        except (ValueError, KeyError, TypeError) as exc:
            raise llm_call_failed(
                f"{self.provider}: the reply is not a service response ({exc})"
            ) from None
        if self.shape is not None and isinstance(data, dict) and self.shape.field in data:
            data = data[self.shape.field]
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        if not text.strip() or data is None:
            raise LlmCallError("The LLM gave no reply.", code="llm_no_reply")
        return text.strip()


def _first_bytes(response: httpx.Response, most: int) -> bytes:
    kept = b""
    for chunk in response.iter_raw():
        kept += chunk
        if len(kept) >= most:
            break
    return kept[:most]


def _message(said: str) -> str:
    """Home Assistant's ``{"message": ...}``, or the text as it came."""
    try:
        found = json.loads(said)
    except ValueError:
        return said.strip()
    if isinstance(found, dict) and isinstance(found.get("message"), str):
        return str(found["message"])
    return said.strip()
