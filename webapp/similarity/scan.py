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

from .embedders import Vectors
from .judge import Judge, Judgement

BLOCK_ROWS = 1024
TOP_K = 10


def candidate_pairs(
    matrix: Vectors, threshold: float, top_k: int = TOP_K, block: int = BLOCK_ROWS
) -> list[tuple[int, int, float]]:
    """(i, j, cosine) with i < j: for each row, its ``top_k`` nearest later rows ≥ ``threshold``."""
    count = matrix.shape[0]
    pairs: list[tuple[int, int, float]] = []
    if count < 2:
        return pairs
    for start in range(0, count, block):
        stop = min(start + block, count)
        scores = matrix[start:stop] @ matrix.T  # (rows, n)
        rows = np.arange(start, stop)
        # only pairs (i, j) with j > i: each pair once, never a memory with itself
        scores[np.arange(stop - start)[:, None] >= (np.arange(count)[None, :] - start)] = -2.0
        k = min(top_k, count - 1)
        if k < count:
            nearest = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        else:
            nearest = np.argsort(-scores, axis=1)[:, :k]
        picked = np.take_along_axis(scores, nearest, axis=1)
        hits = np.nonzero(picked >= threshold)
        for row, column in zip(*hits, strict=True):
            pairs.append((int(rows[row]), int(nearest[row, column]), float(picked[row, column])))
    pairs.sort(key=lambda p: (-p[2], p[0], p[1]))
    return pairs


class PairFinding(NamedTuple):
    """Two memories (indices into the scanned texts) the judge flagged, and its judgement."""

    first: int
    second: int
    kind: str  # "duplicate" or "contradiction"
    judgement: Judgement


def near_duplicate_pairs(
    judge: Judge, texts: Sequence[str], top_k: int = TOP_K, contradictions: bool = True
) -> list[PairFinding]:
    """Near-duplicates (and, with ``contradictions``, contradictions) among ``texts``.

    Vectors come from the judge's cache (computed once per text); the shortlist's floor is the
    lowest cosine any of the judge's thresholds could accept.
    """
    if len(texts) < 2:
        return []
    matrix = judge.cache.vectors(list(texts))
    floor = min(min(t.duplicate - t.bonus, t.subject) for t in judge.thresholds.values())
    findings: list[PairFinding] = []
    for first, second, cos in candidate_pairs(matrix, floor, top_k):
        same = judge.same_fact(texts[first], texts[second], cosine=cos)
        if same.verdict:
            findings.append(PairFinding(first, second, "duplicate", same))
            continue
        if contradictions:
            clash = judge.contradiction(texts[first], texts[second], cosine=cos)
            if clash.verdict:
                findings.append(PairFinding(first, second, "contradiction", clash))
    return findings
