"""Numbers as people write them: digits (full-width too, with thousands separators), English
words ("twenty-five", "a couple of"), Chinese numerals (二十五, 一百, 三千五, colloquial 一万二 and
两万二).

Every reader answers a float or an int, or None for text that is no number *or no usable one*:
a count of 5,000 digits or 10^20 is read as "no usable value", never raised as an exception
(``int()`` refuses more than 4,300 digits, dates and timedeltas overflow long before).
"""

from __future__ import annotations

import re
import unicodedata

# The largest amount any reader gives: beyond it a number is no usable value (floats stop
# being exact at 2**53; no memory states a count, a price or a duration that large).
MAX_NUMBER = 10**15
_MAX_DIGITS = len(str(MAX_NUMBER))

CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5}
CN_DIGITS.update({"六": 6, "七": 7, "八": 8, "九": 9})
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_BIG_UNITS = {"万": 10**4, "萬": 10**4, "亿": 10**8, "億": 10**8}
# A run of Chinese numerals (folded text: 简体; the 繁體 forms are read by the functions too).
CN_NUMBER = "[零〇一二两三四五六七八九十百千万亿]+"
# Where a number starts: not inside a run of digits or numerals. A pattern tried from every
# place inside a long run ("1" * 10000) would read the rest of it again from each.
RUN_START = r"(?<![\d零〇一二两三四五六七八九十百千万亿])"

EN_NUMBERS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "thousand": 1000,
}
_EN_UNITS = "one|two|three|four|five|six|seven|eight|nine"
_EN_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
# An English number word up to ninety-nine (no word boundaries: callers add them).
EN_NUMBER = (
    rf"(?:(?:{_EN_TENS})(?:[- ](?:{_EN_UNITS}))?"
    r"|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen)"
)
# Words that say how many without a number ("for a few days", "in a couple of weeks").
QUANTIFIERS = {"a": 1, "an": 1, "a couple of": 2, "couple of": 2, "a few": 3, "few": 3}
QUANTIFIER = "a couple of|couple of|a few|few|an?"

DIGITS = r"(?:\d{1,3}(?:,\d{3})+(?![\d,])|\d+(?:\.\d+)?)"
# Any number: digits, Chinese numerals or an English word (used inside larger patterns).
NUMBER = rf"(?:{DIGITS}|{CN_NUMBER}|\b{EN_NUMBER}\b)"

ORDINAL_WORDS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "thirteenth": 13,
    "fourteenth": 14,
    "fifteenth": 15,
    "sixteenth": 16,
    "seventeenth": 17,
    "eighteenth": 18,
    "nineteenth": 19,
    "twentieth": 20,
    "thirtieth": 30,
}

_DIGITS_ONLY = re.compile(r"\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?")


def _usable(value: float) -> float | None:
    return value if 0 <= value <= MAX_NUMBER else None


def _digits(text: str) -> float | None:
    """Digits with an optional decimal part or thousands separators; None past MAX_NUMBER."""
    whole = text.replace(",", "").partition(".")[0].lstrip("0")
    if len(whole) > _MAX_DIGITS:
        return None  # a 5,000-digit count: float() would say inf, int() would raise
    return _usable(float(text.replace(",", "")))


def chinese_number(text: str) -> float | None:
    """二十五 → 25, 一百 → 100, 六千 → 6000, 一万 → 10000, 两 → 2, 十 → 10, 三千五 → 3500,
    一万二 → 12000, 两万二 → 22000, 一千零五 → 1005; None when it is not a number (一起) or
    none below ``MAX_NUMBER``. Traditional characters (兩, 萬, 億) read the same."""
    if not text:
        return None
    for big_unit in ("亿", "億", "万", "萬"):
        if big_unit in text:
            # the last one multiplies all before it: 一万亿 is 10^12, 一亿二千万 120,000,000
            high, _, low = text.rpartition(big_unit)
            high_value = chinese_number(high) if high else 1.0
            if high_value is None:
                return None
            scale = _CN_BIG_UNITS[big_unit]
            if len(low) == 1 and low in CN_DIGITS:  # 一万二: twelve thousand
                return _usable(high_value * scale + CN_DIGITS[low] * scale // 10)
            low_value = chinese_number(low) if low else 0.0
            if low_value is None or low_value >= scale:
                return None
            return _usable(high_value * scale + low_value)
    if any(ch not in CN_DIGITS and ch not in _CN_UNITS for ch in text):
        return None
    section = 0
    digit: int | None = None
    for ch in text:
        if ch in CN_DIGITS:
            digit = CN_DIGITS[ch] if digit is None else digit * 10 + CN_DIGITS[ch]
            if digit > MAX_NUMBER:
                return None  # a long run of digits written as numerals
        else:
            section += (1 if digit is None else digit) * _CN_UNITS[ch]
            digit = None
    if digit is not None:
        # 三千五 is 3,500 and 两百五 250: a last digit after a unit counts the next unit down
        last_unit = text[-2] if len(text) >= 2 else ""
        if last_unit in _CN_UNITS and _CN_UNITS[last_unit] >= 100:
            digit *= _CN_UNITS[last_unit] // 10
        section += digit
    return _usable(float(section))


def english_number(text: str) -> float | None:
    """ "eleven" → 11, "twenty-five" / "twenty five" → 25; None for other words."""
    text = " ".join(text.casefold().split())
    if text in EN_NUMBERS:
        return float(EN_NUMBERS[text])
    parts = re.split(r"[- ]", text)
    if len(parts) == 2 and parts[0] in _EN_TENS.split("|") and parts[1] in _EN_UNITS.split("|"):
        return float(EN_NUMBERS[parts[0]] + EN_NUMBERS[parts[1]])
    return None


def parse_number(text: str) -> float | None:
    """A number written in digits (full-width too, "30,000"), Chinese numerals or English
    words; None when the text is no number, or a number past ``MAX_NUMBER``."""
    text = unicodedata.normalize("NFKC", text).strip()
    if _DIGITS_ONLY.fullmatch(text):
        return _digits(text)
    return english_number(text) if text.isascii() else chinese_number(text)


def parse_count(text: str) -> int | None:
    """A whole count: a number (see ``parse_number``) or a quantifier ("a", "a few", "a couple
    of"); None for a fraction, a word that is no count, or an absurd size."""
    said = " ".join(text.casefold().split())
    if said in QUANTIFIERS:
        return QUANTIFIERS[said]
    value = parse_number(said)
    if value is None or value != int(value):
        return None
    return int(value)
