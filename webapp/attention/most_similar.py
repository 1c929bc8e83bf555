"""The memories most like a text: Review's "most similar memories" and the near-duplicate an
add is refused for, by meaning once the model is loaded and by the rules' words before."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..similarity import Judgement
from ..stores.memories import Memory
from ..stores.readers import MemoryReader
from .pair_findings import MAX_BLOCK, block_keys, content_keys, rule_verdict
from .pairs import SIMILAR_ENOUGH, features, similarity_of
from .percent_alike import likeness
from .semantic import SemanticIndex

__all__ = ["Similar", "SimilarityIndex", "most_similar_memories", "near_duplicate_of"]


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
                    for key in content_keys(memory.content):
                        postings[key].append(index)
                self._built = postings
            return self._built

    def most_similar(
        self, text: str, limit: int = 3, floor: float = SIMILAR_ENOUGH
    ) -> list[Similar]:
        """Up to ``limit`` memories most like ``text``, most similar first; none below ``floor``
        (by default only memories alike enough to repeat or contradict it)."""
        keys = sorted(
            block_keys(features(text).terms), key=lambda k: len(self._postings.get(k, ()))
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
        verdict = rule_verdict(text, similar.memory.content)
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
