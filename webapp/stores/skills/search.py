"""Ranking skill documents and runtime memories against a query (case-insensitive, CJK-aware)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ...text import fold
from .documents import SkillDocument, sort_key
from .merge import MergedMemory

MAX_QUERY_CHARS = 500
_WEIGHTS = (3.0, 2.0, 1.0)  # name, summary, content


@dataclass(frozen=True)
class SearchHit:
    """A search result: the merged entry and its score (higher is better)."""

    entry: MergedMemory
    score: float

    @property
    def document(self) -> SkillDocument:
        return self.entry.document


def _query_terms(query: str) -> list[str]:
    """Words for Latin text, character bigrams (or single characters) for CJK and other scripts."""
    terms: list[str] = []
    for run in re.findall(r"[^\W_]+", query):
        for part in re.findall(r"[0-9a-z]+|[^0-9a-z]+", run):
            if part.isascii() or len(part) == 1:
                terms.append(part)
            else:
                terms.extend(part[i : i + 2] for i in range(len(part) - 1))
    return list(dict.fromkeys(terms))


def score_document(doc: SkillDocument, query: str, terms: list[str]) -> float:
    """How well ``doc`` matches the folded ``query``: 0 when it does not match at all.

    Whole-query substring hits count most; otherwise the share of terms (words or character
    bigrams) found; short fields also get a fuzzy score for typos (rapidfuzz partial ratio).
    """
    from rapidfuzz import fuzz  # deferred: only a search needs it, not every CLI start

    score, found = 0.0, set()
    for weight, text in zip(_WEIGHTS, doc.search_fields, strict=False):
        if not text:
            continue
        if query in text:
            score += weight * 2
            found.update(terms)
            continue
        hits = [t for t in terms if t in text]
        found.update(hits)
        part = len(hits) / len(terms) if terms else 0.0
        if weight > 1 and len(query) >= 4 and len(text) <= 400:
            fuzzy = fuzz.partial_ratio(query, text) / 100
            part = max(part, fuzzy if fuzzy >= 0.8 else 0.0)
        score += weight * part
    coverage = len(found) / len(terms) if terms else 0.0
    return score if coverage >= 0.5 or score >= 2.4 else 0.0


def search_entries(
    entries: Iterable[MergedMemory], query: str, limit: int | None = 20
) -> list[SearchHit]:
    """Rank ``entries`` against ``query``, case-insensitively; an empty query lists them all."""
    needle = fold(" ".join((query or "").split()))[:MAX_QUERY_CHARS]
    entries = list(entries)
    if not needle:
        hits = [SearchHit(e, 0.0) for e in entries]
    else:
        terms = _query_terms(needle)
        scored = ((score_document(e.document, needle, terms), e) for e in entries)
        hits = [SearchHit(e, s) for s, e in scored if s > 0]
        hits.sort(key=lambda h: (-h.score, sort_key(h.document)))
    return hits if limit is None else hits[:limit]
