"""Real LLM callers: the ``claude`` CLI, any OpenAI-compatible endpoint, and Anthropic's API.

Each returns the reply text, or None when the call failed for any reason (missing binary,
non-zero exit, timeout, HTTP error, unreadable reply): extraction then falls back to regex.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping
from typing import Any

from ..problems import CodedError
from ..settings import Settings
from .llm import MemoryLlmCaller

log = logging.getLogger(__name__)
MAX_REPLY_TOKENS = 1024


class LlmConfigError(CodedError, ValueError):
    """The LLM settings cannot work (no model, no key, SDK not installed); the message says
    which, ``provider`` names the MEMORY_LLM_PROVIDER."""

    code = "llm_unknown_provider"
    codes = (
        "llm_sdk_missing",
        "llm_needs_model",
        "llm_openai_needs_key",
        "llm_anthropic_needs_key",
        "llm_unknown_provider",
    )


class ClaudeCliCaller:
    """Runs ``claude --print`` with the prompt on standard input, as the host assistant does."""

    def __init__(self, *, command: str = "claude", model: str = "", timeout: float = 60) -> None:
        self.command = command
        self.model = model
        self.timeout = timeout

    def argv(self) -> list[str] | None:
        """The command line, or None when the binary is not on PATH."""
        binary = shutil.which(self.command)
        if binary is None:
            return None
        return [binary, "--print"] + (["--model", self.model] if self.model else [])

    def call(self, prompt: str) -> str | None:
        argv = self.argv()
        if argv is None:
            log.warning("LLM extraction skipped: %r is not on PATH", self.command)
            return None
        # A new session so a timeout can kill the whole process group, not just the parent.
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = process.communicate(prompt.encode("utf-8"), timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            log.warning("claude --print timed out after %s s", self.timeout)
            return None
        if process.returncode != 0:
            log.warning(
                "claude --print exited with %s: %s",
                process.returncode,
                err.decode("utf-8", "replace")[:500],
            )
            return None
        text = out.decode("utf-8", "replace").strip()
        return text or None


class _SdkCaller:
    """One request per prompt through a provider's SDK, no retries; any failure gives None."""

    provider = ""

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60,
    ) -> None:
        self.model = model
        self.client = self._client(base_url or None, api_key, timeout)

    def _client(self, base_url: str | None, api_key: str | None, timeout: float) -> Any:
        raise NotImplementedError

    def _reply(self, prompt: str) -> Any:
        """The reply's text (anything else counts as no reply)."""
        raise NotImplementedError

    def call(self, prompt: str) -> str | None:
        try:
            text = self._reply(prompt)
        except Exception as exc:  # any SDK, transport or shape error means "the call failed"
            log.warning("%s LLM call failed: %s", self.provider, exc)
            return None
        if not isinstance(text, str):
            return None
        return text.strip() or None


class OpenAiCaller(_SdkCaller):
    """Chat completions on any OpenAI-compatible endpoint (OpenAI, Ollama, LM Studio, vLLM, llama.cpp)."""

    provider = "OpenAI-compatible"

    def _client(self, base_url: str | None, api_key: str | None, timeout: float) -> Any:
        import openai

        # Local servers want no key, but the SDK insists on one.
        return openai.OpenAI(
            api_key=api_key or "not-needed", base_url=base_url, timeout=timeout, max_retries=0
        )

    def _reply(self, prompt: str) -> Any:
        reply = self.client.chat.completions.create(
            model=self.model,
            temperature=0,
            max_tokens=MAX_REPLY_TOKENS,
            messages=[{"role": "user", "content": prompt}],
        )
        return reply.choices[0].message.content


class AnthropicCaller(_SdkCaller):
    """The Messages API through the official ``anthropic`` SDK (the optional extra)."""

    provider = "Anthropic"

    def _client(self, base_url: str | None, api_key: str | None, timeout: float) -> Any:
        try:
            import anthropic
        except ImportError as exc:
            raise LlmConfigError(
                "MEMORY_LLM_PROVIDER=anthropic needs the anthropic SDK: "
                "pip install 'memory-curator[anthropic]'.",
                code="llm_sdk_missing",
                provider="anthropic",
                package="memory-curator[anthropic]",
            ) from exc
        return anthropic.Anthropic(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0
        )

    def _reply(self, prompt: str) -> Any:
        reply = self.client.messages.create(
            model=self.model,
            max_tokens=MAX_REPLY_TOKENS,
            messages=[{"role": "user", "content": prompt}],
        )
        return "".join(block.text for block in reply.content if block.type == "text")


def caller_from_settings(
    settings: Settings, environ: Mapping[str, str] | None = None
) -> MemoryLlmCaller | None:
    """The caller MEMORY_LLM_PROVIDER selects, or None for ``none`` (regex only)."""
    env = os.environ if environ is None else environ
    provider = settings.llm_provider
    timeout = settings.llm_timeout
    if provider == "none":
        return None
    if provider == "claude-cli":
        return ClaudeCliCaller(model=settings.llm_model, timeout=timeout)
    if not settings.llm_model:
        raise LlmConfigError(
            f"MEMORY_LLM_PROVIDER={provider} needs MEMORY_LLM_MODEL "
            f"(e.g. the model name your endpoint serves).",
            code="llm_needs_model",
            provider=provider,
        )
    if provider == "openai":
        key = settings.llm_api_key or env.get("OPENAI_API_KEY", "")
        base_url = settings.llm_base_url or env.get("OPENAI_BASE_URL", "")
        if not key and not base_url:
            raise LlmConfigError(
                "MEMORY_LLM_PROVIDER=openai needs MEMORY_LLM_API_KEY (or "
                "OPENAI_API_KEY), or MEMORY_LLM_BASE_URL for a local server.",
                code="llm_openai_needs_key",
                provider=provider,
            )
        return OpenAiCaller(
            model=settings.llm_model, base_url=base_url, api_key=key, timeout=timeout
        )
    if provider == "anthropic":
        key = settings.llm_api_key or env.get("ANTHROPIC_API_KEY", "")
        if not key:
            raise LlmConfigError(
                "MEMORY_LLM_PROVIDER=anthropic needs MEMORY_LLM_API_KEY (or ANTHROPIC_API_KEY).",
                code="llm_anthropic_needs_key",
                provider=provider,
            )
        return AnthropicCaller(
            model=settings.llm_model,
            api_key=key,
            base_url=settings.llm_base_url or env.get("ANTHROPIC_BASE_URL"),
            timeout=timeout,
        )
    raise LlmConfigError(f"Unknown MEMORY_LLM_PROVIDER {provider!r}.", provider=provider)


def describe(caller: Any) -> str:
    """A short name for output: 'regex', 'claude-cli', 'openai' or 'anthropic'."""
    return {
        ClaudeCliCaller: "claude-cli",
        OpenAiCaller: "openai",
        AnthropicCaller: "anthropic",
    }.get(type(caller), "regex" if caller is None else "custom")
