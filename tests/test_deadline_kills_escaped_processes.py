"""Issue 35, item 18: a process started by ``claude --print`` that calls ``setsid`` and
double-forks survived the deadline kill (it is then init's child in a session of its own:
neither a process-group kill nor a walk down the process tree finds it).

A fake ``claude`` on PATH escapes in each way a program can; ``memory-curator extract`` runs
as a real process with a 2 s deadline, and every process the fake started must be gone."""

from __future__ import annotations

import os
import signal
import stat
import sys
import time
from pathlib import Path

import pytest

from tests.support.llm import RULES_FACT, Run, pending_contents, process_alive, seed_thread


@pytest.fixture
def seeded(data_dir: Path) -> Path:
    seed_thread(data_dir)
    return data_dir


# Python run as ``claude``: ``escape(pids)`` starts what must be killed, recording every pid
# in the file ``pids``, then the fake waits for ever without answering.
PRELUDE = """
import os, sys, time

PIDS = sys.argv[0] + ".pids"


def record():
    with open(PIDS, "a") as out:
        out.write(f"{os.getpid()}\\n")


def daemon(steps, then):
    \"\"\"Fork; in the child take each of ``steps`` (setsid, setpgid, fork: the parent of a
    fork exits), then run ``then``.\"\"\"
    if os.fork():
        return
    for step in steps:
        if step == "setsid":
            os.setsid()
        elif step == "setpgid":
            os.setpgid(0, 0)
        elif step == "fork" and os.fork():
            os._exit(0)
    record()
    then()
    os._exit(0)


def sleep():
    time.sleep(1000)
"""

ESCAPES = {
    # The classic daemon: fork, setsid, fork again (the middle one exits).
    "setsid-double-fork": 'daemon(["setsid", "fork"], sleep)',
    # A group of its own instead of a session, then the double fork.
    "setpgid-double-fork": 'daemon(["setpgid", "fork"], sleep)',
    # Three levels, a session at each, every middle process gone.
    "setsid-triple-fork": 'daemon(["setsid", "fork", "setsid", "fork", "fork"], sleep)',
    # Daemons started by a daemon, one every 20 ms, so some are forked while the kill runs.
    "a-daemon-that-keeps-forking": """
def spawn():
    for _ in range(150):
        daemon(["setsid", "fork"], sleep)
        time.sleep(0.02)
    sleep()
daemon(["setsid", "fork"], spawn)
""",
    # Several daemons, and the fake's own process exec'ing into something else.
    "many-daemons-then-exec": """
for _ in range(5):
    daemon(["setsid", "fork"], sleep)
os.execvp("sleep", ["sleep", "1000"])
""",
}


def fake_claude(folder: Path, escape: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / "claude"
    body = f"#!{sys.executable}\n{PRELUDE}\nrecord()\n{escape}\ntime.sleep(1000)\n"
    path.write_text(body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path.with_name("claude.pids")


def started(pids: Path) -> list[int]:
    return [int(line) for line in pids.read_text().split()] if pids.exists() else []


@pytest.mark.parametrize("escape", sorted(ESCAPES))
def test_every_process_claude_started_is_killed_at_the_deadline(seeded, tmp_path, escape):
    pids = fake_claude(tmp_path / "bin", ESCAPES[escape])
    env = {
        "MEMORY_LLM_PROVIDER": "claude-cli",
        "MEMORY_LLM_TIMEOUT": "2",
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    try:
        run = Run(seeded, env, limit=60)
        assert run.returncode == 0, run.stderr
        assert "The LLM did not answer within 2 s (MEMORY_LLM_TIMEOUT)" in run.stdout, run.stdout
        assert pending_contents(seeded) == [RULES_FACT]  # the rules ran instead
        assert len(started(pids)) >= 2, "the fake started its daemons"
        deadline = time.monotonic() + 5
        while any(process_alive(pid) for pid in started(pids)) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [pid for pid in started(pids) if process_alive(pid)]
        assert left == [], f"{len(left)} of {len(started(pids))} processes left running"
    finally:
        for pid in started(pids):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
