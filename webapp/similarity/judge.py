"""The judge: the judgements on facts with one embedder, its vector cache and its thresholds.

- ``same_fact(a, b)``: near-duplicates (one of them can go);
- ``contradiction(a, b)``: the same subject with values that cannot both be true;
- ``reconcile(fact, kept)``: ``skip``, ``update`` or ``add`` a new fact, against the kept
  memories most similar by cosine.

The rules are in ``decisions`` (over the parts ``pair_parts`` compares), the cut-offs in
``thresholds``; the judge adds the cosines, a cache of judged pairs and the process-wide judge.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .cache import VectorCache
from .calibrated import SAME_MODELS, Model
from .decisions import (
    Judgement,
    Reconciled,
    adds_detail,
    decide_contradiction,
    decide_reconcile,
    decide_same,
    pair_features,
    pair_language,
)
from .embedders import Embedder, default_embedder
from .facts import analyse
from .pair_parts import compare_parts
from .thresholds import THRESHOLDS, Thresholds

__all__ = ["Judge", "contradiction", "default_judge", "reconcile", "same_fact"]

PAIR_CACHE_SIZE = 500_000  # judged pairs kept (about 200 bytes each)
RECONCILE_CANDIDATES = 5  # kept memories judged against a new fact, the most similar first


class Judge:
    """The judgements with one embedder, its vector cache and its thresholds."""

    def __init__(
        self,
        embedder: Embedder | None = None,
        cache: VectorCache | None = None,
        thresholds: dict[str, Thresholds] | None = None,
        same_model: Model | None = None,
        calibrated: bool = True,
    ) -> None:
        if cache is not None:
            embedder = cache.embedder
        self.embedder = embedder or default_embedder()
        self.cache = cache if cache is not None else VectorCache(self.embedder)
        self.thresholds = thresholds or THRESHOLDS.get(self.embedder.family, THRESHOLDS["lexical"])
        # the calibrated "same fact" model for this embedder family (None: thresholds alone)
        self.same_model = same_model or (
            SAME_MODELS.get(self.embedder.family) if calibrated else None
        )
        self._pairs: dict[tuple[str, str], tuple[str, Judgement]] = {}

    def limits(self, language: str) -> Thresholds:
        return self.thresholds.get(language) or self.thresholds["en"]

    def cosine(self, a: str, b: str) -> float:
        vectors = self.cache.vectors([a, b])
        return float(np.clip(vectors[0] @ vectors[1], -1.0, 1.0))

    # ----------------------------------------------------------------- pairs
    def same_fact(self, a: str, b: str, cosine: float | None = None) -> Judgement:
        """Whether ``a`` and ``b`` state the same fact (one of them can go)."""
        fa, fb = analyse(a), analyse(b)
        if fa.key and fa.key == fb.key:
            return Judgement(True, 1.0, "same_text")
        cos = self.cosine(a, b) if cosine is None else cosine
        limits = self.limits(pair_language(fa, fb))
        return decide_same(fa, fb, compare_parts(fa, fb), cos, limits, self.same_model)

    def likeness(self, a: str, b: str, cosine: float | None = None) -> float:
        """How alike ``a`` and ``b`` are as a person is shown it (0 to 1): the calibrated
        model's probability that they state the same fact (``calibrated.py``), 1.0 for the
        same text; without a model for this embedder, the judgement's score. Never the raw
        cosine: "lights at 30% after 22:00" / "meetings before 15:00" are far apart."""
        fa, fb = analyse(a), analyse(b)
        if fa.key and fa.key == fb.key:
            return 1.0
        cos = self.cosine(a, b) if cosine is None else cosine
        parts = compare_parts(fa, fb)
        if self.same_model is None:
            limits = self.limits(pair_language(fa, fb))
            score = decide_same(fa, fb, parts, cos, limits).score
        else:
            score = self.same_model.probability(pair_features(fa, fb, parts, cos))
        return min(1.0, max(0.0, score))

    def contradiction(self, a: str, b: str, cosine: float | None = None) -> Judgement:
        """Whether ``a`` and ``b`` speak of the same subject and cannot both be true."""
        fa, fb = analyse(a), analyse(b)
        if fa.key and fa.key == fb.key:
            return Judgement(False, 1.0, "same_text")
        cos = self.cosine(a, b) if cosine is None else cosine
        return decide_contradiction(
            fa, fb, compare_parts(fa, fb), cos, self.limits(pair_language(fa, fb))
        )

    def judge_pair(self, a: str, b: str, cosine: float | None = None) -> tuple[str, Judgement]:
        """("duplicate" | "contradiction" | "", judgement) for a pair, the parts compared once.

        Cached per pair of texts (a text is a memory version), so a rescan after one memory
        changed judges only the pairs that memory is in.
        """
        cached = self._pairs.get((a, b))
        if cached is not None:
            return cached
        fa, fb = analyse(a), analyse(b)
        if fa.key and fa.key == fb.key:
            result = ("duplicate", Judgement(True, 1.0, "same_text"))
        else:
            cos = self.cosine(a, b) if cosine is None else cosine
            parts = compare_parts(fa, fb)
            limits = self.limits(pair_language(fa, fb))
            same = decide_same(fa, fb, parts, cos, limits, self.same_model)
            if same.verdict:
                result = ("duplicate", same)
            else:
                clash = decide_contradiction(fa, fb, parts, cos, limits)
                result = ("contradiction", clash) if clash.verdict else ("", same)
        if len(self._pairs) >= PAIR_CACHE_SIZE:
            self._pairs.clear()
        self._pairs[(a, b)] = result
        return result

    def repeats(self, kept: str, new: str) -> bool:
        """``new`` states the fact ``kept`` states and adds nothing to it: the judge's
        ``same_fact`` (values, holder, negation and qualifiers agree), not mere closeness."""
        fk, fn = analyse(kept), analyse(new)
        if fk.key and fk.key == fn.key:
            return True
        parts = compare_parts(fk, fn)
        limits = self.limits(pair_language(fk, fn))
        same = decide_same(fk, fn, parts, self.cosine(kept, new), limits, self.same_model)
        return same.verdict and not adds_detail(parts, fk, fn)

    # ----------------------------------------------------------------- lists
    def most_similar(self, text: str, others: Sequence[str], k: int = 5) -> list[tuple[int, float]]:
        """(index, cosine) of the ``k`` texts of ``others`` most like ``text``, best first."""
        if not others:
            return []
        matrix = self.cache.vectors([text, *others])
        scores = matrix[1:] @ matrix[0]
        order = np.argsort(-scores, kind="stable")[:k]
        return [(int(i), float(scores[i])) for i in order]

    def reconcile(self, fact: str, kept: Sequence[str]) -> Reconciled:
        """``skip`` (kept[target] already says it), ``update`` (it changes kept[target]) or
        ``add`` (nothing kept is about it)."""
        if not kept:
            return Reconciled("add", None, 0.0, "nothing_kept")
        ff = analyse(fact)
        for index, memory in enumerate(kept):
            if ff.key and analyse(memory).key == ff.key:
                return Reconciled("skip", index, 1.0, "same_text")
        ranked = self.most_similar(fact, kept, RECONCILE_CANDIDATES)
        return decide_reconcile(
            ff, [(i, analyse(kept[i]), cos) for i, cos in ranked], self.limits, self.same_model
        )


# ------------------------------------------------------------------ module-level helpers
_judge: Judge | None = None


def default_judge() -> Judge:
    """The process-wide judge on the default embedder (created on first use)."""
    global _judge
    if _judge is None:
        _judge = Judge()
    return _judge


def same_fact(a: str, b: str) -> Judgement:
    """``Judge.same_fact`` with the process-wide judge."""
    return default_judge().same_fact(a, b)


def contradiction(a: str, b: str) -> Judgement:
    """``Judge.contradiction`` with the process-wide judge."""
    return default_judge().contradiction(a, b)


def reconcile(fact: str, kept: Sequence[str]) -> Reconciled:
    """``Judge.reconcile`` with the process-wide judge."""
    return default_judge().reconcile(fact, kept)
