"""Pairs of memories worth a look: candidates by their rarer terms (never all pairs), the
near-duplicates and contradictions among them, by the rules' words or by the similarity layer's
meaning, and the same fact kept by every person (offered as the household's)."""

from __future__ import annotations

import functools
import heapq
import math
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from ..language.phrasing import is_first_person
from ..similarity import Judgement
from ..stores.memories import Memory
from ..text import same_fact_key
from .findings import Finding, finding_key
from .pairs import PairVerdict, Reason, compare, features, reason
from .percent_alike import likeness
from .semantic import SemanticIndex

__all__ = [
    "block_keys",
    "candidate_pairs",
    "content_keys",
    "held_by_everyone",
    "pair_findings",
    "rule_verdict",
    "semantic_pair_findings",
]

MAX_BLOCK = 200  # a term shared by more memories than this is too common to find pairs by
MAX_CANDIDATES = 25  # memories each one is compared with, the most alike first

_CJK_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")


def block_keys(terms: Iterable[str]) -> set[str]:
    """Index keys of a memory: its terms, and the character pairs of its Chinese words (so
    無糖 meets 喝無糖 however the segmenter cut them)."""
    keys: set[str] = set()
    for term in terms:
        if _CJK_WORD.fullmatch(term):
            keys.update(term[i : i + 2] for i in range(len(term) - 1))
        else:
            keys.add(term)
    return keys


@functools.lru_cache(maxsize=65_536)
def content_keys(content: str) -> frozenset[str]:
    """``block_keys`` of a memory's text, kept while the memory is (an add does not read every
    other memory anew)."""
    return frozenset(block_keys(features(content).terms))


def let_others_run(step: int) -> None:
    """Now and then give up the interpreter lock, so a scan running in the background of the
    dashboard does not slow down the pages it serves meanwhile."""
    if step % 200 == 199:
        time.sleep(0)


def candidate_pairs(memories: Sequence[Memory]) -> set[tuple[int, int]]:
    """Index pairs worth comparing: same folded text, or sharing one of their rarer terms."""
    keys = [block_keys(features(m.content).terms) for m in memories]
    frequency = Counter(k for ks in keys for k in ks)
    postings: dict[str, list[int]] = defaultdict(list)
    for index, ks in enumerate(keys):
        for key in ks:
            postings[key].append(index)
    pairs: set[tuple[int, int]] = set()
    by_text: dict[str, list[int]] = defaultdict(list)
    for index, memory in enumerate(memories):
        by_text[features(memory.content).key].append(index)
    for same in by_text.values():
        pairs.update((same[0], other) for other in same[1:])  # each copy against the first
    for index, ks in enumerate(keys):
        let_others_run(index)
        ordered = sorted(ks, key=lambda k: (frequency[k], k))
        # Two memories about one subject share most terms, so they share one of the rarer
        # ones ("prefix filtering"): probing with those finds them without all pairs.
        probe = max(1, len(ordered) - math.ceil(0.5 * len(ordered)) + 1)
        shared: defaultdict[int, float] = defaultdict(float)
        for key in ordered[:probe]:
            if frequency[key] > MAX_BLOCK and key is not ordered[0]:
                break
            weight = 1.0 / frequency[key]
            for other in postings[key][:MAX_BLOCK]:
                shared[other] += weight
        shared.pop(index, None)
        # The memories sharing the most (and rarest) terms; a subject stated hundreds of times
        # is still found, through the nearest ones, without comparing every pair of them.
        for other, _ in heapq.nlargest(MAX_CANDIDATES, shared.items(), key=lambda kv: kv[1]):
            pairs.add((min(index, other), max(index, other)))
    return pairs


@functools.lru_cache(maxsize=200_000)
def merged_text(a: str, b: str) -> str:
    """The text a merge of ``a`` and ``b`` starts from: more terms, then fewer characters,
    and a fact about the user rather than the user's own sentence."""

    def rank(text: str) -> tuple[int, bool, int]:
        return (len(features(text).terms), not is_first_person(text), -len(text))

    return max((a, b), key=rank)


@functools.lru_cache(maxsize=200_000)
def rule_verdict(a: str, b: str) -> PairVerdict | None:
    return compare(a, b)


def judged_reason(kind: str, judgement: Judgement, a: str, b: str) -> Reason:
    """Why the similarity layer flagged a pair, as a ``Reason``: the rules' own reason when
    they say the same (it names the subject), else one from the judgement."""
    verdict = rule_verdict(a, b)
    if verdict is not None and verdict.kind == kind:
        return verdict.reason
    if judgement.reason == "same_text":
        return reason("same_text")
    if kind == "duplicate":
        return reason("same_values" if judgement.reason == "same_values" else "same_meaning")
    if judgement.reason == "different_values" and ": " in judgement.detail:
        left, _, right = judgement.detail.partition(": ")[2].partition(" / ")
        return reason("different_values_same_thing", left=(left,), right=(right,))
    if judgement.reason == "different_days":
        return reason("different_days")
    return reason("yes_and_no")


def semantic_pair_findings(memories: Sequence[Memory], index: SemanticIndex) -> list[Finding]:
    """Near-duplicates and contradictions among ``memories`` by the similarity layer: meaning
    as well as words (embeds the memories without a vector yet: a background thread's work)."""
    texts = [m.content for m in memories]
    found: list[Finding] = []
    for i, j, kind, judgement in index.pairs(texts):
        left, right = memories[i], memories[j]
        found.append(
            Finding(
                kind,
                finding_key(kind, (left, right)),
                judged_reason(kind, judgement, left.content, right.content),
                (left, right),
                similarity=likeness(left.content, right.content, index.cached_judge()),
                suggestion=merged_text(left.content, right.content),
            )
        )
    return found


def pair_findings(memories: Sequence[Memory]) -> list[Finding]:
    """Near-duplicates and contradictions among ``memories`` by the rules (words only)."""
    found: list[Finding] = []
    for count, (i, j) in enumerate(sorted(candidate_pairs(memories))):
        let_others_run(count)
        left, right = memories[i], memories[j]
        verdict = rule_verdict(left.content, right.content)
        if verdict is None:
            continue
        found.append(
            Finding(
                verdict.kind,
                finding_key(verdict.kind, (left, right)),
                verdict.reason,
                (left, right),
                similarity=likeness(left.content, right.content),
                suggestion=merged_text(left.content, right.content),
            )
        )
    return found


def held_by_everyone(memories: Sequence[Memory]) -> list[Finding]:
    """The same fact (``same_fact_key``) kept by every person who keeps memories, two or
    more of them, and not by the household: offered as "move to household" (one memory,
    shared, instead of one per person)."""
    people = {m.person for m in memories if m.person is not None}
    if len(people) < 2:
        return []
    groups: dict[str, list[Memory]] = defaultdict(list)
    for memory in memories:
        groups[same_fact_key(memory.content)].append(memory)
    found = []
    for group in groups.values():
        owners = {m.person for m in group}
        if None in owners or owners != people:
            continue
        kept = tuple(sorted(group, key=lambda m: (m.created_at, m.id)))
        found.append(
            Finding(
                "duplicate",
                finding_key("household", kept),
                reason("held_by_everyone"),
                kept,
                similarity=1.0,
                suggestion=kept[0].content,
            )
        )
    return found
