"""Nothing proposed twice (issue 34): the demo's threads, read again by the rules after every
proposal was approved, propose nothing — `memory-curator demo` and `extract` as real processes."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_cli
from webapp.curator import Curator
from webapp.settings import Settings
from webapp.stores import MemoryStore, ReviewQueue


def test_the_demo_threads_read_again_after_approving_everything_propose_nothing(tmp_path: Path):
    folder = tmp_path / "demo"
    run_cli("demo", "--data-dir", str(folder), ok=True, timeout=300)
    run_cli("extract", "--all", "--data-dir", str(folder), ok=True, timeout=300)
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
    again = run_cli("extract", "--all", "--data-dir", str(folder), ok=True, timeout=300)
    memories = MemoryStore.from_settings(settings)
    proposed = ReviewQueue.from_settings(settings, memories).pending()
    assert [item.content for item in proposed] == [], again.stdout
