"""A writer killed with SIGKILL at random moments never leaves a damaged file or loses a reported add.

The same harness run against a naive ``open(path, "w")`` writer must find damage, which shows
that it can fail.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.stores import memory_store
from webapp.stores.atomic import temp_files_of
from webapp.stores.jsonbytes import encode

TRIALS = 200
# A writer: (path, trial number, pipe fd) -> never returns; reports each finished add on the pipe.
Writer = Callable[[Path, int, int], None]


def store_writer(path: Path, trial: int, pipe: int) -> None:
    store = memory_store(path, max_items=1_000_000, max_chars=100_000_000, lock_timeout=30)
    n = 0
    while True:
        memory = store.add(f"trial {trial} add {n}")
        os.write(pipe, f"{memory.id}\n".encode())  # only after add returned
        n += 1


def naive_writer(path: Path, trial: int, pipe: int) -> None:
    n = 0
    while True:
        records = json.loads(path.read_text(encoding="utf-8"))
        memory_id = f"t{trial}-{n}"
        records.append({"id": memory_id, "content": f"trial {trial} add {n}"})
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(records, handle, indent=2)
        os.write(pipe, f"{memory_id}\n".encode())
        n += 1


def run_killed(
    writer: Writer, path: Path, trial: int, wait_for: int, delay: float
) -> tuple[set[str], str | None]:
    """Fork ``writer``; once it reported ``wait_for`` adds, SIGKILL it ``delay`` seconds later.

    Waiting for reports (not for time) keeps the test meaningful on a loaded machine.
    Returns the ids it reported and any failure of its own.
    """
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns about fork() in a process with threads (e.g. an xdist worker);
        # the child only runs the already-imported store code and then os._exit.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: write until killed; never return into pytest
        os.close(read_end)
        try:
            writer(path, trial, write_end)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent through the pipe
            os.write(write_end, f"!{type(exc).__name__}: {exc}\n".encode())
        os._exit(1)
    os.close(write_end)
    received = b""
    deadline = time.monotonic() + 60
    while received.count(b"\n") < wait_for and b"!" not in received and time.monotonic() < deadline:
        if select.select([read_end], [], [], 1)[0]:
            received += os.read(read_end, 65536)
    time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    with os.fdopen(read_end, "rb") as pipe:
        lines = (received + pipe.read()).decode().splitlines()
    failures = [line[1:] for line in lines if line.startswith("!")]
    # Each report is one write of less than PIPE_BUF bytes, so a kill never cuts a line short.
    reported = {line for line in lines if line and not line.startswith("!")}
    if len(reported) < wait_for and not failures:
        failures = [f"only {len(reported)} of {wait_for} adds reported within 60 s"]
    return reported, (failures[0] if failures else None)


def damage(path: Path, reported: set[str]) -> str | None:
    """What is wrong with the file after a kill: unparseable, or a reported add missing."""
    try:
        records = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return f"the file does not parse: {exc}"
    if not isinstance(records, list):
        return "the file is not an array"
    missing = reported - {r.get("id") for r in records}
    return f"{len(missing)} reported adds are missing" if missing else None


def crash_loop(writer: Writer, path: Path, trials: int, seed: int) -> list[str]:
    """Kill ``writer`` ``trials`` times at random moments; the problems found (stops at the first)."""
    rng = random.Random(seed)
    reported: set[str] = set()
    for trial in range(trials):
        ids, failure = run_killed(writer, path, trial, rng.randint(0, 1), rng.uniform(0.0, 0.01))
        if failure:
            return [f"trial {trial}: the writer failed: {failure}"]
        reported |= ids
        problem = damage(path, reported)
        if problem:
            return [f"trial {trial}: {problem}"]
    return []


def seeded_file(path: Path) -> None:
    """A file with some content, so a write takes long enough to be interrupted."""
    records = [
        {
            "id": f"seed-{n}",
            "content": f"seed memory number {n} " * 3,
            "createdAt": "2026-01-01T00:00:00.000Z",
            "updatedAt": "2026-01-01T00:00:00.000Z",
            "category": "general",
        }
        for n in range(300)
    ]
    path.write_bytes(encode(records))


@pytest.mark.slow
def test_the_store_survives_being_killed_at_random_moments(data_dir):
    path = data_dir / "memories.json"
    seeded_file(path)

    assert crash_loop(store_writer, path, TRIALS, seed=20261122) == []

    store = memory_store(path, max_items=1_000_000, max_chars=100_000_000).init()
    assert len(store.get_all()) >= 300 + TRIALS // 4  # each trial waits for 0 or 1 reported add
    assert temp_files_of(path) == []  # init removed what killed writers left behind
    assert json.loads(store._file.backup_path.read_bytes())  # the backup parses too


def test_the_harness_catches_a_naive_writer(data_dir):
    path = data_dir / "memories.json"
    seeded_file(path)
    problems = crash_loop(naive_writer, path, TRIALS, seed=20261122)
    assert problems, "the harness should have caught the naive writer damaging the file"
    assert "does not parse" in problems[0] or "missing" in problems[0]
