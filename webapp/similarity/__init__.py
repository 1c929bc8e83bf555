"""Semantic similarity of short facts: embeddings, a vector cache, values and judgements.

A library package below the stores (it reads and writes only its own cache file):

    from webapp.similarity import Judge
    judge = Judge()                              # the default embedder, loaded once
    judge.same_fact("Is vegetarian", "Doesn't eat meat")           # Judgement(True, …)
    judge.contradiction("Weekday alarm is 06:45", "Weekday alarm is 07:00")
    judge.reconcile("Takes the MRT to work", ["Commutes by train"])  # ("skip", 0, …)

See ``judge`` for the judge, ``decisions`` for its rules over the parts ``pair_parts`` compares
and the cut-offs in ``thresholds``; ``facts`` for what a fact says (its ``values``, ``holders``
and ``attributes``), ``embedders`` for the models, ``cache`` for the vectors kept per memory
version and ``scan`` for candidate pairs.
"""

from .cache import VectorCache, cache_path_for
from .decisions import Judgement, Reconciled
from .embedders import (
    E5Embedder,
    Embedder,
    LexicalEmbedder,
    UseEmbedder,
    default_embedder,
    embedding_text,
    load_embedder,
    set_default_embedder,
)
from .facts import Fact, analyse
from .judge import Judge, contradiction, default_judge, reconcile, same_fact
from .scan import candidate_pairs, near_duplicate_pairs
from .thresholds import THRESHOLDS, Thresholds
from .values import Value

__all__ = [
    "THRESHOLDS",
    "E5Embedder",
    "Embedder",
    "Fact",
    "Judge",
    "Judgement",
    "LexicalEmbedder",
    "Reconciled",
    "Thresholds",
    "UseEmbedder",
    "Value",
    "VectorCache",
    "analyse",
    "cache_path_for",
    "candidate_pairs",
    "contradiction",
    "default_embedder",
    "default_judge",
    "embedding_text",
    "load_embedder",
    "near_duplicate_pairs",
    "reconcile",
    "same_fact",
    "set_default_embedder",
]
