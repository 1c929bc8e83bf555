"""What Needs attention finds: ``Finding`` and its stable name, and whose memories may be
looked at together."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from ..stores.memories import Memory
from .pairs import Reason


@dataclass(frozen=True)
class Finding:
    """One thing a curator should look at, with why it was flagged."""

    kind: str  # one of KINDS
    key: str  # stable name, used to dismiss it
    reason: Reason  # str(reason) is the English sentence
    memories: tuple[Memory, ...]
    similarity: float | None = None
    suggestion: str | None = None  # a rewrite the person can apply with one click (or the
    # text a merge starts from: the one saying most in the fewest words)
    checked_by: str | None = None  # the LLM that agreed with this pair's kind, when one did
    # True when only the LLM found it (among the memories' nearest neighbours by meaning):
    # the rules and the model did not flag the pair
    by_model_only: bool = False


def finding_key(kind: str, memories: Sequence[Memory]) -> str:
    """The finding's name: its kind, its memories and a digest of their text."""
    ordered = sorted(memories, key=lambda m: m.id)
    return _finding_key(kind, tuple((m.id, m.content) for m in ordered))


@functools.lru_cache(maxsize=200_000)
def _finding_key(kind: str, ordered: tuple[tuple[str, str], ...]) -> str:
    # Cached: a rescan after one change names the same findings again.
    digest = hashlib.sha1("\x00".join(text for _, text in ordered).encode("utf-8")).hexdigest()
    return f"{kind}:{'+'.join(ident for ident, _ in ordered)[:150]}:{digest[:12]}"


def across_people(memories: Sequence[Memory]) -> bool:
    """True when ``memories`` belong to two or more different people (the household's, those
    naming nobody, go with anyone)."""
    return len({m.person for m in memories if m.person is not None}) > 1
