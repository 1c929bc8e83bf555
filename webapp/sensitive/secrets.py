"""Secrets in text: passwords, codes, keys, card and account numbers that must not become memories.

A memory is injected into every prompt, forever, so a sentence that holds the value of a
password, a door or alarm code, an API key or token, a payment card or bank account number or
a one-time code must not be kept by accident. ``find_secrets`` says whether a text holds one,
of which kind, where, and gives the text with each secret masked (``masked``) and the fact
without it ("Has a garage door code (not kept in memory).": ``fact``).

It works by shapes and by context, in English and Chinese (繁體 and 简体):

- shapes that are secrets wherever they stand: the documented prefixes of API keys and tokens
  (``sk-…``, ``ghp_…``, ``xoxb-…``, ``AKIA…``, …), JSON Web Tokens, private key blocks, long
  random-looking strings, card numbers that pass the Luhn check and IBANs that pass their
  mod-97 check (both checked by python-stdnum);
- a value right after words that name a secret ("the door code is 4821", "密碼：Pa55w0rd!",
  "验证码 583 920", "PIN 0917"), or after a short clause or an aside ("the code they texted
  me is …", "the password, by the way, is …"), or just before them ("Hunter2! is my email
  password"), where a mention without a value ("I changed the door code", "密码在抽屉里") is
  no secret.

The text is read first as ``webapp.sensitive.forms`` gives it (full-width characters, digits
said as words or split across "then", read as digits); ``webapp.sensitive.keys`` holds the
vendors' key shapes, ``webapp.sensitive.access`` the secrets named only by what they open
(a door, a gate, a safe, a network, a login), ``webapp.sensitive.phrases`` those said in words
(seed phrases, quoted and Chinese passphrases), ``webapp.sensitive.rules`` the words and
patterns of the context rules.

The labelled sentences in ``tests/data/secrets`` measure it (``benchmarks/quality.py``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from stdnum import iban as stdnum_iban
from stdnum import luhn

from ..text import language_of
from .access import Found, unkeyed
from .forms import normal_form
from .ids import id_numbers
from .keys import ANY_KEY, KEY_PREFIX, KEYS, RANDOM, looks_random
from .phrases import phrases
from .rules import (
    ACCESS_WORDS,
    BACKUP_CODE,
    CARD_RUN,
    DIGITS,
    DIGITS_ONLY,
    EN_ASIDE,
    EN_CLAUSE,
    EN_HINT_RES,
    EN_PASSWORD_FIRST,
    EN_RULES,
    EN_TAIL,
    EN_VALUE_FIRST,
    LAST_WORD,
    NOT_A_VALUE,
    OTP_WORDS,
    PUBLIC_CODES,
    TICKET_PASSES,
    ZH_RULES,
    ZH_TAIL,
    names_a_secret,
)

KINDS = (
    "password",
    "access_code",
    "api_key",
    "card_number",
    "account_number",
    "one_time_code",
    "id_number",
)
# Each kind as a person reads it (English; the dashboard translates them).
KIND_NAMES = {
    "password": "password",
    "access_code": "door, alarm or PIN code",
    "api_key": "API key or token",
    "card_number": "card number",
    "account_number": "bank account number",
    "one_time_code": "one-time code",
    "id_number": "national ID number",
}
MASK = "••••"
_FULL_WIDTH_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")
_I = re.IGNORECASE


@dataclass(frozen=True)
class SecretSpan:
    """One secret in a text: its kind, where it is, and what it is called ("garage door code")."""

    kind: str  # one of KINDS
    start: int
    end: int
    label: str  # what the text calls it, or the kind's own name

    def masked_value(self, text: str) -> str:
        """The secret as it may be shown: nothing of it, or for a long one its public part
        (a key's vendor prefix, a card's last four digits)."""
        value = text[self.start : self.end].translate(_FULL_WIDTH_DIGITS)
        if self.kind in ("card_number", "account_number"):
            tail = re.sub(r"[^0-9A-Za-z]", "", value)[-4:]
            return MASK + tail if len(re.sub(r"\D", "", value)) >= 10 else MASK
        if self.kind == "api_key":
            prefix = KEY_PREFIX.match(value)
            return (prefix.group(0) if prefix else "") + MASK
        return MASK


@dataclass(frozen=True)
class SecretFinding:
    """What ``find_secrets`` found in a text: the secrets, the text masked, the fact without them."""

    text: str
    spans: tuple[SecretSpan, ...]

    @property
    def kind(self) -> str:
        """The kind of the first secret."""
        return self.spans[0].kind

    @property
    def label(self) -> str:
        """What the text calls its first secret ("garage door code", "Wi-Fi密碼")."""
        return self.spans[0].label

    @property
    def masked(self) -> str:
        """The text with every secret masked."""
        out, last = [], 0
        for span in self.spans:
            out += [self.text[last : span.start], span.masked_value(self.text)]
            last = span.end
        out.append(self.text[last:])
        return "".join(out)

    @property
    def fact(self) -> str:
        """The text without the secret, in the text's language: each clause that holds a
        secret becomes the fact without it ("Has a garage door code (not kept in memory).",
        "有大門密碼（內容不存在記憶裡）。"), the other clauses stay as written."""
        language = language_of(self.text)
        return _rewritten(self, language) or self._own_fact(language)

    def _own_fact(self, language: str) -> str:
        """The fact without the first secret, the rest of the text left out."""
        label = self.label
        if (
            language != "en" and label.isascii()
        ):  # a key found by its shape: 金鑰, not "GitHub token"
            label = _KIND_LABELS[language][self.kind]
        return secret_fact(label, language)


def secret_fact(label: str, language: str) -> str:
    """That the user has a ``label`` (a secret's name), saying its value is not kept."""
    if language == "zh-Hant":
        return f"有{label}（內容不存在記憶裡）。"
    if language == "zh-Hans":
        return f"有{label}（内容不存在记忆里）。"
    vowel = label[:1].lower() in "aeiou" and not label.lower().startswith(("one", "uni", "use"))
    article = "an" if vowel else "a"
    return f"Has {article} {label} (not kept in memory)."


# Where one clause ends and the next begins: ; ； 。 always; a comma or " and " only between
# two pieces long enough to be clauses ("Remember, the door code is…" is one clause).
_STRONG_CUT = re.compile(r"\s*[;；。]\s*")
_WEAK_CUT = re.compile(r"\s*，\s*|,\s+(?:and\s+)?|\s+and\s+")
_END_MARKS = re.compile(r"[\s.。!?！？]+$")  # what ends the text
MIN_CLAUSE_WORDS = 3  # English words in a piece set off by a comma or "and"
MIN_CLAUSE_CHARS = 3  # characters in a Chinese one


def _long_enough(piece: str, language: str) -> bool:
    if language == "en":
        return len(re.findall(r"[\w'’-]+", piece)) >= MIN_CLAUSE_WORDS
    return len(re.sub(r"\s", "", piece)) >= MIN_CLAUSE_CHARS


def _clauses(text: str, spans: tuple[SecretSpan, ...], language: str) -> list[tuple[int, int]]:
    """Where the clauses of ``text`` are; what lies between two of them is their separator.
    No clause boundary cuts through a secret."""
    cuts = [(m.start(), m.end(), True) for m in _STRONG_CUT.finditer(text)]
    cuts += [(m.start(), m.end(), False) for m in _WEAK_CUT.finditer(text)]
    cuts = sorted(c for c in cuts if not any(s.start < c[1] and s.end > c[0] for s in spans))
    changed = True
    while changed:  # drop a weak cut next to a piece too short to be a clause
        changed = False
        for i, (start, end, strong) in enumerate(cuts):
            before = text[cuts[i - 1][1] if i else 0 : start]
            after = text[end : cuts[i + 1][0] if i + 1 < len(cuts) else len(text)]
            if not strong and not (
                _long_enough(before, language) and _long_enough(after, language)
            ):
                del cuts[i]
                changed = True
                break
    edges = [0] + [edge for start, end, _ in cuts for edge in (start, end)] + [len(text)]
    return list(zip(edges[::2], edges[1::2], strict=True))


def _rewritten(finding: SecretFinding, language: str) -> str | None:
    """``finding``'s text with each clause that holds a secret replaced by the fact without
    it, the other clauses as written; None when the text is one clause, or when the rewrite
    would not stand on its own (a clause holds its secret only with the rest of the text, or
    a secret is left over)."""
    text = finding.text
    body_end = max(len(_END_MARKS.sub("", text)), finding.spans[-1].end)
    clauses = _clauses(text[:body_end], finding.spans, language)
    if len(clauses) < 2:
        return None
    stop = "." if language == "en" else "。"
    out, last, holds = [], 0, False
    for start, end in clauses:
        out.append(text[last:start])
        last = end
        holds = any(span.start < end and span.end > start for span in finding.spans)
        if not holds:
            out.append(text[start:end])
            continue
        own = find_secrets(text[start:end])
        if own is None:
            return None
        fact = own._own_fact(language).rstrip(stop)
        out.append(fact[:1].lower() + fact[1:] if language == "en" and start else fact)
    ending = text[body_end:].strip()
    rewritten = "".join(out) + (stop if holds or not ending else ending)
    return None if find_secrets(rewritten) is not None else rewritten


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# ------------------------------------------------------------------ shapes
# A run of 13 to 19 digits, in groups or not (spaced, dashed, dotted): a card number when it
# passes the Luhn check.
_CARD = re.compile(rf"(?<![\dA-Za-z.-]){CARD_RUN}(?![\dA-Za-z-]|\.\d)")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b", re.IGNORECASE)
# Words around a number that make it something other than a card (order, tracking, phone).
_NOT_A_CARD = re.compile(
    r"\b(?:order|tracking|invoice|receipt|reference|ref|serial|phone|tel|mobile|isbn|imei)\b|"
    r"訂單|订单|單號|单号|快遞|快递|運單|运单|發票|发票|電話|电话|手機|手机|序號|序号",
    _I,
)


def _shape_spans(text: str) -> list[SecretSpan]:
    spans: list[SecretSpan] = []
    if ANY_KEY.search(text):
        for pattern, label in KEYS:
            spans += [
                SecretSpan("api_key", m.start(), m.end(), label) for m in pattern.finditer(text)
            ]
    for match in RANDOM.finditer(text):
        if looks_random(match.group(0)):
            spans.append(SecretSpan("api_key", match.start(), match.end(), "secret key"))
    for match in _IBAN.finditer(text):
        found = _valid_iban(match.group(0))
        if found:
            spans.append(SecretSpan("account_number", match.start(), match.start() + found, "IBAN"))
    count = sum(map(str.isdigit, text))
    for an_id in id_numbers(text, count) if count >= 6 else ():
        spans.append(SecretSpan(an_id.kind, an_id.start, an_id.end, an_id.suffix))
    for match in _CARD.finditer(text) if count >= 13 else ():
        digits = re.sub(r"\D", "", match.group(0))
        before = text[max(0, match.start() - 24) : match.start()]
        if match.group(0).count(".") == 1:
            continue  # a decimal number, not a card written in dotted groups
        if digits[0] in "23456" and luhn.is_valid(digits) and not _NOT_A_CARD.search(before):
            spans.append(SecretSpan("card_number", match.start(), match.end(), "card number"))
    return spans


def _valid_iban(candidate: str) -> int:
    """The length of the longest start of ``candidate`` that is a valid IBAN (0 when none)."""
    end = len(candidate)
    while end >= 15:
        if stdnum_iban.is_valid(candidate[:end]):
            return end
        end = candidate.rfind(" ", 0, end) if " " in candidate[:end] else end - 1
        if end <= 0:
            break
    return 0


# What makes 密碼 a code for a door, a safe or a card rather than a password.
_ZH_ACCESS = re.compile(
    r"(?:門|门|保險|保险|保全|警報|警报|報警|报警|提款卡|金融卡|支付|車庫|车库|鎖|锁|信用卡|銀行卡|银行卡|"
    r"櫃|柜|行李箱|密碼箱|密码箱|鑰匙盒|钥匙盒|工具間|工具间)"
)
_KIND_LABELS = {
    "en": {
        "password": "password",
        "access_code": "code",
        "api_key": "API key",
        "card_number": "card number",
        "account_number": "account number",
        "one_time_code": "one-time code",
        "id_number": "ID number",
    },
    "zh-Hant": {
        "password": "密碼",
        "access_code": "密碼",
        "api_key": "金鑰",
        "card_number": "卡號",
        "account_number": "帳號",
        "one_time_code": "驗證碼",
        "id_number": "身分證字號",
    },
    "zh-Hans": {
        "password": "密码",
        "access_code": "密码",
        "api_key": "密钥",
        "card_number": "卡号",
        "account_number": "账号",
        "one_time_code": "验证码",
        "id_number": "身份证号",
    },
}
_EN_STOP = _words(
    "the my our your his her their a an this that is and remember note save use here's heres "
    "here it's to of for me also please new old"
)
_ZH_STOP = set("的是我你他她們们家裡里這这那個个把幫帮記记住下一：:，,。、")
MAX_ZH_LABEL = 16
_COMMON_FIRST_WORDS = (
    ACCESS_WORDS
    | OTP_WORDS
    | _words(
        "guest bearer savings checking bank debit credit office home work router email laptop "
        "computer phone network user bot api access personal client private wi-fi wifi "
        "password passwd pin account card code combination"
    )
)
# How the English keywords are named in a fact ("passwd" is a password).
_EN_NAMES = (
    (re.compile(r"\b(?:passwd|pwd|pw|p/w|pass)$", _I), "password"),
    (re.compile(r"\b(?:no\.?|#)$", _I), "number"),
)


def _en_label(text: str, start: int, keyword: str, kind: str) -> str:
    """The keyword with up to two words before it that name the secret ("garage door code")."""
    begin = start
    for word in reversed(list(re.finditer(r"[\w'’-]+", text[max(0, start - 40) : start]))[-2:]):
        if word.group(0).lower() in _EN_STOP or not re.fullmatch(r"[A-Za-z][\w-]*", word.group(0)):
            break
        begin = max(0, start - 40) + word.start()
    label = re.sub(r"\s+", " ", text[begin:start] + keyword).strip()
    for pattern, name in _EN_NAMES:
        label = pattern.sub(name, label)
    if kind == "card_number" and not label.endswith("number"):
        label += " number"
    elif kind == "access_code" and not re.search(r"code|pin|combination|combo$", label, _I):
        label += " code"
    first = label.split(" ", 1)[0]
    # A common word capitalised only because it starts the sentence ("Guest Wi-Fi password").
    if not text[:begin].strip() and first[1:].islower() and first.lower() in _COMMON_FIRST_WORDS:
        label = first.lower() + label[len(first) :]
    return label


def _zh_label(text: str, start: int, keyword: str) -> str:
    """The keyword with what names it just before (大門密碼, Wi-Fi密碼, Visa 卡號)."""
    begin = start
    while begin > 0 and start - begin < MAX_ZH_LABEL:
        char = text[begin - 1]
        if char in _ZH_STOP or (char == " " and not (begin > 1 and text[begin - 2].isascii())):
            break
        begin -= 1
    return re.sub(r"\s+", " ", text[begin:start] + keyword).strip()


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


_OPEN_QUOTES = frozenset("\"'“‘「『")


def _value_span(text: str, at: int, value: str) -> tuple[int, int] | None:
    """Where ``value`` (a pattern) starts at ``at``, without the punctuation that ends a
    sentence; None when there is none or it is shorter than 3 characters."""
    if text[at : at + 1] in _OPEN_QUOTES:  # 'Gate code is "2580"'
        at += 1
    found = _compiled(value).match(text, at)
    if found is None:
        return None
    end = found.end()
    while end > found.start() and text[end - 1] in ".,;:)）。，；：、?？\"'”’」』":
        end -= 1
    if end - found.start() < 3:
        return None
    return found.start(), end


def _code_kind(qualifier: str | None, keyword: str) -> str | None:
    """The kind of a "<qualifier> code" ("door code": access_code), or None when it is public."""
    word = (qualifier or "").lower()
    if word in PUBLIC_CODES or keyword.lower() in ("code",) and word.endswith("post"):
        return None
    if keyword.lower().startswith(("pin", "puk", "combination", "combo")) or word in ACCESS_WORDS:
        return "access_code"
    if word in OTP_WORDS or keyword.lower() == "passcode":
        return "one_time_code"
    return "access_code"


def _password_value(text: str, start: int, end: int, linked: bool) -> tuple[int, int] | None:
    """A password's span, or None when the word is no password ("is on the sticker")."""
    value = text[start:end]
    plain = value.isalpha()
    if value[0] in "([{<\"'“‘" or (not linked and not any(c.isdigit() for c in value)):
        return None  # "password (not kept…)", "reset my password tomorrow"
    if plain and value.lower() in NOT_A_VALUE:
        return None
    if value.lower() in NOT_A_VALUE or not re.search(r"[A-Za-z0-9]", value):
        return None
    if plain and value.islower():
        # A passphrase of plain words runs to the end of the clause.
        more = re.compile(r"(?:\s+[a-z]+){0,5}").match(text, end)
        if more:
            end = more.end()
    return start, end


_WINDOW = 80


def _context_spans(text: str) -> list[SecretSpan]:
    spans: list[SecretSpan] = []
    if not names_a_secret(text):
        return spans
    low = text.lower()
    for (rule, kind, value), hints in zip(EN_RULES, EN_HINT_RES, strict=True):
        if hints.search(low) is None:
            continue
        for match in rule.finditer(text):
            keyword = match.group("kw")
            # the word just before the keyword, read from a short window: read from the
            # text's start, each keyword would scan the whole text before it again
            before = LAST_WORD.search(text, max(0, match.start() - _WINDOW), match.start())
            qualifier = before.group(1) if before else None
            found_kind = _code_kind(qualifier, keyword) if kind == "code" else kind
            if found_kind is None or _a_ticket(keyword, qualifier):
                continue
            where = _en_value(text, match.end(), value, found_kind)
            if where is None:
                continue
            if found_kind == "login":
                found_kind = "password"
            if keyword.lower() == "pass" and not _strong_value(text[where[0] : where[1]]):
                continue
            start = match.start("kw")
            label = _en_label(text, start, text[start : match.end("kw")], found_kind)
            spans.append(SecretSpan(found_kind, *where, label))
    for match in EN_PASSWORD_FIRST.finditer(text) if "p" in text.lower() else ():
        value = match.group("value").rstrip(".,;:!?") or match.group("value")
        if _strong_value(value) and value.lower() not in NOT_A_VALUE:
            label = _en_label(text, match.start("kw"), match.group("kw"), "password")
            spans.append(SecretSpan("password", match.start("value"), match.end("value"), label))
    for match in EN_VALUE_FIRST.finditer(text):
        keyword = match.group("kw").strip()
        kind = "access_code" if re.search(r"door|gate|alarm|pin", keyword, _I) else "one_time_code"
        label = _en_label(text, match.start("kw"), keyword, kind)
        spans.append(SecretSpan(kind, match.start("value"), match.end("value"), label))
    for rule, kind, value in ZH_RULES:
        for match in rule.finditer(text):
            tail = ZH_TAIL.match(text, match.end())
            if tail is None:
                continue
            where = _value_span(text, tail.end(), DIGITS if kind == "password" else value)
            if where is None and kind == "password":
                where = _value_span(text, tail.end(), value)
            if where is None:
                continue
            found_kind = kind
            label = _zh_label(text, match.start("kw"), match.group("kw"))
            if kind == "api_key" and not _key_like(text[where[0] : where[1]]):
                continue
            if kind == "password":
                if not re.search(r"[A-Za-z0-9]", text[where[0] : where[1]]):
                    continue
                numeric = DIGITS_ONLY.fullmatch(text[where[0] : where[1]]) is not None
                if numeric and _ZH_ACCESS.search(label):
                    found_kind = "access_code"
            spans.append(SecretSpan(found_kind, *where, label))
    return spans


def _en_value(text: str, at: int, value: str, kind: str) -> tuple[int, int] | None:
    """Where the value of a secret named just before ``at`` is: after a link ("is", ":") or
    a short clause ("the code they texted me is …"); None when there is none."""
    for tail in (EN_TAIL.match(text, at), EN_CLAUSE.match(text, at), EN_ASIDE.match(text, at)):
        if tail is None:
            continue
        linked = tail.re is not EN_TAIL or bool(tail.group("link").strip())
        where = _value_span(text, tail.end(), value)
        if where is not None and kind in ("password", "login"):
            where = _password_value(text, *where, linked)
        if where is None:
            continue
        found = text[where[0] : where[1]]
        if kind == "api_key" and not _key_like(found):
            continue
        if value is BACKUP_CODE and sum(c.isdigit() for c in found) < 4:
            continue
        return where
    return None


def _a_ticket(keyword: str, qualifier: str | None) -> bool:
    """A "pass" that is a ticket ("bus pass", "boarding pass"), not a password."""
    return keyword.lower() == "pass" and (qualifier or "").lower() in TICKET_PASSES


def _strong_value(value: str) -> bool:
    """A password's shape: a letter with a digit or a symbol (not "free", not "25")."""
    letters = any(c.isalpha() for c in value)
    return letters and any(c.isdigit() or not c.isalnum() for c in value)


def _key_like(value: str) -> bool:
    """A key's value: one long run, or groups written apart that hold a digit (not words)."""
    return " " not in value or any(c.isdigit() for c in value)


def _unkeyed_spans(text: str) -> list[SecretSpan]:
    """The secrets ``webapp.sensitive.access`` finds without a word for them, labelled."""
    return [_labelled(text, found) for found in unkeyed(text) + phrases(text)]


def _labelled(text: str, found: Found) -> SecretSpan:
    """``found`` as a span, named by the words before it ("garage code", "门禁密码")."""
    if (found.kw_start, found.kw_end) == (found.start, found.end):  # known by its shape
        return SecretSpan(found.kind, found.start, found.end, found.suffix or "API key")
    keyword = text[found.kw_start : found.kw_end]
    if found.kw_start >= found.end:  # named after the value ("Enter 4409 at the front door")
        chinese = not keyword.isascii()
        joined = keyword + ("" if chinese else " ") + found.suffix
        if chinese and language_of(text) == "zh-Hans":
            joined = joined.replace("密碼", "密码")
        return SecretSpan(found.kind, found.start, found.end, joined)
    if not keyword.isascii():
        label = _zh_label(text, found.kw_start, keyword)
        if found.suffix and not label.endswith(("碼", "码")):
            label += found.suffix
        if language_of(text) == "zh-Hans":
            label = label.replace("密碼", "密码")
        return SecretSpan(found.kind, found.start, found.end, label)
    label = _en_label(text, found.kw_start, keyword, found.kind)
    if found.suffix and not re.search(r"pass|pw|code|pin|key|combination|combo$", label, _I):
        label += " " + found.suffix
    return SecretSpan(found.kind, found.start, found.end, label)


def _merged(spans: list[SecretSpan]) -> tuple[SecretSpan, ...]:
    """The spans in order, overlapping ones kept once (the earliest, then the longest)."""
    kept: list[SecretSpan] = []
    for span in sorted(spans, key=lambda s: (s.start, -(s.end - s.start))):
        if kept and span.start < kept[-1].end:
            if span.end > kept[-1].end:
                last = kept[-1]
                kept[-1] = SecretSpan(last.kind, last.start, span.end, last.label)
            continue
        kept.append(span)
    return tuple(kept)


def find_secrets(text: str) -> SecretFinding | None:
    """The secrets ``text`` holds, or None when it holds none."""
    if not text or not any(c.isdigit() or c.isalpha() for c in text):
        return None
    normal = normal_form(text)  # full-width characters and digit words read as ASCII
    read = normal.text
    spans = _context_spans(read) + _shape_spans(read) + _unkeyed_spans(read)
    if not spans:
        return None
    if read != text:
        spans = [SecretSpan(s.kind, *normal.span(s.start, s.end), s.label) for s in spans]
    return SecretFinding(text, _merged(spans))


def mask_secrets(text: str) -> str:
    """``text`` with every secret masked; the text itself when it holds none."""
    found = find_secrets(text)
    return found.masked if found else text
