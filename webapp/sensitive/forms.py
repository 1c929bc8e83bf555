"""Secrets written so a pattern over digits misses them, read back as digits.

``webapp.sensitive.secrets`` looks for a secret's value as ASCII digits and letters. People write the
same value in other ways: full-width characters (``４８２１``, ``密碼：Ａｂ１２``), digits as
words ("four eight two one", "double four", "forty-eight twenty-one", 四八二一, 幺五八三) or banker's numerals
(肆捌贰壹). ``normal_form`` gives the text with those read as ASCII, and for each of its
characters where it stands in the text, so a secret found in the normal form is masked where
it was written.

Only a run that says at least ``MIN_WORD_DIGITS`` digits becomes digits: "four and eight",
"Table for four, eight o'clock", 四十八 (a number, not a string of digits) stay as written, and
so does a time said in words ("at ten fifteen", "ten fifteen pm").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Full-width ASCII (U+FF01..U+FF5E) and the ideographic space, one character for one.
_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
MIN_WORD_DIGITS = 4  # digit words in a row that make a code (a PIN has four)

_EN_DIGITS = {
    "zero": "0",
    "oh": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "niner": "9",
}
_EN_TIMES = {"double": 2, "triple": 3}
# Numbers said in pairs ("forty-eight twenty-one" is 4821): the teens and the tens.
_EN_TEENS = {
    word: str(10 + n)
    for n, word in enumerate(
        ("ten", "eleven", "twelve", "thirteen", "fourteen")
        + ("fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
    )
}
_EN_TENS = {
    word: str(2 + n)
    for n, word in enumerate(
        ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
    )
}
# A time said in words: "at ten fifteen", "ten fifteen pm" (not a code).
_TIME_BEFORE = re.compile(r"\b(?:at|by|until|till|around|before|after|from|since)\s+$", re.I)
_TIME_AFTER = re.compile(r"\s*(?:am|pm|a\.m\.|p\.m\.|o'?clock|tonight|tomorrow|today)\b", re.I)
_ZH_DIGITS = dict(
    zip(
        "〇○零一幺壹二貳贰三參叁叄四肆五伍六陸陆七柒八捌九玖",
        "00011122233334455666778899",
        strict=True,
    )
)
_EN_WORD = re.compile(
    r"\b(?:"
    + "|".join(sorted([*_EN_DIGITS, *_EN_TIMES, *_EN_TEENS, *_EN_TENS], key=len, reverse=True))
    + r")\b|(?<![\d.])\d(?![\d.])",  # a digit alone joins the words: "4 eight 2 one"
    re.IGNORECASE,
)
_EN_GAP = re.compile(r"[\s,-]*")
_ZH_DIGIT = "[" + "".join(_ZH_DIGITS) + "]"
# One digit: a Chinese one, an ASCII one standing alone (4 八 2 一), or a repeat (六個八: 888888).
_ZH_TOKEN = rf"(?:[一二兩两三四五六七八九十][個个](?:{_ZH_DIGIT}|\d)|{_ZH_DIGIT}|(?<!\d)\d(?!\d))"
_ZH_RUN = re.compile(rf"{_ZH_TOKEN}(?:\s?{_ZH_TOKEN})*")
_ZH_TIMES = dict(
    zip("一二兩两三四五六七八九十", (1, 2, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10), strict=True)
)


@dataclass(frozen=True)
class NormalForm:
    """A text with full-width characters and digit words read as ASCII, and for each of its
    characters the span of the text it was read from."""

    text: str
    starts: tuple[int, ...] | None  # None: one character for one (only full-width changed)
    ends: tuple[int, ...] | None

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Where the normal form's ``start:end`` stands in the text."""
        if self.starts is None or self.ends is None or end <= start:
            return start, end
        return self.starts[start], self.ends[end - 1]


def _en_runs(text: str) -> list[tuple[int, int, str]]:
    """Runs of English digit words ("four eight two one", "double four two one"): where each
    is and the digits it says, spaced ("4 4 2 1")."""
    runs: list[tuple[int, int, str]] = []
    words = list(_EN_WORD.finditer(text))
    index = 0
    while index < len(words):
        first = last = index
        while last + 1 < len(words):
            gap = text[words[last].end() : words[last + 1].start()]
            if not _EN_GAP.fullmatch(gap):
                break
            last += 1
        said = [match.group(0).lower() for match in words[first : last + 1]]
        if all(word.isdigit() for word in said):
            index = last + 1
            continue  # digits only: nothing to read
        digits = _en_digits(said)
        start, end = words[first].start(), words[last].end()
        if len(digits) >= MIN_WORD_DIGITS and not _a_time(text, start, end, said):
            runs.append((start, end, " ".join(digits)))
        index = last + 1
    return runs


def _en_digits(said: list[str]) -> list[str]:
    """The digits a run of words says: "double four two one" 4421, "forty-eight" 48,
    "forty" 40, "twelve" 12."""
    digits: list[str] = []
    times = 1
    for index, word in enumerate(said):
        if word in _EN_TIMES:
            times = _EN_TIMES[word]
            continue
        if word.isdigit():
            digits.append(word)
        elif word in _EN_TEENS:
            digits += list(_EN_TEENS[word])
        elif word in _EN_TENS:
            unit = said[index + 1] if index + 1 < len(said) else ""
            joined = unit in _EN_DIGITS and unit not in ("zero", "oh")
            digits += [_EN_TENS[word]] + ([] if joined else ["0"])
        else:
            digits += [_EN_DIGITS[word]] * times
        times = 1
    return digits


def _a_time(text: str, start: int, end: int, said: list[str]) -> bool:
    """Whether the words read as a time ("at ten fifteen", "seven forty-five pm"): an hour
    then minutes in tens, after "at" or before "pm"."""
    hour, minutes = said[0], said[1:]
    if hour not in _EN_DIGITS and hour not in ("ten", "eleven", "twelve"):
        return False
    if not minutes or len(minutes) > 2 or not (minutes[0] in _EN_TEENS or minutes[0] in _EN_TENS):
        return False
    return bool(_TIME_BEFORE.search(text, 0, start) or _TIME_AFTER.match(text, end))


def _zh_runs(text: str) -> list[tuple[int, int, str]]:
    """Runs of Chinese digits (四八二一, 肆捌貳壹, 幺五八三九二), as ASCII digits."""
    runs = []
    for match in _ZH_RUN.finditer(text):
        said = match.group(0)
        if said.isascii():
            continue  # digits only: nothing to read
        digits = "".join(
            _ZH_DIGITS.get(token[2], token[2]) * _ZH_TIMES[token[0]]
            if len(token) == 3
            else _ZH_DIGITS.get(token, token)
            for token in re.findall(_ZH_TOKEN, said)
        )
        if len(digits) >= MIN_WORD_DIGITS:
            runs.append((match.start(), match.end(), digits))
    return runs


def normal_form(text: str) -> NormalForm:
    """``text`` with full-width characters as ASCII and runs of digit words as digits."""
    flat = text.translate(_FULL_WIDTH)
    runs = sorted(_en_runs(flat) + _zh_runs(flat)) if _may_hold_digit_words(flat) else []
    if not runs:
        return NormalForm(flat, None, None)
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    last = 0
    for start, end, digits in runs:
        out.append(flat[last:start])
        starts += range(last, start)
        ends += range(last + 1, start + 1)
        out.append(digits)
        # Each digit stands for the words from its own to the end of the run: a span
        # that ends inside the run still covers the words it was read from.
        starts += [start] * len(digits)
        ends += [end] * len(digits)
        last = end
    out.append(flat[last:])
    starts += range(last, len(flat))
    ends += range(last + 1, len(flat) + 1)
    return NormalForm("".join(out), tuple(starts), tuple(ends))


# A digit word, spelled as a tree so a text without one is passed over fast (lower case).
_ANY_EN_DIGIT_WORD = re.compile(
    r"\b(?:z(?:ero)|o(?:h|ne)|t(?:wo|hree|en|welve|hirteen|wenty|hirty|riple)|"
    r"f(?:our|ive|ourteen|ifteen|orty|ifty)|s(?:ix|even|ixteen|eventeen|ixty|eventy)|"
    r"e(?:ight|leven|ighteen|ighty)|n(?:ine|ineteen|inety)|d(?:ouble))\b"
)
_ANY_ZH_DIGIT = re.compile(_ZH_DIGIT)


def _may_hold_digit_words(text: str) -> bool:
    """Whether ``text`` holds two digit words or more (two may say four digits: "forty-eight
    twenty-one")."""
    seen = 0
    for _ in _ANY_EN_DIGIT_WORD.finditer(text.lower()):
        seen += 1
        if seen >= 2:
            return True
    for _ in () if text.isascii() else _ANY_ZH_DIGIT.finditer(text):
        seen += 1
        if seen >= 2:
            return True
    return False
