"""The rules that turn two facts' compared parts and cosine into a verdict.

The embedding says whether two facts are about the same subject when they share few words; the
parts (``facts.analyse``, compared by ``pair_parts``) say whether their values agree. Every
judgement returns a verdict, a score and a short reason code:

- ``decide_same`` (the judge's ``same_fact``): near-duplicates. With the calibrated model for
  the embedder (``calibrated.py``, fitted on the dev sets), the cosines and the parts below are
  weighed together and the model's probability meets its threshold; the reason names the first
  part that speaks against the pair. Without it (no ``calibration.json``, or
  ``calibrated=False``), no if they belong to different people, days, rooms or seasons, state
  different values, or one says no to what the other says; no if they share a frame and each
  fills it differently ("Likes green tea" / "Likes green curry") unless the model reads the two
  as synonyms; else yes when the cosine (plus a bonus for values that agree, like 23:00 and
  "eleven") reaches the language's threshold.
- ``decide_contradiction`` (``contradiction``): the same subject with an incompatible value (a
  time, number, name, place, way to work, language, length of answers, meat or not, pets or not,
  home or office, yes against no on the same thing). Same subject: shared terms or values with
  nothing filled differently, or a cosine at or above the language's subject threshold.
- ``decide_reconcile`` (``reconcile``): ``skip`` when a kept memory already says it, ``update``
  when it changes a kept memory's value (or adds detail to it), ``add`` otherwise; the kept
  memories looked at are the most similar by cosine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

from rapidfuzz import fuzz

from ..text import fold
from .calibrated import FEATURES, Model, lexical_cosine
from .facts import Fact
from .pair_parts import PairParts, compare_parts
from .thresholds import Thresholds
from .values import Value

__all__ = [
    "Judgement",
    "Reconciled",
    "adds_detail",
    "decide_contradiction",
    "decide_reconcile",
    "decide_same",
    "pair_features",
    "pair_language",
]

Action = Literal["skip", "update", "add"]
# Nearly the same words and meaning, and no part against: one fact, whatever the model says.
# The calibrated model learns from hard pairs that sharing words means another fact; this is
# the other end ("喜歡喝無糖綠茶" / "用户喜欢喝无糖绿茶"). On the dev pairs it adds 1 right, 0 wrong.
SAME_WORDS = 0.7  # hashed word and n-gram cosine
SAME_WORDS_COSINE = 0.95
# The calibrated "same fact" probability from which the nearest kept memory, not the same fact,
# is close enough that a new fact is proposed as its update (chosen on the dev reconcile set)
RECONCILE_CLOSE = 0.3
# Values that are a subject of their own: whoever says "no meat" and "eats chicken" disagrees.
SUBJECT_KINDS = frozenset({"diet", "pets", "workplace"})


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


def pair_language(a: Fact, b: Fact) -> str:
    """The language whose thresholds apply: a Chinese side decides over English."""
    if a.language != "en":
        return a.language
    return b.language


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
            if adds_detail(parts, kept, fact):
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


def adds_detail(parts: PairParts, kept: Fact, new: Fact) -> bool:
    """The new fact says all the kept one says and more (terms or values it lacks)."""
    more_terms = bool(parts.only_b) and not parts.only_a
    kinds_kept, kinds_new = kept.value_kinds(), new.value_kinds()

    def amounts(kinds: dict[str, list[Value]], kind: str) -> int:
        return len({v.amount for v in kinds.get(kind, [])})

    more_values = any(amounts(kinds_new, k) > amounts(kinds_kept, k) for k in kinds_new)
    return (more_terms and len(parts.only_b) >= 2) or (more_values and not parts.only_a)


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
