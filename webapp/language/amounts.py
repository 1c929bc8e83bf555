"""Amounts with their unit: "24°C", "30%", "two kids", 兩杯, 一万步, "once a week", 月薪一万二.

``amounts(folded)`` reads each number of a folded text with what it counts: ``%``, ``degrees``,
``count:<unit>`` (the unit stemmed, Chinese classifiers as written: ``count:cup``, ``count:杯``)
or a bare ``number``; a number too large to be usable is left unread (see ``numbers``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .numbers import CN_NUMBER, EN_NUMBERS, NUMBER, ORDINAL_WORDS, parse_number
from .terms import stem

CJK_CLASSIFIER = (
    "个|只|条|位|岁|次|杯|碗|瓶|罐|天|年|月|周|楼|层|公斤|斤|公里|分钟|小时|步|颗|粒|片|本|台|辆|双|套|件|块|元|"
    "毛|圈|组|趟|顿|餐|遍|口|盒|包|支|张|间|家|所|节|堂|集|部|首|场|份|勺|匙|克|毫升|千米|米"
)
_UNIT_VALUE = re.compile(
    rf"(?<![a-z0-9_.])(?:(?P<n>{NUMBER})\s*(?:(?P<pct>%|percent\b)|(?P<deg>°\s*[cf]?|℃|℉|degrees?\b|度)"
    rf"|(?P<cjk>{CJK_CLASSIFIER})|(?P<word>[a-z]+))?|\b(?P<times>once|twice)\b)"
)
# A Chinese numeral that is an amount on its own (月薪一万二, 房租两万二), not part of a word
_CN_AMOUNT = re.compile("[一二两三四五六七八九十]+[百千万][零一二两三四五六七八九十百千万]*")
# Words after a number that are no unit ("3 and 4", "2 of them")
_NOT_UNITS = frozenset(
    {"and", "or", "to", "of", "in", "on", "at", "a", "the", "for", "by", "zzvaluezz"}
)
# Units that say the same thing, as one
_SAME_UNITS = {
    "child": "kid",
    "children": "kid",
    "kid": "kid",
    "cup": "cup",
    "mug": "cup",
    "glass": "cup",
}


@dataclass(frozen=True)
class Amount:
    """A number read with what it counts, as written, and where (see ``amounts``)."""

    kind: str
    amount: float
    text: str
    start: int
    end: int


def amounts(folded: str, *, keep_length: bool = False) -> tuple[str, list[Amount]]:
    """Every amount in ``folded`` and the text without them (a word after a bare number, "3
    and", stays). With ``keep_length`` each is blanked by as many spaces, so positions keep
    pointing at ``folded``."""
    found: list[Amount] = []

    def read(match: re.Match[str]) -> str:
        parts = match.groupdict()
        said = match.group(0)
        if parts["times"]:
            found.append(
                Amount("count:time", 1.0 if parts["times"] == "once" else 2.0, said, *match.span())
            )
            return " " * len(said) if keep_length else " "
        amount = parse_number(parts["n"])
        if amount is None:
            return said
        word = parts["word"] or ""
        if parts["pct"]:
            kind = "%"
        elif parts["deg"]:
            kind = "degrees"
        elif parts["cjk"]:
            kind = "count:" + parts["cjk"]
        elif word and word not in _NOT_UNITS:
            kind = "count:" + _SAME_UNITS.get(stem(word), stem(word))
        elif re.fullmatch(CN_NUMBER, parts["n"]) and not _CN_AMOUNT.fullmatch(parts["n"]):
            return said  # a lone Chinese numeral is part of a word (一起, 三明治)
        else:
            kind = "number"
        start = match.start() + len(said) - len(said.lstrip())
        end = match.end() - len(said) + len(said.rstrip())
        kept = word if kind == "number" else ""
        found.append(Amount(kind, amount, said.strip(), start, end - len(kept)))
        if keep_length:
            return " " * (len(said) - len(kept)) + kept
        return f" {kept} " if kind == "number" else " "

    return _UNIT_VALUE.sub(read, folded), found


_UNIT_ORDINALS = "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth"
_ORDINAL = re.compile(
    r"\b(?:(?P<digits>\d{1,2})(?:st|nd|rd|th)"
    rf"|(?P<tens>twenty|thirty)[- ](?P<unit>{_UNIT_ORDINALS})"
    r"|(?P<the>the )(?P<small>first|second)"  # alone, only after "the": "second home" is none
    rf"|(?P<word>{'|'.join(w for w in ORDINAL_WORDS if w not in ('first', 'second'))}))\b"
)


def ordinals(folded: str, *, keep_length: bool = False) -> tuple[str, list[Amount]]:
    """Ordinals in digits or words ("the 28th", "the twenty-eighth", "the first"), kind
    ``ordinal``, and the text without them ("the" stays; see ``amounts`` for ``keep_length``)."""
    found: list[Amount] = []

    def read(match: re.Match[str]) -> str:
        parts = match.groupdict()
        if parts["digits"]:
            amount = float(parts["digits"])
        elif parts["tens"]:
            amount = float(EN_NUMBERS[parts["tens"]] + ORDINAL_WORDS[parts["unit"]])
        else:
            amount = float(ORDINAL_WORDS[parts["small"] or parts["word"]])
        kept = parts["the"] or ""
        found.append(
            Amount(
                "ordinal",
                amount,
                match.group(0)[len(kept) :].strip(),
                match.start() + len(kept),
                match.end(),
            )
        )
        if keep_length:
            return kept + " " * (len(match.group(0)) - len(kept))
        return " the " if kept else " "

    return _ORDINAL.sub(read, folded), found
