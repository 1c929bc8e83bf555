"""Needs attention: near-duplicates, contradictions, stale and hard-to-use memories, and
memories that hold a secret (``webapp.sensitive.secrets``).

``scan`` finds them all; pairs come from an index of the memories' terms (a pair is compared
only when it shares one of the rarer terms, never all pairs), and every comparison is cached
by the two texts, so a rescan after one change only compares that memory again.
``AttentionScanner`` scans in one background thread per store, the newest version of the
memory file only, so a page never waits for 10,000 memories. The pairs are found in
``pair_findings``, what is wrong with one memory in ``one_memory``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from ..stores.memories import Memory
from ..stores.readers import MemoryReader
from .findings import Finding, across_people
from .llm_tier import PairChecker, second_opinion, tier_pairs
from .one_memory import memory_findings
from .pair_findings import held_by_everyone, pair_findings, semantic_pair_findings
from .semantic import SemanticIndex

log = logging.getLogger(__name__)

KINDS = ("duplicate", "contradiction", "related", "stale", "hard", "secret", "expired")
MODEL_KINDS = ("related",)  # found only by an LLM (Needs attention's LLM tier)
KIND_LABELS = {
    "duplicate": "Near-duplicates",
    "contradiction": "Contradictions",
    "related": "Possibly related",
    "stale": "Stale",
    "hard": "Hard to use",
    "secret": "Secrets",
    "expired": "Expired",
}


def scan(
    memories: Sequence[Memory],
    *,
    today: date,
    stale_days: int,
    semantic: SemanticIndex | None = None,
) -> list[Finding]:
    """Every finding among ``memories``: pairs first (by the similarity layer with
    ``semantic``, else by the rules), then stale and hard-to-use ones."""
    if semantic is not None:
        findings = semantic_pair_findings(memories, semantic)
    else:
        findings = pair_findings(memories)
    # Two people may like different things: pairs are within one person's memories, or a
    # person's and the household's, never two people's (the same fact held by everyone is
    # offered as the household's instead).
    findings = [f for f in findings if not across_people(f.memories)]
    findings += held_by_everyone(memories)
    for memory in memories:
        findings += memory_findings(memory, today=today, stale_days=stale_days)
    return findings


# ------------------------------------------------------------------ in the background
@dataclass
class AttentionReport:
    """The findings of one scan of one version of the memory file."""

    findings: list[Finding]
    checked: int  # how many memories were scanned
    seconds: float  # how long the scan took
    error: str | None = None  # why the scan failed, when it did
    # Pairs by the rules' words only, shown while the similarity layer loads its model or
    # embeds many memories; the scan by meaning follows at once, for the next page to show.
    partial: bool = False
    # Pairs the LLM has not checked yet (its answer follows, for the next page to show).
    unchecked: bool = False
    checked_by: str | None = None  # the LLM that checked the pairs, when one did
    ruled_out: int = 0  # pairs it called different facts (not shown)

    _visible: tuple[frozenset[str], dict[str, list[Finding]]] | None = field(
        default=None, repr=False
    )

    def visible(self, dismissed: frozenset[str]) -> dict[str, list[Finding]]:
        """Findings per kind without the dismissed ones (kept for the same set of dismissals)."""
        cached = self._visible
        if cached is not None and cached[0] == dismissed:
            return cached[1]
        groups: dict[str, list[Finding]] = {kind: [] for kind in KINDS}
        for finding in self.findings:
            if finding.key not in dismissed:
                groups[finding.kind].append(finding)
        self._visible = (dismissed, groups)
        return groups


Version = tuple[object, date]  # a token per parsed version of the file, and the day
# Scans take at most half of any BUSY_WINDOW seconds: while the memories keep changing, the
# pages keep at least half of the time, however long a scan of the store takes; after a quiet
# spell a scan starts at once (one memory changed after a long first scan: no wait for it).
MAX_REST = 10.0
BUSY_WINDOW = 2 * MAX_REST
BUSY_SHARE = 0.5


class AttentionScanner:
    """Scans the memory file in the background: one per process and store.

    At most one scan runs at a time, and at most one more waits: a page asking about a newer
    version of the file replaces the one waiting (the version it names is read when the scan
    starts, so it is always the newest), which starts once scans have taken at most half of
    the last ``BUSY_WINDOW`` seconds (a rest of ``MAX_REST`` at most; none after a quiet
    spell). Only the last finished report is kept, and a page never
    waits for a scan that could not be done in time: it shows the last results (or that the
    first check is running) and asks again.
    """

    def __init__(
        self,
        store: MemoryReader,
        stale_days: int,
        *,
        today: Callable[[], date] = lambda: datetime.now(UTC).date(),
        clock: Callable[[], float] = time.perf_counter,
        semantic: SemanticIndex | None = None,
        checker: PairChecker | None = None,
    ) -> None:
        self.store = store
        self.semantic = semantic  # pairs by meaning (None: by the rules' words)
        self.checker = checker  # a second opinion on the pairs (an LLM), or None
        self.stale_days = stale_days
        self._today = today
        self._clock = clock
        self._changed = threading.Condition()
        self._latest: tuple[Version, AttentionReport] | None = None
        self._scanning: Version | None = None  # the version the running scan reads
        self._wanted = False  # a newer version waits for the running scan to finish
        self._worker: threading.Thread | None = None
        self._busy: list[tuple[float, float]] = []  # (start, end) of recent scans, monotonic
        # After the rules' quick report the scan by meaning (which may embed every memory,
        # minutes on a new store) waits as long as that report took: a change made right after
        # the first page is picked up by another quick report rather than queued behind it.
        self._hold_until = 0.0

    def has_results(self) -> bool:
        """True once a scan has finished (its results can be shown while a newer one runs)."""
        with self._changed:
            return self._latest is not None

    def latest(self) -> AttentionReport | None:
        """The last finished report, whatever version of the file it read; starts no scan."""
        with self._changed:
            return self._latest[1] if self._latest is not None else None

    def _version(self) -> Version:
        # A token made once per parsed version of the file: a new one whenever it changes.
        token = self.store.cached("attention-version", object)
        return token, self._today()

    def report(self, wait: float = 0.0) -> tuple[AttentionReport | None, bool]:
        """The report of the file as it is now, waiting up to ``wait`` seconds for it when it
        can be ready by then (the rest and a scan as long as the last take less) or there is
        nothing to show yet.

        Returns (report, current): when the scan is not done in time, the last finished report
        (or None) with ``current`` False; the scan goes on in the background.
        """
        version = self._version()
        with self._changed:
            if self._latest is not None and self._latest[0] == version:
                return self._latest[1], True  # (a partial one: the next page has meaning)
            first = self._latest is None  # no scan has finished: nothing to show meanwhile
            if self._scanning != version:
                self._wanted = True
            if self._worker is None:
                self._worker = threading.Thread(
                    target=self._work, name="attention-scan", daemon=True
                )
                self._worker.start()
            resting = self._rest()
            quick = self._latest is not None and resting + self._latest[1].seconds <= wait
            if wait > 0 and (quick or first):
                self._changed.wait_for(lambda: self._finished(version), timeout=wait)
            latest = self._latest
        if latest is not None and latest[0] == version:
            return latest[1], True
        return (latest[1] if latest is not None else None), False

    def _rest(self, now: float | None = None) -> float:
        """How long the next scan must wait so that scans take at most ``BUSY_SHARE`` of the
        last ``BUSY_WINDOW`` seconds (0 after a quiet spell); call with the lock held."""
        now = time.monotonic() if now is None else now
        horizon = now - BUSY_WINDOW
        self._busy = [(start, end) for start, end in self._busy if end > horizon]
        busy = sum(end - max(start, horizon) for start, end in self._busy)
        # the window slides by at most the time waited, so this is the least wait that can do
        over_budget = min(MAX_REST, max(0.0, busy - BUSY_WINDOW * BUSY_SHARE))
        return max(over_budget, self._hold_until - now)

    def _finished(self, version: Version) -> bool:
        return self._latest is not None and self._latest[0] == version

    def _work(self) -> None:
        """The scan thread: scans the newest version while one is wanted, then ends."""
        while True:
            with self._changed:
                if not self._wanted:
                    self._worker = None
                    return
                rest = self._rest()
            if rest > 0:
                time.sleep(rest)
                continue  # the window moved on: measure again
            with self._changed:
                self._wanted = False
            started = time.monotonic()
            result = self._scan()
            with self._changed:
                self._busy.append((started, time.monotonic()))
                if result is None:
                    continue
                self._scanning = None
                self._latest = result  # the report before is let go
                if result[1].partial:
                    self._hold_until = time.monotonic() + min(result[1].seconds, MAX_REST)
                self._changed.notify_all()

    def _scan(self) -> tuple[Version, AttentionReport] | None:
        """The newest version and its report (None when it is the one scanned last)."""
        started = self._clock()
        version: Version = (None, self._today())
        try:
            # The version first, then the memories: if the file changes in between, the report
            # is filed under the older version and the next page asks for a rescan.
            version = self._version()
            with self._changed:
                latest = self._latest
                if latest is not None and latest[0] == version and not latest[1].partial:
                    return None
                self._scanning = version
            memories = self.store.get_all()
            semantic = self.semantic
            fresh = latest is None or latest[0] != version
            if fresh and semantic is not None and semantic.slow([m.content for m in memories]):
                # the rules' pairs now, the meaning's next (the worker goes on)
                findings = scan(memories, today=version[1], stale_days=self.stale_days)
                with self._changed:
                    self._wanted = True
                seconds = self._clock() - started
                report = AttentionReport(findings, len(memories), seconds, partial=True)
                report.unchecked = self.checker is not None  # (the LLM follows the meaning)
                return version, report
            findings = scan(
                memories, today=version[1], stale_days=self.stale_days, semantic=semantic
            )
            checker = self.checker
            if checker is None:
                return version, AttentionReport(findings, len(memories), self._clock() - started)
            pairs = tier_pairs(findings, memories, semantic)
            # A first scan of this version shows the pairs with the verdicts known already; the
            # LLM is asked on the next one (the worker goes on), so no page waits for it. While
            # pairs wait beyond one scan's limits, the next scan asks about the next ones.
            first = checker.waiting(pairs.texts) and (
                fresh or not latest or not latest[1].unchecked
            )
            opinion = second_opinion(findings, pairs, checker, ask=not first)
            more = first or opinion.more
            if more:
                with self._changed:
                    self._wanted = True
            report = AttentionReport(
                opinion.findings,
                len(memories),
                self._clock() - started,
                partial=more,
                unchecked=more,
                checked_by=checker.name if opinion.verdicts and not first else None,
                ruled_out=opinion.ruled_out,
            )
            return version, report
        except Exception as exc:  # a thread's error would otherwise vanish: say it on the page
            log.exception("The Needs attention scan failed")
            return version, AttentionReport([], 0, self._clock() - started, error=str(exc))


def still_true(
    store: MemoryReader, report: AttentionReport, dismissed: frozenset[str]
) -> dict[str, list[Finding]]:
    """The findings of ``report`` (an older scan) per kind, without the dismissed ones and
    those whose memories are gone or say something else now: what a page shows while the
    newest version is scanned. Worked out once per version of the file, for every tab that
    asks meanwhile."""
    cached: dict[str, Any] = store.cached("attention-still-true", dict)
    hit = cached.get("groups")
    if hit is not None and hit[0] is report and hit[1] == dismissed:
        groups: dict[str, list[Finding]] = hit[2]
        return groups
    now = store.contents()
    groups = {
        kind: [f for f in found if all(now.get(m.id) == m.content for m in f.memories)]
        for kind, found in report.visible(dismissed).items()
    }
    cached["groups"] = (report, dismissed, groups)
    return groups
