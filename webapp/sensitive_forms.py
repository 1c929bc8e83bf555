"""Secrets written so a pattern over digits misses them, read back as digits.

``webapp.sensitive`` looks for a secret's value as ASCII digits and letters. People write the
same value in other ways: full-width characters (``４８２１``, ``密碼：Ａｂ１２``), digits as
words ("four eight two one", "double four", 四八二一, 幺五八三) or banker's numerals
(肆捌贰壹). ``normal_form`` gives the text with those read as ASCII, and for each of its
characters where it stands in the text, so a secret found in the normal form is masked where
it was written.

Only a run of at least ``MIN_WORD_DIGITS`` digit words becomes digits: "four and eight",
"Table for four, eight o'clock", 四十八 (a number, not a string of digits) stay as written.
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
_ZH_DIGITS = dict(
    zip(
        "〇○零一幺壹二貳贰三參叁叄四肆五伍六陸陆七柒八捌九玖",
        "00011122233334455666778899",
        strict=True,
    )
)
_EN_WORD = re.compile(
    r"\b(?:" + "|".join(sorted([*_EN_DIGITS, *_EN_TIMES], key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
_EN_GAP = re.compile(r"[\s,-]*")
_ZH_RUN = re.compile("[" + "".join(_ZH_DIGITS) + r"](?:\s?[" + "".join(_ZH_DIGITS) + "])+")


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
        digits: list[str] = []
        times = 1
        for match in words[first : last + 1]:
            word = match.group(0).lower()
            if word in _EN_TIMES:
                times = _EN_TIMES[word]
                continue
            digits += [_EN_DIGITS[word]] * times
            times = 1
        if len(digits) >= MIN_WORD_DIGITS:
            runs.append((words[first].start(), words[last].end(), " ".join(digits)))
        index = last + 1
    return runs


def _zh_runs(text: str) -> list[tuple[int, int, str]]:
    """Runs of Chinese digits (四八二一, 肆捌貳壹, 幺五八三九二), as ASCII digits."""
    runs = []
    for match in _ZH_RUN.finditer(text):
        digits = "".join(_ZH_DIGITS[c] for c in match.group(0) if not c.isspace())
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


_ANY_DIGIT_WORD = re.compile(
    "["
    + "".join(_ZH_DIGITS)
    + r"]|\b(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|double|triple)\b",
    re.IGNORECASE,
)


def _may_hold_digit_words(text: str) -> bool:
    return len(_ANY_DIGIT_WORD.findall(text)) >= MIN_WORD_DIGITS
