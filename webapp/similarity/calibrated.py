"""A calibrated score for "the same fact": one logistic model over the pair's signals.

The rules in ``decisions`` read the parts of two facts (holder, values, days, negation, what each
fills differently) and used to veto on each of them, then compare the cosine with a threshold.
Each veto was right on the pairs it was written for and too strict on others: paraphrases fill
the frame differently by nature. Here the same signals are weighed together instead, with
weights fitted on the development judgement sets only (``benchmarks/tune_similarity.py --fit``
writes ``calibration.json`` beside this module; the held-out sets never see the fitting).

Signals, per pair: the embedder's cosine, the cosine of hashed words and character n-grams (the
lexical embedder's, always available), rapidfuzz's token-set ratio on folded text, and the parts
as 0/1 or small counts. ``probability`` is the model's answer in [0, 1]; a pair is the same
fact from the family's ``threshold``, chosen by cross-validation on the dev sets as the lowest
score whose precision stays at or above 0.94.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .embedders import LexicalEmbedder, Vectors, embedding_text

CALIBRATION_FILE = Path(__file__).with_name("calibration.json")

# The order of the model's inputs (``decisions.pair_features``); calibration.json names them and is
# not used if they differ.
FEATURES = (
    "cosine",
    "lexical",
    "fuzz",
    "holder",
    "qualifier",
    "clash",
    "clash_subject",
    "negation",
    "substitution",
    "frame",
    "agree",
    "day_only",
    "only",
    "shared",
)


@dataclass(frozen=True)
class Model:
    """A fitted logistic model: standardise, weigh, add the bias, squash."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    threshold: float

    def probability(self, x: Sequence[float]) -> float:
        z = self.bias + sum(
            w * (v - m) / s
            for w, v, m, s in zip(self.weights, x, self.mean, self.scale, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


_LEXICAL = LexicalEmbedder()


@lru_cache(maxsize=65_536)
def _lexical_vector(text: str) -> Vectors:
    row: Vectors = _LEXICAL.embed([embedding_text(text)])[0]
    return row


def lexical_cosine(a: str, b: str) -> float:
    """Cosine of the hashed words and character n-grams of two texts (no model)."""
    return float(np.clip(_lexical_vector(a) @ _lexical_vector(b), -1.0, 1.0))


def load(path: Path = CALIBRATION_FILE) -> dict[str, Model]:
    """The "same fact" model per embedder family; {} when the file is missing or is for other
    inputs (the judge then falls back on its thresholds)."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if tuple(data.get("features", ())) != FEATURES:
        return {}
    models: dict[str, Model] = {}
    for family, raw in data.get("same", {}).items():
        models[family] = Model(
            mean=tuple(raw["mean"]),
            scale=tuple(raw["scale"]),
            weights=tuple(raw["weights"]),
            bias=float(raw["bias"]),
            threshold=float(raw["threshold"]),
        )
    return models


SAME_MODELS: dict[str, Model] = load()
