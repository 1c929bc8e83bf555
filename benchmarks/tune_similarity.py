"""Choose the similarity thresholds on the DEV judgement sets (never the held-out ones).

    python benchmarks/tune_similarity.py [e5|use|lexical ...]

For each embedder family: the cosine and the compared parts of every dev pair are computed once;
then a grid search picks, per language, the duplicate and subject thresholds that get the most
dev judgements right (near-duplicates + reconcile for the first, contradictions + reconcile for
the second), and for the family the agreement bonus and the synonym threshold. Among equally
good values the middle of the widest run of them is taken (a margin on both sides rather than
the edge of the dev data). It prints the table to paste into webapp/similarity/thresholds.py.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import _judgement as J
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from webapp.similarity import VectorCache, load_embedder  # noqa: E402
from webapp.similarity.decisions import (  # noqa: E402
    decide_contradiction,
    decide_reconcile,
    decide_same,
)
from webapp.similarity.facts import Fact, analyse  # noqa: E402
from webapp.similarity.judge import RECONCILE_CANDIDATES  # noqa: E402
from webapp.similarity.pair_parts import PairParts, compare_parts  # noqa: E402
from webapp.similarity.thresholds import Thresholds  # noqa: E402

SPLIT = "dev"  # the only split this script reads


class Pair:
    def __init__(self, a: str, b: str, label: bool, language: str, cos: float) -> None:
        self.fa, self.fb = analyse(a), analyse(b)
        self.label, self.language, self.cos = label, language, cos
        self.parts: PairParts = compare_parts(self.fa, self.fb)
        self.same_text = bool(self.fa.key) and self.fa.key == self.fb.key


class Case:
    def __init__(self, item: dict, ranked: list[tuple[int, Fact, float]]) -> None:
        self.fact = analyse(item["fact"])
        self.language = item["language"]
        self.ranked = ranked
        self.expected = item["expected"]
        self.target = item.get("target")
        self.same_text = any(self.fact.key and f.key == self.fact.key for _, f, _ in ranked)


def prepare(family: str) -> tuple[list[Pair], list[Pair], list[Case]]:
    cache_dir = Path(os.environ.get("TUNE_CACHE", "/tmp"))
    embedder = load_embedder(family)
    if embedder.family != family:
        raise SystemExit(f"{family} did not load")
    cache = VectorCache(embedder, cache_dir / f"judgement-dev-{family}.vectors.npz")
    cache.vectors(J.all_texts(SPLIT))
    cache.save()

    def cos(a: str, b: str) -> float:
        v = cache.vectors([a, b])
        return float(v[0] @ v[1])

    nd = [
        Pair(i["a"], i["b"], i["label"], i["language"], cos(i["a"], i["b"]))
        for i in J.load(SPLIT, "near_duplicates")
    ]
    co = [
        Pair(i["a"], i["b"], i["label"], i["language"], cos(i["a"], i["b"]))
        for i in J.load(SPLIT, "contradictions")
    ]
    cases = []
    for item in J.load(SPLIT, "reconcile"):
        matrix = cache.vectors([item["fact"], *item["kept"]])
        scores = matrix[1:] @ matrix[0]
        order = np.argsort(-scores, kind="stable")[:RECONCILE_CANDIDATES]
        ranked = [(int(i), analyse(item["kept"][i]), float(scores[i])) for i in order]
        cases.append(Case(item, ranked))
    return nd, co, cases


def score_language(
    lang: str, limits: Thresholds, nd: list[Pair], co: list[Pair], cases: list[Case]
) -> tuple[int, int, int]:
    n = sum(
        (p.same_text or decide_same(p.fa, p.fb, p.parts, p.cos, limits).verdict) == p.label
        for p in nd
        if p.language == lang
    )
    c = sum(
        (not p.same_text and decide_contradiction(p.fa, p.fb, p.parts, p.cos, limits).verdict)
        == p.label
        for p in co
        if p.language == lang
    )
    r = 0
    for case in cases:
        if case.language != lang:
            continue
        if case.same_text:
            action, target = "skip", None
        else:
            result = decide_reconcile(case.fact, case.ranked, lambda _l: limits)
            action, target = result.action, result.target
        r += action == case.expected and (case.expected == "add" or target == case.target)
    return n, c, r


def middle_of_best(values: list[float], scores: list[int]) -> float:
    """The middle of the widest run of values with the best score."""
    best = max(scores)
    runs: list[list[float]] = []
    for value, score in zip(values, scores, strict=True):
        if score == best:
            if runs and runs[-1][-1] == values[values.index(value) - 1]:
                runs[-1].append(value)
            else:
                runs.append([value])
    widest = max(runs, key=len)
    return round(float(widest[len(widest) // 2]), 3)


def tune(family: str) -> dict[str, Thresholds]:
    nd, co, cases = prepare(family)
    low, step = (0.70, 0.005) if family == "e5" else (0.20, 0.01)
    grid = [round(x, 3) for x in np.arange(low, 1.0001, step)]
    if family == "e5":
        bonuses = [round(x, 3) for x in np.arange(0.0, 0.101, 0.01)]
        synonyms = [round(x, 3) for x in np.arange(0.9, 1.0201, 0.005)]
    else:  # wider cosine ranges, coarser steps
        bonuses = [round(x, 3) for x in np.arange(0.0, 0.301, 0.05)]
        synonyms = [round(x, 3) for x in np.arange(0.6, 1.0201, 0.02)]
    best: tuple[int, float, float, dict[str, Thresholds]] | None = None
    results = []
    for bonus in bonuses:
        for synonym in synonyms:
            chosen: dict[str, Thresholds] = {}
            total = 0
            for lang in J.LANGUAGES:
                limits = Thresholds(duplicate=0.9, subject=0.9, synonym=synonym, bonus=bonus)
                for _ in range(2):  # coordinate descent: duplicate, then subject, twice
                    dup_scores = []
                    for value in grid:
                        trial = Thresholds(value, limits.subject, synonym, bonus)
                        n, _c, r = score_language(lang, trial, nd, co, cases)
                        dup_scores.append(n + r)
                    limits = Thresholds(
                        middle_of_best(grid, dup_scores), limits.subject, synonym, bonus
                    )
                    subject_scores = []
                    for value in grid:
                        trial = Thresholds(limits.duplicate, value, synonym, bonus)
                        _n, c, r = score_language(lang, trial, nd, co, cases)
                        subject_scores.append(c + r)
                    limits = Thresholds(
                        limits.duplicate, middle_of_best(grid, subject_scores), synonym, bonus
                    )
                chosen[lang] = limits
                total += sum(score_language(lang, limits, nd, co, cases))
            results.append((total, bonus, synonym, chosen))
    top = max(r[0] for r in results)
    tied = [r for r in results if r[0] == top]
    best = tied[len(tied) // 2]
    total, bonus, synonym, chosen = best
    print(f"{family}: {total} of {len(nd) + len(co) + len(cases)} dev judgements right")
    print(f"  bonus {bonus}, synonym {synonym} ({len(tied)} combinations tie)")
    for lang, limits in chosen.items():
        n, c, r = score_language(lang, limits, nd, co, cases)
        print(
            f'  "{lang}": Thresholds(duplicate={limits.duplicate}, subject={limits.subject},'
            f" synonym={limits.synonym}, bonus={limits.bonus}),  # nd {n}/22 co {c}/22 re {r}/22"
        )
    return chosen


def main() -> int:
    families = sys.argv[1:] or ["e5", "use", "lexical"]
    for family in families:
        tune(family)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
