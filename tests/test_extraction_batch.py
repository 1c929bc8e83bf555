"""Extraction over every conversation, one thread per step, with its state in a file that
several processes share (ExtractionBatch)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from webapp.extraction import ExtractionBatch
from webapp.settings import Settings
from webapp.stores import ConversationStore, MemoryStore, ReviewQueue

THREADS = {
    "slack:1731900000.123456": "I always use metric units, please.",
    "slack:1731986400.000200": "記住我喜歡喝無糖綠茶。",
    "cli:session-1731990000000": "以后都用 YAML 格式写自动化。",
    "schedule:morning-briefing": "Run the morning briefing.",
}


def add_threads(settings: Settings) -> None:
    store = ConversationStore.from_settings(settings)
    for key, message in THREADS.items():
        store.add_exchange(key, message, "OK.")


def pending(settings: Settings) -> list[str]:
    memories = MemoryStore.from_settings(settings)
    return [item.content for item in ReviewQueue(settings.review_file, memories).pending()]


def test_a_run_reads_every_thread_once_and_reports_what_it_found(settings: Settings):
    add_threads(settings)
    batch = ExtractionBatch(settings, caller=None)
    assert batch.progress() is None
    started = batch.start()
    assert (started.running, started.total, started.done) == (True, 4, 0)
    assert batch.start().id == started.id  # a second start joins the run going on

    first = batch.step()
    assert first is not None and (first.running, first.done) == (True, 1)
    finished = batch.run_to_end()
    assert finished is not None and not finished.running
    assert (finished.total, finished.done, finished.failed) == (4, 4, ())
    assert finished.queued == len(pending(settings)) >= 2
    assert sorted(finished.found) == sorted(pending(settings))
    on_disk = json.loads(batch.path.read_text(encoding="utf-8"))
    assert batch.path.name == "extraction-job.json" and on_disk["status"] == "done"
    assert on_disk["finishedAt"]

    again = batch.start()  # a finished run can be started afresh; nothing is proposed twice
    assert again.id != started.id
    assert batch.run_to_end().queued == 0
    assert len(pending(settings)) == finished.queued


def test_no_conversations_finishes_at_once(settings: Settings):
    progress = ExtractionBatch(settings, caller=None).start()
    assert (progress.running, progress.total) == (False, 0)


def test_a_claim_left_by_a_dead_worker_is_taken_over(settings: Settings):
    add_threads(settings)
    dead = ExtractionBatch(settings, caller=None)
    dead.start()
    claimed = dead._claim()  # the worker dies right after claiming
    assert claimed in THREADS
    alive = ExtractionBatch(settings, caller=None, claim_timeout=3600)
    progress = alive.run_to_end()
    assert progress is not None and progress.running and progress.done == 3  # waits for it
    later = ExtractionBatch(settings, caller=None, claim_timeout=0)
    progress = later.run_to_end()
    assert progress is not None and not progress.running and progress.done == 4


STEPPER = """
import sys
from webapp.extraction import ExtractionBatch
from webapp.settings import Settings
settings = Settings.from_env(environ={"MEMORY_DATA_DIR": sys.argv[1]}, options_file=sys.argv[2])
batch = ExtractionBatch(settings, caller=None)
while True:
    progress = batch.step()
    if progress is None or not progress.running:
        break
"""


def test_two_processes_share_one_run_without_reading_a_thread_twice(
    settings: Settings, data_dir: Path, tmp_path: Path
):
    store = ConversationStore.from_settings(settings)
    for n in range(12):
        store.add_exchange(f"cli:session-{n}", f"I always use tool number {n}.", "OK.")
    ExtractionBatch(settings, caller=None).start()
    command = [sys.executable, "-c", STEPPER, str(data_dir), str(tmp_path / "no-options.json")]
    workers = [subprocess.Popen(command) for _ in range(2)]
    assert [w.wait(timeout=120) for w in workers] == [0, 0]
    progress = ExtractionBatch(settings, caller=None).progress()
    assert progress is not None and not progress.running
    assert (progress.total, progress.done, progress.failed) == (12, 12, ())
    assert progress.queued == len(pending(settings)) == len(set(pending(settings)))
