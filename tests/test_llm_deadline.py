"""`memory-curator extract` as a real process against LLMs that misbehave: a local server that
trickles a valid reply one byte a second (OpenAI and Anthropic wire formats), a `claude` that
never answers, a reply of 50 MB, a reply with 3,000 facts.

MEMORY_LLM_TIMEOUT bounds the whole call, from connect to the last byte; a reply is read up to
MEMORY_LLM_MAX_REPLY_BYTES; a thread gives at most MEMORY_MAX_FACTS_PER_THREAD facts; each
run says what it cut."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import clean_env
from tests.support.llm import (
    RULES_FACT,
    THREAD,
    FakeLlmServer,
    Run,
    anthropic_body,
    openai_body,
    pending_contents,
    process_alive,
    seed_thread,
)
from tests.support.stores import memory_store


@pytest.fixture
def seeded(data_dir: Path) -> Path:
    seed_thread(data_dir)
    return data_dir


def _llm_env(provider: str, server: FakeLlmServer, timeout: int) -> dict[str, str]:
    return {
        "MEMORY_LLM_PROVIDER": provider,
        "MEMORY_LLM_MODEL": "test-model",
        "MEMORY_LLM_BASE_URL": server.url + ("/v1" if provider == "openai" else ""),
        "MEMORY_LLM_API_KEY": "sk-test",
        "MEMORY_LLM_TIMEOUT": str(timeout),
    }


def _peak_kib(data_dir: Path, env: dict[str, str]) -> tuple[int, str, float]:
    """Peak resident memory of one `extract` run, its output and its duration, measured by a
    helper process whose only child is that run."""
    helper = (
        "import resource, subprocess, sys, time, json\n"
        "started = time.monotonic()\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=120)\n"
        "print(json.dumps({'peak': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,\n"
        "    'out': done.stdout + done.stderr, 'seconds': time.monotonic() - started}))\n"
    )
    command = [sys.executable, "-m", "webapp", "extract", "--data-dir", str(data_dir)]
    done = subprocess.run(
        [sys.executable, "-c", helper, *command, "--conversation", THREAD],
        env=clean_env(**env),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    return int(found["peak"]), str(found["out"]), float(found["seconds"])


def _snapshot(folder: Path, *names: str) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in names if (folder / name).exists()}


def _memories(data_dir: Path) -> list[str]:
    store = memory_store(
        data_dir / "memories.json", lock_timeout=10, max_items=10000, max_chars=10**7
    )
    return [m.content for m in store.get_all()]


# ----------------------------------------------------------------- the deadline
@pytest.mark.parametrize(
    "provider, body",
    [("openai", openai_body), ("anthropic", anthropic_body)],
)
def test_a_reply_trickled_a_byte_a_second_is_cut_off_at_the_timeout(seeded, provider, body):
    timeout = 3
    with FakeLlmServer(body) as server:
        baseline = Run(seeded, _llm_env(provider, server, timeout))  # the same run, answered
        assert baseline.returncode == 0, baseline.stderr
        (seeded / "extraction-state.json").unlink()
        (seeded / "review.json").unlink()
        conversations = _snapshot(seeded, "conversations/conversations.json")
        server.mode = "trickle"
        run = Run(seeded, _llm_env(provider, server, timeout), limit=baseline.seconds + 60)
    assert run.returncode == 0, run.stderr
    # Bounded by the timeout plus what the same run takes when the LLM answers at once.
    assert run.seconds < baseline.seconds + timeout + 3, (run.seconds, baseline.seconds)
    assert "The LLM did not answer within 3 s (MEMORY_LLM_TIMEOUT)" in run.stdout, run.stdout
    assert "Traceback" not in run.stderr
    # Nothing lost: the thread is as it was, and the rules' fact waits in Review.
    assert _snapshot(seeded, "conversations/conversations.json") == conversations
    assert pending_contents(seeded) == [RULES_FACT]
    assert _memories(seeded) == []


def _stub_claude(folder: Path, script: str) -> None:
    folder.mkdir(exist_ok=True)
    path = folder / "claude"
    path.write_text("#!/bin/sh\n" + script, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def test_a_claude_that_never_answers_is_killed_at_the_deadline_with_its_children(seeded, tmp_path):
    """The stub starts a child in a session of its own (out of reach of a process-group kill)
    that keeps the output pipe open, then sleeps: both must be gone at the deadline."""
    pids = tmp_path / "pids"
    _stub_claude(
        tmp_path / "bin",
        f'echo $$ >> "{pids}"\n'
        f"setsid sh -c 'echo $$ >> \"{pids}\"; exec sleep 1000' &\n"
        "exec sleep 1000\n",
    )
    env = {
        "MEMORY_LLM_PROVIDER": "claude-cli",
        "MEMORY_LLM_TIMEOUT": "2",
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    try:
        run = Run(seeded, env, limit=40)
        assert run.returncode == 0, run.stderr
        assert run.seconds < 2 + 10, run.seconds
        assert "The LLM did not answer within 2 s (MEMORY_LLM_TIMEOUT)" in run.stdout, run.stdout
        assert pending_contents(seeded) == [RULES_FACT]
        started = [int(line) for line in pids.read_text().split()]
        assert len(started) == 2
        deadline = time.monotonic() + 5
        while any(process_alive(pid) for pid in started) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [pid for pid in started if process_alive(pid)] == [], "left running"
    finally:
        for pid in [int(line) for line in pids.read_text().split()] if pids.exists() else []:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


# ----------------------------------------------------------------- the size of a reply
@pytest.mark.parametrize("declared", [True, False], ids=["with-length", "without-length"])
def test_a_50_mb_reply_is_not_read_and_memory_stays_bounded(seeded, declared):
    with FakeLlmServer(openai_body) as server:
        env = _llm_env("openai", server, 30)
        anchor_kib, _, _ = _peak_kib(seeded, env)  # the same run with a short reply
        (seeded / "extraction-state.json").unlink()
        (seeded / "review.json").unlink()
        server.mode = "huge"
        server.declare_length = declared
        peak_kib, output, _ = _peak_kib(seeded, env)
        sent = server.bytes_sent
    grown_mib = (peak_kib - anchor_kib) / 1024
    print(f"peak RSS: {anchor_kib / 1024:.0f} MiB answered, {peak_kib / 1024:.0f} MiB with 50 MB")
    assert grown_mib < 25, f"the 50 MB reply took {grown_mib:.0f} MiB more"
    assert sent < 25 * 1024 * 1024, f"{sent} bytes were sent: the reply was read to its end"
    assert "larger than 1,000,000 bytes (MEMORY_LLM_MAX_REPLY_BYTES)" in output, output
    assert pending_contents(seeded) == [RULES_FACT]


def _many_facts(count: int) -> str:
    return json.dumps(
        [
            {
                "content": f"Keeps spare key number {n} in drawer {n * 7919 % 10007}",
                "category": "general",
                "confidence": 0.9,
            }
            for n in range(count)
        ]
    )


@pytest.mark.parametrize("mode", ["manual", "auto"])
def test_3000_facts_from_one_thread_give_at_most_the_cap_and_say_what_was_cut(seeded, mode):
    with FakeLlmServer(openai_body, reply=_many_facts(3000)) as server:
        env = {**_llm_env("openai", server, 30), "MEMORY_REVIEW_MODE": mode}
        run = Run(seeded, env)
    assert run.returncode == 0, run.stderr
    pending, memories = pending_contents(seeded), _memories(seeded)
    assert 0 < len(pending) + len(memories) <= 20, (len(pending), len(memories))
    if mode == "auto":
        assert pending == [] and len(memories) == 20
    assert (
        "2980 more fact(s) left out: at most 20 per conversation (MEMORY_MAX_FACTS_PER_THREAD)"
        in run.stdout
    ), run.stdout
