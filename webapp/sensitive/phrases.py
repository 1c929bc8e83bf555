"""Secrets said in words: seed (recovery) phrases, passphrases in quotes, Chinese passphrases.

``webapp.sensitive.secrets`` reads a password as one run of printable ASCII after the word for it.
These rules read what that misses, each with the guard that keeps mentions out:

- a wallet's seed or recovery phrase ("seed phrase: lava tunnel prize …", 助记词：…): eight
  words or more after the name, none a word of ordinary prose ("on", "the", "in"), so "I
  wrote my seed phrase on paper and put it in the safe" is a mention;
- a value in quotes after a password's name ("password is 'tulipfield2031'", 通關密語是「…」),
  whatever its letters, but not a mask (••••) nor a placeholder;
- a Chinese passphrase after 口令, 暗號 or 通關密語 with a link (口令：天王蓋地虎), and after 密碼
  a value that mixes Chinese with at least three ASCII letters or digits (密码是 青山绿水88); a
  question or where it is written (口令是什么, 口令在冰箱上) is no value.

Each rule gives ``Found`` (``webapp.sensitive.access``): the kind, where the value is and
where the words naming it are.
"""

from __future__ import annotations

import functools
import re

from mnemonic import Mnemonic

from .access import Found

_I = re.IGNORECASE


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# ------------------------------------------------------------------ seed phrases
_SEED = re.compile(
    r"(?P<kw>(?<![A-Za-z])(?:(?:secret\s+)?(?:seed|recovery|backup|mnemonic|wallet|restore)\s+"
    r"(?:phrase|words|sentence)|mnemonic(?:\s+phrase)?|(?:12|24|18|twelve|eighteen|twenty-four)"
    r"[ -](?:word\s+(?:phrase|seed)|words)|(?:(?:wallet|crypto)\s+)?seed(?=\s*[:=：]))(?![A-Za-z])|助記詞|助记词|助記碼|助记码|恢復詞|恢复词|"
    r"恢復短語|恢复短语|種子詞|种子词|種子短語|种子短语|備份詞|备份词|助記短語|助记短语|復原詞|复原词)"
    r"(?P<link>\s*(?:[:=：]|-|—)\s*|\s+(?:is|are|was|were|reads?|goes)\s*[:：]?\s*|"
    r"\s*(?:是|為|为|就是)\s*[:：]?\s*|\s+)",
    _I,
)
# Eight to 24 words, maybe numbered ("1. lava 2. tunnel") or set off by commas.
_WORD_RUN = re.compile(
    r"(?:\d{1,2}[.)]\s*)?[^\W\d_]+(?:(?:\s*[,、]\s*|\s+)(?:\d{1,2}[.)]\s*)?[^\W\d_]+){7,23}"
)
MIN_SEED_WORDS = 8
# Words of ordinary prose: a run holding one is a sentence, not a seed phrase.
_PROSE = _words(
    "a an the and or but on in at to of it is are was were be my your our his her their this "
    "that with for from by i me we you he she they put wrote written kept stored somewhere "
    "safe paper where not no never also just still"
)


def seed_phrases(text: str) -> list[Found]:
    """A seed or recovery phrase after its name: eight words or more, none of ordinary prose."""
    found = []
    for match in _SEED.finditer(text):
        run = _WORD_RUN.match(text, match.end())
        if run is None:
            continue
        words = re.findall(r"[^\W\d_]+", run.group(0))
        if len(words) < MIN_SEED_WORDS or any(w.lower() in _PROSE for w in words):
            continue
        found.append(Found("password", *run.span(), *match.span("kw"), ""))
    return found


# Twelve words or more of BIP39's English list (the ``mnemonic`` package's), with no name
# before them: a seed phrase when its checksum holds (a list of food words fails it), or,
# three in four of them BIP39 words and none of prose, when the text speaks of a wallet (one
# made up by hand fails the checksum).
_BIP39_RUN = re.compile(
    r"(?<![\w-])(?:\d{1,2}[.)]\s*)?[a-z]{2,12}(?:(?:\s*,\s*|\s+)(?:\d{1,2}[.)]\s*)?[a-z]{2,12}){11,23}"
    r"(?![\w-])",
    _I,
)
MIN_BIP39_WORDS = 12
MIN_LISTED = 0.75  # in a wallet's words, the share of BIP39 words (one made up by hand)
_SPEAKS_OF_A_WALLET = re.compile(
    r"wallet|seed|recovery|restore|backup|back\s+up|mnemonic|crypto|bitcoin|\bbtc\b|ethereum|"
    r"\beth\b|ledger|trezor|metamask|coinbase|phantom|exodus|錢包|钱包|助記|助记|"
    r"加密貨幣|加密货币|比特幣|比特币|以太|種子|种子|恢復|恢复|備份|备份",
    _I,
)


@functools.cache
def _bip39() -> tuple[Mnemonic, frozenset[str]]:
    english = Mnemonic("english")
    return english, frozenset(english.wordlist)


def bip39_phrases(text: str) -> list[Found]:
    """Twelve words or more of the BIP39 list in a row whose checksum holds, or mostly of it
    in a text that speaks of a wallet ("My Ledger backup: …"); a list of groceries is neither."""
    found = []
    english, words = _bip39()
    for match in _BIP39_RUN.finditer(text):
        said = [w.lower() for w in re.findall(r"[A-Za-z]+", match.group(0))]
        listed = sum(w in words for w in said)
        if len(said) < MIN_BIP39_WORDS:
            continue
        checksum = listed == len(said) and len(said) % 3 == 0 and english.check(" ".join(said))
        wallet = (
            listed >= MIN_LISTED * len(said)
            and not any(w in _PROSE for w in said)
            and _SPEAKS_OF_A_WALLET.search(text) is not None
        )
        if checksum or wallet:
            found.append(Found("password", *match.span(), *match.span(), "seed phrase"))
    return found


# ------------------------------------------------------------------ passphrases
_PASS_NAME = (
    r"(?<![A-Za-z])(?:pass(?:word|phrase|wd|code)?|pwd|pw|secret\s+(?:word|phrase)|"
    r"code\s*word|safe\s*word)(?![A-Za-z])|密碼|密码|口令|通關密語|通关密语|暗號|暗号|密語|密语|"
    r"暗語|暗语|安全詞|安全词|通行碼|通行码"
)
_QUOTES = {"'": "'", '"': '"', "“": "”", "‘": "’", "「": "」", "『": "』"}
_QUOTED = re.compile(
    rf"(?P<kw>{_PASS_NAME})(?P<link>\s*(?:[:=：]|是|為|为|就是)\s*|\s+(?:is|was|=|is now|"
    r"(?:was\s+)?changed to)\s*[:：]?\s*)(?P<open>['\"“‘「『])",
    _I,
)
MAX_QUOTED = 60
# What a quoted word may be that is no password.
_PLACEHOLDERS = _words(
    "required optional hidden none null empty blank secret password redacted tbd n/a"
)


def quoted_passphrases(text: str) -> list[Found]:
    """A value in quotes after a password's name ("password is 'tulipfield2031'")."""
    found = []
    for match in _QUOTED.finditer(text):
        close = text.find(_QUOTES[match.group("open")], match.end(), match.end() + MAX_QUOTED)
        value = text[match.end() : close] if close > match.end() else ""
        if not any(c.isalnum() for c in value) or value.strip().lower() in _PLACEHOLDERS:
            continue
        found.append(Found("password", match.end(), close, *match.span("kw"), ""))
    return found


# 口令, 暗號, 通關密語: a phrase is the value; 密碼: only one that mixes in ASCII (青山绿水88).
_ZH_PHRASE_NAME = re.compile(
    r"(?P<kw>口令|通關密語|通关密语|暗號|暗号|密語|密语|暗語|暗语|安全詞|安全词|(?P<pw>密碼|密码))"
    r"(?P<link>\s*(?:是|為|为|：|:|=|就是|改成了?|改為|改为|設為|设为)\s*)"
)
_ZH_VALUE = re.compile(r"[\u3400-\u9fffA-Za-z0-9_!@#$%&*+=.-]{2,20}")
# A question, a place or a state after the link: no value ("口令是什么", "口令在冰箱上").
_NOT_A_PHRASE = re.compile(
    r"^(?:什麼|什么|多少|啥|哪|幾|几|忘|在|寫在|写在|貼在|贴在|放在|記在|记在|改|換|换|已|還|还|不|沒|没|"
    r"要|會|会|得|的|也|都|就|又|很|太|被|跟|和|給|给|問|问|告|等|錯|错|對|对|一樣|一样|同|空|六位|"
    r"四位|八位|生日|手機|手机|電話|电话|保密|秘密)"
)
_UNIT_AFTER_DIGITS = re.compile(r"\d+(?:位|個|个|字|次|天|年|月|日|號|号|點|点|分|碼|码)")


def chinese_passphrases(text: str) -> list[Found]:
    """A passphrase in Chinese after 口令/暗號/通關密語, or a mixed one after 密碼."""
    found = []
    for match in _ZH_PHRASE_NAME.finditer(text):
        value = _ZH_VALUE.match(text, match.end())
        if value is None or value.group(0).isascii():
            continue  # an ASCII value is webapp.sensitive.secrets's to read
        said = value.group(0)
        if _NOT_A_PHRASE.match(said) or text[value.end() : value.end() + 1] in (
            "?",
            "？",
            "嗎",
            "吗",
        ):
            continue
        if match.group("pw"):
            ascii_run = max(re.findall(r"[A-Za-z0-9]+", said) or [""], key=len)
            if len(ascii_run) < 3 or _UNIT_AFTER_DIGITS.search(said):
                continue
        found.append(Found("password", *value.span(), *match.span("kw"), ""))
    return found


def phrases(text: str) -> list[Found]:
    """Every secret these rules find in ``text``, each rule only when its name is there."""
    found = []
    low = text.lower()
    if any(
        word in low
        for word in (
            "phrase",
            "words",
            "seed",
            "mnemonic",
            "助記",
            "助记",
            "詞",
            "词",
            "短語",
            "短语",
        )
    ):
        found += seed_phrases(text)
    if (
        len(text) >= MIN_BIP39_WORDS * 4
        and text.count(" ") + text.count(",") >= MIN_BIP39_WORDS - 1
    ):
        found += bip39_phrases(text)
    if any(mark in text for mark in _QUOTES):
        found += quoted_passphrases(text)
    if any(
        word in text for word in ("口令", "密語", "密语", "暗", "安全詞", "安全词", "密碼", "密码")
    ):
        found += chinese_passphrases(text)
    return found
