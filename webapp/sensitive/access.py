"""Secrets said without the word for them: "Garage opens with 5566", 门禁 4821, "WiFi: …",
"Router admin: admin / hunter22", a 32-hex key, an access key in spaced groups.

``webapp.sensitive.secrets`` finds a value after the words that name a secret ("door code",
"password", 密碼). These rules find the rest, each with the guard that keeps its look-alikes
out: a door, gate, alarm or safe followed by a code of four to eight digits and no unit
("The door is 2032 mm tall", 大门 2019 年换的); a Wi-Fi value only when it has a password's
shape (letters with digits or symbols, not "down again" nor "300 Mbps"); a login only as a
``user / password`` pair; a long hex string only where the text speaks of a key and not of a
hash or a commit.

Each rule gives ``Found``: the kind, where the value is and where the words naming it are
(``webapp.sensitive.secrets`` makes the label from them).
"""

from __future__ import annotations

import re
from typing import NamedTuple

_I = re.IGNORECASE


class Found(NamedTuple):
    kind: str
    start: int  # the value
    end: int
    kw_start: int  # the words that name it
    kw_end: int
    suffix: str  # what the label needs after those words ("code", "密碼", "")


# ------------------------------------------------------------------ doors, gates, alarms, safes
# What may stand between the digits of a code: spaces, dots, dashes, underscores (4 - 8 - 2 - 1,
# 4.8.2.1), or "then" when it is said in two halves ("28 then 61", 52 然後 84).
DIGIT_GAP = (
    r"(?:[ ._·–-]{1,3}|\s*,?\s*(?:and\s+)?then(?:\s+(?:press|enter|type))?\s+|"
    r"\s*[，,]?\s*(?:然後|然后|再|接著|接着)(?:按|輸入|输入)?\s*)"
)
# Single digits set apart by commas, bars or slashes: "4,8,2,1", "1 | 9 | 7 | 3", "1/9/7/3".
LISTED_DIGITS = r"(?<!\d)\d(?:(?:,|\s?[|/]\s?)\d(?!\d)){3,11}"
_CODE = rf"{LISTED_DIGITS}|[#*]?\d(?:{DIGIT_GAP}?\d){{3,11}}[#*]?"
_CODE_RE = re.compile(_CODE)
_EN_ACCESS = re.compile(
    r"(?<![A-Za-z0-9_])(?P<kw>(?:(?:front|back|side|main|garage|shed|cabin|basement|storage|house|bike|"
    r"bicycle|gun|tool|key)\s+)?"
    r"(?:door|gate|garage|alarm|keypad|lockbox|lock\s+box|safe|padlock|lock|disarm|entry|"
    r"intercom|buzzer|vault|shed|mailbox|letterbox|locker|key\s*safe)"
    r"(?:\s+(?:keypad|lock|panel|disarm|door|box|entry|opener|remote|pad))*)(?![A-Za-z0-9_])"
    r"(?:\s+(?:for|of|on|to|at|in|by|under|behind|beside|near|next\s+to|outside|inside|off|"
    r"above|below)\s+(?:the\s+|my\s+|our\s+)?[\w'’-]+){0,2}"
    r"(?P<link>,?\s+(?:punch|key)\s+in\s+|,?\s+(?:type|enter|press|dial)(?:\s+in)?\s+|"
    r"\s*(?:[:=：]|->|→|-|—|#|,)\s*|\s+(?:is set to|(?:was\s+|has been\s+)?changed to|is now|"
    r"is|are|=|(?:opens?|unlocks?|disarms?|arms?) with|opens? on|takes|needs|uses|has)\s*[:：]?\s*|"
    r"\s+)",
    _I,
)
# Names that need a link before a code (a locker or a mailbox has a number too: "locker 1043").
_LINK_NEEDED = re.compile(r"(?:locker|mailbox|letterbox|shed)$", _I)
_YEAR = re.compile(r"(?:19|20)\d\d$")
_ZH_ACCESS = re.compile(
    r"(?P<kw>(?:門禁|门禁|保險箱|保险箱|保險櫃|保险柜|密碼箱|密码箱|車庫門?|车库门?|大門|大门|前門|前门|"
    r"後門|后门|側門|侧门|鐵門|铁门|鐵捲門|卷帘门|閘門|闸门|警報器?|警报器?|報警器|报警器|保全(?:系統|系统)?|"
    r"門鎖|门锁|鑰匙盒|钥匙盒|電子鎖|电子锁|撤防|工具間|工具间|工具房|儲物櫃|储物柜|置物櫃|置物柜|"
    r"車鎖|车锁|單車鎖|单车锁|腳踏車鎖|自行车锁|掛鎖|挂锁|密碼櫃|密码柜|院門|院门|柵欄門|栅栏门|"
    r"鎖頭|锁头|行李鎖|行李锁|大鎖|大锁|防盜器?|防盗器?|警鈴|警铃|"
    r"(?:平板|手機|手机|電腦|电脑|iPad|iPhone)?\s?的?(?:解鎖|解锁|鎖屏|锁屏|開機|开机|螢幕鎖|屏幕锁))"
    r"(?:遙控器?|遥控器?|鍵盤|键盘|面板|按鍵|按键)?(?:撤防|解除|密碼|密码|碼|码|"
    r"的?(?:數字|数字|號碼|号码|組合|组合))?)"
    r"(?P<link>\s*(?:[，,]\s*)?(?:是|為|为|：|:|=|→|->|用|輸入|输入|按|就是|密碼是|密码是|轉到|转到|"
    r"撥到|拨到|調到|调到|轉成|转成)?\s*先?\s*)"
)
# What follows a number that makes it a measure, a time, an amount or an address.
_UNIT_AFTER = re.compile(
    r"\s*(?:(?:mm|cm|m|km|kg|g|lbs?|ft|in|inch(?:es)?|feet|am|pm|a\.m\.|p\.m\.|h|hrs?|hours?|"
    r"min(?:ute)?s?|sec(?:ond)?s?|days?|weeks?|months?|years?|cars?|euros?|dollars?|usd|eur|"
    r"gbp|rmb|ntd?|yuan|kwh|w|v|mbps|ghz)\b|[%:/°]|元|塊|块|號|号|樓|楼|米|公分|公尺|厘米|年|月|日|"
    r"點|点|分|秒|個|个|台|輛|辆|次|人|天|度|室|坪|平|萬|万|折|歲|岁|公斤|克)",
    _I,
)
_MONEY_BEFORE = re.compile(r"[$€£¥]\s*$")


def _code_at(text: str, at: int, bare: bool) -> tuple[int, int] | None:
    """A door code of 4 to 12 digits at ``at`` that no unit follows; with ``bare`` (nothing
    links it to its name but a space) only 4 to 8 digits standing alone."""
    if text[at : at + 1] in "\"'“‘「『":  # 'Gate: "7 7 1 3"'
        at += 1
    found = _CODE_RE.match(text, at)
    if found is None or _MONEY_BEFORE.search(text, 0, at):
        return None
    end = found.end()
    while end > found.start() and text[end - 1] in "._-":
        end -= 1
    while end > found.start() and not text[end - 1].isdigit() and text[end - 1] not in "#*":
        end -= 1
    digits = sum(c.isdigit() for c in text[found.start() : end])
    if digits < 4 or (bare and digits > 8):
        return None
    if end < len(text) and (text[end].isalnum() and text[end].isascii()):
        return None
    if _UNIT_AFTER.match(text, end):
        return None
    return found.start(), end


# The code first, then what it opens: "Enter 4409 at the front door", 先按 36 再按 72 就能開門.
_EN_CODE_FIRST = re.compile(
    r"(?<![A-Za-z0-9_])(?:enter|type|punch\s+in|key\s+in|press|dial|input|use|try)\s+"
    rf"(?P<code>{_CODE})"
    r"(?P<gap>(?:\s+[a-z'’]+){0,4}?\s+)(?P<kw>(?:(?:front|back|side|main|garage)\s+)?"
    r"(?:door|gate|garage|alarm|keypad|lockbox|safe|padlock|lock|intercom|shed))(?![A-Za-z])",
    _I,
)
# 进门输入 4821, 開門先按 3344: the door, then the code.
_ZH_DOOR_THEN_CODE = re.compile(
    rf"(?P<kw>進門|进门|開門|开门|開鎖|开锁|進大門|进大门|進家門|进家门)(?:時|时|的時候|的时候)?\s*先?\s*"
    rf"(?:輸入|输入|按|撥|拨)\s*(?P<code>{_CODE})"
)
_ZH_CODE_FIRST = re.compile(
    rf"(?:輸入|输入|按|撥|拨|轉到|转到)\s*(?P<code>{_CODE})\s*"
    r"(?P<gap>(?:就|才|即)?(?:能|可以|會|会)?(?:打開|打开|開|开|解鎖|解锁|撤防|解除)(?:了)?)"
    r"[^，,。；;\s]{0,4}?(?P<kw>(?:大|前|後|后|側|侧|鐵|铁|院|車庫|车库)?(?:門|门)|鎖|锁|保險箱|保险箱|"
    r"保險櫃|保险柜|警報|警报|車庫|车库)"
)
# "4821 opens the garage", "7731 unlocks the side gate".
_EN_CODE_OPENS = re.compile(
    rf"(?<![\w.:/#-])(?P<code>{_CODE})\s+(?:opens|unlocks|disarms|gets you into|is for)\s+"
    r"(?:the\s+|our\s+|my\s+)?(?:[a-z]+\s+){0,2}?(?P<kw>door|gate|garage|alarm|keypad|lockbox|safe|"
    r"padlock|lock|shed|intercom)(?![A-Za-z])",
    _I,
)
_EN_CODE_GAPS = re.compile(
    r"\s+(?:at|on|for|to|of|in|by|open|opens|unlock|unlocks|the|our|my|and|it)\s+"
)


# What may follow the door in "Use 4821 for the door": the end of the clause, its code or
# keypad, or a word that starts another clause ("Use 2024 for the garage sale" is no code).
_AFTER_THE_DOOR = re.compile(
    r"\s*(?:$|[^\w\s]|(?:code|keypad|lock|panel|pad|and|but|so|when|if|then|too|also|"
    r"please|today|now|tonight)\b)",
    _I,
)


def codes_first(text: str) -> list[Found]:
    """A code said before what it opens ("Enter 4409 at the front door", 輸入 4409 就能開大門)."""
    found = []
    for match in _EN_CODE_FIRST.finditer(text):
        gap = match.group("gap")
        if not all(_EN_CODE_GAPS.fullmatch(f" {word} ") for word in gap.split()):
            continue
        if not _AFTER_THE_DOOR.match(text, match.end()):
            continue
        where = _code_at(text, match.start("code"), False)
        if where:
            found.append(Found("access_code", *where, *match.span("kw"), "code"))
    for match in _EN_CODE_OPENS.finditer(text):
        if not _AFTER_THE_DOOR.match(text, match.end()):
            continue
        where = _code_at(text, match.start("code"), False)
        if where:
            found.append(Found("access_code", *where, *match.span("kw"), "code"))
    for match in _ZH_DOOR_THEN_CODE.finditer(text):
        where = _code_at(text, match.start("code"), False)
        if where:
            found.append(Found("access_code", *where, *match.span("kw"), "密碼"))
    for match in _ZH_CODE_FIRST.finditer(text):
        where = _code_at(text, match.start("code"), False)
        if where:
            found.append(Found("access_code", *where, *match.span("kw"), "密碼"))
    return found


# A code keyed between star and pound, said or written: "star 4 4 1 9 pound", "*7732#",
# 按星號 4419 井號 (digits as words too: "star seven three two hash"); never "5 star" nor "a
# pound of flour", which have no digits between the two.
_KEY_DIGIT = r"(?:\d|zero|oh|one|two|three|four|five|six|seven|eight|nine)"
_STAR_CODE = re.compile(
    rf"(?P<kw>(?<![A-Za-z])(?:star|asterisk)(?![A-Za-z])|星號|星号|米字鍵|米字键|米字|\*)\s*"
    rf"(?:鍵|键|號|号)?\s*(?:,?\s*then\s+|[，,]?\s*(?:然後|然后|再)(?:按)?\s*)?"
    rf"(?P<code>{_KEY_DIGIT}(?:[\s,.-]*{_KEY_DIGIT}){{2,11}})\s*"
    r"(?:,?\s*then\s+|[，,]?\s*(?:然後|然后|再|最後|最后)?(?:按)?\s*)?(?:the\s+)?"
    r"(?:(?<![A-Za-z])(?:pound|hash|number\s+sign)(?:\s+(?:key|sign))?(?![A-Za-z])|"
    r"井號|井号|井字鍵|井字键|井字|#)",
    _I,
)


def star_codes(text: str) -> list[Found]:
    """A code keyed between star and pound ("press star 4 4 1 9 pound", *7732#)."""
    return [
        Found("access_code", *match.span("code"), *match.span("kw"), "code")
        for match in _STAR_CODE.finditer(text)
    ]


# What the rules above need in the text, to pass over it at once.
_EN_ACCESS_HINT = re.compile(
    r"d(?:oor|isarm)|g(?:ate|arage)|alarm|keypad|lock|safe|entry|intercom|buzzer|vault|shed|"
    r"mailbox|letterbox"
)  # searched in the lower-cased text
_ZH_ACCESS_HINT = re.compile(r"[門门鎖锁箱櫃柜庫库警報报保撤盒間间車车閘闸屏]")


def access_codes(text: str) -> list[Found]:
    """A code right after a door, a gate, an alarm, a safe, with no word for "code"."""
    found: list[Found] = []
    english = _EN_ACCESS_HINT.search(text.lower()) is not None
    for match in _EN_ACCESS.finditer(text) if english else ():
        link = match.group("link").strip()
        if _LINK_NEEDED.search(match.group("kw")) and link in ("", ","):
            continue
        where = _code_at(text, match.end(), link in ("", ","))
        if where and link == "," and _YEAR.match(text, where[0], where[1]):
            continue  # "The garage, 2019": a year
        if where:
            found.append(Found("access_code", *where, *match.span("kw"), "code"))
    chinese = not text.isascii() and _ZH_ACCESS_HINT.search(text) is not None
    for match in _ZH_ACCESS.finditer(text) if chinese else ():
        where = _code_at(text, match.end(), not match.group("link").strip())
        if where:
            suffix = "" if match.group("kw")[-1] in "碼码" else "密碼"
            found.append(Found("access_code", *where, *match.span("kw"), suffix))
    return found + codes_first(text) if english or chinese else found


# ------------------------------------------------------------------ Wi-Fi
_WIFI = re.compile(
    r"(?P<kw>(?<![A-Za-z0-9_-])(?:(?:guest|home)\s+)?(?:wi-?fi|wlan|wireless)(?:\s+pass)?"
    r"(?![A-Za-z0-9_-])(?:\s+for\s+(?:the\s+)?[\w'’-]+)?|"
    r"無線網路|無線網|无线网络|无线网|無線|无线)"
    r"(?P<link>\s*(?:[:=：]|->|-|—)\s*|\s+(?:is now|is set to|(?:was\s+)?changed to|is|=)\s+|"
    r"\s*(?:是|為|为|就是|改成了?)\s*)",
    _I,
)
_WIFI_VALUE = re.compile(r"[!-~]{8,63}")
_NOT_A_PASSWORD = re.compile(
    r"^(?:\d+(?:\.\d+)?(?:ghz|mhz|mbps|gbps|g|m)|[a-z]+)$|^(?:192\.168|10\.|https?:|www\.|802\.11)|"
    r"^[A-Za-z]+[_ -]?(?:2\.4|5|6)g(?:hz)?$",  # a network's name: "Lighthouse_5G"
    _I,
)


def _strong(value: str) -> bool:
    """A password's shape: letters with digits, or a symbol, not a speed or a plain word."""
    if _NOT_A_PASSWORD.search(value):
        return False
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    symbols = any(c in "!@#$%^&*+=?~" for c in value)
    return letters and (digits or symbols)


# "SSID Lighthouse, key 7hX!92pq": the key or PSK of a network just named.
_NETWORK_KEY = re.compile(
    r"(?P<kw>(?<![A-Za-z])(?:key|psk|pass(?:word)?|pw|pwd|wpa2?(?:\s+key)?))\s*[:=：]?\s*"
    r"(?P<value>[!-~]{8,63})",
    _I,
)
_NAMES_A_NETWORK = re.compile(r"\bssid\b|wi-?fi|wlan|network|router|無線|无线|網路|网络")


# "wifi: GuestNet / Welcome2024": the network's name, a slash, its password.
_SSID_PAIR = re.compile(r"[!-~]{1,32}?\s*/\s*(?P<password>[!-~]{8,63})")


def wifi_passwords(text: str) -> list[Found]:
    """A Wi-Fi password said as the network itself ("WiFi: Lighthouse!2024", "The wifi is …",
    家裡 Wi-Fi 是 …): the value after the network is its password when it has a password's
    shape."""
    found = []
    for match in _WIFI.finditer(text):
        pair = _SSID_PAIR.match(text, match.end())
        if pair and _strong(pair.group("password").rstrip(".,;:)")):
            key = pair.group("password").rstrip(".,;:)")
            start = pair.start("password")
            found.append(Found("password", start, start + len(key), *match.span("kw"), "password"))
            continue
        value = _WIFI_VALUE.match(text, match.end())
        if value is None:
            continue
        end = value.end()
        while end > value.start() and text[end - 1] in ".,;:)":
            end -= 1
        if _strong(text[value.start() : end]):
            chinese = not match.group("kw").isascii()
            suffix = "密碼" if chinese else "password"
            found.append(Found("password", value.start(), end, *match.span("kw"), suffix))
    if _NAMES_A_NETWORK.search(text.lower()):
        for match in _NETWORK_KEY.finditer(text):
            key = match.group("value").rstrip(".,;:)")
            if _strong(key):
                end = match.start("value") + len(key)
                found.append(Found("password", match.start("value"), end, *match.span("kw"), ""))
    return found


# ------------------------------------------------------------------ logins
_LOGIN = re.compile(
    r"(?P<kw>(?<![A-Za-z0-9_])(?:log(?:-|\s)?in|credentials|sign-?in|(?:router\s+)?admin|user(?:\s*name)?)(?![A-Za-z0-9_])|"
    r"後台|后台|管理|登入|登錄|登录|帳密|账密)",
    _I,
)
_PAIR = re.compile(r"(?P<user>[!-~]{2,64}?)\s*/\s*(?P<password>[!-~]{4,64})")
MAX_LOGIN_GAP = 40  # characters between the word and the pair ("to the router with")


def logins(text: str) -> list[Found]:
    """A ``user / password`` pair after a login word ("Router admin: admin / hunter22")."""
    found = []
    for match in _LOGIN.finditer(text):
        window = text[match.end() : match.end() + MAX_LOGIN_GAP + 130]
        pair = _PAIR.search(window)
        if pair is None or pair.start() > MAX_LOGIN_GAP:
            continue
        user, password = pair.group("user"), pair.group("password").rstrip(".,;")
        if user.isdigit() or password.isdigit() or "://" in window[: pair.end()]:
            continue  # "24/7", "3/4", a URL
        if not any(c.isalpha() for c in password) and len(password) < 6:
            continue
        start = match.end() + pair.start()
        end = start + len(pair.group(0)) - (len(pair.group("password")) - len(password))
        chinese = not match.group("kw").isascii()
        found.append(
            Found("password", start, end, *match.span("kw"), "密碼" if chinese else "password")
        )
    return found


# A pair whose user is what a device's login is called (admin, root) or an e-mail address,
# with no login word before it: "Camera web UI: admin / Ferret2291".
_KNOWN_USER_PAIR = re.compile(
    r"(?<![\w/.:@-])(?P<user>admin|administrator|root|pi|ubnt|guest|user|"
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+)\s*/\s*(?P<password>[!-~]{4,64})",
    _I,
)


# "user grandpa pass Fishing1955", "帳號 dana88 密碼 Rose_1960" (without a slash).
_USER_THEN_PASS = re.compile(
    r"(?<![A-Za-z])(?:user(?:\s*name)?|login|id|帳號|账号|用戶名|用户名)\s*[:=：]?\s*"
    r"(?P<user>[!-~]{2,64}?)\s*[,;，]?\s*(?P<kw>pass(?:word)?|pwd|pw|密碼|密码)\s*[:=：]?\s*"
    r"(?P<password>[!-~]{4,64})",
    _I,
)


def user_then_pass(text: str) -> list[Found]:
    """A password after a user name and a short "pass" ("user grandpa pass Fishing1955")."""
    found = []
    for match in _USER_THEN_PASS.finditer(text):
        password = match.group("password").rstrip(".,;:!?)")
        if not any(c.isdigit() or not c.isalnum() for c in password):
            continue
        end = match.start("password") + len(password)
        suffix = "password" if match.group("kw").isascii() else "密碼"
        found.append(Found("password", match.start("password"), end, *match.span("kw"), suffix))
    return found


# "Spotify: dana88 / Movies2024!": a service, a colon, then a user and a strong password.
_SERVICE_PAIR = re.compile(
    r"(?P<kw>(?<![\w-])[A-Z][\w.&+-]{1,30})\s*[:：]\s*(?P<user>[\w.@+-]{3,64})\s*/\s*"
    r"(?P<password>[!-~]{6,64})"
)


def service_pairs(text: str) -> list[Found]:
    """``Spotify: dana88 / Movies2024!``: a user with a letter, a password with letters and
    digits or symbols, after a capitalised name and a colon."""
    found = []
    for match in _SERVICE_PAIR.finditer(text):
        password = match.group("password").rstrip(".,;:!?)")
        user = match.group("user")
        if "/" in password or not any(c.isalpha() for c in user) or not _strong(password):
            continue
        if not any(c.isdigit() for c in password) or (len(password) < 8 and password.isalnum()):
            continue  # "Mon / Wed2024": a short word with a number is no password
        end = match.start("password") + len(password)
        found.append(Found("password", match.start("user"), end, *match.span("kw"), "password"))
    return found


def known_user_pairs(text: str) -> list[Found]:
    """``admin / Ferret2291``, ``dana@example.com / Sunset#19``: a password with a
    password's shape after a device's user name or an e-mail address and a slash."""
    found = []
    for match in _KNOWN_USER_PAIR.finditer(text):
        password = match.group("password").rstrip(".,;:!?)")
        if "/" in password or not _strong(password):
            continue  # a path ("admin/settings"), a word ("admin / staff")
        end = match.start("password") + len(password)
        found.append(Found("password", match.start("user"), end, *match.span("user"), "password"))
    return found


# ------------------------------------------------------------------ keys without a prefix
_HEX = re.compile(r"(?<![0-9A-Za-z])(?:0x)?[0-9a-fA-F]{32,}(?![0-9A-Za-z])")
_SPACED_AWS = re.compile(r"(?<![0-9A-Za-z])(?:AKIA|ASIA)(?:[ -]?[0-9A-Z]){16}(?![0-9A-Za-z])")
_SPEAKS_OF_A_KEY = re.compile(
    r"\bkeys?\b|token|secret|\bapi|金鑰|密鑰|密钥|私鑰|私钥|令牌|權杖|权杖"
)
_SPEAKS_OF_A_HASH = re.compile(
    r"md5|sha-?\d*|checksum|hash|commit|digest|etag|uuid|guid|revision|\btx\b|transaction|"
    r"校驗|校验|雜湊|哈希|摘要|提交|交易"
)


def bare_keys(text: str) -> list[Found]:
    """A 32-hex (or longer) key where the text speaks of a key, and an AWS access key
    written in spaced groups."""
    found = []
    low = text.lower()  # the patterns below are lower case: faster than IGNORECASE
    if _SPEAKS_OF_A_KEY.search(low) and not _SPEAKS_OF_A_HASH.search(low):
        for match in _HEX.finditer(text):
            value = match.group(0)
            if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
                found.append(Found("api_key", *match.span(), *match.span(), ""))
    for match in _SPACED_AWS.finditer(text):
        found.append(Found("api_key", *match.span(), *match.span(), ""))
    return found


_WIFI_WORDS = ("wi", "wlan", "wireless", "無線", "无线")


def unkeyed(text: str) -> list[Found]:
    """Every secret these rules find in ``text`` (full-width and digit words already read);
    each rule only when the text has what it needs (digits, a network word, a slash)."""
    digits = sum(map(str.isdigit, text))
    low = text.lower()
    found = access_codes(text) if digits >= 4 else []
    if "*" in text or "星" in text or "米字" in text or "star" in low or "asterisk" in low:
        found += star_codes(text)
    if any(word in low for word in _WIFI_WORDS) or "ssid" in low:
        found += wifi_passwords(text)
    if "/" in text:
        found += logins(text) + known_user_pairs(text) + service_pairs(text)
    if "pass" in low or "pw" in low or "密" in text:
        found += user_then_pass(text)
    if len(text) >= 32:
        found += bare_keys(text)
    return found
