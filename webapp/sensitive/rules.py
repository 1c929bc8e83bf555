"""The words and patterns ``webapp.sensitive.secrets`` reads a secret's value by: what names a secret
in English and in Chinese, what links the name to its value ("is", ":", 是, a short clause,
an aside), what a value looks like for each kind, and the words that make a value no secret
("zip code", "bus pass", "the password is on the sticker").
"""

from __future__ import annotations

import re

from .access import DIGIT_GAP, LISTED_DIGITS

_I = re.IGNORECASE


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


CARD_RUN = r"\d(?:(?:[ -]{1,2}|\.)?\d){12,18}"
# ------------------------------------------------------------------ context
# A code: 3 to 12 digits, maybe spaced, dashed, dotted or underscored (4.8.2.1).
# Digits may be spaced, dotted, dashed, underscored or split ("28 then 61", 52 然後 84).
DIGITS = rf"{LISTED_DIGITS}|[#*]?\d(?:{DIGIT_GAP}?\d){{2,11}}[#*]?"
_LONG_DIGITS = r"\d(?:[ -]?\d){5,29}"  # an account number: 6 digits or more
_CARD_DIGITS = CARD_RUN
_WORD_VALUE = r"[!-~]{4,64}"  # a password: printable ASCII without spaces
# A dial's combination: "22 left, 14 right, 7 left", "R 12 L 34 R 56".
_TURN = r"(?:\d{1,2}\s*(?:left|right|L|R)|(?:left|right|L|R)\s*\d{1,2})\b"
_DIAL = rf"{_TURN}(?:\s*[,;]?\s*(?:then\s+|and\s+)?{_TURN}){{1,4}}"
# A backup code: one group of 6 to 12 letters and digits, or two of 4 to 6 ("7a3f9-c21d8").
BACKUP_CODE = r"[A-Za-z0-9]{4,6}[ -][A-Za-z0-9]{4,6}|[A-Za-z0-9]{6,12}"
# A key: one long run, or groups of 4 to 6 written apart ("7F3K 9QWX 2LMN 8RTY").
_KEY_VALUE = r"[A-Za-z0-9+/=_.-]{16,}|[A-Za-z0-9]{4,6}(?:[ -][A-Za-z0-9]{4,6}){3,7}"

# English: "<qualifier> code", "PIN", "password for X is …".
_EN_BRIDGE = (
    r"(?:\s+(?:for|of|on|to|at|in)\s+(?:the\s+|my\s+|our\s+)?[\w.'’-]+"
    r"(?:\s+(?!(?:is|are|was|will|opens|unlocks|changed)\b)[\w.'’-]+)?){0,2}"
)
_EN_LINK = (
    r"(?P<link>\s*(?:[:=：]|->|→|-|#|是|為|为)\s*|\s*[?？]\s*[Ii]t(?:['’]?s| is)\s+|"
    r"\s+(?:will be|is now|is set to|(?:was\s+|has been\s+)?changed to|opens with|is still|"
    r"is|are|was|=|no\.?|number)\s*[:：]?\s*|\s+)"
)
# Or an aside: "the password, by the way, is Kestrel77".
EN_ASIDE = re.compile(r"\s*[,(—]\s*[A-Za-z'’ ]{2,24}[,)—]\s*(?:is|was|=|:)?\s*")
# Or a short clause between the name and the value: "the code they texted me is 583920", "the
# PIN I use for the card is …" — it starts with a pronoun, an article, a name or a participle
# ("the password manager is 1Password" is no clause, "manager" goes with "password").
EN_CLAUSE = re.compile(
    r"\s+(?:that|which|they|i|we|you|he|she|it|my|our|your|his|her|their|the|a|an|someone|sent|"
    r"for|of|on|at|in|to|from|with|"
    r"texted|emailed|given|shown|printed|written|set|used|generated|[A-Z][a-z]*)\b"
    r"(?:\s+(?!(?:is|are|was|were)\b)[A-Za-z'’-]+){0,5}?\s+(?:is|are|was|were)\s*[:：]?\s*"
)
LAST_WORD = re.compile(r"([\w-]+)\s+$")
EN_TAIL = re.compile(_EN_BRIDGE + _EN_LINK)
# Qualifiers that make "code" no secret at all.
PUBLIC_CODES = _words(
    "zip post postal area country dial dialing error status promo promotion discount coupon "
    "referral qr bar source dress color colour product item class course airport station "
    "tax sort swift bic language region fault dtc"
)
ACCESS_WORDS = _words(
    "door gate garage alarm keypad lockbox lock padlock safe entry disarm access building "
    "entrance intercom buzzer panel cabinet locker key front back"
)
OTP_WORDS = _words(
    "verification confirmation security login sign-in signin one-time 2fa sms auth "
    "authentication otp your backup recovery scratch emergency mfa totp"
)
# "pass" is a password only when no ticket is meant ("bus pass", "boarding pass").
TICKET_PASSES = _words(
    "bus boarding day season ski gym train rail metro park annual hall backstage press visitor "
    "museum festival weekly monthly free all-access fast hiking"
)
# Words after "password is" that say where it is or what it is like, not what it is.
NOT_A_VALUE = _words(
    "on in at the a an is it its this that same different written stored saved kept taped "
    "printed noted changed new old here there under below above somewhere missing lost "
    "forgotten unknown blank empty shared private secret wrong incorrect too very not still "
    "also long short weak strong expired hard easy required needed reset set case sensitive "
    "something nothing what and or but so to for of my your our his her their"
)

EN_RULES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    # (keyword, kind, value) — kind "code" is decided by the qualifier before "code".
    (
        re.compile(
            r"(?<![A-Za-z0-9_])(?P<kw>(?:pass)?codes?|combination|combo|"
            r"(?:pin|puk)\s?[12]?(?:\s+(?:code|number))?)(?![A-Za-z0-9_])",
            _I,
        ),
        "code",
        DIGITS,
    ),
    (
        re.compile(r"\b(?P<kw>padlock|lockbox|lock box|safe)\b", _I),
        "access_code",
        DIGITS,
    ),
    (re.compile(r"\b(?P<kw>combination|combo|padlock|safe)\b", _I), "access_code", _DIAL),
    (
        re.compile(
            r"(?<![A-Za-z0-9_])(?P<kw>otp|totp|(?:2fa|mfa)(?:\s+code)?)(?![A-Za-z0-9_])", _I
        ),
        "one_time_code",
        DIGITS,
    ),
    (
        re.compile(
            r"(?<![A-Za-z0-9_])(?P<kw>cvv2?|cvc2?|csc|card security code)(?![A-Za-z0-9_])", _I
        ),
        "card_number",
        r"\d{3,4}(?!\d)",
    ),
    (
        re.compile(r"\b(?P<kw>(?:backup|recovery|scratch|emergency)\s+codes?)\b", _I),
        "one_time_code",
        BACKUP_CODE,
    ),
    (
        re.compile(
            r"(?<![A-Za-z0-9_])(?P<kw>pass(?:word|phrase|wd|key)|pwd|pw|p/w|"
            r"pass(?=\s*[:=：]|\s+for\s)|wi-?fi key|network key|"
            r"(?:secret|safe|code)\s*word)(?![A-Za-z0-9_])",
            _I,
        ),
        "password",
        _WORD_VALUE,
    ),
    (
        re.compile(r"\b(?P<kw>login|credentials|sign-?in)\b", _I),
        "login",
        r"[!-~]{2,64}\s*/\s*[!-~]{4,64}",
    ),
    (
        re.compile(
            r"\b(?P<kw>api[ _-]?key|(?:access|auth|bearer|bot|api|secret|personal)\s+token|"
            r"token|secret(?:\s+(?:access\s+)?key)?|private key|client secret|"
            r"access\s+key(?:\s+id)?)\b",
            _I,
        ),
        "api_key",
        _KEY_VALUE,
    ),
    (
        re.compile(
            r"\b(?P<kw>(?:credit\s+|debit\s+|bank\s+)?card\s+(?:number|no\.?|#)|visa|mastercard|"
            r"master\s*card|amex|american express|discover|jcb|unionpay)(?!\w)",
            _I,
        ),
        "card_number",
        _CARD_DIGITS,
    ),
    (
        re.compile(
            r"\b(?P<kw>(?:bank\s+|checking\s+|savings\s+)?(?:account|acct)(?:\s+(?:number|no\.?|#))?|"
            r"routing(?:\s+number)?|sort code|iban|bsb)(?!\w)",
            _I,
        ),
        "account_number",
        _LONG_DIGITS,
    ),
)
# What each rule above needs in the (lower-cased) text, to pass over it at once.
_EN_HINTS: tuple[tuple[str, ...], ...] = (
    ("code", "combo", "combination", "pin", "puk"),
    ("padlock", "lockbox", "lock box", "safe"),
    ("combination", "combo", "padlock", "safe"),
    ("otp", "2fa", "mfa"),
    ("cvv", "cvc", "csc", "security code"),
    ("backup", "recovery", "scratch", "emergency"),
    (
        "pass",
        "pwd",
        "pw",
        "p/w",
        "key",
        "secret word",
        "safe word",
        "safeword",
        "code word",
        "codeword",
    ),
    ("login", "credentials", "sign"),
    ("key", "token", "secret"),
    ("card", "visa", "master", "amex", "discover", "jcb", "unionpay", "american express"),
    ("account", "acct", "routing", "sort code", "iban", "bsb"),
)
EN_HINT_RES = tuple(re.compile("|".join(map(re.escape, hints))) for hints in _EN_HINTS)
# "583920 is your verification code", "G-582913 is your Google code".
EN_VALUE_FIRST = re.compile(
    r"(?<![\w-])(?P<value>(?:[A-Z]-)?\d{4,8})\s+is\s+(?:your|the|my|our)\s+(?:[\w-]+\s+){0,2}?"
    r"(?P<kw>(?:verification|confirmation|security|login|one-time|access|door|gate|alarm)?\s*"
    r"(?:code|passcode|pin|otp))\b",
    _I,
)
# "Hunter2! is my email password": a password's shape before "is my … password".
EN_PASSWORD_FIRST = re.compile(
    r"(?<![!-~])(?P<value>[!-~]{6,64})\s+is\s+(?:my|the|our|your)\s+(?:[\w-]+\s+){0,3}?"
    r"(?P<kw>password|passphrase|passwd|pwd|pw)\b",
    _I,
)

# Chinese: the keyword, then 是/：/為 or nothing, then the value (never Chinese characters).
_ZH_LINK = (
    r"(?P<link>(?:的?(?:數字|数字|號碼|号码|組合|组合))?\s*"
    r"(?:是|為|为|：|:|=|→|->|就是|改成了?|改為|改为|設為|设为|設成|设成)?\s*先?\s*)"
)
ZH_RULES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (
        re.compile(
            r"(?P<kw>驗證碼|验证码|認證碼|认证码|校驗碼|校验码|動態碼|动态码|動態密碼|动态密码|一次性密碼|一次性密码|"
            r"確認碼|确认码|簡訊碼|短信码|備用碼|备用码|恢復碼|恢复码|救援碼|救援码|復原碼|复原码|OTP|otp)"
        ),
        "one_time_code",
        DIGITS,
    ),
    (
        re.compile(
            r"(?P<kw>撤防碼|撤防码|解除碼|解除码|號碼鎖|号码锁|門禁碼|门禁码|開門碼|开门码|"
            r"密碼鎖|密码锁|PIN碼|PIN码|PIN|PUK\s?[12]?\s?(?:碼|码)?|解鎖碼|解锁码|解鎖密碼|解锁密码|開機碼|开机码)"
        ),
        "access_code",
        DIGITS,
    ),
    (
        re.compile(r"(?P<kw>密碼|密码|口令|通關密語|通关密语|授權碼|授权码|應用密碼|应用密码)"),
        "password",
        _WORD_VALUE,
    ),
    (
        re.compile(r"(?P<kw>金鑰|密鑰|密钥|私鑰|私钥|令牌|權杖|权杖|[Tt]oken|API ?[Kk]ey)"),
        "api_key",
        _KEY_VALUE,
    ),
    (
        re.compile(
            r"(?P<kw>(?:信用|銀行|银行|金融|提款|簽帳|借記|借记|儲蓄|储蓄|萬事達|万事达|銀聯|银联)?"
            r"卡(?:號碼|号码|號|号)?|[Vv]isa|JCB|Amex)"
        ),
        "card_number",
        _CARD_DIGITS,
    ),
    (
        re.compile(r"(?P<kw>安全碼|安全码|CVV2?|CVC2?|cvv)"),
        "card_number",
        r"\d{3,4}(?!\d)",
    ),
    (
        re.compile(r"(?P<kw>帳號|账号|帳戶|账户|戶口|户口|賬號|賬戶|IBAN|對公賬戶|对公账户)"),
        "account_number",
        _LONG_DIGITS,
    ),
)
ZH_TAIL = re.compile(_ZH_LINK)
DIGITS_ONLY = re.compile(rf"{LISTED_DIGITS}|[#*]?\d(?:{DIGIT_GAP}?\d)*[#*]?")
# What every keyword above contains, to pass over a text that names no secret at once.
_KEYWORD_PARTS = _words(
    "code combination combo pin puk padlock lockbox lock box safe otp 2fa pass pwd key login "
    "credential sign token secret card visa mastercard amex discover jcb unionpay account "
    "acct routing iban bsb pw p/w cvv cvc csc 2fa mfa 碼 码 令 鑰 钥 杖 卡 帳 账 戶 户 賬 密語 密语"
)


# Searched in the lower-cased text: a pattern without IGNORECASE is several times faster.
_ANY_KEYWORD_PART = re.compile("|".join(re.escape(part) for part in sorted(_KEYWORD_PARTS)))


def names_a_secret(text: str) -> bool:
    return _ANY_KEYWORD_PART.search(text.lower()) is not None
