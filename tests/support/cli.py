"""``memory-curator`` as its own process, as a person or a script runs it: ``python -m webapp``
with this machine's settings left out of its environment."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.support import REPO

# What the tests never inherit: settings of the machine they run on (its data folder, caps,
# model) and a Supervisor token that would make the program believe it runs as the add-on.
_MACHINE_SETTINGS = ("MEMORY_", "CONVERSATION_", "SUPERVISOR")


def clean_env(**changes: str) -> dict[str, str]:
    """This process's environment without the machine's settings, with ``changes``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_MACHINE_SETTINGS)}
    return env | changes


def run_cli(
    *args: str,
    data_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = REPO,
    timeout: float = 180,
    ok: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``memory-curator ARGS [--data-dir DATA_DIR]`` run to its end; ``env`` adds to a clean
    environment. With ``ok`` the run must succeed (its output is the failure's message)."""
    command = [sys.executable, "-m", "webapp", *args]
    if data_dir is not None:
        command += ["--data-dir", str(data_dir)]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=clean_env(**(env or {})),
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    if ok:
        assert done.returncode == 0, done.stdout + done.stderr
    return done
