"""Judgements on facts: the same fact, a contradiction, and what to do with a new fact.

The embedding says whether two facts are about the same subject when they share few words; the
parts (``facts.analyse``) say whether their values agree. Every judgement returns a verdict, a
score and a short reason code:

- ``same_fact(a, b)``: near-duplicates. With the calibrated model for the embedder
  (``calibrated.py``, fitted on the dev sets), the cosines and the parts below are weighed
  together and the model's probability meets its threshold; the reason names the first part
  that speaks against the pair. Without it (no ``calibration.json``, or ``calibrated=False``),
  no if they belong to different people, days, rooms or seasons, state different values, or
  one says no to what the other says; no if they share a frame and each fills it differently
  ("Likes green tea" / "Likes green curry") unless the model reads the two as synonyms; else
  yes when the cosine (plus a bonus for values that agree, like 23:00 and "eleven") reaches
  the language's threshold.
- ``contradiction(a, b)``: the same subject with an incompatible value (a time, number, name,
  place, way to work, language, length of answers, meat or not, pets or not, home or office,
  yes against no on the same thing). Same subject: shared terms or values with nothing filled
  differently, or a cosine at or above the language's subject threshold.
- ``reconcile(fact, kept)``: ``skip`` when a kept memory already says it, ``update`` when it
  changes a kept memory's value (or adds detail to it), ``add`` otherwise; the kept memories
  looked at are the most similar by cosine.

Thresholds are per embedder family and language, chosen on the development judgement sets only
(``benchmarks/tune_similarity.py`` prints how; the held-out sets never tune them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
from rapidfuzz import fuzz

from ..text import fold
from .cache import VectorCache
from .calibrated import FEATURES, SAME_MODELS, Model, lexical_cosine
from .embedders import Embedder, default_embedder
from .facts import Fact, analyse
from .holders import ANIMALS
from .values import Value

Action = Literal["skip", "update", "add"]
LANGUAGES = ("en", "zh-Hant", "zh-Hans")


@dataclass(frozen=True)
class Thresholds:
    """Cut-offs on the cosine of two facts for one embedder family and one language."""

    duplicate: float  # cosine (plus the agreement bonus) from which two facts are one
    subject: float  # cosine from which facts that share no words are about the same subject
    synonym: float  # cosine from which facts filling the same frame differently still agree
    bonus: float  # added to the cosine when the facts state values and all of them agree


# Chosen on the dev files by benchmarks/tune_similarity.py (midpoints of the best ranges).
THRESHOLDS: dict[str, dict[str, Thresholds]] = {
    "e5+use": {
        # 620 of 771 dev judgements right (the dev sets of 2026-11-27); the mean of two cosines
        "en": Thresholds(duplicate=0.59, subject=0.61, synonym=0.86, bonus=0.1),
        "zh-Hant": Thresholds(duplicate=0.64, subject=0.62, synonym=0.86, bonus=0.1),
        "zh-Hans": Thresholds(duplicate=0.66, subject=0.88, synonym=0.86, bonus=0.1),
    },
    "e5": {
        # 195 of 198 dev judgements right; bonus and synonym: the middle of 15 tied combinations
        "en": Thresholds(duplicate=0.905, subject=0.88, synonym=0.96, bonus=0.07),
        "zh-Hant": Thresholds(duplicate=0.895, subject=0.945, synonym=0.96, bonus=0.07),
        "zh-Hans": Thresholds(duplicate=0.925, subject=0.94, synonym=0.96, bonus=0.07),
    },
    "use": {
        # 197 of 198 dev judgements right; the rules veto most dev negatives, so the dev data
        # holds these duplicate thresholds only loosely (wide runs of equally good values)
        "en": Thresholds(duplicate=0.27, subject=0.44, synonym=0.76, bonus=0.25),
        "zh-Hant": Thresholds(duplicate=0.48, subject=0.73, synonym=0.76, bonus=0.25),
        "zh-Hans": Thresholds(duplicate=0.45, subject=0.68, synonym=0.76, bonus=0.25),
    },
    "lexical": {
        # 186 of 198 dev judgements right (no synonyms: paraphrases are missed)
        "en": Thresholds(duplicate=0.25, subject=0.6, synonym=0.72, bonus=0.3),
        "zh-Hant": Thresholds(duplicate=0.22, subject=0.6, synonym=0.72, bonus=0.3),
        "zh-Hans": Thresholds(duplicate=0.25, subject=0.6, synonym=0.72, bonus=0.3),
    },
}
# Nearly the same words and meaning, and no part against: one fact, whatever the model says.
# The calibrated model learns from hard pairs that sharing words means another fact; this is
# the other end ("喜歡喝無糖綠茶" / "用户喜欢喝无糖绿茶"). On the dev pairs it adds 1 right, 0 wrong.
SAME_WORDS = 0.7  # hashed word and n-gram cosine
SAME_WORDS_COSINE = 0.95
PAIR_CACHE_SIZE = 500_000  # judged pairs kept (about 200 bytes each)
RECONCILE_CANDIDATES = 5  # kept memories judged against a new fact, the most similar first
# The calibrated "same fact" probability from which the nearest kept memory, not the same fact,
# is close enough that a new fact is proposed as its update (chosen on the dev reconcile set)
RECONCILE_CLOSE = 0.3


class Judgement(NamedTuple):
    """A verdict with its score (a cosine, adjusted) and a short reason code."""

    verdict: bool
    score: float
    reason: str
    detail: str = ""


class Reconciled(NamedTuple):
    """What to do with a new fact: the action, the kept memory it concerns, how sure, why."""

    action: Action
    target: int | None
    score: float
    reason: str


# ------------------------------------------------------------------ comparing parts
def _cjk(term: str) -> bool:
    return "\u3400" <= term[0] <= "\ufaff"


def term_matches(term: str, others: frozenset[str]) -> bool:
    """``term`` is in ``others``, a Chinese word contains it or is in it (市场 / 传统市场),
    or a long English word is a spelling away from one (favorite / favourit)."""
    if term in others:
        return True
    for other in others:
        if _cjk(term) and _cjk(other):
            short, long = (term, other) if len(term) <= len(other) else (other, term)
            if len(short) >= 2 and short in long:
                return True
        elif (
            not _cjk(term)
            and not _cjk(other)
            and min(len(term), len(other)) >= 5
            and fuzz.ratio(term, other) >= 85
        ):
            return True
    return False


def _overlapping(a: frozenset[str], b: frozenset[str]) -> bool:
    """A word on each side sharing a Chinese character (绿茶 / 绿豆糕) or a 4-letter start."""
    for x in a:
        for y in b:
            if _cjk(x) and _cjk(y):
                if set(x) & set(y):
                    return True
            elif not _cjk(x) and not _cjk(y) and len(x) >= 4 and x[:4] == y[:4]:
                return True
    return False


def _same_amount(x: Value, y: Value) -> bool:
    if x.kind == "time":
        if x.amount == y.amount:
            return True
        if (x.ambiguous or y.ambiguous) and isinstance(x.amount, float):
            return float(x.amount) % 720 == float(y.amount) % 720
        return False
    if isinstance(x.amount, str) and isinstance(y.amount, str):
        if x.kind == "language":
            return (
                x.amount == y.amount
                or {x.amount[:2], y.amount[:2]} == {"zh"}
                and (x.amount == "zh" or y.amount == "zh")
            )
        if x.kind in ("name", "place"):
            return x.amount == y.amount or (
                min(len(x.amount), len(y.amount)) >= 2
                and (x.amount in y.amount or y.amount in x.amount)
            )
        return x.amount == y.amount
    return x.amount == y.amount


def _compare_values(xs: list[Value], ys: list[Value]) -> str:
    """ "agree" (each side's values all found on the other), "clash" (neither side's values
    all found on the other), or "partial" (one side says more)."""
    x_in_y = all(any(_same_amount(x, y) for y in ys) for x in xs)
    y_in_x = all(any(_same_amount(y, x) for x in xs) for y in ys)
    if x_in_y and y_in_x:
        return "agree"
    if not x_in_y and not y_in_x:
        return "clash"
    return "partial"


@dataclass(frozen=True)
class PairParts:
    """How the parts of two facts compare, before any threshold."""

    holder_conflict: bool
    qualifier_conflict: str  # the kind of qualifier ("days", "room"…), "" when none
    day_change_only: bool  # the days differ and nothing else does ("on Fridays" → "Thursdays")
    agree: tuple[str, ...]  # kinds of value both state, with the same amounts
    clash: tuple[tuple[str, str, str], ...]  # (kind, a's value, b's value)
    negation_conflict: str  # a term one says yes to and the other no, "" when none
    shared: frozenset[str]
    only_a: frozenset[str]
    only_b: frozenset[str]
    frame: bool  # something in common: a term, a qualifier, a value, the holder
    substitution: bool  # a shared frame that each fills differently


def _name_owner_conflict(a: Fact, b: Fact) -> bool:
    """Both name something and the named differ: "a cat named Pepper" / "a dog named Pepper"."""
    owners_a = {v.owner for v in a.values if v.kind == "name" and v.owner}
    owners_b = {v.owner for v in b.values if v.kind == "name" and v.owner}
    return bool(owners_a and owners_b and not owners_a & owners_b)


def compare_parts(a: Fact, b: Fact) -> PairParts:
    """Compare the parts of two analysed facts (no model involved)."""
    holder_conflict = False
    if a.holder != b.holder:
        animals = {a.holder, b.holder} & ANIMALS
        holder_conflict = bool(a.holder and b.holder) or not animals
    holder_conflict = holder_conflict or _name_owner_conflict(a, b)

    qualifier_conflict = ""
    residual_a: set[str] = set()
    residual_b: set[str] = set()
    frame = bool(a.holder and a.holder == b.holder)
    if a.days is not None and b.days is not None:
        if not a.days & b.days:
            qualifier_conflict = "days"
        elif a.days == b.days:
            frame = True
    qa, qb = dict(a.qualifiers), dict(b.qualifiers)
    for kind in qa.keys() | qb.keys():
        if kind in qa and kind in qb:
            if not qa[kind] & qb[kind]:
                qualifier_conflict = qualifier_conflict or kind
            else:
                frame = True
        elif kind in qa:
            residual_a.add(f"<{kind}>")
        else:
            residual_b.add(f"<{kind}>")

    kinds_a, kinds_b = a.value_kinds(), b.value_kinds()
    _pair_numbers_with_counts(kinds_a, kinds_b)
    agree: list[str] = []
    clash: list[tuple[str, str, str]] = []
    for kind in kinds_a.keys() | kinds_b.keys():
        xs, ys = kinds_a.get(kind, []), kinds_b.get(kind, [])
        if kind in ("name",):
            xs, ys = _comparable_names(xs, ys)
        if not xs or not ys:
            if kind in kinds_a and kind not in kinds_b and kind != "number":
                residual_a.add(f"<{kind}>")
            elif kind in kinds_b and kind not in kinds_a and kind != "number":
                residual_b.add(f"<{kind}>")
            continue
        outcome = _compare_values(xs, ys)
        if outcome == "agree":
            agree.append(kind)
        elif kind in OBJECT_KINDS:  # another object, not another value: filled differently
            if outcome == "clash":
                residual_a.add(f"<{kind}>")
                residual_b.add(f"<{kind}>")
        elif outcome == "clash":
            clash.append((kind, ", ".join(v.text for v in xs), ", ".join(v.text for v in ys)))
    frame = frame or bool(agree)
    if (
        a.attribute
        and b.attribute
        and a.attribute[:2] == b.attribute[:2]
        and not clash
        and not set(agree) - OBJECT_KINDS  # values that agree (06:30 / 六點半) say it is one
        and _value_words(a.attribute[2]) != _value_words(b.attribute[2])
        and not term_matches(a.attribute[2], frozenset({b.attribute[2]}))
    ):
        # the same thing's one value, another on each side ("the car is a blue Corolla" / "a
        # grey Corolla", 宽带是电信的 / 是移动的)
        clash.append(("attribute", a.attribute[2], b.attribute[2]))
        frame = True

    shared = frozenset(t for t in a.terms if term_matches(t, b.terms))
    shared_b = frozenset(t for t in b.terms if term_matches(t, a.terms))
    only_a = (a.terms - shared) | _leftovers(shared, b.terms)
    only_b = (b.terms - shared_b) | _leftovers(shared_b, a.terms)
    frame = frame or bool(shared) or bool(a.verbs & b.verbs)

    negation = ""
    for term in a.negated:
        if term_matches(term, b.terms - b.negated):
            negation = term
    for term in b.negated:
        if term_matches(term, a.terms - a.negated):
            negation = negation or term
    if not negation and a.negative != b.negative and not (only_a and only_b):
        # the verb itself is denied on one side only ("Has a licence" / "Doesn't have a
        # licence", 会开车 / 不会开车), and neither side speaks of something the other does not
        negation = "not"

    filled_a = set(only_a) | residual_a
    filled_b = set(only_b) | residual_b
    overlapping = _overlapping(only_a, only_b)
    substitution = bool(filled_a and filled_b) and (frame or overlapping)

    day_change_only = (
        qualifier_conflict == "days"
        and not clash
        and not negation
        and not (only_a or only_b)
        and not holder_conflict
    )
    return PairParts(
        holder_conflict=holder_conflict,
        qualifier_conflict=qualifier_conflict,
        day_change_only=day_change_only,
        agree=tuple(sorted(agree)),
        clash=tuple(sorted(clash)),
        negation_conflict=negation,
        shared=shared,
        only_a=only_a,
        only_b=only_b,
        frame=frame or overlapping,
        substitution=substitution,
    )


def _value_words(value: str) -> tuple[str, ...]:
    """A value phrase as its sorted words (English) or characters (Chinese), without 的 and
    spaces: "小区地下车库b2" and "小区b2地下车库" are one value."""
    if any(_cjk(ch) for ch in value):
        return tuple(sorted(ch for ch in value if ch not in "的 了"))
    return tuple(sorted(value.split()))


def _leftovers(terms: frozenset[str], others: frozenset[str]) -> frozenset[str]:
    """What a Chinese word has beyond the shorter word it matched: 乌龙茶 against 乌龙 → 茶."""
    left: set[str] = set()
    for term in terms:
        if term in others or not _cjk(term):
            continue
        inside = [o for o in others if _cjk(o) and len(o) < len(term) and o in term]
        if inside:
            rest = term
            for other in inside:
                rest = rest.replace(other, "")
            if rest and not term_matches(rest, others) and not any(rest in o for o in others):
                left.add(rest)
    return frozenset(left)


def pair_features(a: Fact, b: Fact, parts: PairParts, cosine: float) -> list[float]:
    """The calibrated model's inputs for a pair, in ``calibrated.FEATURES`` order."""
    values = {
        "cosine": cosine,
        "lexical": lexical_cosine(a.text, b.text),
        "fuzz": fuzz.token_set_ratio(fold(a.text), fold(b.text)) / 100.0,
        "holder": float(parts.holder_conflict),
        "qualifier": float(bool(parts.qualifier_conflict)),
        "clash": float(bool(parts.clash)),
        "clash_subject": float(any(kind in SUBJECT_KINDS for kind, _, _ in parts.clash)),
        "negation": float(bool(parts.negation_conflict)),
        "substitution": float(parts.substitution),
        "frame": float(parts.frame),
        "agree": float(bool(parts.agree)),
        "day_only": float(parts.day_change_only),
        "only": min(len(parts.only_a) + len(parts.only_b), 8) / 8.0,
        "shared": min(len(parts.shared), 5) / 5.0,
    }
    return [values[name] for name in FEATURES]


def _pair_numbers_with_counts(
    kinds_a: dict[str, list[Value]], kinds_b: dict[str, list[Value]]
) -> None:
    """A bare number on one side counts the unit the other side names ("father of two" /
    "two kids")."""
    for mine, theirs in ((kinds_a, kinds_b), (kinds_b, kinds_a)):
        if "number" in mine and "number" not in theirs:
            counts = [k for k in theirs if k.startswith("count:")]
            if len(counts) == 1:
                mine[counts[0]] = mine.get(counts[0], []) + mine.pop("number")


def _comparable_names(xs: list[Value], ys: list[Value]) -> tuple[list[Value], list[Value]]:
    """Names are compared only between the same named thing (or when one side names none)."""
    owners_x = {v.owner for v in xs}
    owners_y = {v.owner for v in ys}
    if "" in owners_x or "" in owners_y or owners_x & owners_y:
        return xs, ys
    return [], []


# ------------------------------------------------------------------ the judge
def pair_language(a: Fact, b: Fact) -> str:
    """The language whose thresholds apply: a Chinese side decides over English."""
    if a.language != "en":
        return a.language
    return b.language


class Judge:
    """The judgements with one embedder, its vector cache and its thresholds."""

    def __init__(
        self,
        embedder: Embedder | None = None,
        cache: VectorCache | None = None,
        thresholds: dict[str, Thresholds] | None = None,
        same_model: Model | None = None,
        calibrated: bool = True,
    ) -> None:
        if cache is not None:
            embedder = cache.embedder
        self.embedder = embedder or default_embedder()
        self.cache = cache if cache is not None else VectorCache(self.embedder)
        self.thresholds = thresholds or THRESHOLDS.get(self.embedder.family, THRESHOLDS["lexical"])
        # the calibrated "same fact" model for this embedder family (None: thresholds alone)
        self.same_model = same_model or (
            SAME_MODELS.get(self.embedder.family) if calibrated else None
        )
        self._pairs: dict[tuple[str, str], tuple[str, Judgement]] = {}

    def limits(self, language: str) -> Thresholds:
        return self.thresholds.get(language) or self.thresholds["en"]

    def cosine(self, a: str, b: str) -> float:
        vectors = self.cache.vectors([a, b])
        return float(np.clip(vectors[0] @ vectors[1], -1.0, 1.0))

    # ----------------------------------------------------------------- pairs
    def same_fact(self, a: str, b: str, cosine: float | None = None) -> Judgement:
        """Whether ``a`` and ``b`` state the same fact (one of them can go)."""
        fa, fb = analyse(a), analyse(b)
        if fa.key and fa.key == fb.key:
            return Judgement(True, 1.0, "same_text")
        cos = self.cosine(a, b) if cosine is None else cosine
        limits = self.limits(pair_language(fa, fb))
        return decide_same(fa, fb, compare_parts(fa, fb), cos, limits, self.same_model)

    def likeness(self, a: str, b: str, cosine: float | None = None) -> float:
        """How alike ``a`` and ``b`` are as a person is shown it (0 to 1): the calibrated
        model's probability that they state the same fact (``calibrated.py``), 1.0 for the
        same text; without a model for this embedder, the judgement's score. Never the raw
        cosine: "lights at 30% after 22:00" / "meetings before 15:00" are far apart."""
        fa, fb = analyse(a), analyse(b)
        if fa.key and fa.key == fb.key:
            return 1.0
        cos = self.cosine(a, b) if cosine is None else cosine
        parts = compare_parts(fa, fb)
        if self.same_model is None:
            limits = self.limits(pair_language(fa, fb))
            score = decide_same(fa, fb, parts, cos, limits).score
        else:
            score = self.same_model.probability(pair_features(fa, fb, parts, cos))
        return min(1.0, max(0.0, score))

    def contradiction(self, a: str, b: str, cosine: float | None = None) -> Judgement:
        """Whether ``a`` and ``b`` speak of the same subject and cannot both be true."""
        fa, fb = analyse(a), analyse(b)
        if fa.key and fa.key == fb.key:
            return Judgement(False, 1.0, "same_text")
        cos = self.cosine(a, b) if cosine is None else cosine
        return decide_contradiction(
            fa, fb, compare_parts(fa, fb), cos, self.limits(pair_language(fa, fb))
        )

    def judge_pair(self, a: str, b: str, cosine: float | None = None) -> tuple[str, Judgement]:
        """("duplicate" | "contradiction" | "", judgement) for a pair, the parts compared once.

        Cached per pair of texts (a text is a memory version), so a rescan after one memory
        changed judges only the pairs that memory is in.
        """
        cached = self._pairs.get((a, b))
        if cached is not None:
            return cached
        fa, fb = analyse(a), analyse(b)
        if fa.key and fa.key == fb.key:
            result = ("duplicate", Judgement(True, 1.0, "same_text"))
        else:
            cos = self.cosine(a, b) if cosine is None else cosine
            parts = compare_parts(fa, fb)
            limits = self.limits(pair_language(fa, fb))
            same = decide_same(fa, fb, parts, cos, limits, self.same_model)
            if same.verdict:
                result = ("duplicate", same)
            else:
                clash = decide_contradiction(fa, fb, parts, cos, limits)
                result = ("contradiction", clash) if clash.verdict else ("", same)
        if len(self._pairs) >= PAIR_CACHE_SIZE:
            self._pairs.clear()
        self._pairs[(a, b)] = result
        return result

    def repeats(self, kept: str, new: str) -> bool:
        """``new`` states the fact ``kept`` states and adds nothing to it: the judge's
        ``same_fact`` (values, holder, negation and qualifiers agree), not mere closeness."""
        fk, fn = analyse(kept), analyse(new)
        if fk.key and fk.key == fn.key:
            return True
        parts = compare_parts(fk, fn)
        limits = self.limits(pair_language(fk, fn))
        same = decide_same(fk, fn, parts, self.cosine(kept, new), limits, self.same_model)
        return same.verdict and not _adds_detail(parts, fk, fn)

    # ----------------------------------------------------------------- lists
    def most_similar(self, text: str, others: Sequence[str], k: int = 5) -> list[tuple[int, float]]:
        """(index, cosine) of the ``k`` texts of ``others`` most like ``text``, best first."""
        if not others:
            return []
        matrix = self.cache.vectors([text, *others])
        scores = matrix[1:] @ matrix[0]
        order = np.argsort(-scores, kind="stable")[:k]
        return [(int(i), float(scores[i])) for i in order]

    def reconcile(self, fact: str, kept: Sequence[str]) -> Reconciled:
        """``skip`` (kept[target] already says it), ``update`` (it changes kept[target]) or
        ``add`` (nothing kept is about it)."""
        if not kept:
            return Reconciled("add", None, 0.0, "nothing_kept")
        ff = analyse(fact)
        for index, memory in enumerate(kept):
            if ff.key and analyse(memory).key == ff.key:
                return Reconciled("skip", index, 1.0, "same_text")
        ranked = self.most_similar(fact, kept, RECONCILE_CANDIDATES)
        return decide_reconcile(
            ff, [(i, analyse(kept[i]), cos) for i, cos in ranked], self.limits, self.same_model
        )


def decide_reconcile(
    fact: Fact,
    ranked: Sequence[tuple[int, Fact, float]],
    limits: Callable[[str], Thresholds],
    model: Model | None = None,
) -> Reconciled:
    """``reconcile`` from the kept memories most like ``fact``: (index, parts, cosine), best
    first. A memory that says the same is a ``skip`` (unless the fact adds detail: ``update``);
    one it contradicts is an ``update``; a skip wins over an update, the closer over the less
    close."""
    skip: Reconciled | None = None
    update: Reconciled | None = None
    nearest: PairParts | None = None  # the parts of the first (most similar) pair
    for index, kept, cos in ranked:
        parts = compare_parts(kept, fact)
        nearest = nearest or parts
        limit = limits(pair_language(fact, kept))
        same = decide_same(kept, fact, parts, cos, limit, model)
        if same.verdict:
            if _adds_detail(parts, kept, fact):
                update = update or Reconciled("update", index, same.score, "adds_detail")
            else:
                skip = skip or Reconciled("skip", index, same.score, same.reason)
            continue
        clash = decide_contradiction(kept, fact, parts, cos, limit)
        if clash.verdict:
            update = update or Reconciled("update", index, clash.score, clash.reason)
    if skip is not None:
        return skip
    if update is not None:
        return update
    if model is not None and nearest is not None:
        # close, not the same: the nearest memory is likely this fact in other words or its
        # older version; a person sees it as a change of that memory (Review marks what it
        # would drop) rather than as a second memory beside it
        index, kept, cos = ranked[0]
        if not nearest.holder_conflict and not nearest.qualifier_conflict:
            probability = model.probability(pair_features(kept, fact, nearest, cos))
            if probability >= RECONCILE_CLOSE:
                return Reconciled("update", index, cos, "close")
    return Reconciled("add", None, ranked[0][2] if ranked else 0.0, "new")


def _adds_detail(parts: PairParts, kept: Fact, new: Fact) -> bool:
    """The new fact says all the kept one says and more (terms or values it lacks)."""
    more_terms = bool(parts.only_b) and not parts.only_a
    kinds_kept, kinds_new = kept.value_kinds(), new.value_kinds()

    def amounts(kinds: dict[str, list[Value]], kind: str) -> int:
        return len({v.amount for v in kinds.get(kind, [])})

    more_values = any(amounts(kinds_new, k) > amounts(kinds_kept, k) for k in kinds_new)
    return (more_terms and len(parts.only_b) >= 2) or (more_values and not parts.only_a)


# Values that are objects, one of many: "Likes Radiohead" and "Likes Coldplay" both hold.
OBJECT_KINDS = frozenset({"proper"})
# Values that are a subject of their own: whoever says "no meat" and "eats chicken" disagrees.
SUBJECT_KINDS = frozenset({"diet", "pets", "workplace"})


def decide_same(
    a: Fact,
    b: Fact,
    parts: PairParts,
    cos: float,
    limits: Thresholds,
    model: Model | None = None,
) -> Judgement:
    """``same_fact`` from the compared parts and the cosine.

    With a calibrated ``model`` (``calibrated.py``) the parts and cosines are weighed together
    and the verdict is its probability against its threshold (or nearly the same words and
    meaning with no part against); the reason still names the first part that speaks against it. Without one, each part vetoes and the cosine meets a threshold.
    """
    score = cos + (limits.bonus if parts.agree else 0.0)
    if model is not None:
        against = _against(parts, score)
        if one_slot_filled_differently(parts) and cos < limits.synonym:
            # the same frame with one word each that the model does not read as synonyms:
            # 对青霉素过敏 / 对头孢过敏, "Likes green tea" / "Likes green curry"
            return against or _other_thing(parts, score)
        same_words = (
            against is None
            and cos >= SAME_WORDS_COSINE
            and lexical_cosine(a.text, b.text) >= SAME_WORDS
        )
        if same_words or model.probability(pair_features(a, b, parts, cos)) >= model.threshold:
            return Judgement(
                True, min(score, 1.0), "same_values" if parts.agree else "same_meaning"
            )
        return against or Judgement(False, score, "different_meaning")
    vetoed = _against(parts, cos, substitution=False)
    if vetoed is not None:
        return vetoed
    if parts.substitution and score < limits.synonym:
        return _other_thing(parts, score)
    if score >= limits.duplicate:
        return Judgement(True, min(score, 1.0), "same_values" if parts.agree else "same_meaning")
    return Judgement(False, score, "different_meaning")


def one_slot_filled_differently(parts: PairParts) -> bool:
    """Everything shared but one word on each side (and values, if any, agreeing)."""
    return (
        parts.substitution
        and bool(parts.shared)
        and len(parts.only_a) == 1
        and len(parts.only_b) == 1
        and not parts.clash
    )


def _other_thing(parts: PairParts, score: float) -> Judgement:
    detail = " / ".join(",".join(sorted(side)) for side in (parts.only_a, parts.only_b) if side)
    return Judgement(False, score, "other_thing", detail)


def _against(parts: PairParts, score: float, substitution: bool = True) -> Judgement | None:
    """The first part that says two facts are not one: another holder, values, day, a no
    (and, with ``substitution``, a frame each fills differently)."""
    if parts.holder_conflict:
        return Judgement(False, score, "other_holder")
    if parts.clash:
        kind, left, right = parts.clash[0]
        return Judgement(False, score, "different_values", f"{kind}: {left} / {right}")
    if parts.qualifier_conflict:
        return Judgement(False, score, "other_" + parts.qualifier_conflict)
    if parts.negation_conflict:
        return Judgement(False, score, "yes_and_no", parts.negation_conflict)
    if substitution and parts.substitution:
        return _other_thing(parts, score)
    return None


def decide_contradiction(
    a: Fact, b: Fact, parts: PairParts, cos: float, limits: Thresholds
) -> Judgement:
    """``contradiction`` from the compared parts and the cosine."""
    if parts.holder_conflict:
        return Judgement(False, cos, "other_holder")
    if parts.day_change_only:
        return Judgement(True, cos, "different_days")
    if parts.qualifier_conflict:
        return Judgement(False, cos, "other_" + parts.qualifier_conflict)
    for kind, left, right in parts.clash:
        # meat or not, pets or not: the value is the subject; a thing's one value
        if kind in SUBJECT_KINDS or kind == "attribute":
            return Judgement(True, cos, "different_values", f"{kind}: {left} / {right}")
    if (
        parts.negation_conflict
        and parts.negation_conflict != "not"
        and not (parts.only_a and parts.only_b)
    ):
        # a word one says yes to and the other no, and only one side says more: the word is
        # the subject (戒烟 / 每天抽一包烟); "Prefers spaces around operators" / "tabs instead
        # of spaces" each say something the other does not: two facts
        return Judgement(True, cos, "yes_and_no", parts.negation_conflict)
    if parts.substitution and cos < limits.synonym:
        return Judgement(False, cos, "other_thing")
    if not parts.frame and cos < limits.subject:
        return Judgement(False, cos, "other_subject")
    if parts.clash:
        kind, left, right = parts.clash[0]
        return Judgement(True, cos, "different_values", f"{kind}: {left} / {right}")
    if parts.negation_conflict:
        return Judgement(True, cos, "yes_and_no", parts.negation_conflict)
    return Judgement(False, cos, "compatible")


# ------------------------------------------------------------------ module-level helpers
_judge: Judge | None = None


def default_judge() -> Judge:
    """The process-wide judge on the default embedder (created on first use)."""
    global _judge
    if _judge is None:
        _judge = Judge()
    return _judge


def same_fact(a: str, b: str) -> Judgement:
    """``Judge.same_fact`` with the process-wide judge."""
    return default_judge().same_fact(a, b)


def contradiction(a: str, b: str) -> Judgement:
    """``Judge.contradiction`` with the process-wide judge."""
    return default_judge().contradiction(a, b)


def reconcile(fact: str, kept: Sequence[str]) -> Reconciled:
    """``Judge.reconcile`` with the process-wide judge."""
    return default_judge().reconcile(fact, kept)
