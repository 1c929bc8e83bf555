"""The values a fact states, read from its text: times, dates, amounts, names and places, and
values said in words (a language, a way to work, meat or not, home or office, pets or not).

Each reader takes the (folded) text and the values found so far, adds what it finds and
returns the text with it taken out, so the terms left are what the fact says besides.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from ..language import amounts, clock_times, dates, months_alone, ordinals
from ..language.calendar import EN_WEEKDAY, WEEKDAYS
from ..language.terms import CJK, VALUE_SLOT, wordlist
from ..text import fold
from .holders import HOLDERS, holder_at_end

__all__ = [
    "Value",
    "read_amounts",
    "read_dates",
    "read_months",
    "read_names",
    "read_ordinals",
    "read_times",
    "read_word_values",
]


@dataclass(frozen=True)
class Value:
    """A value a fact states. ``kind`` says what it measures ("time", "degrees", "count:杯",
    "name", "language"…); ``amount`` is a number or a canonical word."""

    kind: str
    amount: float | str
    text: str
    ambiguous: bool = False  # a clock time without am/pm or part of day: 10:00 or 22:00
    owner: str = ""  # for names: who or what is named ("cat" in "a cat named Pepper")


# Values said in words, each with its canonical value.
_WORD_VALUES: dict[str, list[tuple[str, str]]] = {
    "language": [
        (r"traditional chinese|繁体中文|繁体字|繁中|繁体", "zh-hant"),
        (r"simplified chinese|简体中文|简体字|简中|简体", "zh-hans"),
        (r"english|英文|英语", "en"),
        (r"chinese|mandarin|中文|汉语|国语|普通话", "zh"),
        (r"japanese|日文|日语", "ja"),
        (r"cantonese|粤语|广东话", "yue"),
        (r"taiwanese|台语|闽南语", "nan"),
        (r"korean|韩文|韩语", "ko"),
        (r"french|法文|法语", "fr"),
        (r"german|德文|德语", "de"),
        (r"spanish|西班牙文|西班牙语", "es"),
    ],
    "transport": [
        (
            r"\bmrt\b|subway|metro|underground|\btube\b|\btrains?\b|\brail\b|捷运|地铁|轨道交通|火车|轻轨",
            "rail",
        ),
        (r"\bbus(?:es)?\b|公车|公交车?|巴士", "bus"),
        (r"\bdrives?\b|\bdriving\b|\bby car\b|开车|自驾", "car"),
        (r"scooter|motorcycle|motorbike|机车|摩托车|摩托", "scooter"),
        (r"\bbikes?\b|bicycle|\bcycles?\b|cycling|脚踏车|自行车|单车", "bicycle"),
        (r"e-?bike|电动车|电瓶车", "e-bike"),
        (r"\bwalks? to work|on foot|走路上班|步行", "walk"),
        (r"\btaxi\b|\bcab\b|\buber\b|计程车|出租车|打车", "taxi"),
    ],
    "length": [
        (
            r"\bshort\b|\bbrief(?:ly)?\b|concise|succinct|terse|to the point|简短|简洁|精简|简单明了|简明",
            "short",
        ),
        (
            r"\blong\b|detailed|lengthy|in depth|thorough|essays?|长篇大论|长篇|详细|详尽|长一点",
            "long",
        ),
    ],
    "diet": [
        (r"vegetarian|vegan|plant-based|吃素|素食|茹素|吃斋", "no-meat"),
        (
            r"\bmeat\b|chicken|\bbeef\b|\bpork\b|steak|bacon|\bham\b|荤|肉|牛排|鸡肉|猪肉|牛肉|羊肉",
            "meat",
        ),
    ],
    "workplace": [
        (
            r"from home|remote(?:ly)?|\bwfh\b|在家办公|在家上班|在家工作|远程|远端|居家办公|在家",
            "home",
        ),
        (r"\bthe office\b|进办公室|去公司|到公司|去办公室|在公司", "office"),
    ],
    "pets": [
        (r"\bpets?\b|宠物", "pet"),
    ],
}
# A value that a negation turns into its opposite ("not essays" → short, 不吃肉 → no meat).
_OPPOSITE = {
    ("length", "short"): "long",
    ("length", "long"): "short",
    ("diet", "meat"): "no-meat",
    ("diet", "no-meat"): "meat",
    ("workplace", "home"): "office",
    ("workplace", "office"): "home",
    ("pets", "pet"): "no-pet",
}
_ANIMAL_WORDS = re.compile(
    r"\b(?:cats?|dogs?|kittens?|pupp(?:y|ies)|hamsters?|rabbits?|parrots?)\b|猫|狗|柴犬|柯基|金毛|兔子|仓鼠|鹦鹉"
)

_CJK = CJK


def read_months(text: str, values: list[Value]) -> str:
    """A month named without a day ("ends in August") as a value of its own."""
    text, found = months_alone(text)
    values.extend(Value("month", float(number), said) for number, said in found)
    return text


def read_dates(text: str, values: list[Value]) -> str:
    """Month and day ("March 3", "3rd of March", 3月5日, 2026-03-05) as one value, month × 100
    + day (the year, when given, is not compared: birthdays recur)."""
    text, found = dates(text)
    values.extend(Value("date", float(d.day_of_year), d.text) for d in found)
    return text


def read_ordinals(text: str, values: list[Value]) -> str:
    """An ordinal in digits or words ("the 28th", "the twenty-eighth") as one value."""
    text, found = ordinals(text)
    values.extend(Value(o.kind, o.amount, o.text) for o in found)
    return text


def read_times(text: str, values: list[Value]) -> str:
    """Clock times (12/24 h, "eleven", 晚上十一點), ambiguous without am/pm or part of day."""
    text, found = clock_times(text)
    values.extend(Value("time", t.minutes, t.text, t.ambiguous) for t in found)
    return text


def read_amounts(text: str, values: list[Value]) -> str:
    """Temperatures, percentages and counts with their unit (兩杯, "two kids", 一万步)."""
    text, found = amounts(text)
    values.extend(Value(a.kind, a.amount, a.text) for a in found)
    return text


# Names: after "named", 叫 or "name is", and capitalised words inside an English sentence.
_EN_NAME = re.compile(
    r"(?:\bnamed|\bcalled|\bname is|\bname's|\bname:|\bnamed:)\s+(?P<name>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"
)
_CJK_NAME = re.compile(
    rf"(?P<owner>[{_CJK}]{{0,3}}?)(?:的)?(?:(?:英文名字|英文名|名字|名)(?:叫做|叫|是|为)?|叫做|叫)\s*"
    rf"(?P<name>[A-Za-z][\w'-]*|[{_CJK}]{{2,3}}?)(?=[，,。.；;、\s]|$|的|[是和也])"
)
_CJK_NAME_MARK = re.compile(r"叫|名字|名叫")
_PLACE = re.compile(
    rf"(?:住在|住|家在|搬到|搬去|定居在|定居|(?i:lives? in|living in|moved to|based in|from))\s*"
    rf"(?P<place>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*|[{_CJK}]{{2,4}}?)(?=[市县区省]|住|了|[，,。.\s]|$)"
)
_EMPLOYER = re.compile(
    r"\b(?i:works? (?:at|for)|working (?:at|for)|employed (?:at|by)|job at)\s+"
    r"(?P<employer>[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*)*)"
)
_CAPITAL = re.compile(r"(?<=[\w,;:]\s)(?P<word>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)")
_DAY_WORD = re.compile(
    rf"{EN_WEEKDAY}s?\b|weekends?\b|weekdays?\b|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b"
)
_NOT_NAMES = frozenset(
    wordlist(
        "I I'm User Celsius Fahrenheit AM PM OK TV " + " ".join(day.title() for day in WEEKDAYS)
    )
)


def read_names(original: str, language: str, values: list[Value]) -> None:
    """Names and places, read from the text before case folding (capitals mark them)."""
    seen: set[tuple[str, str]] = set()

    def add(kind: str, name: str, owner: str = "") -> None:
        canon = fold(name).strip()
        canon = re.sub(r"[市县区省]$", "", canon) if kind == "place" else canon
        if canon and (kind, canon) not in seen:
            seen.add((kind, canon))
            values.append(Value(kind, canon, name, owner=owner))

    text = unicodedata.normalize("NFKC", original)
    for match in _PLACE.finditer(text):
        add("place", match.group("place"))
    for match in _EMPLOYER.finditer(text):
        add("employer", match.group("employer"))
    for match in _EN_NAME.finditer(text):
        before = fold(text[: match.start()]).split()
        owner = HOLDERS.get(before[-1], "") if before else ""
        add("name", match.group("name"), owner)
    if language != "en":
        folded = fold(text)
        if _CJK_NAME_MARK.search(folded):
            for match in _CJK_NAME.finditer(folded):
                name = match.group("name")
                owner = holder_at_end(match.group("owner"))
                if name in HOLDERS or _is_word_value(name):
                    continue
                mine = match.group("owner").endswith("我")  # 我叫小明: the user's own name
                if not owner and not mine and "名" not in match.group(0):
                    continue  # 叫外卖: "order", not "is called"
                add("name", name, owner)
        for match in re.finditer(r"(?<![A-Za-z])[A-Za-z][A-Za-z'-]+", text):
            if not _is_word_value(match.group(0)):
                add("proper", match.group(0))
        return
    for match in _CAPITAL.finditer(text):
        word = match.group("word")
        if word.split()[0] in _NOT_NAMES or _is_word_value(word) or _DAY_WORD.match(fold(word)):
            continue
        if any(
            v.kind in ("name", "place", "employer") and fold(v.text) == fold(word) for v in values
        ):
            continue
        # "… is Radiohead", "band: Radiohead" name the one value; elsewhere a proper noun is
        # one object among others ("Likes Radiohead" and "Likes Coldplay" can both be true)
        named = re.search(r"(?:\bis|\bare|:)\s+$", text[: match.start()])
        add("name" if named else "proper", word)


@functools.cache
def _compiled_word_values() -> list[tuple[str, re.Pattern[str], list[tuple[re.Pattern[str], str]]]]:
    """Per kind of word value: one pattern for any of its words, then each word's own."""
    return [
        (
            kind,
            re.compile("|".join(f"(?:{pattern})" for pattern, _ in table)),
            [(re.compile(pattern), canon) for pattern, canon in table],
        )
        for kind, table in _WORD_VALUES.items()
    ]


def _is_word_value(word: str) -> bool:
    folded = fold(word)
    return any(any_word.search(folded) for _, any_word, _ in _compiled_word_values())


def read_word_values(text: str, values: list[Value], flips: list[str] | None = None) -> str:
    """Replace the word values found (diet, workplace, pets…) by ``VALUE_SLOT``; a negation a
    value turns into its opposite is noted in ``flips``."""
    flips = [] if flips is None else flips
    for kind, any_word, table in _compiled_word_values():
        if not any_word.search(text):
            continue
        for pattern, canon in table:

            def found(
                match: re.Match[str], kind: str = kind, canon: str = canon, text: str = text
            ) -> str:
                before = text[max(0, match.start() - 14) : match.start()]
                after = text[match.end() : match.end() + 12]
                amount = canon
                negated = _negates(before, kind) or bool(_NEG_AFTER.match(after))
                if negated and (kind, canon) in _OPPOSITE:
                    amount = _OPPOSITE[(kind, canon)]
                    flips.append(kind)
                values.append(Value(kind, amount, match.group(0)))
                return VALUE_SLOT

            text = pattern.sub(found, text)
    animal = _ANIMAL_WORDS.search(text)
    if animal and not any(v.kind == "pets" for v in values):
        amount = "no-pet" if _negates(text[: animal.start()][-10:], "pets") else "pet"
        if amount == "no-pet":
            flips.append("pets")
        values.append(Value("pets", amount, "pet"))
    return text


_NEG_BEFORE = re.compile(
    r"(?:\b(?:not|no|never|don't|doesn't|didn't|can't|cannot|won't|isn't|without|avoids?|"
    r"hates?|dislikes?)\b[\w\s']{0,12}$)|(?:(?:不|没|别|无|不再|不想|不能|不要|不用)[\u4e00-\u9fff]{0,3}$)"
)


# A negation after its object, Chinese word order: 牛肉都不吃, 牛肉类的食物完全不碰, 肉一口也不吃
_NEG_AFTER = re.compile(
    r"^[^，,。；;!！?？]{0,8}?(?:都|也|完全|从来|从|一口也|一点也|一律)?(?:不|没|别|绝不)"
    r"(?:再)?(?:吃|碰|沾|喝|要|能吃|敢吃)"
)


def _negates(before: str, kind: str) -> bool:
    return bool(_NEG_BEFORE.search(before))
