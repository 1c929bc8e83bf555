"""Nothing proposed twice (issue 34): the demo's threads, read again by the rules after every
proposal was approved, propose nothing — `memory-curator demo` and `extract` as real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from webapp.curator import Curator
from webapp.settings import Settings
from webapp.stores import MemoryStore, ReviewQueue


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    result = subprocess.run(
        [sys.executable, "-m", "webapp", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result


def test_the_demo_threads_read_again_after_approving_everything_propose_nothing(tmp_path: Path):
    folder = tmp_path / "demo"
    _cli("demo", "--data-dir", str(folder))
    _cli("extract", "--all", "--data-dir", str(folder))
    settings = Settings().with_data_dir(folder)
    curator = Curator.from_settings(settings, actor="tester")
    approved = 0
    for item in curator.pending():
        if item.owner_undecided:  # nobody could tell whose: the household's
            curator.approve(item.id, person=None)
        else:
            curator.approve(item.id)
        approved += 1
    assert approved
    assert curator.pending() == []
    # Read every thread again, as if never read.
    (folder / "extraction-state.json").unlink()
    again = _cli("extract", "--all", "--data-dir", str(folder))
    memories = MemoryStore.from_settings(settings)
    proposed = ReviewQueue.from_settings(settings, memories).pending()
    assert [item.content for item in proposed] == [], again.stdout
