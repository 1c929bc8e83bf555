"""The add-on's move of its private data into the shared folder (``memory_data_dir``) is all or
nothing. ``memory-curator serve`` runs as a real process and is killed with SIGKILL in the
middle of the move — after each file is copied, before and after each fsync, before and after
the marker, while the copies are put in place and while the originals are removed — and a new
start then serves the whole household (memories, people, Review, tombstones, conversations,
skills) with nothing left behind in the private folder, or refuses with a clear line."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support import REPO
from tests.support.cli import clean_env
from tests.support.mcp_http import call_tool, dashboard, free_port
from webapp.curator import Curator
from webapp.settings import Settings
from webapp.web.plumbing.shared_folder import MARKER, STAGING

# ``serve`` in a process that kills itself with SIGKILL where the move reaches the step
# argv[1]: every step it reaches is appended to the file argv[2] first.
AT_STEP = """
import os, signal, sys
from webapp.web.plumbing import shared_folder
stop_at, steps = sys.argv[1], sys.argv[2]
def checkpoint(step):
    with open(steps, "a", encoding="utf-8") as out:
        out.write(step + "\\n")
    if step == stop_at:
        os.kill(os.getpid(), signal.SIGKILL)
shared_folder.checkpoint = checkpoint
from webapp.cli import main
main(["serve", "--host", "127.0.0.1", "--port", sys.argv[3]], prog_name="memory-curator")
"""

# ``serve`` in a process that kills itself with SIGKILL right after the memory file is copied
# (however the move copies: the hook is shutil's copy, which any version uses).
AFTER_MEMORIES_COPIED = """
import os, shutil, signal, sys
copy2 = shutil.copy2
def copy_then_die(src, dst, *args, **kwargs):
    done = copy2(src, dst, *args, **kwargs)
    if os.path.basename(str(src)) == "memories.json":
        os.kill(os.getpid(), signal.SIGKILL)
    return done
shutil.copy2 = copy_then_die
from webapp.cli import main
main(["serve", "--host", "127.0.0.1", "--port", sys.argv[1]], prog_name="memory-curator")
"""

LAST_STEP = "marker done in place"


def _folder_settings(folder: Path) -> Settings:
    return Settings.from_env(
        environ={"MEMORY_DATA_DIR": str(folder)}, options_file=folder / "no-options.json"
    )


def served_household(folder: Path) -> dict[str, list[str]]:
    """What a start over ``folder`` serves, kind by kind."""
    curator = Curator.from_settings(_folder_settings(folder))
    return {
        "memories": sorted(m.content for m in curator.memories.get_all()),
        "people": sorted(p.name for p in curator.people.people()),
        "review": sorted(item.content for item in curator.pending()),
        "tombstones": sorted(t.content for t in curator.tombstones.all()),
        "conversations": sorted(c.id for c in curator.conversations.list_conversations()),
        "skills": sorted(doc.id for doc in curator.skills.list()),
    }


@pytest.fixture(scope="module")
def household(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    """A private folder in the add-on's layout holding one of everything, and what it holds."""
    build = tmp_path_factory.mktemp("build") / "data"
    subprocess.run(
        [sys.executable, "-m", "webapp", "demo"],
        cwd=REPO,
        env=clean_env(MEMORY_DATA_DIR=str(build)),
        check=True,
        capture_output=True,
    )
    curator = Curator.from_settings(_folder_settings(build))
    curator.forget(curator.memories.get_all()[0].id)  # a tombstone
    expected = served_household(build)
    assert all(expected.values()), expected  # one of each kind at least
    private = build.parent / "private"
    (private / "memories").mkdir(parents=True)
    for entry in build.iterdir():
        if entry.name.endswith(".lock") or entry.name == "no-options.json":
            continue
        shutil.move(entry, private / ("" if entry.is_dir() else "memories") / entry.name)
    return private, expected


def _data_bytes(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not p.name.endswith(".lock") and p.name != "options.json"
    }


def _setup(tmp_path: Path, household: tuple[Path, dict[str, list[str]]]) -> tuple[Path, Path, Path]:
    private, shared = tmp_path / "private", tmp_path / "share" / "memory_curator"
    shutil.copytree(household[0], private)
    options = private / "options.json"
    options.write_text(
        json.dumps(
            {
                "memory_data_dir": str(shared),
                "memory_mcp_trusted": "127.0.0.1",
                "memory_auto_extract": False,  # Review holds what was moved, nothing new
            }
        ),
        encoding="utf-8",
    )
    return private, shared, options


def _killed_serve(script: str, *args: str, options: Path) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=REPO,
        env=clean_env(MEMORY_OPTIONS_FILE=str(options), MEMORY_DATA_DIR=""),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == -signal.SIGKILL, done.stdout + done.stderr
    return done


def _start_and_check(
    private: Path, shared: Path, options: Path, expected: dict[str, list[str]]
) -> str:
    """A new start: it serves the whole household and leaves only options.json behind."""
    with dashboard(shared, MEMORY_OPTIONS_FILE=str(options), MEMORY_DATA_DIR="") as running:
        added = anyio.run(
            lambda: call_tool(
                running.mcp_url, "manage_memory", {"action": "add", "content": "Owns a kayak."}
            )
        )
        assert not added[0], added[1]
        _, recalled = anyio.run(lambda: call_tool(running.mcp_url, "recall", {}))
    served = served_household(shared)
    assert served == expected | {"memories": sorted([*expected["memories"], "Owns a kayak."])}
    assert expected["memories"][0] in recalled
    assert [p.name for p in private.iterdir()] == ["options.json"], running.output
    assert not (shared / STAGING).exists()
    assert json.loads((shared / MARKER).read_bytes())["state"] == "done"
    return running.output


def test_a_start_killed_after_the_memory_file_was_copied_is_finished_by_the_next_start(
    tmp_path: Path, household: tuple[Path, dict[str, list[str]]]
) -> None:
    """The case found: a move cut off after memories.json was copied left a shared folder
    holding a memory but no people, Review or tombstones, which the next start served."""
    private, shared, options = _setup(tmp_path, household)
    before = _data_bytes(private)
    _killed_serve(AFTER_MEMORIES_COPIED, str(free_port()), options=options)
    assert _data_bytes(private) == before  # nothing was removed yet
    assert not (shared / "memories.json").exists()  # nothing any program would open
    output = _start_and_check(private, shared, options, household[1])
    assert "cut off before the copy was whole" in output


@pytest.mark.slow
def test_a_move_killed_at_every_step_is_whole_after_the_next_start(
    tmp_path: Path, household: tuple[Path, dict[str, list[str]]]
) -> None:
    first = tmp_path / "steps"
    first.mkdir()
    private, shared, options = _setup(first, household)
    steps_file = first / "steps.txt"
    _killed_serve(AT_STEP, LAST_STEP, str(steps_file), str(free_port()), options=options)
    steps = steps_file.read_text(encoding="utf-8").splitlines()
    files = len(_data_bytes(household[0]))
    for kind in ("copied", "fsynced", "placed", "removed"):
        assert sum(s.startswith(kind + " ") for s in steps) == files, (kind, steps)
    for step in ("marker copied written, not in place", "marker copied in place", LAST_STEP):
        assert step in steps
    for n, step in enumerate(steps):
        case = tmp_path / f"step-{n}"
        case.mkdir()
        private, shared, options = _setup(case, household)
        before = _data_bytes(private)
        _killed_serve(AT_STEP, step, str(case / "steps.txt"), str(free_port()), options=options)
        marker: dict[str, Any] = (
            json.loads((shared / MARKER).read_bytes()) if (shared / MARKER).exists() else {}
        )
        if not marker:  # until the marker says the copy is whole, /data is whole
            assert _data_bytes(private) == before, step
        _start_and_check(private, shared, options, household[1])


def test_a_start_after_a_finished_move_copies_nothing_again(
    tmp_path: Path, household: tuple[Path, dict[str, list[str]]]
) -> None:
    """Old data put back in /data (a restored backup) is not copied over the newer shared
    folder, and the write made after the move is served."""
    private, shared, options = _setup(tmp_path, household)
    old = _data_bytes(private)
    _start_and_check(private, shared, options, household[1])
    # the marker and the mover's lock are the program's own files, not strangers
    kinds = Curator.from_settings(_folder_settings(shared)).folder_files()
    assert kinds[shared / MARKER] == "move record"
    assert not [path for path, kind in kinds.items() if not kind]
    for name, content in old.items():  # the backup comes back
        (private / name).parent.mkdir(parents=True, exist_ok=True)
        (private / name).write_bytes(content)
    with dashboard(shared, MEMORY_OPTIONS_FILE=str(options), MEMORY_DATA_DIR="") as running:
        running.wait_for_output("already holds a memory")
    assert "Owns a kayak." in served_household(shared)["memories"]
    assert _data_bytes(private) == old  # left where it is


def test_an_unreadable_marker_stops_the_start_and_changes_nothing(
    tmp_path: Path, household: tuple[Path, dict[str, list[str]]]
) -> None:
    private, shared, options = _setup(tmp_path, household)
    before = _data_bytes(private)
    shared.mkdir(parents=True)
    (shared / MARKER).write_text('{"version": 7, "state": "copied", "files": []}')
    done = subprocess.run(
        [sys.executable, "-m", "webapp", "serve", "--port", str(free_port())],
        cwd=REPO,
        env=clean_env(MEMORY_OPTIONS_FILE=str(options), MEMORY_DATA_DIR=""),
        capture_output=True,
        timeout=120,
    )
    said = (done.stdout + done.stderr).decode()
    assert done.returncode != 0
    assert f"The move marker {shared / MARKER} cannot be used (version 7" in said
    assert _data_bytes(private) == before
    assert sorted(p.name for p in shared.iterdir()) == [".memory-move.lock", MARKER]
