"""The Needs attention scanner's schedule, with the scan itself held at a gate: one scan at a
time per store, a newer version of the file replaces the one waiting, old results are let go,
and a page never waits for a scan that cannot finish in time."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import pytest

import webapp.attention.scanner as attention
from tests.support.stores import memory_store
from webapp.attention.scanner import AttentionScanner
from webapp.stores import Memory, MemoryStore

TODAY = date(2026, 11, 25)


def scan_threads() -> list[threading.Thread]:
    """Every attention scan thread in this process, whichever scanner started it."""
    return [t for t in threading.enumerate() if t.name == "attention-scan" and t.is_alive()]


class GatedScan:
    """Stands in for ``scan``: notes how many memories each scan got, then waits for the gate.

    Only for the scanner under test: scan threads of other scanners in this process (apps an
    earlier test in the same worker made, still rescanning in the background) were running
    before it was made; their calls go to the real ``scan`` and are not counted.
    """

    def __init__(self) -> None:
        self.others = frozenset(scan_threads())
        self.real_scan = attention.scan
        self.started: list[int] = []
        self.gate = threading.Event()
        self.running = 0
        self.most_at_once = 0
        self._guard = threading.Lock()

    def __call__(self, memories: Sequence[Memory], **kwargs: Any) -> list[Any]:
        if threading.current_thread() in self.others:
            return self.real_scan(memories, **kwargs)
        with self._guard:
            self.started.append(len(memories))
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        try:
            assert self.gate.wait(30), "the test never opened the gate"
        finally:
            with self._guard:
                self.running -= 1
        return []

    def wait_started(self, count: int) -> None:
        deadline = time.monotonic() + 10
        while len(self.started) < count:
            assert time.monotonic() < deadline, f"only {self.started} scans started"
            time.sleep(0.005)

    def threads(self) -> list[threading.Thread]:
        """The scan threads of the scanner under test."""
        return [t for t in scan_threads() if t not in self.others]


@pytest.fixture
def gated(monkeypatch) -> Iterator[GatedScan]:
    fake = GatedScan()
    monkeypatch.setattr(attention, "scan", fake)
    yield fake
    fake.gate.set()  # never leave a scan thread waiting


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    store = memory_store(tmp_path / "memories.json", max_items=1000, max_chars=10**6)
    store.add("Prefers tea")
    return store


def settled(scanner: AttentionScanner) -> Any:
    """The report once the file as it is now is scanned."""
    deadline = time.monotonic() + 10
    while True:
        report, current = scanner.report(wait=0.05)
        if current:
            return report
        assert time.monotonic() < deadline, "the scan of the newest version never finished"


def test_one_scan_at_a_time_and_the_newest_version_replaces_the_waiting_one(gated, store):
    scanner = AttentionScanner(store, 180, today=lambda: TODAY)
    assert scanner.report(wait=0) == (None, False)
    gated.wait_started(1)
    for n in range(2, 8):  # six more versions of the file, each asked for by a page
        store.add(f"Fact number {n}")
        assert scanner.report(wait=0) == (None, False)
    assert len(gated.threads()) == 1 and gated.started == [1]

    gated.gate.set()
    report = settled(scanner)
    # The first scan, then the newest version only: the five in between were never scanned.
    assert gated.started == [1, 7] and gated.most_at_once == 1
    assert report.checked == 7
    assert scanner.report(wait=0) == (report, True)  # nothing is scanned twice


def test_results_of_older_versions_are_let_go(gated, store):
    gated.gate.set()
    scanner = AttentionScanner(store, 180, today=lambda: TODAY)
    first = weakref.ref(settled(scanner))
    for n in range(5):
        store.add(f"Fact number {n}")
        settled(scanner)
    gc.collect()
    assert first() is None  # only the last finished report is kept
    assert len(gated.started) == 6


def test_a_page_never_waits_for_a_scan_that_cannot_be_ready_in_time(gated, store):
    ticks = iter(range(0, 10**6, 60))  # a clock by which every scan takes a minute
    scanner = AttentionScanner(store, 180, today=lambda: TODAY, clock=lambda: next(ticks))
    scanner.report(wait=0)
    gated.wait_started(1)
    gated.gate.set()
    last = settled(scanner)
    gated.gate.clear()  # the next scan is held until the page has its answer
    store.add("Prefers green tea")
    asked = time.monotonic()
    report, current = scanner.report(wait=10)
    took = time.monotonic() - asked
    gated.gate.set()
    # The last results at once, marked as not current (the page says it is still checking),
    # rather than holding a request thread for the ten seconds it was allowed.
    assert (report, current) == (last, False)
    assert took < 5


def test_while_a_rescan_runs_pages_show_the_findings_still_true(store):
    from webapp.attention.scanner import still_true

    alarm = store.add("Alarm at 06:45")
    store.add("Alarm at 07:00")
    store.add("Prefers tea!")
    scanner = AttentionScanner(store, 180, today=lambda: TODAY)
    report = settled(scanner)
    assert {f.kind for f in report.findings} == {"duplicate", "contradiction"}
    store.update(alarm.id, "Alarm at 06:30 on weekdays")
    shown = still_true(store, report, frozenset())
    assert [f.kind for found in shown.values() for f in found] == ["duplicate"]
    assert still_true(store, report, frozenset()) is shown  # once per version of the file


def test_scans_take_at_most_half_of_the_window_and_start_at_once_after_a_quiet_spell(
    store: MemoryStore,
) -> None:
    """One memory changed right after a long first scan is scanned at once (it used to wait as
    long as that scan took); while scans keep coming they take at most half of the time."""
    scanner = AttentionScanner(store, stale_days=180)
    now = 1000.0
    assert scanner._rest(now) == 0.0  # nothing scanned yet
    scanner._busy = [(now - 7.0, now)]  # a 7 s first scan just ended
    assert scanner._rest(now) == 0.0
    scanner._busy = [(now - 14.0, now - 7.0), (now - 7.0, now)]  # two back to back
    assert scanner._rest(now) == pytest.approx(4.0)
    scanner._busy = [(now - 30.0, now)]  # a scan longer than the window: the most it waits
    assert scanner._rest(now) == attention.MAX_REST
    scanner._busy = [(now - 40.0, now - 25.0)]  # long ago: forgotten
    assert scanner._rest(now) == 0.0 and scanner._busy == []


def test_the_scan_by_meaning_waits_as_long_as_the_quick_report_took(store: MemoryStore) -> None:
    """After the rules' quick report, a change made at once is picked up by another quick one
    before the scan by meaning (which may embed every memory) starts: that scan waits as long as
    the quick report took (the benchmark's edit right after the first page waited 190 s)."""
    scanner = AttentionScanner(store, stale_days=180)
    now = time.monotonic()
    scanner._busy = [(now - 2.0, now)]
    scanner._hold_until = now + 2.0
    assert scanner._rest(now) == pytest.approx(2.0)
    assert scanner._rest(now + 2.5) == 0.0
