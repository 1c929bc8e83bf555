"""Real LLM callers: the ``claude`` CLI, any OpenAI-compatible endpoint, and Anthropic's API.

Each caller's ``ask`` returns the reply text or raises LlmCallError saying why not (missing
binary, non-zero exit, timeout, HTTP error, a reply too large or unreadable); ``call`` returns
None instead: extraction then falls back to regex.

Two bounds hold for every caller, whatever the other end does:

- ``timeout`` is a deadline for the whole call, from connecting (or starting ``claude``) to
  the last byte of the reply. The SDK callers run the request on an asyncio event loop under
  ``asyncio.timeout``, which cancels it wherever it waits (a per-read socket timeout would let
  a server that sends a byte a second keep the call going for ever); ``claude --print`` is
  killed, with every process it started, when the deadline passes: those still its
  descendants, its process group, and any that left both (``setsid`` and a double fork make
  a process init's child in a session of its own), found by a mark in their environment
  that every process started from it inherits (``MARK``).
- a reply is read up to ``max_reply_bytes``: a longer one (declared by its Content-Length or
  found while reading) is refused and the connection or the process is closed, so a runaway
  reply never has to fit in memory. An HTTP error's body is never read whole either.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, TypeVar

from ..problems import CodedError
from ..settings import DEFAULTS, Settings
from ..stores import loads_bounded
from .calls import (
    LlmCallError,
    MemoryLlmCaller,
    llm_call_failed,
    llm_reply_too_large,
    llm_timeout,
)
from .homeassistant import CHARS_PER_TOKEN, HomeAssistantCaller, ReplyShape, ScanBudget

log = logging.getLogger(__name__)
MAX_REPLY_TOKENS = 1024
# The environment variable marking the processes of one ``claude --print`` call.
MARK = "MEMORY_CURATOR_LLM_CALL"
_KILL_ROUNDS = 100  # searches for processes left (2 s at most)
# The most of an error reply (an HTTP error's body, claude's standard error) kept for the log.
ERROR_TEXT_BYTES = 2000
_T = TypeVar("_T")


class LlmConfigError(CodedError, ValueError):
    """The LLM settings cannot work (no model, no key, SDK not installed); the message says
    which, ``provider`` names the MEMORY_LLM_PROVIDER."""

    code = "llm_unknown_provider"
    codes = (
        "llm_sdk_missing",
        "llm_needs_model",
        "llm_openai_needs_key",
        "llm_anthropic_needs_key",
        "llm_homeassistant_needs_entity",
        "llm_homeassistant_needs_token",
        "llm_unknown_provider",
    )


class _Explaining:
    """``call`` from ``ask``: the reply's text, or None (and a warning in the log)."""

    def ask(self, prompt: str) -> str:
        raise NotImplementedError

    def call(self, prompt: str) -> str | None:
        try:
            return self.ask(prompt)
        except LlmCallError as exc:
            log.warning("%s", exc)
            return None


def _reply_text(raw: bytes) -> str:
    """The reply as text; an empty one is no reply."""
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        raise LlmCallError("The LLM gave no reply.", code="llm_no_reply")
    return text


# ----------------------------------------------------------------- claude --print
class ClaudeCliCaller(_Explaining):
    """Runs ``claude --print`` with the prompt on standard input, as the host assistant does."""

    def __init__(
        self,
        *,
        command: str = "claude",
        model: str = "",
        timeout: float = DEFAULTS["llm_timeout"],
        max_reply_bytes: int = DEFAULTS["llm_max_reply_bytes"],
    ) -> None:
        self.command = command
        self.model = model
        self.timeout = timeout
        self.max_reply_bytes = max_reply_bytes

    def argv(self) -> list[str] | None:
        """The command line, or None when the binary is not on PATH."""
        binary = shutil.which(self.command)
        if binary is None:
            return None
        return [binary, "--print"] + (["--model", self.model] if self.model else [])

    def ask(self, prompt: str) -> str:
        argv = self.argv()
        if argv is None:
            raise llm_call_failed(f"{self.command!r} is not on PATH.")
        deadline = time.monotonic() + self.timeout
        # Every process this call starts carries the mark, however it leaves our tree.
        mark = secrets.token_hex(16)
        environ = {**os.environ, MARK: mark}
        # The prompt and the error output go through files: a program that reads neither
        # cannot block us on a full pipe. A new session, so the kill reaches its children.
        with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stderr:
            stdin.write(prompt.encode("utf-8"))
            stdin.seek(0)
            process = subprocess.Popen(
                argv,
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
                env=environ,
            )
            try:
                out = _read_until(process, deadline, self.max_reply_bytes)
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _kill_tree(process, mark)
                raise llm_timeout(self.timeout) from None
            except BaseException:  # too large a reply, or this thread is interrupted
                _kill_tree(process, mark)
                raise
            if process.returncode != 0:
                stderr.seek(0)
                said = stderr.read(ERROR_TEXT_BYTES).decode("utf-8", "replace").strip()
                raise llm_call_failed(
                    f"claude --print exited with {process.returncode}: {said}".rstrip(": ")
                )
        return _reply_text(out)


def _read_until(process: subprocess.Popen[bytes], deadline: float, most: int) -> bytes:
    """The process's standard output up to its end; LlmCallError past ``deadline`` or
    beyond ``most`` bytes. The pipe is closed either way."""
    assert process.stdout is not None
    pipe = process.stdout
    chunks: list[bytes] = []
    size = 0
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(pipe, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    raise subprocess.TimeoutExpired(process.args, 0)
                chunk = os.read(pipe.fileno(), 65536)
                if not chunk:
                    return b"".join(chunks)
                size += len(chunk)
                if size > most:
                    raise llm_reply_too_large(most)
                chunks.append(chunk)
    finally:
        pipe.close()


def _descendants(pid: int) -> list[int]:
    """Every process started by ``pid`` (and by those), as /proc shows them; [] elsewhere."""
    children: dict[int, list[int]] = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    for entry in entries:
        try:
            stat = Path("/proc", entry, "stat").read_text(errors="replace")
            parent = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        children.setdefault(parent, []).append(int(entry))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.append(child)
                todo.append(child)
    return found


def _marked(mark: str) -> list[int]:
    """Every process whose environment holds ``MARK=mark`` (/proc/<pid>/environ: a process of
    our user's; [] where there is no /proc). A zombie shows no environment: it is gone."""
    needle = f"{MARK}={mark}".encode()
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    found = []
    for entry in entries:
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue  # gone meanwhile, or another user's
        if needle in environ.split(b"\0"):
            found.append(int(entry))
    return found


def _kill_tree(process: subprocess.Popen[bytes], mark: str | None = None) -> None:
    """Kill the process, its process group, every process it started that is still below it
    (one that left the group with setsid too) and, with ``mark``, every process carrying it
    (one that also left the tree: setsid and a double fork), then reap it. Searched again
    until none is left, so a process forked while the first were being killed goes too."""
    for _round in range(_KILL_ROUNDS):
        below = set(_descendants(process.pid)) | set(_marked(mark) if mark else ())
        below.discard(os.getpid())
        for kill, target in [(os.killpg, process.pid)] + [(os.kill, pid) for pid in below]:
            try:
                kill(target, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass  # gone already
        if not below:
            break
        time.sleep(0.02)  # (a killed process shows until it has exited)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        log.warning("claude --print (pid %s) did not exit after SIGKILL", process.pid)


# ----------------------------------------------------------------- the SDKs
class _ReplyTooLarge(Exception):
    pass


class _HttpError(Exception):
    def __init__(self, status: int, text: str) -> None:
        super().__init__(f"HTTP {status}: {text}".strip().rstrip(":"))


def _run(make: Callable[[], Awaitable[_T]]) -> _T:
    """Run a coroutine to its end from synchronous code (in a thread of its own when this
    thread already runs an event loop, as a host program's async code may)."""

    async def main() -> _T:
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, main()).result()


def _cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """``exc`` or the first exception of type ``kind`` it was raised from or during."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


class _SdkCaller(_Explaining):
    """One request per prompt through a provider's SDK, no retries, under the deadline."""

    provider = ""

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULTS["llm_timeout"],
        max_reply_bytes: int = DEFAULTS["llm_max_reply_bytes"],
    ) -> None:
        self.model = model
        self.base_url = base_url or None
        self.api_key = api_key
        self.timeout = timeout
        self.max_reply_bytes = max_reply_bytes
        self._sdk = self._import_sdk()

    def _import_sdk(self) -> Any:
        raise NotImplementedError

    def _client(self, http_client: Any) -> Any:
        """The SDK's async client (an async context manager) over ``http_client``."""
        raise NotImplementedError

    def _request(self, client: Any, prompt: str) -> AbstractAsyncContextManager[Any]:
        """The request, as the SDK's streaming response (its body not read yet)."""
        raise NotImplementedError

    def _text(self, data: Any) -> str:
        """The reply's text from its parsed JSON body."""
        raise NotImplementedError

    def ask(self, prompt: str) -> str:
        try:
            body = _run(lambda: self._fetch(prompt))
        except TimeoutError:
            raise llm_timeout(self.timeout) from None
        except Exception as exc:  # any SDK, transport or shape error means "the call failed"
            if _cause(exc, _ReplyTooLarge) is not None:
                raise llm_reply_too_large(self.max_reply_bytes) from None
            if isinstance(exc, self._sdk.APITimeoutError):
                raise llm_timeout(self.timeout) from None
            found = _cause(exc, _HttpError) or exc
            raise llm_call_failed(f"{self.provider}: {found}") from None
        try:
            data = loads_bounded(body.decode("utf-8", "replace"))
            text = self._text(data)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise llm_call_failed(
                f"{self.provider}: the reply is not the expected JSON ({exc})"
            ) from None
        if not isinstance(text, str):
            raise llm_call_failed(f"{self.provider}: the reply holds no text")
        return _reply_text(text.encode("utf-8"))

    async def _fetch(self, prompt: str) -> bytes:
        most = self.max_reply_bytes

        async def check_head(response: Any) -> None:
            # Runs when the headers are in, before the SDK reads any of the body.
            if response.status_code >= 400:
                text = await _first_bytes(response.aiter_raw(), ERROR_TEXT_BYTES)
                await response.aclose()
                raise _HttpError(response.status_code, text.decode("utf-8", "replace"))
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > most:
                await response.aclose()
                raise _ReplyTooLarge()

        async with asyncio.timeout(self.timeout):
            http_client = self._sdk.DefaultAsyncHttpxClient(
                timeout=self.timeout,
                event_hooks={"response": [check_head]},
                # A compressed reply could unpack to far more than was read.
                headers={"Accept-Encoding": "identity"},
            )
            async with self._client(http_client) as client:
                async with self._request(client, prompt) as response:
                    chunks: list[bytes] = []
                    size = 0
                    async for chunk in response.iter_bytes():
                        size += len(chunk)
                        if size > most:
                            raise _ReplyTooLarge()
                        chunks.append(chunk)
                    return b"".join(chunks)


async def _first_bytes(stream: AsyncIterator[bytes], most: int) -> bytes:
    """At most ``most`` bytes from the start of ``stream``; the rest is not read."""
    kept = b""
    async for chunk in stream:
        kept += chunk
        if len(kept) >= most:
            break
    return kept[:most]


class OpenAiCaller(_SdkCaller):
    """Chat completions on any OpenAI-compatible endpoint (OpenAI, Ollama, LM Studio, vLLM, llama.cpp)."""

    provider = "OpenAI-compatible"

    def _import_sdk(self) -> Any:
        import openai

        return openai

    def _client(self, http_client: Any) -> Any:
        # Local servers want no key, but the SDK insists on one.
        return self._sdk.AsyncOpenAI(
            api_key=self.api_key or "not-needed",
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,
            http_client=http_client,
        )

    def _request(self, client: Any, prompt: str) -> AbstractAsyncContextManager[Any]:
        request: AbstractAsyncContextManager[Any] = (
            client.chat.completions.with_streaming_response.create(
                model=self.model,
                temperature=0,
                max_tokens=MAX_REPLY_TOKENS,
                messages=[{"role": "user", "content": prompt}],
            )
        )
        return request

    def _text(self, data: Any) -> str:
        text: str = data["choices"][0]["message"]["content"]
        return text


class AnthropicCaller(_SdkCaller):
    """The Messages API through the official ``anthropic`` SDK (the optional extra)."""

    provider = "Anthropic"

    def _import_sdk(self) -> Any:
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
        return anthropic

    def _client(self, http_client: Any) -> Any:
        return self._sdk.AsyncAnthropic(
            api_key=self.api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,
            http_client=http_client,
        )

    def _request(self, client: Any, prompt: str) -> AbstractAsyncContextManager[Any]:
        request: AbstractAsyncContextManager[Any] = client.messages.with_streaming_response.create(
            model=self.model,
            max_tokens=MAX_REPLY_TOKENS,
            messages=[{"role": "user", "content": prompt}],
        )
        return request

    def _text(self, data: Any) -> str:
        return "".join(
            block["text"]
            for block in data["content"]
            if isinstance(block, dict) and block.get("type") == "text"
        )


def caller_from_settings(
    settings: Settings,
    environ: Mapping[str, str] | None = None,
    *,
    shape: ReplyShape | None = None,
) -> MemoryLlmCaller | None:
    """The caller MEMORY_LLM_PROVIDER selects, or None for ``none`` (regex only). ``shape``:
    the list of records the prompt asks for, which a provider that takes a structure
    (``homeassistant``) is given; the others read the prompt alone."""
    env = os.environ if environ is None else environ
    provider = settings.llm_provider
    timeout = settings.llm_timeout
    most = settings.llm_max_reply_bytes
    if provider == "none":
        return None
    if provider == "homeassistant":
        return _home_assistant(settings, env, shape)
    if provider == "claude-cli":
        return ClaudeCliCaller(model=settings.llm_model, timeout=timeout, max_reply_bytes=most)
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
            model=settings.llm_model,
            base_url=base_url,
            api_key=key,
            timeout=timeout,
            max_reply_bytes=most,
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
            max_reply_bytes=most,
        )
    raise LlmConfigError(f"Unknown MEMORY_LLM_PROVIDER {provider!r}.", provider=provider)


def _home_assistant(
    settings: Settings, env: Mapping[str, str], shape: ReplyShape | None
) -> HomeAssistantCaller:
    """The household's own model: the AI Task entity MEMORY_HA_AI_TASK_ENTITY names, asked
    through the Supervisor with SUPERVISOR_TOKEN."""
    entity = settings.ha_ai_task_entity.strip()
    if not entity:
        raise LlmConfigError(
            "MEMORY_LLM_PROVIDER=homeassistant needs MEMORY_HA_AI_TASK_ENTITY (the AI Task "
            "entity whose model answers, e.g. ai_task.ollama_ai_task).",
            code="llm_homeassistant_needs_entity",
            provider="homeassistant",
        )
    token = env.get("SUPERVISOR_TOKEN", "")
    if not token:
        raise LlmConfigError(
            "MEMORY_LLM_PROVIDER=homeassistant needs SUPERVISOR_TOKEN: it runs in the Home "
            "Assistant add-on, which the Supervisor gives one.",
            code="llm_homeassistant_needs_token",
            provider="homeassistant",
        )
    return HomeAssistantCaller(
        entity_id=entity,
        supervisor_url=settings.supervisor_url,
        token=token,
        timeout=settings.llm_timeout,
        max_reply_bytes=settings.llm_max_reply_bytes,
        budget=ScanBudget(
            calls=settings.llm_pairs_per_scan,
            chars=settings.llm_tokens_per_scan * CHARS_PER_TOKEN,
            seconds=float(settings.llm_seconds_per_scan),
        ),
        shape=shape,
    )


def describe(caller: Any) -> str:
    """A short name for output: 'regex', 'claude-cli', 'openai', 'anthropic' or
    'homeassistant'."""
    return {
        ClaudeCliCaller: "claude-cli",
        OpenAiCaller: "openai",
        AnthropicCaller: "anthropic",
        HomeAssistantCaller: "homeassistant",
    }.get(type(caller), "regex" if caller is None else "custom")
