"""What a short fact says, in parts the judgements compare: values, who, when and which, yes or no.

A memory is one short fact ("Weekday alarm is 06:45", "女兒叫小安", "每天坐地铁上班"). An
embedding finds what it is about; deciding whether two facts say the same thing, or cannot both
be true, needs the parts an embedding blurs:

- **values**: clock times (12/24 h, "eleven", 晚上十一點, 六點半), temperatures, percentages,
  counts with their unit (兩杯, "two kids", 一万步), names and places (after "named", 叫, 住在,
  capitalised words), the language replies are wanted in, how one gets to work, how long
  answers should be, whether the person eats meat, has pets, works from home;
- **holder**: whose fact it is (the user's, a daughter's, 老公的) when the fact starts with them;
- **qualifiers**: which days, season, room or meal it is limited to;
- **terms**: the remaining content words (English stems, Chinese words cut by jieba), with the
  terms a negation governs ("doesn't drink *oolong*", 不*喝*) kept apart, so "no" is compared on
  the thing it is about rather than as a flag for the whole sentence.

Everything is folded first (case, width, 繁→简), so 鬧鐘 and 闹钟 are the same word. The values
are read in ``values``, the holder in ``holders``, what one thing is in ``attributes``; the days,
qualifiers and terms here.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from ..language import terms
from ..language.calendar import WORKING_WEEK, weekday_names
from ..text import fold
from .attributes import attribute
from .holders import holder_at_start
from .values import (
    Value,
    read_amounts,
    read_dates,
    read_months,
    read_names,
    read_ordinals,
    read_times,
    read_word_values,
)

__all__ = ["Fact", "analyse"]


# ------------------------------------------------------------------ lexicons
# Which days, season, room or meal a fact is limited to. Days are sets of weekday numbers.
_ALL_DAYS = frozenset(range(7))
_WEEKDAYS = frozenset(range(5))
_WEEKEND = frozenset({5, 6})
# Each weekday's names from the one table (周1 but not 周12 or 周15小时).
_DAY_NAMES = [
    ("|".join(name + "(?!\\d)" if name[-1].isdigit() else name for name in weekday_names(day)), day)
    for day in range(7)
]
_DAY_SETS: list[tuple[str, frozenset[int]]] = [
    ("|".join(WORKING_WEEK), _WEEKDAYS),
    (r"weekdays?|work ?days?|工作日|平日|上班日|周间", _WEEKDAYS),
    (r"weekends?|周末|假日|休息日|放假", _WEEKEND),
    (r"every ?day|daily|each day|每天|天天|每日|一天", _ALL_DAYS),
] + [(names, frozenset({day})) for names, day in _DAY_NAMES]
_QUALIFIERS: dict[str, list[tuple[str, str]]] = {
    "season": [
        ("spring|春天|春季", "spring"),
        ("summer|summers|夏天|夏季", "summer"),
        ("autumn|fall|秋天|秋季", "autumn"),
        ("winter|winters|冬天|冬季", "winter"),
    ],
    "room": [
        ("bedroom|卧室|卧房|房间", "bedroom"),
        ("living room|lounge|客厅", "living room"),
        ("kitchen|厨房", "kitchen"),
        ("bathroom|浴室|厕所|卫生间", "bathroom"),
        ("study|书房", "study"),
        ("office|办公室", "office"),
    ],
    "meal": [
        ("breakfast|早餐|早饭", "breakfast"),
        ("lunch|午餐|午饭", "lunch"),
        ("dinner|supper|晚餐|晚饭", "dinner"),
    ],
    "daypart": [
        ("mornings?|早上|上午|清晨|早晨", "morning"),
        ("afternoons?|下午", "afternoon"),
        ("evenings?|nights?|tonight|晚上|傍晚|夜里", "evening"),
    ],
}

# Words that say the same thing, as one term ("commute" for 上班, 通勤, "to work").
_CONCEPTS: list[tuple[str, str]] = [
    (r"\bcommut\w*|\bto work\b|上下班|上班|通勤", " commute "),
    (
        r"\bgoes to bed\b|\bgo to bed\b|\bbed(?:time)?\b|\basleep\b|\bsleeps?\b|睡眠|睡觉|就寝|上床|入睡|睡",
        " sleep ",
    ),
    (r"\bwakes? up\b|\bgets? up\b|起床|醒来", " wake "),
    (
        r"\banswers?\b|\brepl(?:y|ies)\b|\brespons\w*|\bresponds?\b|回答|回复|回覆|答复|回应",
        " reply ",
    ),
    (r"维他命|维生素|vitamins?", " vitamin "),
    (r"\bmedications?\b|\bmedicines?\b|\bpills?\b|\btablets?\b|吃药|药物|药", " medicine "),
    (r"\bfavou?rite\b|最爱|最喜欢", " favourite "),
    (r"[加放]糖", " 加糖 "),
    (r"家里人|家人", " 家人 "),
]


@functools.cache
def _compiled_concepts() -> list[tuple[re.Pattern[str], str]]:
    return [(re.compile(pattern), concept) for pattern, concept in _CONCEPTS]


# ------------------------------------------------------------------ the parts
@dataclass(frozen=True)
class Fact:
    """The parts of one fact the judgements compare (see the module's docstring)."""

    text: str
    key: str  # folded, alphanumerics only: equal keys are the same text
    language: str
    values: tuple[Value, ...]
    holder: str  # "" for the user
    qualifiers: tuple[tuple[str, frozenset[str]], ...]
    days: frozenset[int] | None
    terms: frozenset[str]
    negated: frozenset[str]  # terms a negation governs
    verbs: frozenset[str]  # light verbs (吃, 喝, drink, eat): part of the frame, not the subject
    # a negation that a value did not turn into its opposite: the fact says no ("Doesn't have a
    # licence", 不會騎機車, "Doesn't drink oolong"); "Doesn't eat meat" is not negative (the value
    # took it: no meat). Compared only when no term is negated on one side alone
    negative: bool = False
    # "<subject> is <value>" of one thing (the car, 家里宽带, 班主任): (subject, copula, value),
    # folded; a thing has one such value at a time, so another value is a change, not a second fact
    attribute: tuple[str, str, str] | None = None

    def value_kinds(self) -> dict[str, list[Value]]:
        found: dict[str, list[Value]] = {}
        for value in self.values:
            found.setdefault(value.kind, []).append(value)
        return found

    def qualifier(self, kind: str) -> frozenset[str] | None:
        return dict(self.qualifiers).get(kind)


def _language(text: str) -> str:
    han = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff")
    if not han:
        return "en"
    from ..text import language_of

    return language_of(text)


@functools.cache
def _words(pattern: str) -> re.Pattern[str]:
    """``pattern``'s alternatives, the English ones as whole words (Chinese has no spaces)."""
    parts = [rf"\b(?:{alt})\b" if alt[0].isascii() else alt for alt in pattern.split("|")]
    return re.compile("|".join(parts))


def _days(text: str) -> tuple[str, frozenset[int] | None]:
    days: set[int] = set()
    found = False
    for pattern, day_set in _DAY_SETS:
        regex = _words(pattern)
        if regex.search(text):
            found = True
            days |= day_set
            text = regex.sub(" ", text)
    return text, (frozenset(days) if found else None)


def _qualifiers(text: str) -> tuple[str, tuple[tuple[str, frozenset[str]], ...]]:
    result: list[tuple[str, frozenset[str]]] = []
    for kind, table in _QUALIFIERS.items():
        found: set[str] = set()
        for pattern, canon in table:
            regex = _words(pattern)
            if regex.search(text):
                found.add(canon)
                text = regex.sub(" ", text)
        if found:
            result.append((kind, frozenset(found)))
    return text, tuple(result)


_INSTEAD_OF = re.compile(r"\b(?:instead of|rather than|in place of)\b")


@functools.lru_cache(maxsize=65536)
def analyse(text: str) -> Fact:
    """The parts of ``text`` (cached per text)."""
    original = text or ""
    language = _language(original)
    folded = unicodedata.normalize("NFKC", fold(original)).replace("’", "'")
    key = "".join(ch for ch in folded if ch.isalnum())
    values: list[Value] = []
    read_names(original, language, values)
    rest = folded
    for value in values:
        rest = rest.replace(fold(value.text), " ")
    whose, rest = holder_at_start(rest)
    rest = read_dates(rest, values)
    rest = read_months(rest, values)
    rest = read_times(rest, values)
    rest = read_ordinals(rest, values)
    rest, days = _days(rest)
    flips: list[str] = []
    rest = read_word_values(rest, values, flips)
    rest = read_amounts(rest, values)
    rest, qualifiers = _qualifiers(rest)
    for pattern, concept in _compiled_concepts():
        rest = pattern.sub(concept, rest)
    rest = _INSTEAD_OF.sub(" not ", rest)  # "neovim instead of vim": no to vim
    read = terms(rest)
    # a name's owner that is the holder itself ("Daughter's name is Maya") is the same subject
    values = [
        Value(v.kind, v.amount, v.text, v.ambiguous, "") if v.owner and v.owner == whose else v
        for v in values
    ]
    return Fact(
        original,
        key,
        language,
        tuple(values),
        whose,
        qualifiers,
        days,
        read.terms,
        read.negated,
        read.verbs,
        read.negations > len(flips),
        attribute(folded),
    )
