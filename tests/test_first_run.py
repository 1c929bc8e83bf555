"""The first run, as a person meets it: from a fresh copy of the repository, `./run.sh` sets
up and says what it does in a few lines, with no packaging warnings, by uv and by the pip
fallback alike."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from webapp import __version__

ROOT = Path(__file__).resolve().parent.parent


def fresh_copy(tmp_path: Path) -> Path:
    """The files git tracks, as they are in the working tree (a clone without the history)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode("utf-8")
    copy = tmp_path / "checkout"
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if not source.is_file():  # deleted in the working tree
            continue
        target = copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return copy


@pytest.mark.slow
@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_first_run_says_what_it_does_without_warnings(tmp_path, installer):
    copy = fresh_copy(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "VIRTUAL_ENV"))}
    if installer == "pip":
        env["SETUP_INSTALLER"] = "pip"
    first = subprocess.run(
        ["./run.sh", "--version"], cwd=copy, env=env, capture_output=True, text=True, timeout=900
    )
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == f"memory-curator, version {__version__}"
    lines = first.stderr.splitlines()
    assert lines == [
        "memory-curator: creating the virtual environment in .venv",
        f"memory-curator: installing Memory Curator and its dependencies into .venv (with {installer})",
        lines[2],
    ], first.stderr
    assert lines[2].startswith("memory-curator: installed in ")
    assert "warning" not in first.stderr.lower()

    again = subprocess.run(
        ["./run.sh", "--version"], cwd=copy, env=env, capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 0 and again.stderr == "", "a second run sets nothing up again"
