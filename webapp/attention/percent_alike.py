"""How alike two memories are, as a page shows it ("82% alike"): the similarity layer's
calibrated judgement (``Judge.likeness``), never a raw cosine or the rules' share of words.

With the model loaded, its judge answers; before (or without it), the judge over hashed words
and character n-grams with its own calibrated model (no model to load, a few microseconds).
"""

from __future__ import annotations

from functools import cache

from ..similarity import Judge, LexicalEmbedder


@cache
def _word_judge() -> Judge:
    return Judge(LexicalEmbedder())


def likeness(a: str, b: str, judge: Judge | None = None) -> float:
    """0 to 1, rounded to three places: how likely ``a`` and ``b`` state the same fact, by
    ``judge`` (the loaded model's) when both texts have a vector, else by the words' judge."""
    if judge is None or a not in judge.cache or b not in judge.cache:
        judge = _word_judge()  # a page never waits for a text to be embedded
    return round(judge.likeness(a, b), 3)
