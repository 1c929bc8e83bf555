"""National ID numbers: a US social security number, a Taiwan 身分證字號, a Chinese 身份证号,
a UK National Insurance number.

Each is a secret of its own kind (``id_number``): with a name and a birth date it opens a bank
account or a loan. Each shape is read with the check that keeps its look-alikes out:

- a US SSN (python-stdnum's ``us.ssn``: no area 000, 666 or 9xx, no group 00, no serial 0000)
  written 3-2-4 with dashes ("618-24-7093"; a phone is 3-3-4, a zip+4 5-4), or in spaces or
  as nine digits only where the text names it (SSN, social security, 社會安全號碼, 社保号);
- a Taiwan ID, a letter, 1 or 2, and eight digits whose check digit holds (python-stdnum has
  no Taiwan ID, so the check is written here: the letter's number and the digits, weighted);
- a Chinese ID of 18 characters (python-stdnum's ``cn.ric``: its check digit, a real birth
  date and a real place of birth), not after the words of an order or a parcel;
- a UK NI number (two letters, six digits, a letter from A to D) only where the text names it.
"""

from __future__ import annotations

import re

from stdnum.cn import ric
from stdnum.us import ssn

from .access import Found

_I = re.IGNORECASE

_SSN_DASHED = re.compile(r"(?<![\w-])(?P<value>\d{3}-\d{2}-\d{4})(?![\w-])")
_SSN_LOOSE = re.compile(r"(?<![\w-])(?P<value>\d{3} \d{2} \d{4}|\d{9})(?![\w-])")
# The names below are searched in the lower-cased text: faster than IGNORECASE.
_NAMES_AN_SSN = re.compile(r"\bssn\b|social|社會安全|社会安全|社安|社保|安全號碼|安全号码")
_TW_ID = re.compile(r"(?<![A-Za-z0-9])(?P<value>[A-Z][12]\d{8})(?![A-Za-z0-9])")
# With a word for it: any letter and nine digits, or the two letters of a resident's card.
_TW_ID_LOOSE = re.compile(
    r"(?<![A-Za-z0-9])(?P<value>[A-Za-z]\s?\d{9}|[A-Za-z]{2}\d{8})(?![A-Za-z0-9])"
)
# The words that name a national ID: with them its shape is enough (a number made up to
# be written down fails a check digit as often as not).
_NAMES_AN_ID = re.compile(
    r"身分證|身份證|身分证|身份证|國民身分|居民身份|national\s+id|\bid\s+(?:card\s+)?(?:number|no)|"
    r"identity\s+(?:card\s+)?number|\bid\b\s*(?:[:#：]|是|為|为|號碼|号码)|居留證|居留证|統一證號|统一证号"
)
_TW_LETTERS = "ABCDEFGHJKLMNPQRSTUVXYWZIO"  # A is 10, B 11, … in this order
_CN_ID = re.compile(r"(?<![0-9A-Za-z])(?P<value>\d{17}[\dXx])(?![0-9A-Za-z])")
_NOT_AN_ID = re.compile(
    r"\b(?:order|tracking|invoice|receipt|reference|ref|serial|phone|tel|parcel|shipment)\b|"
    r"訂單|订单|單號|单号|快遞|快递|運單|运单|物流|發票|发票|流水|交易|序號|序号",
    _I,
)
_NINO = re.compile(
    r"(?<![A-Za-z0-9])(?P<value>[A-CEGHJ-PR-TW-Z]{2}\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D])(?![A-Za-z0-9])",
    _I,
)
_NAMES_A_NINO = re.compile(r"national\s+insurance|\bni\s+(?:number|no)|\bnino\b")


def tw_id_valid(value: str) -> bool:
    """Whether ``value`` (a letter and nine digits) is a Taiwan ID whose check digit holds."""
    letter = _TW_LETTERS.find(value[0].upper())
    if letter < 0 or len(value) != 10 or not value[1:].isdigit():
        return False
    number = letter + 10
    digits = [number // 10, number % 10, *map(int, value[1:])]
    weights = (1, 9, 8, 7, 6, 5, 4, 3, 2, 1, 1)
    return sum(d * w for d, w in zip(digits, weights, strict=True)) % 10 == 0


def _label(text: str, english: str, hant: str, hans: str) -> str:
    if text.isascii():
        return english
    return hans if re.search(r"[们这证号码]", text) else hant


def id_numbers(text: str, digits: int) -> list[Found]:
    """Every national ID number in ``text`` (full-width digits already read), which holds
    ``digits`` digits; each shape is looked for only when there are digits enough for it."""
    found: list[Found] = []
    low = text.lower()
    if digits < 8:
        return _ni_numbers(text, low)
    named = _NAMES_AN_SSN.search(low)
    ssn_label = _label(text, "social security number", "社會安全號碼", "社会安全号码")
    spans = [m.span("value") for m in _SSN_DASHED.finditer(text)] if "-" in text else []
    if named:
        spans += [m.span("value") for m in _SSN_LOOSE.finditer(text)]
    for start, end in spans:
        compact = text[start:end].replace(" ", "").replace("-", "")
        if ssn.is_valid(compact) or (named and compact[:3] not in ("000", "666")):
            kw = named.span() if named else (start, end)
            found.append(Found("id_number", start, end, *kw, ssn_label))
    id_label = _label(text, "ID number", "身分證字號", "身份证号")
    an_id = _NAMES_AN_ID.search(low) is not None
    for match in (_TW_ID_LOOSE if an_id else _TW_ID).finditer(text):
        if an_id or tw_id_valid(match.group("value")):
            found.append(Found("id_number", *match.span(), *match.span(), id_label))
    for match in _CN_ID.finditer(text) if digits >= 17 else ():
        before = text[max(0, match.start() - 24) : match.start()]
        valid = an_id or ric.is_valid(match.group("value"))
        if valid and not _NOT_AN_ID.search(before):
            found.append(Found("id_number", *match.span(), *match.span(), id_label))
    return found + _ni_numbers(text, low)


def _ni_numbers(text: str, low: str) -> list[Found]:
    """A UK National Insurance number, where the text (``low`` lower-cased) names one."""
    if "n" not in low or not _NAMES_A_NINO.search(low):
        return []
    label = "National Insurance number"
    return [Found("id_number", *m.span(), *m.span(), label) for m in _NINO.finditer(text)]
