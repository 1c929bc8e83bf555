"""Pairs worth judging among many memories, without comparing every pair in Python.

The vectors are unit length, so one matrix product gives every cosine. ``candidate_pairs``
multiplies a block of rows by the whole matrix at a time (memory stays at block × n floats), keeps
for each memory its ``top_k`` most similar later memories at or above ``threshold``, and returns
those pairs: an approximate nearest-neighbour shortlist that numpy computes in a fraction of a
second for 10,000 memories. ``near_duplicate_pairs`` then judges only the shortlist.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from .decisions import Judgement
from .embedders import Vectors
from .judge import Judge

BLOCK_ROWS = 1024
TOP_K = 5


def candidate_pairs(
    matrix: Vectors, threshold: float, top_k: int = TOP_K, block: int = BLOCK_ROWS
) -> list[tuple[int, int, float]]:
    """(i, j, cosine) with i < j: for each row, its ``top_k`` nearest later rows ≥ ``threshold``.

    Row block [start, stop) is multiplied only by the rows from ``start`` on (the pairs with
    an earlier row were found with that row), so the work is half of n × n.
    """
    return _shortlist(matrix, threshold, top_k, block)[0]


def _shortlist(
    matrix: Vectors, threshold: float, top_k: int, block: int = BLOCK_ROWS
) -> tuple[list[tuple[int, int, float]], npt.NDArray[np.float32]]:
    """``candidate_pairs`` and, per row, the lowest score its top-k kept (-2 when it kept fewer
    than k): what a new memory must beat to enter that row's list."""
    count = matrix.shape[0]
    pairs: list[tuple[int, int, float]] = []
    lowest = np.full(count, -2.0, dtype=np.float32)
    for start in range(0, count, block):
        stop = min(start + block, count)
        scores = matrix[start:stop] @ matrix[start:].T  # (rows, count - start)
        size = stop - start
        scores[:, :size][np.tril(np.ones((size, size), dtype=bool))] = -2.0  # j <= i
        k = min(top_k, scores.shape[1])
        if k <= 0:
            continue
        if k < scores.shape[1]:
            nearest = np.argpartition(scores, scores.shape[1] - k, axis=1)[:, -k:]
        else:
            nearest = np.broadcast_to(np.arange(scores.shape[1]), scores.shape)
        picked = np.take_along_axis(scores, nearest, axis=1)
        if k == top_k:
            lowest[start:stop] = picked.min(axis=1)
        rows, columns = np.nonzero(picked >= threshold)
        for row, column in zip(rows.tolist(), columns.tolist(), strict=True):
            j = start + int(nearest[row, column])
            pairs.append((start + row, j, float(picked[row, column])))
    pairs.sort(key=lambda p: (-p[2], p[0], p[1]))
    return pairs, lowest


class PairFinding(NamedTuple):
    """Two memories (indices into the scanned texts) the judge flagged, and its judgement."""

    first: int
    second: int
    kind: str  # "duplicate" or "contradiction"
    judgement: Judgement


def near_duplicate_pairs(
    judge: Judge, texts: Sequence[str], top_k: int = TOP_K, contradictions: bool = True
) -> list[PairFinding]:
    """Near-duplicates (and, with ``contradictions``, contradictions) among ``texts``: one full
    scan (``PairScanner`` keeps the shortlist between scans)."""
    return PairScanner(judge, top_k).scan(texts, contradictions)


class PairScanner:
    """Near-duplicate and contradiction scans of one store, kept up to date between scans.

    The first ``scan`` shortlists every memory's nearest neighbours with the block product;
    later scans, when few memories changed, only shortlist the changed ones against all
    (one matrix-vector product each) and drop the pairs of memories that are gone. Vectors come
    from the judge's cache and judgements from its pair cache, so an unchanged pair is never
    embedded or judged twice.
    """

    def __init__(self, judge: Judge, top_k: int = TOP_K, full_rescan_share: float = 0.05) -> None:
        self.judge = judge
        self.top_k = top_k
        self.full_rescan_share = full_rescan_share
        self._pairs: set[tuple[str, str]] = set()
        self._texts: set[str] = set()
        self._lowest: dict[str, float] = {}  # per text: the score a newcomer must beat
        self.last_scan = "none"  # "full" or "incremental": what the last scan did

    @property
    def floor(self) -> float:
        return min(min(t.duplicate - t.bonus, t.subject) for t in self.judge.thresholds.values())

    def scan(self, texts: Sequence[str], contradictions: bool = True) -> list[PairFinding]:
        """The flagged pairs among ``texts`` (indices into it; the same text twice is a pair)."""
        positions: dict[str, list[int]] = {}
        for position, text in enumerate(texts):
            positions.setdefault(text, []).append(position)
        texts = list(positions)
        current = set(texts)
        added = [t for t in texts if t not in self._texts]
        removed = self._texts - current
        matrix = self.judge.cache.vectors(texts)
        changed = len(added) + len(removed)
        if not self._texts or changed > self.full_rescan_share * max(len(texts), 1):
            pairs, lowest = _shortlist(matrix, self.floor, self.top_k)
            self._pairs = {(texts[i], texts[j]) for i, j, _ in pairs}
            self._lowest = dict(zip(texts, lowest.tolist(), strict=True))
            self.last_scan = "full"
        else:
            for a, b in self._pairs:  # a list that lost a member has room for a newcomer
                if a in removed or b in removed:
                    self._lowest[a] = self._lowest[b] = -2.0
            self._pairs = {p for p in self._pairs if p[0] in current and p[1] in current}
            row = {t: i for i, t in enumerate(texts)}
            for text in added:
                # its own nearest, and every memory whose list it would now enter
                scores = matrix @ matrix[row[text]]
                scores[row[text]] = -2.0
                k = min(self.top_k, len(texts) - 1)
                if k <= 0:
                    continue
                nearest = np.argpartition(scores, len(scores) - k)[-k:]
                lowest_kept = np.array([self._lowest.get(t, -2.0) for t in texts], np.float32)
                entering = np.nonzero((scores >= lowest_kept) & (scores >= self.floor))[0]
                for j in {*nearest.tolist(), *entering.tolist()}:
                    if scores[j] >= self.floor:
                        a, b = sorted((row[text], j))
                        self._pairs.add((texts[a], texts[b]))
                self._lowest[text] = float(np.sort(scores)[-k]) if k == self.top_k else -2.0
            self.last_scan = "incremental"
        self._texts = current
        index = {t: i for i, t in enumerate(texts)}
        findings: list[PairFinding] = []
        for where in positions.values():
            for other in where[1:]:
                findings.append(
                    PairFinding(where[0], other, "duplicate", Judgement(True, 1.0, "same_text"))
                )
        ordered: list[tuple[int, int]] = sorted(
            (min(index[a], index[b]), max(index[a], index[b])) for a, b in self._pairs
        )
        firsts = np.array([p[0] for p in ordered], dtype=np.intp)
        seconds = np.array([p[1] for p in ordered], dtype=np.intp)
        cosines: list[float] = (
            np.einsum("ij,ij->i", matrix[firsts], matrix[seconds]).tolist() if ordered else []
        )
        for (i, j), cos in zip(ordered, cosines, strict=True):
            kind, judgement = self.judge.judge_pair(texts[i], texts[j], cosine=cos)
            if kind == "duplicate" or (kind == "contradiction" and contradictions):
                first, second = sorted((positions[texts[i]][0], positions[texts[j]][0]))
                findings.append(PairFinding(first, second, kind, judgement))
        findings.sort(key=lambda f: (-f.judgement.score, f.first, f.second))
        return findings


def nearest_pairs(
    matrix: Vectors, k: int, floor: float = -1.0, block: int = BLOCK_ROWS
) -> list[tuple[int, int, float]]:
    """(i, j, cosine) with i < j: each row with its ``k`` nearest other rows (either side, at
    or above ``floor``), once per pair, the most alike first. What the LLM tier asks about:
    neighbours by meaning whatever the judge made of them."""
    count = matrix.shape[0]
    k = min(k, count - 1)
    if k <= 0:
        return []
    found: dict[tuple[int, int], float] = {}
    for start in range(0, count, block):
        stop = min(start + block, count)
        scores = matrix[start:stop] @ matrix.T  # (rows, count)
        scores[np.arange(stop - start), np.arange(start, stop)] = -2.0  # not itself
        nearest = np.argpartition(scores, count - k, axis=1)[:, -k:]
        picked = np.take_along_axis(scores, nearest, axis=1)
        for row, column in zip(*np.nonzero(picked >= floor), strict=True):
            i, j = start + int(row), int(nearest[row, column])
            found[(min(i, j), max(i, j))] = float(picked[row, column])
    return sorted(((i, j, cos) for (i, j), cos in found.items()), key=lambda p: (-p[2], p[0], p[1]))
