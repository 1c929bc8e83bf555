"""Conversations feed the memory: every finished exchange of a conversation agent (the user's
text and the agent's final reply of that turn) is sent to the add-on
(``POST /api/assist/v1/exchanges``) through a queue kept on disk with Home Assistant's Store,
retried with backoff while the add-on is down or restarting, and bounded."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from homeassistant.components.conversation import chat_log
from homeassistant.components.conversation.const import ChatLogEventType
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import llm
from homeassistant.helpers.storage import Store

from .client import AssistApiError, AssistClient, NotMemoryCurator, Outdated
from .const import (
    CONF_EXCLUDE_AGENTS,
    CONF_EXCLUDE_DEVICES,
    CONF_FEED,
    DOMAIN,
    QUEUE_MAX_AGE,
    QUEUE_MAX_ITEMS,
    RETRY_FIRST,
    RETRY_MAX,
)

_LOGGER = logging.getLogger(__name__)
AI_TASK = "ai_task"  # the domain of AI Task entities and the assistant of their chat logs
NO_REPLY = "(no response)"  # what HA's chat log says when a turn ended without an answer
ERROR_REPLY = "Error: "  # how HA's chat log words the error that ended a turn
KEPT_CONTEXTS = 500  # conversations whose speaker is remembered
BAD_REQUEST = "bad_request"  # the add-on's code for an exchange it can never store
WATCH_EVERY = 0.2  # seconds between looks at whether a turn has ended


@dataclass(slots=True)
class _Turn:
    user_text: str
    at: str
    reply: str | None = None
    agent_id: str | None = None
    failed: bool = False
    watched: bool = False


def _domain(agent_id: Any) -> str:
    return agent_id.partition(".")[0] if isinstance(agent_id, str) else ""


def _time(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value or "")


class ChatLogFeeder:
    """Listens to every chat log, assembles exchanges, and sends them in order."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: ConfigEntry,
        client: AssistClient,
        check_version: Callable[[], Awaitable[bool]],
    ) -> None:
        self._hass = hass
        self._entry = entry
        self._client = client
        self._check_version = check_version
        self._store: Store[dict[str, Any]] = Store(hass, 1, f"{DOMAIN}.queue.{entry.entry_id}")
        self._queue: list[dict[str, Any]] = []
        self.dropped = 0  # exchanges dropped beyond the bound, since the queue was created
        self.rejected = 0  # exchanges the add-on refused as malformed (never retried)
        self.sent = 0  # exchanges sent since Home Assistant started
        self.expired = 0  # exchanges the add-on did not keep: older than its conversations live
        self.last_error: str | None = None
        self._turns: dict[str, _Turn] = {}
        self._contexts: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._ai_tasks: OrderedDict[str, None] = OrderedDict()
        self._wake = asyncio.Event()
        self._unsubscribe: Callable[[], None] | None = None
        self._stopped = False  # unloaded: a late watcher writes nothing over the next one's queue

    @property
    def queued(self) -> int:
        return len(self._queue)

    async def async_start(self) -> None:
        stored = await self._store.async_load() or {}
        self._queue = [item for item in stored.get("items", []) if isinstance(item, dict)]
        self.dropped = int(stored.get("dropped", 0))
        self._trim()
        self._unsubscribe = chat_log.async_subscribe_chat_logs(self._hass, self._on_event)
        self._entry.async_create_background_task(
            self._hass, self._send_loop(), f"{DOMAIN} feed {self._entry.entry_id}"
        )
        self._wake.set()

    async def async_stop(self) -> None:
        """Stop listening; the turns that have ended are queued, and the queue saved (a turn
        still going on when the integration is unloaded is not sent)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for conversation_id in list(self._turns):
            if not self._turn_active(conversation_id):
                self._finish(conversation_id)
        self._stopped = True
        await self._store.async_save(self._data())

    @callback
    def wake(self) -> None:
        """The add-on answered something: try the queue now rather than after the backoff."""
        if self._queue:
            self._wake.set()

    @callback
    def note_context(self, context: dict[str, Any], assistant: str | None) -> None:
        """The speaker of a conversation, from the LLM API's instance for its turn."""
        conversation_id = context.get("conversation_id")
        if not conversation_id:
            return
        if assistant == AI_TASK:
            self._mark_ai_task(conversation_id)
            return
        self._contexts[conversation_id] = context
        self._contexts.move_to_end(conversation_id)
        while len(self._contexts) > KEPT_CONTEXTS:
            self._contexts.popitem(last=False)

    # -- assembling exchanges from the chat log events --------------------------------------

    @callback
    def _on_event(
        self, conversation_id: str, event_type: ChatLogEventType, data: dict[str, Any]
    ) -> None:
        # Home Assistant calls subscribers without a guard, inside the user's turn: whatever
        # goes wrong here is logged and never reaches the conversation.
        try:
            self._handle(conversation_id, event_type, data)
        except Exception:  # noqa: BLE001
            _LOGGER.exception("Memory Curator could not read a chat log event")

    def _handle(
        self, conversation_id: str, event_type: ChatLogEventType, data: dict[str, Any]
    ) -> None:
        if event_type == ChatLogEventType.DELETED:
            self._finish(conversation_id)
            self._contexts.pop(conversation_id, None)
            self._ai_tasks.pop(conversation_id, None)
            return
        if event_type == ChatLogEventType.UPDATED:
            if conversation_id in self._turns and not self._turn_active(conversation_id):
                self._finish(conversation_id)
            return
        if event_type != ChatLogEventType.CONTENT_ADDED:
            return
        content = data.get("content")
        if not isinstance(content, dict):
            return
        role = content.get("role")
        if role == "user":
            self._finish(conversation_id)  # the turn before, if it is still open
            text = content.get("content")
            if isinstance(text, str) and text.strip():
                self._turns[conversation_id] = _Turn(text, _time(content.get("created")))
            return
        if role != "assistant":
            return  # tool results and system prompts are never sent
        agent_id = content.get("agent_id")
        if _domain(agent_id) == AI_TASK:
            self._mark_ai_task(conversation_id)
        turn = self._turns.get(conversation_id)
        if turn is None:
            return
        text = content.get("content")
        if content.get("tool_calls"):
            turn.reply = None  # words said before a tool call are not the turn's answer
            return
        if not isinstance(text, str) or not text.strip():
            return
        if text.strip() == NO_REPLY or text.startswith(ERROR_REPLY):
            turn.failed = True
        else:
            turn.reply, turn.agent_id = text, agent_id
        if not turn.watched:
            turn.watched = True
            self._hass.loop.call_later(WATCH_EVERY, self._watch, conversation_id, turn)

    def _turn_active(self, conversation_id: str) -> bool:
        logs = self._hass.data.get(chat_log.DATA_CHAT_LOGS) or {}
        log = logs.get(conversation_id)
        return bool(log is not None and log.turn_active)

    @callback
    def _watch(self, conversation_id: str, turn: _Turn) -> None:
        """A new conversation's first turn ends without an event: look until it is over."""
        try:
            if self._turns.get(conversation_id) is not turn:
                return
            if self._turn_active(conversation_id):
                self._hass.loop.call_later(WATCH_EVERY, self._watch, conversation_id, turn)
            else:
                self._finish(conversation_id)
        except Exception:  # noqa: BLE001
            _LOGGER.exception("Memory Curator could not finish an exchange")

    def _context_from_log(self, conversation_id: str) -> dict[str, Any] | None:
        """The speaker's context kept by the Memory Curator tools of the conversation's chat
        log: Home Assistant keeps a conversation's API instance between turns, so after the
        integration was reloaded the instance of an older turn still says who speaks."""
        logs = self._hass.data.get(chat_log.DATA_CHAT_LOGS) or {}
        log = logs.get(conversation_id)
        for tool in log.llm_api.tools if log is not None and log.llm_api is not None else []:
            while isinstance(tool, llm.NamespacedTool):
                tool = tool.tool
            context = getattr(tool, "memory_context", None)
            if isinstance(context, dict):
                return context
        return None

    def _mark_ai_task(self, conversation_id: str) -> None:
        self._turns.pop(conversation_id, None)
        self._contexts.pop(conversation_id, None)
        self._ai_tasks[conversation_id] = None
        while len(self._ai_tasks) > KEPT_CONTEXTS:
            self._ai_tasks.popitem(last=False)

    def _finish(self, conversation_id: str) -> None:
        turn = self._turns.pop(conversation_id, None)
        if (
            self._stopped
            or turn is None
            or turn.failed
            or not turn.reply
            or conversation_id in self._ai_tasks
        ):
            return
        options = self._entry.options
        if not options.get(CONF_FEED, True):
            return
        context = dict(
            self._contexts.get(conversation_id)
            or self._context_from_log(conversation_id)
            or {
                "user_id": None,
                "user_name": None,
                "device_id": None,
                "device_name": None,
                "language": None,
                "agent_id": None,
            }
        )
        context["conversation_id"] = conversation_id
        context["agent_id"] = context.get("agent_id") or turn.agent_id
        if context["agent_id"] in options.get(CONF_EXCLUDE_AGENTS, []):
            return
        if context.get("device_id") and context["device_id"] in options.get(
            CONF_EXCLUDE_DEVICES, []
        ):
            return
        payload = {
            "key": f"ha:{conversation_id}:{turn.at}"[:200],
            "conversation_id": conversation_id,
            "user_text": turn.user_text,
            "reply": turn.reply,
            "at": turn.at,
            "context": context,
        }
        self._queue.append({"payload": payload, "queued": time.time()})
        self._trim()
        self._store.async_delay_save(self._data, 1.0)
        self._wake.set()

    # -- the queue ----------------------------------------------------------------------------

    def _data(self) -> dict[str, Any]:
        return {"items": self._queue, "dropped": self.dropped}

    def _trim(self) -> None:
        cutoff = time.time() - QUEUE_MAX_AGE
        old = 0
        while self._queue and (
            len(self._queue) > QUEUE_MAX_ITEMS or self._queue[0].get("queued", 0) < cutoff
        ):
            self._queue.pop(0)
            old += 1
        if old:
            self.dropped += old
            _LOGGER.warning(
                "Memory Curator dropped the %d oldest unsent conversation exchange(s): the add-on "
                "was unreachable and the queue keeps at most %d exchanges or %d days",
                old,
                QUEUE_MAX_ITEMS,
                QUEUE_MAX_AGE // 86400,
            )

    async def _send_loop(self) -> None:
        delay = RETRY_FIRST
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                item = self._queue[0]
                try:
                    answer = await self._client.exchange(item["payload"])
                except AssistApiError as err:
                    self.last_error = f"{err.code}: {err}"
                    if err.code == BAD_REQUEST:  # malformed for the add-on: never to be stored
                        self.rejected += 1
                        _LOGGER.warning("Memory Curator refused a conversation exchange: %s", err)
                    else:  # down, restarting, busy, refusing this caller, outdated: wait
                        if isinstance(err, (NotMemoryCurator, Outdated)):
                            try:
                                await self._check_version()  # the repair issue, if it is that
                            except AssistApiError:
                                pass
                        try:
                            await asyncio.wait_for(self._wake.wait(), delay)
                        except TimeoutError:
                            pass
                        self._wake.clear()
                        delay = min(delay * 2, RETRY_MAX)
                        continue
                else:
                    if answer.get("expired"):
                        self.expired += 1
                        _LOGGER.warning(
                            "Memory Curator did not keep a conversation exchange said at %s: it is "
                            "older than the add-on keeps conversations "
                            "(conversation_max_age_days)",
                            item["payload"].get("at"),
                        )
                    else:
                        self.sent += 1
                    self.last_error = None
                    delay = RETRY_FIRST
                if item in self._queue:
                    self._queue.remove(item)
                self._store.async_delay_save(self._data, 1.0)
