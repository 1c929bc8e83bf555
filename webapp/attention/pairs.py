"""What a curator should look at in a memory, or in a pair of them: rules only, no LLM.

A memory is reduced to its ``Features``: the values it states (times, dates, percentages,
temperatures, counts), whether it says no, and the terms its subject is made of (English words
stemmed by Snowball, Chinese segmented by jieba's dictionary through rjieba, both after folding
case, width and 繁/简, without the filler that says who holds the fact or how strongly).
Two memories with the same terms, values and yes/no are near-duplicates; the same subject with
different values, or with yes against no, is a contradiction.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from rapidfuzz import fuzz

from .. import language
from ..sensitive.secrets import KIND_NAMES
from ..text import fold, folded_with_owners

DUPLICATE_SIMILARITY = 0.8  # share of terms two memories must have in common to say the same
SUBJECT_SIMILARITY = 0.75  # ... to be about the same subject (then values must agree)


@dataclass(frozen=True)
class Value:
    """A value a memory states: ``kind`` says what it measures ("time", "%", "cat"…)."""

    kind: str
    amount: float
    text: str  # as the memory writes it ("24°C", "晚上十點"), for reasons shown to a person
    # A clock time said without am/pm or part of day (十點, "7 o'clock"): 10:00 or 22:00.
    ambiguous: bool = False


@dataclass(frozen=True)
class Features:
    """What the rules compare: subject terms, stated values, yes or no."""

    key: str  # the text without case, width, script, spacing or punctuation
    terms: frozenset[str]
    values: tuple[Value, ...]
    negated: bool
    dates: tuple[date, ...]

    def kinds(self) -> dict[str, frozenset[float]]:
        """The amounts stated per kind of value."""
        return _kinds(self.values)


@functools.lru_cache(maxsize=65536)
def _kinds(values: tuple[Value, ...]) -> dict[str, frozenset[float]]:
    found: dict[str, set[float]] = {}
    for value in values:
        found.setdefault(value.kind, set()).add(value.amount)
    return {kind: frozenset(amounts) for kind, amounts in found.items()}


# ------------------------------------------------------------------ values
# A date after one of these words is a lasting fact (a birthday), not a deadline.
_LASTING_DATE = re.compile(
    r"(?:born|birthday|since|anniversary|married|生日|出生|自从|自從)(?:\W+\w+){0,2}?\W*$"
)


class _Spelling:
    """Maps a span of the folded text back to the memory's own characters: "24°c" is read,
    "24°C" is shown. Built on the first value found (most memories state none)."""

    def __init__(self, text: str, folded: str) -> None:
        self.text = text
        self.folded = folded
        self.owners: list[int] | None = None
        self.mapped = False

    def __call__(self, start: int, end: int) -> str:
        found = self.folded[start:end]
        if len(self.text) == len(self.folded) and fold(self.text[start:end]) == found:
            return self.text[start:end]  # the usual case: one character folds to one
        if not self.mapped:
            self.mapped = True
            again, owners = folded_with_owners(self.text)
            self.owners = owners if again == self.folded else None
        if self.owners is None or start >= end:
            return found.strip()
        return self.text[self.owners[start] : self.owners[end - 1] + 1]


def _values(folded: str, spell: _Spelling) -> tuple[str, list[Value], list[date]]:
    """The values ``folded`` states, read by ``webapp.language`` (each blanked by as many
    spaces, so every later one keeps its position, and with it its original spelling): dates
    (with their year as a day, without as a day of the year), clock times, ordinals, amounts."""
    values: list[Value] = []
    deadlines: list[date] = []
    rest, found_dates = language.dates(folded, keep_length=True)
    for found in found_dates:
        day = found.date
        if day is None:
            values.append(
                Value("day of year", float(found.day_of_year), spell(found.start, found.end))
            )
            continue
        values.append(Value("date", float(day.toordinal()), spell(found.start, found.end)))
        if not _LASTING_DATE.search(folded[: found.start]):
            deadlines.append(day)
    rest, times = language.clock_times(rest, keep_length=True)
    values.extend(Value("time", t.minutes, spell(t.start, t.end), t.ambiguous) for t in times)
    rest, ordinals = language.ordinals(rest, keep_length=True)
    rest, amounts = language.amounts(rest, keep_length=True)
    # what a count counts is its kind here ("只", "cup"): two counts of one thing compare
    values.extend(
        Value(a.kind.removeprefix("count:"), a.amount, spell(a.start, a.end))
        for a in ordinals + amounts
    )
    return rest, values, deadlines


@functools.lru_cache(maxsize=65536)
def features(text: str) -> Features:
    """The features of one memory's text (cached: the same text always gives the same ones)."""
    folded = unicodedata.normalize("NFKC", fold(text or ""))
    rest, values, dates = _values(folded, _Spelling(text or "", folded))
    read = language.terms(rest)
    key = "".join(ch for ch in folded if ch.isalnum())
    return Features(key, read.terms, tuple(values), read.negations > 0, tuple(dates))


# ------------------------------------------------------------------ pairs
def _is_cjk(term: str) -> bool:
    return "\u3400" <= term[0] <= "\ufaff"


def _term_matches(term: str, others: frozenset[str]) -> bool:
    """``term`` is in ``others``, or a Chinese word contains it (無糖 in 喝無糖), or a long
    English word is a typo away from one of them."""
    if term in others:
        return True
    cjk = _is_cjk(term)
    for other in others:
        if cjk and _is_cjk(other):
            short, long = (term, other) if len(term) <= len(other) else (other, term)
            if len(short) >= 2 and short in long:
                return True
        elif not cjk and min(len(term), len(other)) >= 5 and fuzz.ratio(term, other) >= 88:
            return True
    return False


def term_similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Dice coefficient of two term sets; a word matches its typo or a Chinese word within it."""
    if not a or not b:
        return 1.0 if a == b else 0.0
    common = len(a & b)
    matched = 2 * common
    if common < len(a):
        matched += sum(_term_matches(t, b) for t in a - b)
    if common < len(b):
        matched += sum(_term_matches(t, a) for t in b - a)
    return matched / (len(a) + len(b))


def _contains(small: frozenset[str], large: frozenset[str]) -> bool:
    return bool(small) and all(_term_matches(t, large) for t in small)


# Why a memory (or a pair) was flagged, in English, by reason code. The dashboard shows the same
# reasons in the page's language from the code and the values (webapp/web/blueprints/attention.py).
REASON_TEXTS = {
    "same_text": "Same text once case, width and 繁/简 are ignored.",
    "different_values": "Both about {subject}, with different values: {left} vs {right}.",
    "different_values_same_thing": (
        "Both about the same thing, with different values: {left} vs {right}."
    ),
    "yes_and_no": "One says yes and the other says no about the same thing.",
    "same_terms": "The same terms ({terms}) and values in other words.",
    "same_values": "The same values in other words.",
    "same_meaning": "The same fact in other words (alike in meaning).",
    "model_same": "{model} reads these as the same fact.",
    "model_contradiction": "{model} reads these as contradicting each other.",
    "model_related": "{model} reads these as possibly related, but is not sure.",
    "different_days": "The same thing on other days.",
    "past_date": "Mentions {date}, which is past.",
    "expired_word": "Says “{word}” and was written on {written}.",
    "untouched": "Nothing has changed it in {days} days (the threshold is {threshold}).",
    "expired_at": "Stopped being true on {date}; it is left out of prompts.",
    "first_person": "Reads as the user's own sentence, not as a fact about the user.",
    "held_by_everyone": "Every person keeps this same fact: it could be the household's, once.",
    "too_long": ("{chars} characters long: a memory works best as one short fact (at most {max})."),
    "mostly_link": "Mostly a link: say what it is for, or keep it in a skill document.",
    "looks_like_code": (
        "Looks like code: describe the fact in words, or keep it in a skill document."
    ),
    "holds_secret": (
        "Holds a {secret}: “{masked}”. It goes into every prompt; keep only that there is "
        "one, or delete it."
    ),
}

ReasonValue = str | int | date | tuple[str, ...]


@dataclass(frozen=True)
class Reason:
    """Why something was flagged: a code from ``REASON_TEXTS`` and the values it names.

    ``str(reason)`` is the English sentence (numbers grouped, dates ISO, lists joined by
    commas); the dashboard builds the sentence in the page's language from the same parts.
    """

    code: str
    values: tuple[tuple[str, ReasonValue], ...] = ()

    def value(self, name: str) -> ReasonValue:
        return dict(self.values)[name]

    def __str__(self) -> str:
        return REASON_TEXTS[self.code].format(
            **{
                name: KIND_NAMES.get(str(value), str(value))
                if name == "secret"
                else _english(value)
                for name, value in self.values
            }
        )


def _english(value: ReasonValue) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, tuple):
        return ", ".join(value)
    if isinstance(value, date):
        return value.isoformat()
    return value


def reason(code: str, **values: ReasonValue) -> Reason:
    """A ``Reason`` (the code must be one of ``REASON_TEXTS``)."""
    if code not in REASON_TEXTS:
        raise KeyError(code)
    return Reason(code, tuple(values.items()))


@dataclass(frozen=True)
class PairVerdict:
    """What the rules say about two memories: a near-duplicate or a contradiction, and why."""

    kind: str  # "duplicate" or "contradiction"
    reason: Reason
    similarity: float


def _agree(fa: Features, fb: Features, kind: str) -> bool:
    """Both state the same amounts of ``kind``; 十點 agrees with 22:00 as well as with 10:00."""
    a = [v for v in fa.values if v.kind == kind]
    b = [v for v in fb.values if v.kind == kind]

    def matched(value: Value, others: list[Value]) -> bool:
        return any(
            value.amount == o.amount
            or ((value.ambiguous or o.ambiguous) and value.amount % 720 == o.amount % 720)
            for o in others
        )

    return all(matched(v, b) for v in a) and all(matched(v, a) for v in b)


def _fmt(values: tuple[Value, ...], kind: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v.text for v in values if v.kind == kind))


def _as_written(text: str, terms: Iterable[str]) -> tuple[str, ...]:
    """Terms (folded: lower case, 简体, stemmed) as ``text`` writes them, in its order: a
    stem stands for the whole word it starts ("light" → "lights", 卧室 → 臥室)."""
    folded, owners = folded_with_owners(text)
    found: list[tuple[int, str]] = []
    for term in sorted(terms):
        span = _word_span(folded, term)
        if span is None:
            found.append((len(text), term))
            continue
        start, end = owners[span[0]], owners[span[1] - 1] + 1
        if not _is_cjk(term):
            while end < len(text) and text[end].isalnum() and not _is_cjk(text[end]):
                end += 1
        found.append((start, text[start:end]))
    return tuple(dict.fromkeys(word for _, word in sorted(found)))


def _word_span(folded: str, term: str) -> tuple[int, int] | None:
    """Where ``term`` occurs in the folded text, at the start of a word if it does there."""
    first = folded.find(term)
    if first == -1:
        return None
    if _is_cjk(term):
        return first, first + len(term)
    position = first
    while position != -1:
        if position == 0 or not folded[position - 1].isalnum():
            return position, position + len(term)
        position = folded.find(term, position + 1)
    return first, first + len(term)


def compare(a: str, b: str) -> PairVerdict | None:
    """Near-duplicate, contradiction or nothing to say about the memories ``a`` and ``b``."""
    fa, fb = features(a), features(b)
    if fa.key and fa.key == fb.key:
        return PairVerdict("duplicate", reason("same_text"), 1.0)
    score = term_similarity(fa.terms, fb.terms)
    kinds_a, kinds_b = fa.kinds(), fb.kinds()
    same_subject = score >= SUBJECT_SIMILARITY or (
        _contains(fa.terms, fb.terms) or _contains(fb.terms, fa.terms)
    )
    clashing = [k for k in kinds_a if k in kinds_b and k != "date" and not _agree(fa, fb, k)]
    if same_subject and clashing:
        kind = clashing[0]
        subject = _as_written(a, fa.terms & fb.terms)
        left, right = _fmt(fa.values, kind), _fmt(fb.values, kind)
        why = (
            reason("different_values", subject=subject, left=left, right=right)
            if subject
            else reason("different_values_same_thing", left=left, right=right)
        )
        return PairVerdict("contradiction", why, score)
    if score < DUPLICATE_SIMILARITY or set(kinds_a) != set(kinds_b) or clashing:
        return None
    if fa.negated != fb.negated:
        return PairVerdict("contradiction", reason("yes_and_no"), score)
    terms = _as_written(a, fa.terms)
    why = reason("same_terms", terms=terms) if terms else reason("same_values")
    return PairVerdict("duplicate", why, score)


# How alike a kept memory must be to be offered as "similar" to a proposal (Review's list).
# On the labelled pairs (tests/data/curation_pairs.json) every duplicate and contradiction —
# the pairs a person has to act on — scores at least 0.44; below 0.4 are only pairs that share
# a word, a day or a time of day ("Works from home on Fridays" / "Plays tennis on Fridays",
# 0.33; "Alarm at 06:45" / "Takes vitamin D at 08:00", 0.2), which the list used to show.
SIMILAR_ENOUGH = 0.4


def similarity_of(a: str, b: str) -> float:
    """0.0 to 1.0: how much two memories share (terms and values), for "most similar" lists."""
    fa, fb = features(a), features(b)
    if fa.key and fa.key == fb.key:
        return 1.0
    score = term_similarity(fa.terms, fb.terms)
    if fa.values or fb.values:
        shared = len(set(fa.kinds()) & set(fb.kinds()))
        total = len(set(fa.kinds()) | set(fb.kinds()))
        score = 0.8 * score + 0.2 * (shared / total)
    return round(score, 3)


def drops_information(current: str, new: str) -> list[str]:
    """What ``current`` says that ``new`` would lose if it replaced it (empty: nothing).

    Terms the new text has no counterpart for, and values of a kind it states fewer of:
    "Weekday alarm is 06:45; on weekends not before 09:00" → "alarm at 07:00" loses
    weekday, weekend and one time.
    """
    fc, fn = features(current), features(new)
    lost_terms = [t for t in sorted(fc.terms) if not _term_matches(t, fn.terms)]
    gained = [t for t in fn.terms if not _term_matches(t, fc.terms)]
    lost: list[str] = []
    if len(lost_terms) >= 2 and len(lost_terms) > len(gained):
        lost.extend(_as_written(current, lost_terms))
    counts_c, counts_n = fc.kinds(), fn.kinds()
    for kind, amounts in counts_c.items():
        if len(amounts) > len(counts_n.get(kind, ())):
            missing = [
                v.text
                for v in fc.values
                if v.kind == kind and v.amount not in counts_n.get(kind, ())
            ]
            lost.extend(dict.fromkeys(missing))
    return lost


def restates(current: str, new: str) -> bool:
    """``new`` says nothing ``current`` does not: its terms are all in ``current``, its values
    too, and it does not say no where ``current`` says yes (or the other way round).

    "喜歡喝無糖綠茶" restates "喜歡喝無糖綠茶，不加冰。"; replacing the memory with it would
    only lose "不加冰"."""
    fc, fn = features(current), features(new)
    if not fn.terms or fc.negated != fn.negated:
        return False
    values = {(v.kind, v.amount) for v in fc.values}
    return _contains(fn.terms, fc.terms) and all((v.kind, v.amount) in values for v in fn.values)
