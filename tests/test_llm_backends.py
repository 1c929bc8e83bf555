"""Real LLM callers against real local servers (OpenAI and Anthropic wire formats) and a stub `claude`."""

from __future__ import annotations

import os
import stat
import time
from dataclasses import replace
from pathlib import Path

import anthropic  # noqa: F401 - imported here, in the main thread, before any server thread
import openai  # noqa: F401 - runs (CPython 3.11 can trip over a lazy import racing a thread)
import pytest

from tests.support.llm import FACTS, FakeLlmServer, openai_body
from webapp.extraction import (
    AnthropicCaller,
    ClaudeCliCaller,
    LlmCallError,
    LlmConfigError,
    LlmMemoryExtractor,
    OpenAiCaller,
    caller_from_settings,
)

PROMPT = 'Extract facts from: 我喜歡喝茶 — <b>and</b> "quotes"'


# ----------------------------------------------------------------- OpenAI-compatible
def _openai(server: FakeLlmServer) -> OpenAiCaller:
    return OpenAiCaller(
        model="local-model", base_url=server.url + "/v1", api_key="sk-test", timeout=1
    )


def test_openai_success_sends_the_prompt_in_chat_format(openai_server):
    assert _openai(openai_server).call(PROMPT) == FACTS
    [(path, headers, payload)] = openai_server.requests
    assert path == "/v1/chat/completions"
    assert headers["authorization"] == "Bearer sk-test"
    assert payload["model"] == "local-model"
    assert payload["messages"] == [{"role": "user", "content": PROMPT}]


@pytest.mark.parametrize("mode", ["error", "slow", "garbage"])
def test_openai_failures_give_none_without_retries(openai_server, mode):
    openai_server.mode = mode
    assert _openai(openai_server).call(PROMPT) is None
    assert len(openai_server.requests) == 1


def test_openai_caller_drives_the_extractor(openai_server):
    facts = LlmMemoryExtractor(_openai(openai_server)).extract_facts(
        [{"role": "user", "content": "I prefer tea."}]
    )
    assert [f.content for f in facts] == ["Prefers tea"]


def test_unreachable_openai_endpoint_gives_none():
    with FakeLlmServer(openai_body) as server:
        url = server.url
    assert OpenAiCaller(model="m", base_url=url + "/v1", timeout=1).call(PROMPT) is None


@pytest.mark.parametrize("status", [200, 500])
def test_a_runaway_reply_is_not_read_to_its_end(openai_server, status):
    """A 50 MB body without a Content-Length, as a reply or as an HTTP error's body: reading
    stops at max_reply_bytes (the SDK would read an error's body whole)."""
    openai_server.mode, openai_server.declare_length = "huge", False
    openai_server.huge_status = status
    caller = OpenAiCaller(
        model="m", base_url=openai_server.url + "/v1", timeout=30, max_reply_bytes=100_000
    )
    assert caller.call(PROMPT) is None
    assert openai_server.bytes_sent < 25 * 1024 * 1024, openai_server.bytes_sent
    if status == 200:
        with pytest.raises(LlmCallError, match="larger than 100,000 bytes") as found:
            caller.ask(PROMPT)
        assert found.value.code == "llm_reply_too_large"


@pytest.mark.parametrize("server_fixture", ["openai_server", "anthropic_server"])
def test_the_timeout_bounds_the_whole_call(request, server_fixture):
    server = request.getfixturevalue(server_fixture)
    server.mode = "trickle"
    if server_fixture == "openai_server":
        caller: OpenAiCaller | AnthropicCaller = _openai(server)
    else:
        caller = _anthropic(server)
    caller.timeout = 2
    started = time.monotonic()
    with pytest.raises(LlmCallError, match="did not answer within 2 s") as found:
        caller.ask(PROMPT)
    assert found.value.code == "llm_timeout" and found.value.values == {"seconds": 2}
    assert time.monotonic() - started < 2 + 2


# ----------------------------------------------------------------- Anthropic
def _anthropic(server: FakeLlmServer) -> AnthropicCaller:
    return AnthropicCaller(model="claude-test", base_url=server.url, api_key="ak-test", timeout=1)


def _sent_key(headers: dict[str, str]) -> str:
    """The API key as the SDK sent it (``x-api-key``, or a bearer token in newer SDKs)."""
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


def test_anthropic_success_sends_the_prompt_in_messages_format(anthropic_server):
    assert _anthropic(anthropic_server).call(PROMPT) == FACTS
    [(path, headers, payload)] = anthropic_server.requests
    assert path == "/v1/messages"
    assert _sent_key(headers) == "ak-test"
    assert "anthropic-version" in headers
    assert payload["model"] == "claude-test" and payload["max_tokens"] > 0
    assert payload["messages"] == [{"role": "user", "content": PROMPT}]


@pytest.mark.parametrize("mode", ["error", "slow", "garbage"])
def test_anthropic_failures_give_none_without_retries(anthropic_server, mode):
    anthropic_server.mode = mode
    assert _anthropic(anthropic_server).call(PROMPT) is None
    assert len(anthropic_server.requests) == 1


# ----------------------------------------------------------------- claude CLI
def _stub_claude(folder: Path, script: str) -> None:
    folder.mkdir(exist_ok=True)
    path = folder / "claude"
    path.write_text("#!/bin/sh\n" + script, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return folder


def test_claude_cli_gets_the_prompt_on_stdin_with_print(bin_dir, tmp_path):
    log = tmp_path / "seen"
    _stub_claude(
        bin_dir, f'echo "$@" > "{log}.args"\ncat > "{log}.stdin"\nprintf \'%s\' \'{FACTS}\'\n'
    )
    assert ClaudeCliCaller(model="sonnet", timeout=5).call(PROMPT) == FACTS
    assert (tmp_path / "seen.args").read_text().split() == ["--print", "--model", "sonnet"]
    assert (tmp_path / "seen.stdin").read_text("utf-8") == PROMPT


def test_claude_cli_non_zero_exit_gives_none(bin_dir):
    _stub_claude(bin_dir, "echo 'not logged in' >&2\nexit 3\n")
    assert ClaudeCliCaller(timeout=5).call(PROMPT) is None


def test_claude_cli_timeout_gives_none_and_kills_the_child(bin_dir):
    _stub_claude(bin_dir, "cat > /dev/null\nsleep 30\necho late\n")
    assert ClaudeCliCaller(timeout=1).call(PROMPT) is None


def test_claude_cli_reply_beyond_the_limit_is_refused_and_the_child_killed(bin_dir, tmp_path):
    pid = tmp_path / "pid"
    _stub_claude(bin_dir, f'echo $$ > "{pid}"\nhead -c 5000000 /dev/zero\nexec sleep 1000\n')
    caller = ClaudeCliCaller(timeout=30, max_reply_bytes=100_000)
    started = time.monotonic()
    with pytest.raises(LlmCallError, match="larger than 100,000 bytes"):
        caller.ask(PROMPT)
    assert time.monotonic() - started < 10
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid.read_text()), 0)


def test_claude_cli_missing_binary_gives_none(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert ClaudeCliCaller(command="claude").call(PROMPT) is None


# ----------------------------------------------------------------- choosing from settings
def test_provider_none_means_regex_only(settings):
    assert caller_from_settings(settings) is None


def test_factory_builds_each_provider(settings, openai_server, anthropic_server):
    claude = caller_from_settings(replace(settings, llm_provider="claude-cli"))
    assert isinstance(claude, ClaudeCliCaller)
    local = caller_from_settings(
        replace(
            settings,
            llm_provider="openai",
            llm_model="local-model",
            llm_base_url=openai_server.url + "/v1",
            llm_timeout=1,
        ),
        environ={},
    )
    assert local.call(PROMPT) == FACTS
    hosted = caller_from_settings(
        replace(
            settings,
            llm_provider="anthropic",
            llm_model="claude-test",
            llm_timeout=1,
            llm_base_url=anthropic_server.url,
        ),
        environ={"ANTHROPIC_API_KEY": "ak-env"},
    )
    assert hosted.call(PROMPT) == FACTS
    assert _sent_key(anthropic_server.requests[-1][1]) == "ak-env"


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"llm_provider": "openai"}, "MEMORY_LLM_MODEL"),
        ({"llm_provider": "openai", "llm_model": "gpt"}, "MEMORY_LLM_API_KEY"),
        ({"llm_provider": "anthropic", "llm_model": "claude"}, "ANTHROPIC_API_KEY"),
    ],
)
def test_factory_explains_missing_settings(settings, changes, message):
    with pytest.raises(LlmConfigError, match=message):
        caller_from_settings(replace(settings, **changes), environ={})
