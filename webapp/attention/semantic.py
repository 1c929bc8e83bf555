"""The similarity layer (``webapp.similarity``) for one memory file: its judge, its vectors kept
in a file beside the store, and the pair scanner that keeps a scan up to date.

One ``SemanticIndex`` per memory file and process (``semantic_index``). The model is loaded
and texts are embedded only by callers that may wait: the Needs attention scan thread
(``vectors``), extraction's reconcile (``judge``) and the index's own filler thread, which
embeds what a page asked about (``want``). Pages never wait: ``cached_judge`` is None until
the model has loaded, and ``ready`` says which texts already have a vector.

The vectors are keyed by a keyed hash of the text (a memory's version; the key in
``memories.vectors.key``), so an unchanged memory is never embedded again, and the rows of
facts deleted forever (their tombstones say which) are never written back; the file is
``memories.vectors.npz`` beside ``memories.json``, written
atomically, and a damaged one is ignored and rebuilt (``describe_cache``, ``drop_damaged_cache``
for ``stats`` and ``repair``).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..similarity import (
    Embedder,
    Judge,
    Judgement,
    VectorCache,
    cache_path_for,
    default_embedder,
)
from ..similarity.cache import cache_key_path_for, unfinished_saves
from ..similarity.scan import PairScanner, nearest_pairs
from ..stores.keys import secret_key
from ..stores.owned import (
    LOCK,
    UNFINISHED,
    VECTORS,
    VECTORS_KEY,
    OwnFile,
    existing,
    key_file_files,
)
from ..stores.tombstones import TombstoneStore, tombstone_path

log = logging.getLogger(__name__)

CHUNK = 64  # texts embedded at a time (the cache is saved between chunks every SAVE_EVERY s)
SAVE_EVERY = 20.0
QUICK_EMBED = 32  # texts a scan embeds before it shows its pairs (more: the rules' first)
# Kept vectors beyond the memories' own before the cache forgets those of deleted memories.
SPARE_VECTORS = 2_000


class SemanticIndex:
    """The judge of one memory file, its persisted vectors and its pair scanner."""

    def __init__(
        self, store_path: str | os.PathLike[str], embedder: Callable[[], Embedder] | None = None
    ) -> None:
        self.path = cache_path_for(store_path)
        self._store_path = Path(store_path)
        self._load_embedder = embedder or default_embedder
        self._judge: Judge | None = None
        self._scanner: PairScanner | None = None
        self._lock = threading.Lock()  # loading the model, the scanner
        self._scan_lock = threading.Lock()  # one pair scan at a time
        self._wanted: dict[str, None] = {}  # texts a page asked about, in order
        self._wanted_lock = threading.Lock()
        self._filler: threading.Thread | None = None
        self._saved_at = time.monotonic()

    # ----------------------------------------------------------------- the judge
    def judge(self) -> Judge:
        """The judge, loading the model and the saved vectors on first use (may take seconds:
        never from a page)."""
        with self._lock:
            if self._judge is None:
                embedder = self._load_embedder()
                # Rows named by keyed hashes (the key apart from the fingerprints'); rows of
                # facts deleted forever never written back, whichever process deleted them.
                tombstones = TombstoneStore(tombstone_path(self._store_path))
                cache = VectorCache(
                    embedder,
                    self.path,
                    secret=secret_key(cache_key_path_for(self._store_path), "vector cache key"),
                    forgotten=tombstones.vector_keys,
                )
                self._judge = Judge(cache=cache)
            return self._judge

    def cached_judge(self) -> Judge | None:
        """The judge if it is loaded, else None (pages ask this; they never load it)."""
        return self._judge

    def ready(self, texts: Sequence[str]) -> list[bool]:
        """Which of ``texts`` have a vector already (all False before the model loaded)."""
        judge = self._judge
        if judge is None:
            return [False] * len(texts)
        return [text in judge.cache for text in texts]

    def slow(self, texts: Sequence[str]) -> bool:
        """A scan of ``texts`` by meaning would wait for the model to load or for more than
        ``QUICK_EMBED`` texts to be embedded (a second or so each few dozen)."""
        if self._judge is None:
            return True
        return self.ready(texts).count(False) > QUICK_EMBED

    # ----------------------------------------------------------------- vectors
    def vectors(self, texts: Sequence[str], keep: bool = True) -> None:
        """Embed the texts that have no vector yet, a chunk at a time, saving the file now and
        then and at the end; with ``keep`` (a scan of all memories) vectors of texts no longer
        kept are let go once there are many of them."""
        judge = self.judge()
        missing = [t for t in dict.fromkeys(texts) if t not in judge.cache]
        for start in range(0, len(missing), CHUNK):
            judge.cache.vectors(missing[start : start + CHUNK])
            if time.monotonic() - self._saved_at > SAVE_EVERY:
                self.save()
        if missing:
            log.info(
                "similarity: %s: %d vectors read from the file, %d computed in this process",
                self.path,
                judge.cache.loaded,
                judge.cache.computed,
            )
        if keep and len(judge.cache) > len(texts) + SPARE_VECTORS:
            with self._wanted_lock:
                wanted = list(self._wanted)
            judge.cache.retain([*texts, *wanted])
        self.save()

    def save(self) -> None:
        """Write the vectors to the file if any changed (atomic; an error is logged only)."""
        judge = self._judge
        if judge is None:
            return
        self._saved_at = time.monotonic()
        try:
            judge.cache.save()
        except OSError as error:
            log.warning("similarity: could not save the vectors to %s (%s)", self.path, error)

    def embed_one(self, text: str) -> bool:
        """Embed one text now if the model is loaded already (a few tens of milliseconds: the
        add form's check); False, embedding nothing, while it is not."""
        judge = self._judge
        if judge is None:
            return False
        judge.cache.vectors([text])
        return True

    def want(self, texts: Sequence[str]) -> None:
        """Embed ``texts`` in the background (a page's proposals); returns at once."""
        with self._wanted_lock:
            for text in texts:
                self._wanted[text] = None
            if self._filler is not None:
                return
            self._filler = threading.Thread(target=self._fill, name="similarity-fill", daemon=True)
            self._filler.start()

    def _fill(self) -> None:
        while True:
            with self._wanted_lock:
                texts = list(self._wanted)
                if not texts:
                    self._filler = None
                    return
            try:
                self.vectors(texts, keep=False)
            except Exception:  # the thread's error would vanish: log it, stop asking
                log.exception("similarity: embedding in the background failed")
                with self._wanted_lock:
                    self._wanted.clear()
                    self._filler = None
                return
            with self._wanted_lock:
                for text in texts:
                    self._wanted.pop(text, None)

    # ----------------------------------------------------------------- pairs
    def pairs(self, texts: Sequence[str]) -> list[tuple[int, int, str, Judgement]]:
        """(i, j, "duplicate" | "contradiction", judgement) among ``texts``: the first scan
        shortlists every memory's nearest ones, later scans only the changed memories'."""
        with self._scan_lock:
            self.vectors(texts)
            if self._scanner is None:
                self._scanner = PairScanner(self.judge())
            found = self._scanner.scan(texts)
            log.debug("similarity: %s scan of %d memories", self._scanner.last_scan, len(texts))
        return [(f.first, f.second, f.kind, f.judgement) for f in found]

    def neighbours(self, texts: Sequence[str], k: int) -> list[tuple[int, int, float]]:
        """(i, j, cosine), i < j: each of ``texts`` with its ``k`` nearest by meaning, the most
        alike first, whatever the judge made of them (the LLM tier's pairs). Only texts with a
        vector already are looked at: nothing is embedded here; a text twice is one."""
        judge = self._judge
        if judge is None:
            return []
        first: dict[str, int] = {}
        for position, text in enumerate(texts):
            if text not in first and text in judge.cache:
                first[text] = position
        if len(first) < 2:
            return []
        rows = list(first.values())
        matrix = judge.cache.vectors(list(first))
        return [(rows[i], rows[j], cos) for i, j, cos in nearest_pairs(matrix, k)]

    def text_key(self, text: str) -> bytes:
        """The keyed hash a text's vector is kept under (the model loaded if need be): what
        caches of judgements about a memory's version are keyed by, never its words; Delete
        forever records it among the tombstone's ``vector_keys``."""
        return self.judge().cache.key(text)

    def forgotten_keys(self) -> frozenset[bytes]:
        """The ``text_key`` of every fact deleted forever (the tombstones', any process's)."""
        return TombstoneStore(tombstone_path(self._store_path)).vector_keys()

    def most_similar(
        self, text: str, candidates: Sequence[str], k: int
    ) -> list[tuple[int, str, Judgement]]:
        """Up to ``k`` of ``candidates`` (index, judgement kind, judgement) that the judge says
        repeat or contradict ``text``, the most alike first; only texts with a vector already
        are looked at ([] until the model loaded and ``text`` has one)."""
        judge = self._judge
        if judge is None or text not in judge.cache:
            return []
        ready = [i for i, other in enumerate(candidates) if other in judge.cache and other != text]
        if not ready:
            return []
        matrix = judge.cache.vectors([text, *(candidates[i] for i in ready)])
        scores = matrix[1:] @ matrix[0]
        found: list[tuple[int, str, Judgement]] = []
        for position in np.argsort(-scores, kind="stable")[: max(k * 4, 20)].tolist():
            index = ready[position]
            kind, judgement = judge.judge_pair(
                text, candidates[index], cosine=float(scores[position])
            )
            if kind:
                found.append((index, kind, judgement))
            if len(found) >= k:
                break
        return found


_indexes: dict[Path, SemanticIndex] = {}
_indexes_lock = threading.Lock()


def semantic_index(store_path: str | os.PathLike[str]) -> SemanticIndex:
    """The process-wide index of the memory file at ``store_path``."""
    key = Path(store_path).resolve()
    with _indexes_lock:
        found = _indexes.get(key)
        if found is None:
            found = _indexes[key] = SemanticIndex(key)
        return found


# ------------------------------------------------------------------ the file, for stats/repair
@dataclass(frozen=True)
class CacheState:
    """What ``stats`` and ``repair`` say about the vector file."""

    path: Path
    vectors: int
    model: str
    problem: str | None  # why it cannot be used (it is then rebuilt), or None


def describe_cache(store_path: str | os.PathLike[str]) -> CacheState | None:
    """The vector file beside the memory file, or None when there is none."""
    path = cache_path_for(store_path)
    if not path.exists():
        return None
    vectors, model, problem = VectorCache.inspect(path)
    return CacheState(path, vectors, model, problem)


def cache_files(store_path: str | os.PathLike[str]) -> list[OwnFile]:
    """The vector file beside the memory file, its lock, the key of its row names and the
    unfinished saves of both, when there."""
    path = cache_path_for(store_path)
    key = cache_key_path_for(store_path)
    return [
        *existing(path, VECTORS),
        *existing(path.with_name(f"{path.name}.lock"), LOCK),
        *key_file_files(key, VECTORS_KEY),
        *(OwnFile(p, UNFINISHED) for p in unfinished_saves(path)),
    ]


def drop_damaged_cache(store_path: str | os.PathLike[str]) -> CacheState | None:
    """Delete the vector file when it cannot be used (it only holds what can be computed
    again: the next scan rebuilds it); its state as found, or None when there is none."""
    state = describe_cache(store_path)
    if state is not None and state.problem is not None:
        state.path.unlink(missing_ok=True)
    return state
