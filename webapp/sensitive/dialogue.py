"""A secret said with no word for it, known by the question before it.

"Biscuit1987" is a password only as the answer to "What's the new Wi-Fi password?", or to
"What is it?" after "I changed the Wi-Fi password". ``find_secrets`` reads one text and cannot
know; ``find_secrets_in_reply`` reads a conversation's turn with the turns before it:

- the question is the last assistant turn before the reply, and asks ("what", "which",
  "tell me", a question mark, 什麼, 多少, 告訴我, 呢);
- it asks for a secret when it names one (password, code, PIN, PUK, seed phrase, secret word,
  密碼, 驗證碼, 口令) and nothing else (a name, a time, a room, a phone, a birthday, how many
  digits); when it names nothing ("What is it?", 是什麼？) the user's turn before it says
  what "it" is;
- the reply is the value: what is left after "it's", 是, quotes, unless it says where the
  secret is or that it is not given ("it's on the sticker", "I'd rather not say", 忘了), or
  only agrees ("yes", 好的).

The MCP tool and the CLI get one text with no turn before it: there only ``find_secrets``
applies. Extraction reads conversations, so it masks such a reply in what it sends to an LLM
and keeps it out of the facts (``webapp.extraction.masking``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..text import language_of
from .rules import PUBLIC_CODES
from .secrets import SecretFinding, SecretSpan, find_secrets

_I = re.IGNORECASE

# What names a secret, and of which kind.
_SECRET_NAMES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"\b(?:verification|confirmation|one-time|login|security|sms|2fa|mfa)\s+code\b|"
            r"\botp\b|驗證碼|验证码|認證碼|认证码|簡訊碼|短信码|動態碼|动态码",
            _I,
        ),
        "one_time_code",
    ),
    (
        re.compile(
            r"\b(?:pass(?:word|phrase|wd)|pwd|secret\s+word|safe\s*word|code\s*word|"
            r"(?:seed|recovery|backup)\s+(?:phrase|words)|mnemonic)\b|"
            r"密碼(?!鎖)|密码(?!锁)|口令|暗號|暗号|密語|密语|通關密語|通关密语|助記詞|助记词",
            _I,
        ),
        "password",
    ),
    (
        re.compile(
            r"(?<![A-Za-z])(?:(?P<qual>[\w-]+)\s+)?(?:pass)?code\b|\b(?:pin|puk)\d?\b|"
            r"\bcombination\b|\bcombo\b|PIN|PUK|撤防碼|撤防码|解除碼|解除码|解鎖碼|解锁码|號碼鎖|"
            r"号码锁|密碼鎖|密码锁|組合|组合",
            _I,
        ),
        "access_code",
    ),
)
# A question that asks for something other than a secret's value.
_OTHER_SUBJECT = re.compile(
    r"\b(?:name|named|called|ssid|network\s+name|time|when|what\s+time|birthday|date|day|"
    r"room|floor|address|phone|where|how\s+many|how\s+long|digits|characters|letters)\b|"
    r"名稱|名称|名字|叫什麼|叫什么|幾點|几点|時間|时间|什麼時候|什么时候|哪天|生日|日期|房間|房间|"
    r"房號|房号|幾樓|几楼|地址|電話|电话|手機號|手机号|哪裡|哪里|在哪|幾位|几位|幾個|几个|多長|多长",
    _I,
)
_ASKS_A_VALUE = re.compile(
    r"\bwhat\b|\bwhat['’]s\b|\bwhich\b|tell\s+me|go\s+ahead|\bshare\b|\bsay\s+it\b|"
    r"什麼|什么|多少|啥|哪個|哪个|告訴我|告诉我|說吧|说吧|請說|请说|[?？]|[呢嗎吗]\s*$",
    _I,
)
# A reply that says where the secret is, that it is not given, or only agrees: no value.
_NO_VALUE = re.compile(
    r"\b(?:not|don['’]t|won['’]t|can['’]t|never|rather|forgot|forget|ask|later|"
    r"written|sticker|fridge|drawer|somewhere|same|secret|sorry|idea|private|keep|know|"
    r"on\s+the|in\s+the|under\s+the|my\s+birthday)\b|"
    r"不告訴|不告诉|不說|不说|不要|不用|忘了|忘記|忘记|不記得|不记得|寫在|写在|貼在|贴在|放在|在冰箱|"
    r"問|问|以後|以后|不方便|保密|秘密|不能|沒有|没有|不知道|一樣|一样|生日|等等|待會|待会",
    _I,
)
_AGREES = re.compile(
    r"(?:(?:yes|yeah|yep|no|nope|ok(?:ay)?|sure|thanks?|thank\s+you|please|maybe|fine|cool|"
    r"好的?|對|对|是的|嗯|謝謝|谢谢|可以|不用|沒事|没事)[\s,.!，。！]*){1,3}",
    _I,
)
_LEAD = re.compile(
    r"^\s*(?:(?:sure|ok(?:ay)?|yes|yeah|no|nope|fine|alright|remember(?:\s+(?:it|this))?)[,!.:]?\s+)?"
    r"(?:(?:it['’]?s|it\s+is|that['’]?s|the\s+new\s+one\s+is|now\s+it['’]?s)\s*[:：]?\s*|"
    r"(?:好的?[，,]?\s*)?(?:新的|現在|现在|它|那個|那个)?(?:是|就是|改成了?|為|为)\s*[:：]?\s*)?",
    _I,
)
_VALUE_END = re.compile(r"[.;!?。；！？](?=\s|$)|[。；！？]")
MAX_VALUE_CHARS = 200
MAX_VALUE_WORDS = 24  # a seed phrase of 24 words


def _named(text: str) -> str | None:
    """The kind of secret ``text`` names (None when it names none, or a public code)."""
    for pattern, kind in _SECRET_NAMES:
        for match in pattern.finditer(text):
            qualifier = (match.groupdict().get("qual") or "").lower()
            if kind == "access_code" and qualifier in PUBLIC_CODES:
                continue
            return kind
    return None


def asked_for(before: Sequence[tuple[str, str]]) -> str | None:
    """The kind of secret the last assistant turn of ``before`` (``(role, text)`` pairs, in
    order) asks for, or None when it asks for none."""
    if not before or before[-1][0] != "assistant":
        return None
    question = before[-1][1]
    if not _ASKS_A_VALUE.search(question) or _OTHER_SUBJECT.search(question):
        return None
    kind = _named(question)
    if kind is not None:
        return kind
    earlier = [text for role, text in before[:-1] if role == "user"]
    return _named(earlier[-1]) if earlier else None


def _value(text: str) -> tuple[int, int] | None:
    """Where the value is in a reply, or None when it holds none."""
    if _NO_VALUE.search(text) or _AGREES.fullmatch(text.strip()):
        return None
    lead = _LEAD.match(text)
    start = lead.end() if lead else 0
    while start < len(text) and text[start] in "\"'“‘「『":
        start += 1
    stop = _VALUE_END.search(text, start)
    end = stop.start() if stop else len(text.rstrip())
    while end > start and text[end - 1] in "\"'”’」』 ":
        end -= 1
    value = text[start:end]
    if not any(c.isalnum() for c in value) or len(value) > MAX_VALUE_CHARS:
        return None
    if len(value.split()) > MAX_VALUE_WORDS:
        return None
    return start, end


_LABELS = {
    "password": ("password", "密碼", "密码"),
    "access_code": ("code", "密碼", "密码"),
    "one_time_code": ("one-time code", "驗證碼", "验证码"),
}


def find_secrets_in_reply(
    text: str, before: Sequence[tuple[str, str]] = ()
) -> SecretFinding | None:
    """The secrets in ``text``, a user's turn, read with the turns ``before`` it (``(role,
    text)`` pairs): what ``find_secrets`` finds, or the whole value when the question just
    before asked for a secret."""
    found = find_secrets(text)
    if found is not None:
        return found
    kind = asked_for(before)
    where = _value(text) if kind is not None else None
    if kind is None or where is None:
        return None
    english, hant, hans = _LABELS[kind]
    language = language_of(text + " " + before[-1][1])
    label = {"zh-Hant": hant, "zh-Hans": hans}.get(language, english)
    return SecretFinding(text, (SecretSpan(kind, *where, label),))
