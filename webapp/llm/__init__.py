"""The LLM providers: the callers that send a prompt to a model and give back its text.

``caller_from_settings`` builds the caller MEMORY_LLM_PROVIDER names: the ``claude`` CLI, any
OpenAI-compatible endpoint, Anthropic's API (``backends``) or Home Assistant's AI Task entity
(``homeassistant``), each bounded in time and reply size; ``calls`` says what a caller is and
why a call gave no usable reply. What is asked is the asker's: extraction's prompt and parser
(``webapp.extraction.llm``), Needs attention's pair check (``webapp.attention.llm_check``).
"""

from .backends import (
    AnthropicCaller,
    ClaudeCliCaller,
    LlmConfigError,
    OpenAiCaller,
    caller_from_settings,
    describe,
)
from .calls import (
    ExplainingLlmCaller,
    LlmCallError,
    MemoryLlmCaller,
    llm_call_error,
    llm_call_failed,
    llm_reply_too_large,
    llm_timeout,
)
from .homeassistant import HomeAssistantCaller, ReplyShape, ScanBudget

__all__ = [
    "AnthropicCaller",
    "ClaudeCliCaller",
    "ExplainingLlmCaller",
    "HomeAssistantCaller",
    "LlmCallError",
    "LlmConfigError",
    "MemoryLlmCaller",
    "OpenAiCaller",
    "ReplyShape",
    "ScanBudget",
    "caller_from_settings",
    "describe",
    "llm_call_error",
    "llm_call_failed",
    "llm_reply_too_large",
    "llm_timeout",
]
