"""What every LLM caller is, and why a call gave no usable reply.

A caller sends a prompt to a model and gives back its text: ``MemoryLlmCaller.call`` returns
None when the call failed, ``ExplainingLlmCaller.ask`` raises ``LlmCallError`` saying why
(the built-in callers, ``webapp.llm.backends``, are both). The error's constructors word each
failure once, with the setting that bounds it.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..problems import CodedError


@runtime_checkable
class MemoryLlmCaller(Protocol):
    """Anything that sends a prompt to an LLM and returns its text, or None when the call failed."""

    def call(self, prompt: str) -> str | None: ...


class LlmCallError(CodedError, RuntimeError):
    """Why an LLM gave no usable reply: it did not answer in time (``seconds``), its reply was
    larger than allowed (``most`` bytes), the call failed (``reason``, in the provider's or
    the system's words), it gave no reply, or the reply was not the JSON asked for."""

    code = "llm_call_failed"
    codes = (
        "llm_timeout",
        "llm_reply_too_large",
        "llm_call_failed",
        "llm_no_reply",
        "llm_reply_unusable",
    )

    @property
    def call_failed(self) -> bool:
        """True when the call itself failed (timeout, reply too large, error), which a person
        should be told; an empty or unusable reply just means the rules ran instead."""
        return self.code in ("llm_timeout", "llm_reply_too_large", "llm_call_failed")


def llm_timeout(seconds: float) -> LlmCallError:
    """The call ran past MEMORY_LLM_TIMEOUT and was stopped."""
    shown = int(seconds) if float(seconds).is_integer() else seconds
    return LlmCallError(
        f"The LLM did not answer within {shown} s (MEMORY_LLM_TIMEOUT); the call was stopped.",
        code="llm_timeout",
        seconds=shown,
    )


def llm_reply_too_large(most: int) -> LlmCallError:
    """The reply was longer than MEMORY_LLM_MAX_REPLY_BYTES; reading stopped there."""
    return LlmCallError(
        f"The LLM's reply was larger than {most:,} bytes (MEMORY_LLM_MAX_REPLY_BYTES); it was "
        "not read further.",
        code="llm_reply_too_large",
        most=most,
    )


def llm_call_failed(reason: str) -> LlmCallError:
    """The call failed (an HTTP error, no connection, the program exited with an error)."""
    return LlmCallError(f"The LLM call failed: {reason}", code="llm_call_failed", reason=reason)


def llm_call_error(code: Any, values: Any) -> LlmCallError | None:
    """The failed call a record names by its code and values (as ``ExtractionBatch`` keeps
    them), or None when they are not one."""
    if not isinstance(values, dict):
        return None
    value = values.get(
        {"llm_timeout": "seconds", "llm_reply_too_large": "most"}.get(code, "reason")
    )
    if isinstance(value, bool):
        return None
    if code == "llm_timeout" and isinstance(value, (int, float)) and 0 < value < 10**9:
        return llm_timeout(value)
    if code == "llm_reply_too_large" and isinstance(value, int) and value > 0:
        return llm_reply_too_large(value)
    if code == "llm_call_failed" and isinstance(value, str):
        return llm_call_failed(value[:500])
    return None


@runtime_checkable
class ExplainingLlmCaller(Protocol):
    """A caller that says why a call failed: ``ask`` returns the reply's text (never empty)
    or raises LlmCallError. The built-in callers are these; their ``call`` gives None instead."""

    def ask(self, prompt: str) -> str: ...
