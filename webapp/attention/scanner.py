"""Needs attention: near-duplicates, contradictions, stale and hard-to-use memories, and
memories that hold a secret (``webapp.sensitive.secrets``).

``scan`` finds them all; pairs come from an index of the memories' terms (a pair is compared
only when it shares one of the rarer terms, never all pairs), and every comparison is cached
by the two texts, so a rescan after one change only compares that memory again.
``AttentionScanner`` scans in one background thread per store, the newest version of the
memory file only, so a page never waits for 10,000 memories; ``SimilarityIndex`` answers
"which memories are most like this text".
"""

from __future__ import annotations

import functools
import heapq
import logging
import math
import re
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, tzinfo
from typing import Any

from ..language.phrasing import as_user_fact, is_first_person
from ..sensitive.secrets import SecretFinding, find_secrets
from ..similarity import Judgement
from ..stores.memories import Memory
from ..stores.readers import MemoryReader
from ..stores.timefmt import EPOCH
from ..text import same_fact_key
from .findings import Finding, across_people, finding_key
from .llm_tier import PairChecker, second_opinion, tier_pairs
from .pairs import (
    SIMILAR_ENOUGH,
    PairVerdict,
    Reason,
    compare,
    features,
    reason,
    similarity_of,
)
from .percent_alike import likeness
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
LONG_MEMORY_CHARS = 300
MAX_BLOCK = 200  # a term shared by more memories than this is too common to find pairs by
MAX_CANDIDATES = 25  # memories each one is compared with, the most alike first

_CJK_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")
_URL = re.compile(r"https?://\S+|www\.\S+", re.I)
_CODE_CHARS = set("{}[]();=<>$`|\\")
_CODE_START = re.compile(
    r"^\s*(?:```|def |class |import |from \S+ import|function |const |let |\$ |#!|<\w+)"
)
# Words that tie a memory to a moment, and how long after it was written they stop being true.
_RELATIVE_TIME: tuple[tuple[re.Pattern[str], int], ...] = tuple(
    (re.compile(pattern, re.I), days)
    for pattern, days in (
        (r"\b(?:today|tonight)\b|今天|今晚|今日", 1),
        (r"\btomorrow\b|明天|明日", 2),
        (
            r"\bthis week(?:end)?\b|這週|这周|本週|本周|這禮拜|这礼拜|這個週末|这个周末|這週末|这周末",
            7,
        ),
        (r"\bnext week(?:end)?\b|下週|下周|下禮拜|下礼拜|下個禮拜|下个礼拜", 14),
        (r"\bthis month\b|這個月|这个月|本月", 31),
        (r"\bnext month\b|下個月|下个月", 62),
        (r"\b(?:currently|for now|at the moment|these days|right now)\b|暫時|暂时|目前|最近", 30),
        (r"\bthis year\b|今年", 365),
    )
)


# ------------------------------------------------------------------ one memory
def stale_reason(memory: Memory, today: date, stale_days: int) -> Reason | None:
    """Why ``memory`` may no longer be true, or None."""
    dates = features(memory.content).dates
    if dates and max(dates) < today:
        return reason("past_date", date=max(dates))
    if memory.updated_at == EPOCH:  # its time is unknown (none, or none the file could hold)
        return None
    written = memory.updated_at.astimezone(UTC).date()
    age = (today - written).days
    # A memory that knows when it ends (expiresAt) is judged by that, not by its words.
    for word, days in _relative_words(memory.content) if memory.expires_at is None else ():
        if age >= days:
            return reason("expired_word", word=word, written=written)
    if age >= stale_days:
        return reason("untouched", days=age, threshold=stale_days)
    return None


@functools.lru_cache(maxsize=65_536)
def _relative_words(text: str) -> tuple[tuple[str, int], ...]:
    """The moments ``text`` names that pass ("this week", 今晚) and after how many days, in
    ``_RELATIVE_TIME``'s order; cached per text."""
    found = ((pattern.search(text), days) for pattern, days in _RELATIVE_TIME)
    return tuple((match.group(0), days) for match, days in found if match)


def hard_to_use_reason(memory: Memory) -> tuple[Reason, str | None] | None:
    """Why ``memory`` is hard for the assistant to use, and a rewrite when there is one."""
    return _hard_to_use(memory.content)


@functools.lru_cache(maxsize=65_536)
def _hard_to_use(text: str) -> tuple[Reason, str | None] | None:
    # Cached per text: a rescan after one change reads the others again.
    if is_first_person(text):
        suggestion = as_user_fact(text)
        if suggestion != text:
            return reason("first_person"), suggestion
    if len(text) > LONG_MEMORY_CHARS:
        return reason("too_long", chars=len(text), max=LONG_MEMORY_CHARS), None
    urls = sum(len(u) for u in _URL.findall(text))
    if urls and urls >= 0.5 * len(text.strip()):
        return reason("mostly_link"), None
    symbols = sum(ch in _CODE_CHARS for ch in text)
    if len(text) >= 20 and (_CODE_START.match(text) or symbols >= max(4, 0.08 * len(text))):
        return reason("looks_like_code"), None
    return None


# ------------------------------------------------------------------ pairs
def _block_keys(terms: Iterable[str]) -> set[str]:
    """Index keys of a memory: its terms, and the character pairs of its Chinese words (so
    無糖 meets 喝無糖 however the segmenter cut them)."""
    keys: set[str] = set()
    for term in terms:
        if _CJK_WORD.fullmatch(term):
            keys.update(term[i : i + 2] for i in range(len(term) - 1))
        else:
            keys.add(term)
    return keys


@functools.lru_cache(maxsize=65_536)
def _content_keys(content: str) -> frozenset[str]:
    """``_block_keys`` of a memory's text, kept while the memory is (an add does not read every
    other memory anew)."""
    return frozenset(_block_keys(features(content).terms))


def _let_others_run(step: int) -> None:
    """Now and then give up the interpreter lock, so a scan running in the background of the
    dashboard does not slow down the pages it serves meanwhile."""
    if step % 200 == 199:
        time.sleep(0)


def candidate_pairs(memories: Sequence[Memory]) -> set[tuple[int, int]]:
    """Index pairs worth comparing: same folded text, or sharing one of their rarer terms."""
    keys = [_block_keys(features(m.content).terms) for m in memories]
    frequency = Counter(k for ks in keys for k in ks)
    postings: dict[str, list[int]] = defaultdict(list)
    for index, ks in enumerate(keys):
        for key in ks:
            postings[key].append(index)
    pairs: set[tuple[int, int]] = set()
    by_text: dict[str, list[int]] = defaultdict(list)
    for index, memory in enumerate(memories):
        by_text[features(memory.content).key].append(index)
    for same in by_text.values():
        pairs.update((same[0], other) for other in same[1:])  # each copy against the first
    for index, ks in enumerate(keys):
        _let_others_run(index)
        ordered = sorted(ks, key=lambda k: (frequency[k], k))
        # Two memories about one subject share most terms, so they share one of the rarer
        # ones ("prefix filtering"): probing with those finds them without all pairs.
        probe = max(1, len(ordered) - math.ceil(0.5 * len(ordered)) + 1)
        shared: defaultdict[int, float] = defaultdict(float)
        for key in ordered[:probe]:
            if frequency[key] > MAX_BLOCK and key is not ordered[0]:
                break
            weight = 1.0 / frequency[key]
            for other in postings[key][:MAX_BLOCK]:
                shared[other] += weight
        shared.pop(index, None)
        # The memories sharing the most (and rarest) terms; a subject stated hundreds of times
        # is still found, through the nearest ones, without comparing every pair of them.
        for other, _ in heapq.nlargest(MAX_CANDIDATES, shared.items(), key=lambda kv: kv[1]):
            pairs.add((min(index, other), max(index, other)))
    return pairs


@functools.lru_cache(maxsize=200_000)
def merged_text(a: str, b: str) -> str:
    """The text a merge of ``a`` and ``b`` starts from: more terms, then fewer characters,
    and a fact about the user rather than the user's own sentence."""

    def rank(text: str) -> tuple[int, bool, int]:
        return (len(features(text).terms), not is_first_person(text), -len(text))

    return max((a, b), key=rank)


@functools.lru_cache(maxsize=200_000)
def _verdict(a: str, b: str) -> PairVerdict | None:
    return compare(a, b)


def judged_reason(kind: str, judgement: Judgement, a: str, b: str) -> Reason:
    """Why the similarity layer flagged a pair, as a ``Reason``: the rules' own reason when
    they say the same (it names the subject), else one from the judgement."""
    verdict = _verdict(a, b)
    if verdict is not None and verdict.kind == kind:
        return verdict.reason
    if judgement.reason == "same_text":
        return reason("same_text")
    if kind == "duplicate":
        return reason("same_values" if judgement.reason == "same_values" else "same_meaning")
    if judgement.reason == "different_values" and ": " in judgement.detail:
        left, _, right = judgement.detail.partition(": ")[2].partition(" / ")
        return reason("different_values_same_thing", left=(left,), right=(right,))
    if judgement.reason == "different_days":
        return reason("different_days")
    return reason("yes_and_no")


def semantic_pair_findings(memories: Sequence[Memory], index: SemanticIndex) -> list[Finding]:
    """Near-duplicates and contradictions among ``memories`` by the similarity layer: meaning
    as well as words (embeds the memories without a vector yet: a background thread's work)."""
    texts = [m.content for m in memories]
    found: list[Finding] = []
    for i, j, kind, judgement in index.pairs(texts):
        left, right = memories[i], memories[j]
        found.append(
            Finding(
                kind,
                finding_key(kind, (left, right)),
                judged_reason(kind, judgement, left.content, right.content),
                (left, right),
                similarity=likeness(left.content, right.content, index.cached_judge()),
                suggestion=merged_text(left.content, right.content),
            )
        )
    return found


def pair_findings(memories: Sequence[Memory]) -> list[Finding]:
    """Near-duplicates and contradictions among ``memories`` by the rules (words only)."""
    found: list[Finding] = []
    for count, (i, j) in enumerate(sorted(candidate_pairs(memories))):
        _let_others_run(count)
        left, right = memories[i], memories[j]
        verdict = _verdict(left.content, right.content)
        if verdict is None:
            continue
        found.append(
            Finding(
                verdict.kind,
                finding_key(verdict.kind, (left, right)),
                verdict.reason,
                (left, right),
                similarity=likeness(left.content, right.content),
                suggestion=merged_text(left.content, right.content),
            )
        )
    return found


def held_by_everyone(memories: Sequence[Memory]) -> list[Finding]:
    """The same fact (``same_fact_key``) kept by every person who keeps memories, two or
    more of them, and not by the household: offered as "move to household" (one memory,
    shared, instead of one per person)."""
    people = {m.person for m in memories if m.person is not None}
    if len(people) < 2:
        return []
    groups: dict[str, list[Memory]] = defaultdict(list)
    for memory in memories:
        groups[same_fact_key(memory.content)].append(memory)
    found = []
    for group in groups.values():
        owners = {m.person for m in group}
        if None in owners or owners != people:
            continue
        kept = tuple(sorted(group, key=lambda m: (m.created_at, m.id)))
        found.append(
            Finding(
                "duplicate",
                finding_key("household", kept),
                reason("held_by_everyone"),
                kept,
                similarity=1.0,
                suggestion=kept[0].content,
            )
        )
    return found


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
        why = stale_reason(memory, today, stale_days)
        if why:
            findings.append(Finding("stale", finding_key("stale", (memory,)), why, (memory,)))
        hard = hard_to_use_reason(memory)
        if hard:
            findings.append(
                Finding("hard", finding_key("hard", (memory,)), hard[0], (memory,), None, hard[1])
            )
        secret = _secret(memory.content)
        if secret:
            why = reason("holds_secret", secret=secret.kind, masked=secret.masked)
            key = finding_key("secret", (memory,))
            findings.append(Finding("secret", key, why, (memory,), None, secret.fact))
    return findings


@functools.lru_cache(maxsize=65_536)
def _secret(text: str) -> SecretFinding | None:
    # Cached per text, as the other checks of one memory.
    return find_secrets(text)


def expired_findings(
    memories: Iterable[Memory], now: datetime, zone: tzinfo = UTC
) -> list[Finding]:
    """A finding per memory whose ``expiresAt`` has passed at ``now``, soonest expired first:
    out of every prompt, kept until a person deletes or extends it; the day it stopped being
    true is the household's (``zone``). Worked out when asked, not by the background scan,
    since an expiry passes at its own instant."""
    found = sorted(
        (m for m in memories if m.expired(now)), key=lambda m: (m.expires_at or now, m.id)
    )
    return [
        Finding(
            "expired",
            finding_key("expired", (memory,)),
            reason("expired_at", date=(memory.expires_at or now).astimezone(zone).date()),
            (memory,),
        )
        for memory in found
    ]


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


# ------------------------------------------------------------------ most similar
@dataclass(frozen=True)
class Similar:
    """An existing memory like a given text, and how alike they are (0 to 1: ranked by the
    rules' share of words, shown as the calibrated ``likeness`` once listed); ``kind`` is
    "contradiction" when the judge says the two cannot both be true."""

    memory: Memory
    similarity: float
    kind: str = ""


class SimilarityIndex:
    """The memories indexed by their terms, to find the ones most like a new text quickly."""

    def __init__(self, memories: Sequence[Memory]) -> None:
        self.memories = list(memories)
        self._built: dict[str, list[int]] | None = None
        self._guard = threading.Lock()

    @property
    def _postings(self) -> dict[str, list[int]]:
        """The memories by term, made on the first search by words (a check by meaning needs
        only the memories); a text's terms are kept across versions of the file."""
        with self._guard:
            if self._built is None:
                postings: dict[str, list[int]] = defaultdict(list)
                for index, memory in enumerate(self.memories):
                    for key in _content_keys(memory.content):
                        postings[key].append(index)
                self._built = postings
            return self._built

    def most_similar(
        self, text: str, limit: int = 3, floor: float = SIMILAR_ENOUGH
    ) -> list[Similar]:
        """Up to ``limit`` memories most like ``text``, most similar first; none below ``floor``
        (by default only memories alike enough to repeat or contradict it)."""
        keys = sorted(
            _block_keys(features(text).terms), key=lambda k: len(self._postings.get(k, ()))
        )
        candidates: set[int] = set()
        for key in keys:
            candidates.update(self._postings.get(key, ())[: MAX_BLOCK * 5])
            if len(candidates) > MAX_BLOCK * 5:
                break
        scored = [
            Similar(self.memories[i], similarity_of(text, self.memories[i].content))
            for i in candidates
        ]
        scored = [s for s in scored if s.similarity >= floor]
        scored.sort(key=lambda s: (-s.similarity, s.memory.content))
        return scored[:limit]


def _anyone(_memory: Memory) -> bool:
    return True


def most_similar_memories(
    store: MemoryReader,
    semantic: SemanticIndex | None,
    texts: Sequence[str],
    limit: int = 3,
    *,
    within: Sequence[Callable[[Memory], bool]] | None = None,
) -> list[list[Similar]]:
    """For each of ``texts``, up to ``limit`` memories most like it, most similar first;
    with ``within`` (one test per text: the view the text is shown in), only memories that
    view may see, so a comparison never shows another person's memory.

    Memories the similarity layer says repeat or contradict a text come first (by meaning:
    "Doesn't eat meat" for "Is vegetarian"), then those sharing its words. Only vectors
    already computed are used, so a page never waits for the model; the texts and memories
    still without one are embedded in the background for the next time.
    """
    index = similarity_index(store)
    wide = limit if within is None else max(limit, len(index.memories))
    tests: list[Callable[[Memory], bool]] = (
        list(within) if within is not None else [_anyone] * len(texts)
    )
    judged: list[list[tuple[int, str, Judgement]]] = [[] for _ in texts]
    if semantic is not None:
        contents = [m.content for m in index.memories]
        waiting = [t for t, ok in zip(texts, semantic.ready(texts), strict=True) if not ok]
        if waiting or semantic.cached_judge() is None:
            semantic.want([*waiting, *contents])
        judged = [semantic.most_similar(text, contents, wide) for text in texts]
    judge = semantic.cached_judge() if semantic is not None else None
    results: list[list[Similar]] = []
    for text, found, sees in zip(texts, judged, tests, strict=True):
        similar = [
            Similar(index.memories[i], 0.0, "contradiction" if kind == "contradiction" else "")
            for i, kind, _judgement in found
            if sees(index.memories[i])
        ][:limit]
        shown = {s.memory.id for s in similar}
        similar += [
            s for s in index.most_similar(text, wide) if s.memory.id not in shown and sees(s.memory)
        ]
        shown_as = [
            replace(s, similarity=likeness(text, s.memory.content, judge)) for s in similar[:limit]
        ]
        results.append(sorted(shown_as, key=lambda s: -s.similarity))
    return results


def near_duplicate_of(
    store: MemoryReader,
    semantic: SemanticIndex | None,
    text: str,
    *,
    visible: Callable[[Memory], bool] | None = None,
) -> Memory | None:
    """A memory that already says ``text`` in other words, or None: by meaning once the model
    is loaded (the one new text is embedded; the memories' vectors are those cached), by the
    rules' words before (the model is then loaded in the background for the next time). With
    ``visible``, only memories it accepts are compared (a person's view: another person's
    private memory is never named)."""
    index = similarity_index(store)
    shown = visible or (lambda _memory: True)
    hidden = visible is not None and not all(map(visible, index.memories))
    nearest = 12 if hidden else 3  # a view that hides memories may hide some of the nearest
    if semantic is not None and semantic.embed_one(text):
        contents = [m.content for m in index.memories]
        judged = 0
        for i, kind, judgement in semantic.most_similar(text, contents, nearest):
            if not shown(index.memories[i]):
                continue
            if kind == "duplicate" and judgement.reason != "same_text":
                return index.memories[i]  # (the same text is the store's to refuse)
            judged += 1
            if judged == 3:
                break
        return None
    if semantic is not None:
        semantic.want([m.content for m in index.memories])
    candidates = [s for s in index.most_similar(text, nearest) if shown(s.memory)][:3]
    for similar in candidates:
        verdict = _verdict(text, similar.memory.content)
        if (
            verdict is not None
            and verdict.kind == "duplicate"
            and verdict.reason.code != "same_text"
        ):
            return similar.memory
    return None


def similarity_index(store: MemoryReader) -> SimilarityIndex:
    """The index of the store's memories, built once per version of the file."""
    return store.cached("similarity-index", lambda: SimilarityIndex(store.get_all()))


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
