"""The "Memory Curator" LLM API: selectable in a conversation agent's options beside "Assist".
Each turn's instance carries the speaker's memories (``POST /api/assist/v1/prompt``) and three
tools, ``remember``, ``forget`` and ``recall``, that call the add-on with the same context."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, override

import probatio
from homeassistant.components.conversation import chat_log
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import llm

from .client import AssistApiError, AssistClient, CannotConnect
from .const import DOMAIN, INSTRUCTIONS, PROMPT_TIMEOUT, UNAVAILABLE

if TYPE_CHECKING:
    from .feed import ChatLogFeeder

_LOGGER = logging.getLogger(__name__)


async def speaker_context(hass: HomeAssistant, llm_context: llm.LLMContext) -> dict[str, Any]:
    """The ``context`` every call but ``info`` sends: who speaks, through which device, to which
    agent, in which conversation (the chat log of the turn being answered)."""
    user_id = llm_context.context.user_id if llm_context.context else None
    user_name = None
    if user_id and (user := await hass.auth.async_get_user(user_id)):
        user_name = user.name
    device_name = None
    if llm_context.device_id and (device := dr.async_get(hass).async_get(llm_context.device_id)):
        device_name = device.name_by_user or device.name
    log = chat_log.current_chat_log.get()
    return {
        "user_id": user_id,
        "user_name": user_name,
        "device_id": llm_context.device_id,
        "device_name": device_name,
        "language": llm_context.language,
        "agent_id": llm_context.agent_id,
        "conversation_id": log.conversation_id if log else None,
    }


@dataclass(slots=True, kw_only=True)
class MemoryCuratorAPI(llm.API):
    """One per config entry; ``feeder`` learns which speaker each conversation has."""

    client: AssistClient
    feeder: ChatLogFeeder

    @override
    async def async_get_api_instance(self, llm_context: llm.LLMContext) -> llm.APIInstance:
        context = await speaker_context(self.hass, llm_context)
        self.feeder.note_context(context, llm_context.assistant)
        try:
            block = await self.client.prompt(context, PROMPT_TIMEOUT)
        except AssistApiError as err:
            _LOGGER.warning("Memory Curator's memories are unavailable for this turn: %s", err)
            block = UNAVAILABLE
        else:
            self.feeder.wake()
        tools: list[llm.Tool] = [
            RememberTool(self.client, context),
            ForgetTool(self.client, context),
            RecallTool(self.client, context),
        ]
        return llm.APIInstance(
            api=self, api_prompt=f"{INSTRUCTIONS}\n{block}", llm_context=llm_context, tools=tools
        )


class _AddonTool(llm.Tool):
    """A tool answered by ``POST /api/assist/v1/tools/<name>`` with the turn's context."""

    integration = DOMAIN

    def __init__(self, client: AssistClient, context: dict[str, Any]) -> None:
        self._client = client
        self._context = context

    @property
    def memory_context(self) -> dict[str, Any]:
        """The speaker's context this tool calls with (the feed reads it from a chat log)."""
        return self._context

    @override
    async def async_call(
        self, hass: HomeAssistant, tool_input: llm.ToolInput, llm_context: llm.LLMContext
    ) -> llm.ToolResult:
        arguments = self.parameters(tool_input.tool_args)
        try:
            answer = await self._client.tool(self.name, self._context, dict(arguments))
        except CannotConnect as err:
            if err.status is None:  # nothing answered
                err = CannotConnect("unavailable", "Memory is unavailable right now.")
            return llm.ToolResult(data={"error": err.code, "message": str(err)}, error=True)
        except AssistApiError as err:
            return llm.ToolResult(data={"error": err.code, "message": str(err)}, error=True)
        if answer.get("ok"):
            result = answer.get("result")
            return llm.ToolResult(data=result if isinstance(result, dict) else {})
        error = answer.get("error") if isinstance(answer.get("error"), dict) else {}
        data: dict[str, Any] = {
            "error": str(error.get("code") or "refused"),
            "message": str(error.get("message") or ""),
        }
        if "candidates" in error:
            data["candidates"] = error["candidates"]
        elif "candidates" in answer:
            data["candidates"] = answer["candidates"]
        return llm.ToolResult(data=data, error=True)


class RememberTool(_AddonTool):
    name = "remember"
    title = "Remember"
    description = (
        "Keep one fact in long-term memory, as the person speaking told it (for example "
        "'Prefers oat milk'). A fact already known is kept once."
    )
    parameters = probatio.Schema(
        {probatio.Required("fact", description="The fact, one short sentence."): str}
    )
    annotations = llm.ToolAnnotations(destructive=False, idempotent=True, open_world=False)


class ForgetTool(_AddonTool):
    name = "forget"
    title = "Forget"
    description = (
        "Forget one memory the person speaking can see: give its id (from recall) or its text. "
        "When several memories match, the answer lists them: ask which one."
    )
    parameters = probatio.Schema(
        {
            probatio.Optional("memory_id", description="The memory's id, from recall."): str,
            probatio.Optional("fact", description="The memory's text, or part of it."): str,
        }
    )
    annotations = llm.ToolAnnotations(open_world=False)


class RecallTool(_AddonTool):
    name = "recall"
    title = "Recall"
    description = (
        "Search long-term memory (what the person speaking and the household have told). "
        "No query: everything, newest first."
    )
    parameters = probatio.Schema(
        {probatio.Optional("query", description="Words to look for."): str}
    )
    annotations = llm.ToolAnnotations(
        read_only=True, destructive=False, idempotent=True, open_world=False
    )
