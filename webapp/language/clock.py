"""Clock times: "23:00", "7 pm", "half past six", "eleven", "at 7", 晚上十一點, 六點半, 中午, midnight.

``clock_times(folded)`` reads every clock time of a folded text (see ``webapp.text.fold``) as
minutes after midnight, and gives the text with each time taken out, so later readers do not
read its digits again. A time is *ambiguous* when nothing says which half of the day it is in:
"at 7", 十點 and "7:00" can be 07:00 or 19:00; "07:00" (a leading zero), "19:00", "7 pm" and
晚上七點 cannot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .numbers import EN_NUMBER, RUN_START, parse_number

_PARTS_AM = ("早上", "上午", "凌晨", "清晨", "早晨")
_PARTS_PM = ("下午", "晚上", "傍晚", "夜里", "半夜")
_NIGHT = ("晚上", "夜里", "半夜")
_EN_PART = r"(?:\s*(?P<en_part>in the morning|in the evening|at night|in the afternoon))?"
CN_CLOCK_NUMBER = "[零〇一二两三四五六七八九十]{1,3}"
# The part of the day said before a Chinese clock time (晚上十點, 下午三点半).
CN_DAY_PART = "早上|上午|中午|下午|晚上|凌晨|傍晚|清晨|早晨|夜里|半夜"
# A Chinese clock time on the hour or half past, as other readers find one inside a phrase
# (晚上十点到早上七点, 十点前): no groups, so a pattern may hold it twice.
CN_CLOCK_SPAN = rf"(?:{CN_DAY_PART})?{RUN_START}[0-9一二两三四五六七八九十]+(?:点|时)(?:半)?"
TIME_PATTERNS: tuple[re.Pattern[str], ...] = (
    # "half past six", "quarter to eight", "twenty to eight", "ten past seven"
    re.compile(
        rf"\b(?P<rel>half|(?:a )?quarter|(?P<mins>\d{{1,2}}|{EN_NUMBER})(?: minutes?)?)"
        rf"[\s-]+(?P<dir>past|to|after)[\s-]+(?P<h>\d{{1,2}}|{EN_NUMBER})\b(?!\s*(?:%|°|degrees?))"
        r"(?:\s*(?P<ampm>[ap]\.?m\.?)(?![a-z]))?" + _EN_PART
    ),
    re.compile(
        r"(?<![\d:])(?P<h>\d{1,2})[:：](?P<mi>\d{2})(?![\d:])(?:\s*(?P<ampm>[ap]\.?m\.?)(?![a-z]))?"
        + _EN_PART
    ),
    re.compile(
        rf"(?<![\d.:：])(?P<h>\d{{1,2}}|\b{EN_NUMBER})\s*(?P<ampm>[ap]\.?m\.?)(?![a-z])" + _EN_PART
    ),
    re.compile(rf"(?P<h>\b\d{{1,2}}|\b{EN_NUMBER})\s*o'?clock" + _EN_PART),
    re.compile(
        rf"(?P<pre>\b(?:at|by|around|after|before|until|till|about|past)\s+)(?P<h>\d{{1,2}}|{EN_NUMBER})\b"
        r"(?![.\d:：]|\s*(?:%|°|degrees?|percent|minutes?|mins?|hours?|hrs?|days?|weeks?|"
        r"months?|years?|times?|kg|km|cups?|people|kids|children|steps|[a-z]+s\b))" + _EN_PART
    ),
    re.compile(
        rf"(?P<part>{CN_DAY_PART})?\s*"
        rf"(?P<h>\d{{1,2}}|{CN_CLOCK_NUMBER})\s*[点时](?!心|菜|餐|外卖|儿)"
        rf"(?:\s*(?P<half>半)|\s*(?P<quarter>[一三])刻|\s*(?P<mi>\d{{1,2}}|{CN_CLOCK_NUMBER})\s*分?)?"
    ),
)
_NOON = re.compile(r"\b(?:at )?(?:noon|midday)\b|\b(?:at )?midnight\b|午夜|半夜十二点|中午十二点")


@dataclass(frozen=True)
class ClockTime:
    """One clock time read from a text: minutes after midnight, as written, and where."""

    minutes: float
    text: str
    ambiguous: bool  # 10:00 or 22:00: nothing says which half of the day
    start: int
    end: int


def clock_minutes(
    hour: float, minute: float = 0.0, *, ampm: str = "", part: str = ""
) -> float | None:
    """``hour``:``minute`` as minutes after midnight, moved to the afternoon by "pm", "in the
    evening", 下午 or 晚上 (晚上十一點 is 23:00; 晚上兩點, 02:00, stays), to midnight by "12 am";
    None when it is no time of day (25:00, 7:60)."""
    ampm = ampm.replace(".", "")
    if ampm == "pm" or part in ("in the evening", "at night", "in the afternoon"):
        if hour < 12:
            hour += 12
    elif ampm == "am" or part == "in the morning":
        if hour == 12:
            hour = 0
    elif part in _PARTS_PM and hour < 12:
        hour += 12 if not (part in _NIGHT and hour <= 3) else 0
    elif part == "中午" and hour < 6:
        hour += 12
    if not (0 <= hour <= 24 and 0 <= minute <= 59) or hour == 24 and minute:
        return None
    return (hour % 24) * 60 + minute


def _reading(match: re.Match[str]) -> ClockTime | None:
    parts = match.groupdict()
    hour = parse_number(parts["h"])
    if hour is None:
        return None
    cjk_part = parts.get("part") or ""
    if parts["h"] == "一" and not cjk_part and not match.group(0).endswith(("半", "分")):
        return None  # 一点 is "a little" unless the time of day says otherwise
    minute: float | None = 0.0
    if parts.get("rel"):
        rel = parts["rel"]
        offset = 30.0 if rel == "half" else 15.0 if rel.endswith("quarter") else None
        offset = offset if offset is not None else parse_number(parts["mins"] or "")
        if offset is None or not 0 < offset < 60 or rel == "half" and parts["dir"] == "to":
            return None
        if parts["dir"] == "to":
            if not 1 <= hour <= 24:  # "quarter to 25" is no time (nor "to 0")
                return None
            hour, minute = (hour - 1) % 24, 60.0 - offset
        else:
            minute = offset
    elif parts.get("half"):
        minute = 30.0
    elif parts.get("quarter"):
        minute = 15.0 * (1 if parts["quarter"] == "一" else 3)
    elif parts.get("mi"):
        minute = parse_number(parts["mi"])
    if minute is None:
        return None
    ampm = (parts.get("ampm") or "").replace(".", "")
    en_part = parts.get("en_part") or ""
    minutes = clock_minutes(hour, minute, ampm=ampm, part=en_part or cjk_part)
    if minutes is None:
        return None
    marked = bool(ampm or cjk_part or en_part) or hour > 12
    # "07:00" with its leading zero is the 24-hour clock: morning, not evening
    marked = marked or bool(parts.get("mi") and parts["h"].startswith("0"))
    start = match.start() + len(match.group(0)) - len(match.group(0).lstrip())
    end = match.end() - len(match.group(0)) + len(match.group(0).rstrip())
    return ClockTime(minutes, match.group(0).strip(), not marked, start, end)


def clock_times(folded: str, *, keep_length: bool = False) -> tuple[str, list[ClockTime]]:
    """Every clock time in ``folded``, in the order found, and the text without them (the word
    before a time, "at", stays). With ``keep_length`` each time is blanked by as many spaces,
    so positions (``ClockTime.start``/``end``) keep pointing at ``folded``; without, by a
    space or two (positions are then those of the text as each pattern saw it)."""
    found: list[ClockTime] = []

    def blank(match: re.Match[str], pre: str = "") -> str:
        if keep_length:
            return pre + " " * (len(match.group(0)) - len(pre))
        return f" {pre} "

    def noon(match: re.Match[str]) -> str:
        said = match.group(0)
        minutes = 0.0 if "midnight" in said or "夜" in said else 720.0
        found.append(ClockTime(minutes, said.strip(), False, match.start(), match.end()))
        return " " * len(said) if keep_length else " "

    text = _NOON.sub(noon, folded)
    for pattern in TIME_PATTERNS:

        def time(match: re.Match[str]) -> str:
            reading = _reading(match)
            if reading is None:
                return match.group(0)
            pre = match.groupdict().get("pre") or ""
            found.append(reading)
            return blank(match, pre)

        text = pattern.sub(time, text)
    return text, found
