"""Needs attention's LLM tier: which pairs of memories the configured LLM is asked about, and
what its verdicts make of them.

The rules and the embedding model flag pairs by words and by a calibrated score; an LLM knows
what they cannot ("Is teetotal" / "Has a glass of wine with dinner"). So the LLM is asked
about the flagged pairs (a second opinion: confirmed, filed under the other kind, or left
out) and about each memory's ``NEIGHBOURS`` nearest memories by meaning (the similarity
index's vectors, nothing embedded again) that nothing flagged: a pair it reads as the same
fact or a contradiction becomes a finding of its own, marked checked by the model and found
by it alone; one it reads as possibly related but is not sure of is shown as "possibly
related" and nothing is done with it. A person's private memory is paired only with the
household's and their own, and each pair carries its owner, so a request never holds two
people's private memories (``webapp.attention.llm_check`` batches per owner).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from ..stores.memories import Memory
from .findings import Finding, across_people, finding_key
from .pairs import reason
from .semantic import SemanticIndex

NEIGHBOURS = 3  # nearest memories by meaning each memory is paired with
PAIR_KINDS = ("duplicate", "contradiction")
_CHECKED_KIND = {"same": "duplicate", "contradiction": "contradiction", "unsure": "related"}
_MODEL_REASON = {
    "duplicate": "model_same",
    "contradiction": "model_contradiction",
    "related": "model_related",
}

Pair = tuple[str, str]


class PairChecker(Protocol):
    """A second opinion on pairs of memories (an LLM: ``webapp.attention.llm_check``).
    Verdicts are "same", "contradiction", "different" or "unsure", keyed by the pair of texts
    as given; ``owners`` (one per pair) keeps each request to one owner's pairs."""

    name: str

    def waiting(self, pairs: Sequence[Pair]) -> bool: ...

    def known(self, pairs: Sequence[Pair]) -> dict[Pair, str]: ...

    def check(
        self, pairs: Sequence[Pair], owners: Sequence[Hashable] | None = None
    ) -> dict[Pair, str]: ...


def owner(memories: Sequence[Memory]) -> str | None:
    """Whose private memories a pair holds: the one person among them, or None (the
    household's only). Never called with two people's (``across_people``)."""
    return next((m.person for m in memories if m.person is not None), None)


@dataclass(frozen=True)
class TierPairs:
    """The pairs one scan asks the LLM about: the flagged ones first, then the neighbours
    (the most alike first), with each pair's owner."""

    texts: list[Pair]
    owners: list[str | None]
    neighbours: list[tuple[Memory, Memory, float]]  # not flagged: (a, b, cosine)


def _pairable(finding: Finding) -> bool:
    return (
        finding.kind in PAIR_KINDS
        and len(finding.memories) == 2
        and not across_people(finding.memories)
    )


def neighbour_pairs(
    memories: Sequence[Memory], semantic: SemanticIndex, k: int = NEIGHBOURS
) -> list[tuple[Memory, Memory, float]]:
    """Each memory with its ``k`` nearest by meaning among those it may be read with: the
    household's among the household's, a person's among their own and the household's (never
    another person's). The most alike first; a text kept twice counts once."""
    people = sorted({m.person for m in memories if m.person is not None})
    found: dict[frozenset[str], tuple[Memory, Memory, float]] = {}
    for person in [None, *people]:
        group = [m for m in memories if m.person is None or m.person == person]
        for i, j, cosine in semantic.neighbours([m.content for m in group], k):
            a, b = group[i], group[j]
            if person is not None and a.person is None and b.person is None:
                continue  # the household's pair: found with the household's group
            if a.content != b.content:
                found.setdefault(frozenset((a.id, b.id)), (a, b, cosine))
    return sorted(found.values(), key=lambda p: (-p[2], p[0].id, p[1].id))


def tier_pairs(
    findings: Sequence[Finding], memories: Sequence[Memory], semantic: SemanticIndex | None
) -> TierPairs:
    """The pairs to ask about: the flagged pairs, then the nearest neighbours nothing
    flagged (none without the similarity index)."""
    flagged = [f.memories for f in findings if _pairable(f)]
    seen = {frozenset((a.content, b.content)) for a, b in flagged}
    neighbours = []
    if semantic is not None:
        for a, b, cosine in neighbour_pairs(memories, semantic):
            if frozenset((a.content, b.content)) not in seen:
                seen.add(frozenset((a.content, b.content)))
                neighbours.append((a, b, cosine))
    pairs = [*flagged, *((a, b) for a, b, _ in neighbours)]
    return TierPairs(
        [(a.content, b.content) for a, b in pairs], [owner(p) for p in pairs], neighbours
    )


def apply_checks(
    findings: Sequence[Finding], verdicts: dict[Pair, str], model: str
) -> tuple[list[Finding], int]:
    """The findings with a checker's verdicts applied, and how many pairs it ruled out: a pair
    it calls the same fact or a contradiction is filed under that kind and marked checked by
    ``model`` (with its reason when the kind changed); a pair it calls different facts is left
    out. Pairs without a verdict, or one it is unsure of, stay as they were."""
    kept: list[Finding] = []
    ruled_out = 0
    for finding in findings:
        if not _pairable(finding):
            kept.append(finding)
            continue
        verdict = verdicts.get((finding.memories[0].content, finding.memories[1].content))
        if verdict is None or verdict == "unsure":
            kept.append(finding)
            continue
        kind = _CHECKED_KIND.get(verdict)
        if kind is None:
            ruled_out += 1
            continue
        if kind == finding.kind:
            kept.append(replace(finding, checked_by=model))
            continue
        kept.append(
            replace(
                finding,
                kind=kind,
                key=finding_key(kind, finding.memories),
                reason=reason(_MODEL_REASON[kind], model=model),
                checked_by=model,
            )
        )
    return kept, ruled_out


def model_findings(pairs: TierPairs, verdicts: dict[Pair, str], model: str) -> list[Finding]:
    """Findings of the neighbours the LLM read as the same fact, a contradiction or possibly
    related ("unsure"); those it read as different facts are not shown."""
    found: list[Finding] = []
    for a, b, cosine in pairs.neighbours:
        kind = _CHECKED_KIND.get(verdicts.get((a.content, b.content), ""))
        if kind is None:
            continue
        found.append(
            Finding(
                kind,
                finding_key(kind, (a, b)),
                reason(_MODEL_REASON[kind], model=model),
                (a, b),
                similarity=round(min(1.0, max(0.0, cosine)), 3),
                checked_by=model,
                by_model_only=True,
            )
        )
    return found


@dataclass(frozen=True)
class Opinion:
    """What the LLM tier made of one scan's findings."""

    findings: list[Finding]
    ruled_out: int  # flagged pairs it called different facts (not shown)
    verdicts: int  # pairs it has a verdict about
    more: bool  # pairs still wait for a verdict, and it may be asked now


def second_opinion(
    findings: Sequence[Finding], pairs: TierPairs, checker: PairChecker, *, ask: bool = True
) -> Opinion:
    """The findings with the LLM's verdicts about ``pairs`` (``tier_pairs``): asked now
    (within its limits) with ``ask``, else only those it gave before."""
    verdicts = checker.check(pairs.texts, pairs.owners) if ask else checker.known(pairs.texts)
    kept, ruled_out = apply_checks(findings, verdicts, checker.name)
    kept += model_findings(pairs, verdicts, checker.name)
    return Opinion(kept, ruled_out, len(verdicts), checker.waiting(pairs.texts))
