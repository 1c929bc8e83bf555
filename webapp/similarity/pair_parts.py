"""How the parts of two facts compare (``PairParts``), before any threshold or model: whose
they are, their days and qualifiers, values that agree or clash, a yes against a no, and the
words each says that the other does not."""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz

from .facts import Fact
from .holders import ANIMALS
from .values import Value

__all__ = ["OBJECT_KINDS", "PairParts", "compare_parts", "term_matches"]

# Values that are objects, one of many: "Likes Radiohead" and "Likes Coldplay" both hold.
OBJECT_KINDS = frozenset({"proper"})


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
