"""Text tools every layer may use: folding for matching, and how alike two facts are.

Folding ignores case, width and Chinese script, so 綠茶 finds 绿茶 and ＡＢＣ finds abc.
Traditional characters map to simplified ones one by one (OpenCC's TSCharacters table, shipped
in the opencc-purepy package, Apache-2.0). Character by character keeps every folded character
traceable to the original one, which the dashboard's highlighting relies on.

Search splits a query into words; Chinese, which has no spaces, is split by jieba's dictionary
(rjieba), so 垃圾回收 finds what 垃圾 回收 finds.

How alike two facts are in words is the language layer's (``webapp.language.word_likeness``),
read from the same key terms every judgement uses.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Sequence
from importlib.resources import files
from typing import Any

import rjieba


@functools.cache
def traditional_to_simplified() -> dict[int, str]:
    """A str.translate table from each traditional character to its usual simplified form."""
    lines = files("opencc_purepy").joinpath("dicts/TSCharacters.txt").read_text("utf-8")
    table: dict[int, str] = {}
    for line in lines.splitlines():
        source, _, targets = line.partition("\t")
        target = targets.split(" ")[0] if targets else ""
        if len(source) == 1 and len(target) == 1:
            table[ord(source)] = target
    return table


# A surrogate code point on its own: Python text may hold one (JSON's "\ud800" escape makes
# it), UTF-8 cannot encode it, and every serializer that writes UTF-8 raises on it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


# Unicode's default-ignorable code points (zero-width space and joiners, direction marks,
# soft hyphen, variation selectors, Hangul fillers, tags…: DerivedCoreProperties.txt), and
# the blank braille pattern: characters that show nothing.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)


def shows_something(text: str) -> bool:
    """Whether ``text`` holds a character a reader sees: a letter, digit, punctuation mark or
    symbol that is not invisible (a name of zero-width spaces alone shows nothing)."""
    return any(
        unicodedata.category(char)[0] in "LNPS" and not _INVISIBLE.match(char) for char in text
    )


def trim_invisible(text: str) -> str:
    """``text`` without spaces, controls or invisible characters at its ends (a name with a
    zero-width space before it looks like one without)."""
    start, end = 0, len(text)
    while start < end and _blank(text[start]):
        start += 1
    while end > start and _blank(text[end - 1]):
        end -= 1
    return text[start:end]


def _blank(char: str) -> bool:
    return char.isspace() or bool(_INVISIBLE.match(char)) or unicodedata.category(char) == "Cc"


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (and so cannot be written as UTF-8)."""
    return _LONE_SURROGATE.search(text) is not None


def replace_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so it can be written as UTF-8."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def without_lone_surrogates(value: Any) -> Any:
    """A JSON value (its texts, keys included) with every lone surrogate replaced by U+FFFD."""
    if isinstance(value, str):
        return replace_lone_surrogates(value)
    if isinstance(value, list):
        return [without_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in value.items()}
    return value


def fold(text: str) -> str:
    """Case-, width- and script-insensitive form (NFKC, case folding, traditional → simplified)."""
    return unicodedata.normalize("NFKC", text).casefold().translate(traditional_to_simplified())


_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"

# Words that say who holds the fact or how strongly, not what it is about.
LATIN_FILLER = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "by",
        "from",
        "is",
        "are",
        "be",
        "was",
        "were",
        "am",
        "it",
        "its",
        "this",
        "that",
        "i",
        "me",
        "my",
        "mine",
        "we",
        "our",
        "you",
        "your",
        "user",
        "users",
        "s",
        "he",
        "she",
        "they",
        "their",
        "his",
        "her",
        "prefer",
        "prefers",
        "preferred",
        "preference",
        "like",
        "likes",
        "liked",
        "love",
        "loves",
        "want",
        "wants",
        "wanted",
        "always",
        "usually",
        "never",
        "often",
        "use",
        "uses",
        "used",
        "using",
        "please",
        "should",
        "would",
        "will",
        "instead",
        "rather",
        "than",
        "also",
        "just",
        "very",
        "really",
    ]
)


def normalize(text: str) -> str:
    """Case-, width-, spacing- and punctuation-insensitive form: equal means the same fact."""
    return _normalized(text or "")


@functools.lru_cache(maxsize=65536)
def _normalized(text: str) -> str:
    # Cached: reconcile compares every fact of an import with every kept memory, which
    # normalises the same memory texts over and over.
    return "".join(ch for ch in fold(text) if ch.isalnum())


# What may end (or open) a sentence without changing the fact: full stops, commas, question
# and exclamation marks, ellipses and quotation marks ("C#" and "30%" keep theirs).
_SENTENCE_MARKS = frozenset(".,;:!?。、，；：！？…\"'「」『』")


def _sentence_mark(char: str) -> bool:
    return char == " " or char in _SENTENCE_MARKS or unicodedata.category(char) in ("Pi", "Pf")


def strip_ends(text: str, drop: Callable[[str], bool]) -> str:
    """``text`` without the characters ``drop`` picks at either end (str.strip by predicate)."""
    start, end = 0, len(text)
    while start < end and drop(text[start]):
        start += 1
    while end > start and drop(text[end - 1]):
        end -= 1
    return text[start:end]


def same_fact_key(text: str) -> str:
    """What two texts share when they are the same fact written again: folded (case, width,
    繁/简), spaces collapsed, without full stops, ellipses or quotation marks at either end
    (用戶喜歡喝無糖綠茶。 and 用户喜欢喝无糖绿茶 give one key; "Uses C#" and "Uses C" do not).
    An add compares its text with every kept one: each kept text's key is worked out once."""
    return _same_fact_key(text or "")


@functools.lru_cache(maxsize=65_536)
def _same_fact_key(text: str) -> str:
    return strip_ends(" ".join(fold(text).split()), _sentence_mark)


def english_ngettext(singular: str, plural: str, count: int) -> str:
    """English plurals: ``singular`` for exactly one, else ``plural`` (gettext's signature)."""
    return singular if count == 1 else plural


def count_noun(
    count: int,
    singular: str,
    plural: str | None = None,
    ngettext: Callable[[str, str, int], str] = english_ngettext,
) -> str:
    """A count with its noun: ``1 memory``, ``1,204 memories``.

    ``plural`` defaults to ``singular + "s"``; ``ngettext`` picks the form, so a gettext
    catalog (``gettext.ngettext``, Flask-Babel's) can take over from English later.
    """
    noun = ngettext(singular, plural if plural is not None else singular + "s", count)
    return f"{count:,} {noun}"


# ----------------------------------------------------------------- search
# Chinese, Japanese and Korean characters: a run of them has no spaces to split on.
_SEARCH_CJK = (
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af\U00020000-\U0002fa1f"
)
_SEARCH_PIECE = re.compile(f"[{_SEARCH_CJK}]+|[^{_SEARCH_CJK}]+")
_HAN_RUN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]+")
_SEARCH_TOKEN = re.compile(r'"([^"]*)"|(\S+)')
MAX_QUERY_CHARS = 500
MAX_TERMS = 32


def _strip_punctuation(piece: str) -> str:
    """``piece`` without the punctuation around it ("tea," → "tea"; "c++" stays)."""
    start, end = 0, len(piece)
    while start < end and unicodedata.category(piece[start]).startswith("P"):
        start += 1
    while end > start and unicodedata.category(piece[end - 1]).startswith("P"):
        end -= 1
    return piece[start:end]


def _finer(word: str) -> list[str]:
    """``word`` as the shorter dictionary words it is made of (北京大学 → 北京, 大学; 喝咖啡 →
    喝, 咖啡), the characters between them one by one; itself when it holds none."""
    if len(word) <= 2:
        return [word]
    shorter = {w for w in rjieba.cut_for_search(word, False) if 2 <= len(w) < len(word)}
    if not shorter:
        return [word]
    parts: list[str] = []
    start = 0
    while start < len(word):  # the longest shorter word that starts here, else one character
        end = next(
            (e for e in range(len(word), start + 1, -1) if word[start:e] in shorter), start + 1
        )
        parts.append(word[start:end])
        start = end
    return parts


@functools.lru_cache(maxsize=4096)
def chinese_words(run: str) -> tuple[str, ...]:
    """The words of a run of (folded) Chinese characters, as a person would space them.

    jieba's dictionary (rjieba) splits the run without guessing unknown words (垃圾回收 → 垃圾,
    回收; 我住台北 → 我, 住, 台北, never 我住), and a word the dictionary knows to be made of
    shorter ones is split again (北京大学 → 北京, 大学), so each word can be found wherever the
    text has it.
    """
    return tuple(part for word in rjieba.cut(run, False) for part in _finer(word))


def _token_terms(token: str) -> list[str]:
    """The terms of one whitespace-separated word: the words of its Chinese runs, its other
    CJK runs, and the words between them."""
    terms: list[str] = []
    for piece in _SEARCH_PIECE.findall(token):
        piece = _strip_punctuation(piece)
        if _HAN_RUN.fullmatch(piece):
            terms.extend(chinese_words(piece))
        elif piece:
            terms.append(piece)
    return terms or [token]


def search_terms(query: str) -> tuple[str, ...]:
    """The folded terms a search must all find: words in any order, "quoted phrases" whole.

    Words are split on whitespace. Chinese has no spaces, so a run of Chinese characters is
    split into its words (``chinese_words``: ``垃圾回收`` → ``垃圾``, ``回收``), each matching as a
    substring (``綠茶`` finds 我喜歡喝無糖綠茶); a word mixing scripts splits where the script
    changes (``喝tea`` → ``喝``, ``tea``). Punctuation around a word is dropped.
    """
    folded = fold((query or "")[:MAX_QUERY_CHARS])
    terms: list[str] = []
    for match in _SEARCH_TOKEN.finditer(folded):
        phrase, word = match.group(1), match.group(2)
        found = [" ".join(phrase.split())] if phrase is not None else _token_terms(word)
        terms.extend(t for t in found if t and t not in terms)
    return tuple(terms[:MAX_TERMS])


# What joins the parts of one Latin word that people write either way: Wi-Fi, e-mail, wifi.
_JOINER = re.compile(r"(?<=[a-z0-9])[\-_·\u2010-\u2015]+(?=[a-z0-9])")
# Words a household uses for one thing (folded, joiners dropped): a search for one finds the
# others. A space is no joiner in general ("te a" is not "tea"), so spaced forms are listed.
_SAME_THING = (("wifi", "wi fi", "wlan", "无线网路", "无线网络"),)


@functools.lru_cache(maxsize=65536)
def _squeezed(folded: str) -> tuple[str, tuple[int, ...]]:
    """``folded`` without the joiners inside Latin words, and each character's index in it."""
    pieces: list[str] = []
    where: list[int] = []
    last = 0
    for joiner in _JOINER.finditer(folded):
        pieces.append(folded[last : joiner.start()])
        where.extend(range(last, joiner.start()))
        last = joiner.end()
    pieces.append(folded[last:])
    where.extend(range(last, len(folded)))
    return "".join(pieces), tuple(where)


# The terms _forms gives other forms of without a joiner in the text: the same thing's words.
_OTHER_FORMS = frozenset(word for group in _SAME_THING for word in group)


@functools.lru_cache(maxsize=4096)
def _forms(term: str) -> tuple[str, ...]:
    """The ways a search term may stand in a text once joiners are dropped: itself, and the
    other words for the same thing."""
    squeezed = " ".join(_squeezed(term)[0].split())
    for group in _SAME_THING:
        if squeezed in group:
            return group
    return (squeezed,)


# A quick look for anything _JOINER could drop (one character class: scanned fast).
_HAS_JOINER = re.compile(r"[\-_·\u2010-\u2015]").search


def _found(folded_text: str, term: str, joined: bool) -> bool:
    """``term`` in ``folded_text`` in one of its other forms (``joined``: the text holds a
    joiner, so its squeezed form is looked in)."""
    if not joined:  # the text is its own squeezed form
        return any(form in folded_text for form in _forms(term) if form != term)
    squeezed = _squeezed(folded_text)[0]
    return any(form in squeezed for form in _forms(term))


def matches_all(folded_text: str, terms: Sequence[str]) -> bool:
    """Whether every term occurs in the (already folded) text: as typed, or written with or
    without a hyphen or space inside a word ("wifi" finds "Wi-Fi"), or as another word for
    the same thing (WLAN, 無線網路)."""
    joined = None  # whether the text holds a joiner, looked up once and only when needed
    for term in terms:
        if term in folded_text:
            continue
        if joined is None:
            joined = _HAS_JOINER(folded_text) is not None
        # Without a joiner in the text, only a term with other forms can still be found.
        maybe = joined or term in _OTHER_FORMS or _HAS_JOINER(term) is not None
        if maybe and _found(folded_text, term, joined):
            continue
        return False
    return True


@functools.lru_cache(maxsize=65536)
def _fold_char(char: str) -> str:
    return fold(char)


def folded_with_owners(text: str) -> tuple[str, list[int]]:
    """The folded text and, for each of its characters, the index of the original character."""
    pieces: list[str] = []
    owners: list[int] = []
    for index, char in enumerate(text):
        folded = _fold_char(char)
        pieces.append(folded)
        owners.extend([index] * len(folded))
    return "".join(pieces), owners


def match_spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """(start, end) of every occurrence of every term in ``text``, sorted and merged.

    Overlapping spans merge; touching ones of two terms merge only between Chinese characters,
    so a run typed without spaces is marked as one where the text has it whole (垃圾回收 found
    as 垃圾 and 回收), while ``tea`` and ``coffee`` in "teacoffee" stay two words.
    """
    if not terms or not text:
        return []
    folded, owners = folded_with_owners(text)
    spans: list[tuple[int, int, int]] = []  # start, end, which term
    squeezed, where = _squeezed(folded)
    for number, term in enumerate(terms):
        position = folded.find(term)
        while position != -1:
            spans.append((owners[position], owners[position + len(term) - 1] + 1, number))
            position = folded.find(term, position + len(term))
        for form in _forms(term):
            position = squeezed.find(form)
            while position != -1:
                first, last = where[position], where[position + len(form) - 1]
                spans.append((owners[first], owners[last] + 1, number))
                position = squeezed.find(form, position + len(form))
    merged: list[tuple[int, int]] = []
    last_term = -1
    for start, end, number in sorted(spans):
        if merged and (
            start < merged[-1][1]
            or (
                start == merged[-1][1]
                and number != last_term
                and _HAN_RUN.fullmatch(text[start - 1 : start + 1])
            )
        ):
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
        last_term = number
    return merged


def _only_in_source_script(table_file: str) -> frozenset[str]:
    """Characters an OpenCC table converts and that are never their own conversion."""
    lines = files("opencc_purepy").joinpath(f"dicts/{table_file}").read_text("utf-8")
    found: set[str] = set()
    for line in lines.splitlines():
        source, _, targets = line.partition("\t")
        if len(source) == 1 and targets and source not in targets.split(" "):
            found.add(source)
    return frozenset(found)


@functools.cache
def _script_sets() -> tuple[frozenset[str], frozenset[str]]:
    """(characters only traditional Chinese uses, characters only simplified Chinese uses)."""
    return _only_in_source_script("TSCharacters.txt"), _only_in_source_script("STCharacters.txt")


def _is_han(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff"


def language_of(text: str) -> str:
    """'zh-Hant', 'zh-Hans' or 'en' (any text without Chinese characters).

    Chinese text is told apart by the characters only one script uses (歡 vs 欢); text whose
    characters both scripts share (我住在台北) counts as zh-Hant, the script of the sample
    data's Taiwanese users, unless simplified-only characters outnumber traditional ones.
    """
    han = [c for c in text if _is_han(c)]
    if not han:
        return "en"
    traditional, simplified = _script_sets()
    hant = sum(1 for c in han if c in traditional)
    hans = sum(1 for c in han if c in simplified)
    return "zh-Hans" if hans > hant else "zh-Hant"
