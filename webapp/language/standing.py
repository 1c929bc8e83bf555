"""Whether a sentence's time words bound a situation or repeat: standing rules and schedules.

"Never turn on the bedroom speaker before 8am" and 早上八點前不要打開音箱 are standing rules: the
clock time is a daily boundary, not the moment the fact ends, and a weekend in them
("no alarms at the weekend", 週末不要設鬧鐘) is every weekend. "Bins go out Tuesday and Friday"
(周二和周五收垃圾) and "quiet hours are from 10pm until 7am" are schedules: their days and times
repeat. Each reader takes a folded text (``webapp.text.fold``: lower case, simplified Chinese).

``states_a_situation`` tells a statement of where someone is or what they are doing ("I'm in
Lisbon", "staying at my mum's", 我都在台中, 出差) from a request ("book a table", 幫我訂位), so
the extraction rules can propose it as a fact when it has an end.

The expiry parser (``webapp.language.validity``) reads them so a rule keeps no expiry while a
situation ("I'm in Lisbon until Friday", 這週都在台中) keeps its end.
"""

from __future__ import annotations

import re

from .calendar import EN_WEEKDAY, ZH_DAY_NUMERAL, ZH_WEEK, ZH_WEEKDAY
from .clock import CN_CLOCK_SPAN

__all__ = [
    "CYCLE_DAY",
    "CYCLE_MONTH",
    "CYCLE_WEEK",
    "CYCLE_YEAR",
    "REPEATING_TIMES",
    "STANDING_WEEKEND",
    "is_standing_rule",
    "repeating_cycle",
    "states_a_situation",
]

# Words that make a sentence a rule that stands until someone changes it: a prohibition, an
# "always" or "never", "from now on", "no X" at its start.
_STANDING = re.compile(
    r"\b(?:never|always|don't|do not|dont|mustn't|must not|no longer|from now on|going forward|"
    r"not before|not after|no\s+\w+\s+(?:before|after|until|at|on)|whenever)\b"
    r"|^(?:please\s+)?no\s+\w+"
    r"|不要|别再|别|不准|不许|禁止|勿|不可以|不能|千万|永远|一律|总是|以后|今后|从现在(?:开始|起)"
)

# A weekend that is every weekend inside a standing rule ("at the weekend", "on weekends",
# a bare 周末), never "this weekend" or 这个周末.
STANDING_WEEKEND = re.compile(
    r"\b(?:at|on|over|during)\s+(?:the\s+)?weekends?\b|(?<![这本下个])周末"
)

_EN_DAY = EN_WEEKDAY
_ZH_DAY = ZH_WEEKDAY
_CLOCK_EN = r"\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?|noon|midnight"
_CLOCK_ZH = CN_CLOCK_SPAN

# Times that repeat: two weekdays joined (周二和周五, 星期一、三), and a daily window of clock
# times ("from 10pm until 7am", 晚上十点到早上七点).
REPEATING_TIMES = re.compile(
    rf"{_ZH_DAY}(?:\s*[和跟与及、,，/]\s*(?:{_ZH_DAY}|{ZH_DAY_NUMERAL}))+"
    rf"|\b(?:from|between)\s+(?:{_CLOCK_EN})\s+(?:until|till|til|to|and)\s+(?:{_CLOCK_EN})"
    rf"|(?:从)?{_CLOCK_ZH}(?:到|至)(?:隔天|第二天|次日)?{_CLOCK_ZH}"
)


# How long the cycle of a habit or schedule is: a time word inside it (a weekday in a weekly
# habit, the 5th in a monthly one, the year's end in a yearly one) repeats with it.
CYCLE_DAY, CYCLE_WEEK, CYCLE_MONTH, CYCLE_YEAR = 1, 2, 3, 4

_EN_DAYS = rf"(?:{_EN_DAY}s?|weekday|weeknight)"
_ZH_COUNT = r"(?:\d+|[一二两三四五六七八九十几]+)?\s*(?:个)?"
# (pattern, cycle): words that make a sentence's times repeat.
_CYCLES: tuple[tuple[re.Pattern[str], int], ...] = tuple(
    (re.compile(pattern), cycle)
    for pattern, cycle in (
        (
            r"\b(?:every|each)\s+(?:other\s+|single\s+|\w+\s+)?(?:year|years)\b"
            r"|\b(?:annually|yearly|annual)\b|每(?:到|逢|隔)?\s*" + _ZH_COUNT + r"年",
            CYCLE_YEAR,
        ),
        (
            r"\b(?:every|each)\s+(?:other\s+|single\s+|\w+\s+)?(?:month|months)\b"
            r"|\b(?:monthly)\b|每(?:到|逢|隔)?\s*" + _ZH_COUNT + r"月"
            # "the last Sunday of the month": a day that comes round each month
            r"|\b(?:first|second|third|fourth|last|\d{1,2}(?:st|nd|rd|th))\s+(?:\w+\s+)?of\s+"
            r"(?:the|every|each)\s+month\b"
            # what is paid or paid out month by month: its date is each month's
            r"|\b(?:rent|salary|paycheck|payday|wages|mortgage|allowance|pocket\s+money|"
            r"bills|(?:electricity|electric|water|gas|phone|internet|power|energy|utility|"
            r"credit\s+card|card|council\s+tax)\s+bill)\b"
            r"|房租|租金|工资|薪水|薪资|发薪|账单|房贷|管理费|水电费|电费|水费|信用卡费|卡费|零用钱",
            CYCLE_MONTH,
        ),
        (
            rf"\b(?:every|each)\s+(?:other\s+|single\s+|\w+\s+)?(?:weeks?|weekends?|fortnight|"
            rf"{_EN_DAYS})\b|\b(?:weekly|fortnightly|biweekly)\b"
            rf"|\b(?:on\s+)?(?:{_EN_DAY}s|weekdays|weeknights|weekends|school\s+nights|"
            rf"school\s+days|workdays|work\s*days|working\s+days)\b"
            rf"|\b{_EN_DAY}\s+(?:nights|mornings|afternoons|evenings)\b"
            rf"|\bduring\s+the\s+week\b"
            # hours that are kept week after week
            r"|\b(?:opening|office|business|work|working|school|visiting|quiet)\s+hours\b"
            r"|\bshifts?\b|营业时间|工作时间|上班时间|开放时间|上课时间|门诊时间"
            rf"|\b(?:day|night)s?\s+(?:is|are)\s+(?:on\s+)?{_EN_DAY}\b"
            rf"|\b{_EN_DAY}\s+is\s+(?:\w+\s+)?(?:day|night)\b"
            r"|每(?:到|逢|隔)?\s*" + _ZH_COUNT + rf"{ZH_WEEK}|(?:隔|逢){ZH_WEEK}"
            rf"|平日|工作日|上班日|周间|假日|(?<![这本下上个]){ZH_WEEKDAY}"
            r"(?:早上|上午|中午|下午|晚上|傍晚)?(?:都|是[^，。,.]{0,8}(?:日|日子|夜|时间|课)$)"
            # a bare weekend or weekday said with 都 / 一般 / 通常 (as a rule; 才 is "not until")
            rf"|(?<![这本下上个])(?:周末|{ZH_WEEKDAY})"
            r"(?:早上|上午|中午|下午|晚上|傍晚)?(?:都|一般|通常|总是)",
            CYCLE_WEEK,
        ),
        (
            r"\b(?:every|each)\s+(?:other\s+|single\s+|\w+\s+)?(?:days?|nights?|mornings?|"
            r"evenings?|afternoons?)\b|\b(?:daily|nightly|always|usually|normally)\b"
            r"|每(?:到|逢|隔)?\s*" + _ZH_COUNT + r"(?:天|日|晚|早|夜)|平时|通常|总是|天天",
            CYCLE_DAY,
        ),
    )
)


# A weekday a habit is set on, said in Chinese: 改成 / 改到 / 改在 / 都在 / 每逢 / 固定在, the
# weekday (and a time of day), then what is done (垃圾改成星期三晚上倒, 钢琴课改到星期六早上上)
# — not a bound (之前, 为止) nor a start (开始, 起).
_ZH_SET_DAY = re.compile(
    rf"(?:改成|改到|改在|都在|每逢|固定在|固定)\s*(?<![这本下上个]){_ZH_DAY}"
    r"(?:早上|上午|中午|下午|晚上|傍晚|凌晨)?(?:的)?"
    r"(?!之前|以前|前|为止|开始|起|以后|之后)[\u4e00-\u9fff]"
)
# A one-off the sentence is about: which day, week or month, or this or next time
# (下周的会议改到星期三, 明天的课改到星期三上): its days do not repeat.
_ZH_ONE_OFF = re.compile(
    rf"今天|今晚|明天|明晚|后天|(?:这|本|下|上)(?:个)?(?:{ZH_WEEK}|月)|这次|下次|这回|下回"
    r"|\d+\s*月\s*\d+\s*(?:日|号)"
)


def repeating_cycle(folded: str) -> int:
    """The longest cycle the folded sentence's habit or schedule repeats on (``CYCLE_DAY`` …
    ``CYCLE_YEAR``), or 0 when nothing in it repeats: "every other Tuesday" and 每逢週三 are
    weekly, "the 1st of every month" and 每個月十號 monthly, "every year on 1 September" yearly;
    a weekday a habit is set on (垃圾改成星期三晚上倒, 都在星期五晚上吃火锅) is weekly too, unless
    the sentence is about one day, week or month (下周的会议改到星期三)."""
    cycles = [cycle for pattern, cycle in _CYCLES if pattern.search(folded)]
    if _ZH_SET_DAY.search(folded) and not _ZH_ONE_OFF.search(folded):
        cycles.append(CYCLE_WEEK)
    return max(cycles, default=0)


def is_standing_rule(folded: str) -> bool:
    """Whether the folded sentence states a rule that holds until changed ("never…before 8am",
    "don't…", 不要…, 以后…), so its clock times and bare weekends repeat rather than end it."""
    return bool(_STANDING.search(folded.strip()))


# A request or question to the assistant, not a statement: it starts with what to do.
_REQUEST = re.compile(
    r"^(?:please\s+|can you\s+|could you\s+)?(?:book|remind|set|turn|switch|call|send|play|order|"
    r"buy|add|schedule|tell|show|find|open|close|start|stop|put|make|get|check|cancel|text|email|"
    r"message|ring|wake|dim|lock|unlock|pause|resume|skip|read|write)\b"
    r"|^(?:请|帮我|帮忙|提醒|设|打开|关掉|关上|关闭|播放|打给|打电话|订|买|叫醒|告诉|查)"
)
# Being somewhere, staying, visiting, away, working, off something: a situation.
_SITUATION = re.compile(
    r"\b(?:i'm|i’m|i am|we're|we’re|we are|i'll be|we'll be|i will be|we will be|is|are|am|"
    r"staying|stay|visiting|working|away|travell?ing|off|on call|on leave|on holiday|"
    r"on vacation|have|has|got)\b"
    r"|在|住|待|出差|放假|休假|请假|不在|陪|来|回|吃素|不喝|不吃|戒|减肥|上班|办公|工作"
)


def states_a_situation(folded: str) -> bool:
    """Whether the folded sentence states a situation (being, staying, working, away…) rather
    than asking for something; its end is read separately (``validity.expires_at``)."""
    text = folded.strip()
    return not _REQUEST.search(text) and bool(_SITUATION.search(text))
