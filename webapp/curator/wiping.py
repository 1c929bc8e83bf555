"""Delete forever, file by file: which words go, and how each file is rid of them.

The words of a fact deleted forever are its wordings (its text, every earlier text of its
memory, the review items that proposed it again) and the sentences that said it (``said``:
the sentences of its evidence that state one of the wordings — a message's other sentences
are left alone — or the whole evidence when none does). ``Masker`` replaces them in a text by
``MARKER``, which says that words were deleted forever there: in the conversations, in other
memories' and review items' evidence. A sentence that states a wording in other words ("I
usually go to sleep by eleven" for "Usually goes to sleep by eleven") is masked as well.

``reached(step)`` marks the points between two steps, where every file is whole; the crash
tests kill a real process at each of them (SIGKILL) and show that running Delete forever
again, or ``repair``, finishes the job.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..extraction.decided import says_the_same
from ..extraction.rules import match_sentence
from ..extraction.sentences import split_sentences
from ..language.phrasing import as_preference, as_user_fact
from ..stores import Changed, Unchanged
from ..text import normalize

MARKER = "[words deleted forever]"
STEPS = (
    "recorded",
    "deleted",
    "intent",
    "review",
    "memories",
    "conversations",
    "job",
    "vectors",
    "done",
)


def reached(step: str) -> None:
    """A point between two steps of Delete forever (``STEPS``), where every file is whole.

    Nothing happens here: it names the point, so that a test can stop a real process at it."""


def _keys(texts: Iterable[str]) -> set[str]:
    return {normalize(t) for t in texts} - {""}


def states(sentence: str, wordings: Sequence[str]) -> bool:
    """``sentence`` states one of ``wordings``: the same words, the fact the rules read in
    it, or a close variant (``says_the_same``)."""
    keys = _keys(wordings)
    if not keys or not normalize(sentence):
        return False
    if normalize(sentence) in keys:
        return True
    fact = match_sentence(sentence, with_secret=True)
    if fact is not None and (
        normalize(fact.content) in keys
        or normalize(as_preference(as_user_fact(fact.content))) in keys
    ):
        return True
    return any(says_the_same(wording, sentence) for wording in wordings)


def said_sentences(wordings: Sequence[str], evidences: Iterable[str]) -> list[str]:
    """The sentences of ``evidences`` that said the fact (the whole evidence when none of its
    sentences states a wording: an LLM's quote, a text edited since)."""
    said: list[str] = []
    for evidence in evidences:
        if not evidence or not evidence.strip() or MARKER in evidence:
            continue
        hits = [s for s in split_sentences(evidence) if states(s, wordings)]
        said.extend(hits or [evidence.strip()])
    return list(dict.fromkeys(said))


class Masker:
    """Replaces the words of a fact deleted forever in a text by ``MARKER``."""

    def __init__(self, wordings: Sequence[str], said: Sequence[str]) -> None:
        self.wordings = [w for w in wordings if normalize(w)]
        exact = sorted({t.strip() for t in (*said, *self.wordings) if t.strip()}, key=len)
        self._pattern = (
            re.compile("|".join(re.escape(t) for t in reversed(exact)), re.IGNORECASE)
            if exact
            else None
        )

    def __call__(self, text: str) -> str:
        if not text:
            return text
        masked = self._pattern.sub(MARKER, text) if self._pattern is not None else text
        for sentence in split_sentences(masked):
            if MARKER not in sentence and states(sentence, self.wordings):
                masked = masked.replace(sentence, MARKER)
        return masked


def job_without(
    wordings: Sequence[str], mask: Masker
) -> Callable[[Any], Changed[int] | Unchanged[int]]:
    """The extraction job's change: the facts it lists as found that were the fact go."""
    keys = _keys(wordings)

    def mutate(data: Any) -> Changed[int] | Unchanged[int]:
        found = data.get("found") if isinstance(data, dict) else None
        if not isinstance(found, list):
            return Unchanged(0)
        kept = [
            f
            for f in found
            if not isinstance(f, str) or (normalize(f) not in keys and mask(f) == f)
        ]
        if len(kept) == len(found):
            return Unchanged(0)
        data["found"] = kept
        return Changed(len(found) - len(kept))

    return mutate


def dismissals_without(memory_id: str) -> Callable[[Any], Changed[int] | Unchanged[int]]:
    """The dismissed findings' change: those naming the memory go (their keys hold an
    unkeyed digest of its text)."""

    def mutate(data: Any) -> Changed[int] | Unchanged[int]:
        if not isinstance(data, dict) or not memory_id:
            return Unchanged(0)
        gone = [key for key in data if memory_id in str(key)]
        for key in gone:
            del data[key]
        return Changed(len(gone)) if gone else Unchanged(0)

    return mutate
