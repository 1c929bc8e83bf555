"""What a short fact says, in parts the judgements compare: values, who, when and which, yes or no.

A memory is one short fact ("Weekday alarm is 06:45", "女兒叫小安", "每天坐地铁上班"). An
embedding finds what it is about; deciding whether two facts say the same thing, or cannot both
be true, needs the parts an embedding blurs:

- **values**: clock times (12/24 h, "eleven", 晚上十一點, 六點半), temperatures, percentages,
  counts with their unit (兩杯, "two kids", 一万步), names and places (after "named", 叫, 住在,
  capitalised words), the language replies are wanted in, how one gets to work, how long
  answers should be, whether the person eats meat, has pets, works from home;
- **holder**: whose fact it is (the user's, a daughter's, 老公的) when the fact starts with them;
- **qualifiers**: which days, season, room or meal it is limited to;
- **terms**: the remaining content words (English stems, Chinese words cut by jieba), with the
  terms a negation governs ("doesn't drink *oolong*", 不*喝*) kept apart, so "no" is compared on
  the thing it is about rather than as a flag for the whole sentence.

Everything is folded first (case, width, 繁→简), so 鬧鐘 and 闹钟 are the same word.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from ..language import amounts, clock_times, dates, months_alone, ordinals, stem, terms
from ..language.calendar import EN_WEEKDAY, WEEKDAYS, WORKING_WEEK, weekday_names
from ..language.numbers import chinese_number, parse_number
from ..language.terms import CJK, CJK_RUN, VALUE_SLOT, wordlist
from ..text import fold

__all__ = ["Fact", "Value", "analyse", "attribute", "chinese_number", "parse_number", "stem"]


# ------------------------------------------------------------------ lexicons
# Canonical forms, each with the (folded) words that say it. Chinese words are 简体 after fold.
def _lexicon(table: dict[str, str]) -> dict[str, str]:
    return {word: canon for canon, words in table.items() for word in words.split("|")}


# Whose fact it is, when the fact starts with them ("Daughter's name…", 老公对海鲜过敏).
HOLDERS = _lexicon(
    {
        "daughter": "daughter|daughters|女儿|闺女",
        "son": "son|sons|儿子",
        "kids": "kid|kids|child|children|孩子|小孩|孩子们|小朋友|宝宝|baby",
        "wife": "wife|老婆|太太|妻子|媳妇",
        "husband": "husband|老公|丈夫|先生",
        "partner": "partner|spouse|boyfriend|girlfriend|男朋友|女朋友|男友|女友|伴侣|另一半",
        "mother": "mom|mum|mother|mama|妈妈|母亲|妈|老妈",
        "father": "dad|father|papa|爸爸|父亲|爸|老爸",
        "brother": "brother|哥哥|弟弟|哥|弟",
        "sister": "sister|姐姐|妹妹|姐|妹",
        "niece": "niece|侄女|姪女|外甥女",
        "nephew": "nephew|侄子|姪子|外甥",
        "grandmother": "grandma|grandmother|granny|奶奶|外婆|姥姥",
        "grandfather": "grandpa|grandfather|爷爷|外公|姥爷",
        "in-law": "婆婆|公公|岳母|岳父|丈母娘",
        "grandchild": "grandson|granddaughter|grandchild|grandkids|孙子|孙女|外孙|外孙女",
        "boss": "boss|manager|老板|主管|上司",
        "teacher": "teacher|老师|导师",
        "doctor": "doctor|dentist|医生|牙医",
        "colleague": "colleague|coworker|同事",
        "friend": "friend|朋友",
        "neighbour": "neighbor|neighbour|邻居",
        "cat": "cat|kitten|猫|猫咪|小猫",
        "dog": "dog|puppy|狗|狗狗|小狗|柴犬|柯基|金毛",
    }
)
_ANIMALS = frozenset({"cat", "dog"})
# Words before the holder that still leave it first: "my daughter", 我老公, 家里的猫.
_HOLDER_PREFIX = re.compile(
    r"^(?:(?:the\s+)?user'?s?\s+|my\s+|our\s+|the\s+|his\s+|her\s+|their\s+)"
    r"|^(?:我们家的|我们家|我家的|我家|家里的|家里|我的|我)"
)

# Which days, season, room or meal a fact is limited to. Days are sets of weekday numbers.
_ALL_DAYS = frozenset(range(7))
_WEEKDAYS = frozenset(range(5))
_WEEKEND = frozenset({5, 6})
# Each weekday's names from the one table (周1 but not 周12 or 周15小时).
_DAY_NAMES = [
    ("|".join(name + "(?!\\d)" if name[-1].isdigit() else name for name in weekday_names(day)), day)
    for day in range(7)
]
_DAY_SETS: list[tuple[str, frozenset[int]]] = [
    ("|".join(WORKING_WEEK), _WEEKDAYS),
    (r"weekdays?|work ?days?|工作日|平日|上班日|周间", _WEEKDAYS),
    (r"weekends?|周末|假日|休息日|放假", _WEEKEND),
    (r"every ?day|daily|each day|每天|天天|每日|一天", _ALL_DAYS),
] + [(names, frozenset({day})) for names, day in _DAY_NAMES]
_QUALIFIERS: dict[str, list[tuple[str, str]]] = {
    "season": [
        ("spring|春天|春季", "spring"),
        ("summer|summers|夏天|夏季", "summer"),
        ("autumn|fall|秋天|秋季", "autumn"),
        ("winter|winters|冬天|冬季", "winter"),
    ],
    "room": [
        ("bedroom|卧室|卧房|房间", "bedroom"),
        ("living room|lounge|客厅", "living room"),
        ("kitchen|厨房", "kitchen"),
        ("bathroom|浴室|厕所|卫生间", "bathroom"),
        ("study|书房", "study"),
        ("office|办公室", "office"),
    ],
    "meal": [
        ("breakfast|早餐|早饭", "breakfast"),
        ("lunch|午餐|午饭", "lunch"),
        ("dinner|supper|晚餐|晚饭", "dinner"),
    ],
    "daypart": [
        ("mornings?|早上|上午|清晨|早晨", "morning"),
        ("afternoons?|下午", "afternoon"),
        ("evenings?|nights?|tonight|晚上|傍晚|夜里", "evening"),
    ],
}

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

# Words that say the same thing, as one term ("commute" for 上班, 通勤, "to work").
_CONCEPTS: list[tuple[str, str]] = [
    (r"\bcommut\w*|\bto work\b|上下班|上班|通勤", " commute "),
    (
        r"\bgoes to bed\b|\bgo to bed\b|\bbed(?:time)?\b|\basleep\b|\bsleeps?\b|睡眠|睡觉|就寝|上床|入睡|睡",
        " sleep ",
    ),
    (r"\bwakes? up\b|\bgets? up\b|起床|醒来", " wake "),
    (
        r"\banswers?\b|\brepl(?:y|ies)\b|\brespons\w*|\bresponds?\b|回答|回复|回覆|答复|回应",
        " reply ",
    ),
    (r"维他命|维生素|vitamins?", " vitamin "),
    (r"\bmedications?\b|\bmedicines?\b|\bpills?\b|\btablets?\b|吃药|药物|药", " medicine "),
    (r"\bfavou?rite\b|最爱|最喜欢", " favourite "),
    (r"[加放]糖", " 加糖 "),
    (r"家里人|家人", " 家人 "),
]


@functools.cache
def _compiled_concepts() -> list[tuple[re.Pattern[str], str]]:
    return [(re.compile(pattern), concept) for pattern, concept in _CONCEPTS]


_CJK = CJK


# ------------------------------------------------------------------ the parts
@dataclass(frozen=True)
class Value:
    """A value a fact states. ``kind`` says what it measures ("time", "degrees", "count:杯",
    "name", "language"…); ``amount`` is a number or a canonical word."""

    kind: str
    amount: float | str
    text: str
    ambiguous: bool = False  # a clock time without am/pm or part of day: 10:00 or 22:00
    owner: str = ""  # for names: who or what is named ("cat" in "a cat named Pepper")


@dataclass(frozen=True)
class Fact:
    """The parts of one fact the judgements compare (see the module's docstring)."""

    text: str
    key: str  # folded, alphanumerics only: equal keys are the same text
    language: str
    values: tuple[Value, ...]
    holder: str  # "" for the user
    qualifiers: tuple[tuple[str, frozenset[str]], ...]
    days: frozenset[int] | None
    terms: frozenset[str]
    negated: frozenset[str]  # terms a negation governs
    verbs: frozenset[str]  # light verbs (吃, 喝, drink, eat): part of the frame, not the subject
    # a negation that a value did not turn into its opposite: the fact says no ("Doesn't have a
    # licence", 不會騎機車, "Doesn't drink oolong"); "Doesn't eat meat" is not negative (the value
    # took it: no meat). Compared only when no term is negated on one side alone
    negative: bool = False
    # "<subject> is <value>" of one thing (the car, 家里宽带, 班主任): (subject, copula, value),
    # folded; a thing has one such value at a time, so another value is a change, not a second fact
    attribute: tuple[str, str, str] | None = None

    def value_kinds(self) -> dict[str, list[Value]]:
        found: dict[str, list[Value]] = {}
        for value in self.values:
            found.setdefault(value.kind, []).append(value)
        return found

    def qualifier(self, kind: str) -> frozenset[str] | None:
        return dict(self.qualifiers).get(kind)


def _language(text: str) -> str:
    han = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff")
    if not han:
        return "en"
    from ..text import language_of

    return language_of(text)


# ------------------------------------------------------------------ extraction
def _months(text: str, values: list[Value]) -> str:
    """A month named without a day ("ends in August") as a value of its own."""
    text, found = months_alone(text)
    values.extend(Value("month", float(number), said) for number, said in found)
    return text


def _dates(text: str, values: list[Value]) -> str:
    """Month and day ("March 3", "3rd of March", 3月5日, 2026-03-05) as one value, month × 100
    + day (the year, when given, is not compared: birthdays recur)."""
    text, found = dates(text)
    values.extend(Value("date", float(d.day_of_year), d.text) for d in found)
    return text


def _ordinals(text: str, values: list[Value]) -> str:
    """An ordinal in digits or words ("the 28th", "the twenty-eighth") as one value."""
    text, found = ordinals(text)
    values.extend(Value(o.kind, o.amount, o.text) for o in found)
    return text


def _times(text: str, values: list[Value]) -> str:
    text, found = clock_times(text)
    values.extend(Value("time", t.minutes, t.text, t.ambiguous) for t in found)
    return text


def _amounts(text: str, values: list[Value]) -> str:
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


def _names(original: str, language: str, values: list[Value]) -> None:
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
                owner = _owner(match.group("owner"))
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


def _owner(text: str) -> str:
    for length in (3, 2, 1):
        if len(text) >= length and text[-length:] in HOLDERS:
            return HOLDERS[text[-length:]]
    return ""


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


def _word_values(text: str, values: list[Value], flips: list[str] | None = None) -> str:
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


@functools.cache
def _words(pattern: str) -> re.Pattern[str]:
    """``pattern``'s alternatives, the English ones as whole words (Chinese has no spaces)."""
    parts = [rf"\b(?:{alt})\b" if alt[0].isascii() else alt for alt in pattern.split("|")]
    return re.compile("|".join(parts))


def _days(text: str) -> tuple[str, frozenset[int] | None]:
    days: set[int] = set()
    found = False
    for pattern, day_set in _DAY_SETS:
        regex = _words(pattern)
        if regex.search(text):
            found = True
            days |= day_set
            text = regex.sub(" ", text)
    return text, (frozenset(days) if found else None)


def _qualifiers(text: str) -> tuple[str, tuple[tuple[str, frozenset[str]], ...]]:
    result: list[tuple[str, frozenset[str]]] = []
    for kind, table in _QUALIFIERS.items():
        found: set[str] = set()
        for pattern, canon in table:
            regex = _words(pattern)
            if regex.search(text):
                found.add(canon)
                text = regex.sub(" ", text)
        if found:
            result.append((kind, frozenset(found)))
    return text, tuple(result)


def _holder(folded: str) -> tuple[str, str]:
    """Whose fact this is when it starts with a person (or an animal), and the text without it."""
    text = folded.strip()
    rest = _HOLDER_PREFIX.sub("", text, count=1).lstrip()
    match = re.match(r"[a-z]+", rest)
    if match and match.group(0) in HOLDERS:
        word = match.group(0)
        return HOLDERS[word], rest[len(word) :]
    for length in (3, 2, 1):
        head = rest[:length]
        if len(head) == length and head in HOLDERS:
            if length == 1 and rest[1:2] and rest[:2] not in HOLDERS and rest[1] not in "的对叫每":
                continue  # 妈/哥 as the start of a longer word
            return HOLDERS[head], rest[length:]
    return "", text


_INSTEAD_OF = re.compile(r"\b(?:instead of|rather than|in place of)\b")


@functools.lru_cache(maxsize=65536)
def analyse(text: str) -> Fact:
    """The parts of ``text`` (cached per text)."""
    original = text or ""
    language = _language(original)
    folded = unicodedata.normalize("NFKC", fold(original)).replace("’", "'")
    key = "".join(ch for ch in folded if ch.isalnum())
    values: list[Value] = []
    _names(original, language, values)
    rest = folded
    for value in values:
        rest = rest.replace(fold(value.text), " ")
    holder, rest = _holder(rest)
    rest = _dates(rest, values)
    rest = _months(rest, values)
    rest = _times(rest, values)
    rest = _ordinals(rest, values)
    rest, days = _days(rest)
    flips: list[str] = []
    rest = _word_values(rest, values, flips)
    rest = _amounts(rest, values)
    rest, qualifiers = _qualifiers(rest)
    for pattern, concept in _compiled_concepts():
        rest = pattern.sub(concept, rest)
    rest = _INSTEAD_OF.sub(" not ", rest)  # "neovim instead of vim": no to vim
    read = terms(rest)
    # a name's owner that is the holder itself ("Daughter's name is Maya") is the same subject
    values = [
        Value(v.kind, v.amount, v.text, v.ambiguous, "") if v.owner and v.owner == holder else v
        for v in values
    ]
    return Fact(
        original,
        key,
        language,
        tuple(values),
        holder,
        qualifiers,
        days,
        read.terms,
        read.negated,
        read.verbs,
        read.negations > len(flips),
        attribute(folded),
    )


_EN_COPULA = re.compile(
    r"^(?P<subject>[a-z][a-z' ]*?)\s+(?P<copula>is|are|was|were)\s+(?P<value>.+)$"
)
_ZH_COPULA = re.compile(
    rf"^(?P<subject>[{_CJK}a-z0-9]{{2,}}?)(?P<copula>是|在|姓|叫)(?P<value>.+)$"
)
# A value phrase holding one of these relates the subject to something ("is allergic to peanuts",
# "is in year 3"): one of several such facts, not the subject's one value.
_RELATION_WORDS = frozenset(
    wordlist(
        "to of in at on with about for from near by under over into than like as not no never "
        "usually always often sometimes also too and or but because when if"
    )
)
_EN_ARTICLES = frozenset(wordlist("a an the"))
_WHERE_ONE_IS = re.compile(
    rf"^(?:(?P<verb>works) (?:at|for) (?P<place>[a-z0-9&' -]{{2,40}})"
    rf"|在(?P<place2>[{_CJK}a-z0-9]{{2,10}}?)(?P<verb2>工作|上班|上学|读书|念书))$"
)
_ZH_SUBJECT_STARTS = ("不", "没", "沒", "也", "都", "还", "還", "就", "会", "會", "要", "想")


def attribute(folded: str) -> tuple[str, str, str] | None:
    """(subject, copula, value) when ``folded`` says what one thing is ("the family car is a blue
    corolla", "家里宽带是电信的", "停车位在b2"), else None. The subject must be a thing, not the user
    (no subject, a pronoun, a verb phrase) and the value a plain value, not a relation."""
    text = " ".join(folded.strip().rstrip("。.!！").split())
    if not text:
        return None
    match = _WHERE_ONE_IS.match(text.replace(" ", "") if CJK_RUN.search(text) else text)
    if match:  # where one works, studies or lives: one place at a time
        place = str(match["place"] or match["place2"]).removeprefix("the ").removesuffix("的")
        verb = str(match["verb"] or match["verb2"])
        if place and not any(w in _RELATION_WORDS for w in place.split()):
            return verb, "at", place
    match = _EN_COPULA.match(text)
    if match:
        words = [w for w in match["subject"].split() if w not in _EN_ARTICLES]
        said = [w for w in match["value"].split() if w not in _EN_ARTICLES]
        if (
            not words
            or words[0] in ("it", "this", "that", "there", "he", "she", "they", "i", "we", "user")
            or not said
            or any(w in _RELATION_WORDS for w in said)
            or len(said) > 5
        ):
            return None
        subject = " ".join(stem(w.removesuffix("'s")) for w in words)
        return subject, str(match["copula"]), " ".join(said)
    match = _ZH_COPULA.match(text.replace(" ", ""))
    if not match:
        return None
    subject = str(match["subject"]).replace("的", "")
    value = str(match["value"]).removesuffix("的").removesuffix("了")
    if (
        len(subject) < 2
        or subject.startswith(_ZH_SUBJECT_STARTS)
        or subject in ("用户", "使用者", "我", "我们", "他", "她")
        or not value
        or any(ch in value for ch in "，,、；;和跟或")
        or len(value) > 12
    ):
        return None
    return subject, match["copula"], value
