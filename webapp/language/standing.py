"""Whether a sentence's time words bound a situation or repeat: standing rules and schedules.

"Never turn on the bedroom speaker before 8am" and 早上八點前不要打開音箱 are standing rules: the
clock time is a daily boundary, not the moment the fact ends, and a weekend in them
("no alarms at the weekend", 週末不要設鬧鐘) is every weekend. "Bins go out Tuesday and Friday"
(周二和周五收垃圾) and "quiet hours are from 10pm until 7am" are schedules: their days and times
repeat. Each reader takes a folded text (``webapp.text.fold``: lower case, simplified Chinese).

``states_a_situation`` tells a statement of where someone is or what they are doing ("I'm in
Lisbon", "staying at my mum's", 我都在台中, 出差) from a request ("book a table", 幫我訂位), so
the extraction rules can propose it as a fact when it has an end.

The expiry parser (``webapp.extraction.validity``) reads them so a rule keeps no expiry while a
situation ("I'm in Lisbon until Friday", 這週都在台中) keeps its end.
"""

from __future__ import annotations

import re

__all__ = ["REPEATING_TIMES", "STANDING_WEEKEND", "is_standing_rule", "states_a_situation"]

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

_EN_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_ZH_DAY = r"(?:周|星期|礼拜)[一二三四五六日天1-7]"
_CLOCK_EN = r"\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?|noon|midnight"
_CLOCK_ZH = r"(?:早上|上午|中午|下午|晚上|傍晚|凌晨)?[0-9一二两三四五六七八九十]+(?:点|时)(?:半)?"

# Times that repeat: two weekdays joined (周二和周五, 星期一、三), and a daily window of clock
# times ("from 10pm until 7am", 晚上十点到早上七点).
REPEATING_TIMES = re.compile(
    rf"{_ZH_DAY}(?:\s*[和跟与及、,，/]\s*(?:{_ZH_DAY}|[一二三四五六日天]))+"
    rf"|\b(?:from|between)\s+(?:{_CLOCK_EN})\s+(?:until|till|til|to|and)\s+(?:{_CLOCK_EN})"
    rf"|(?:从)?{_CLOCK_ZH}(?:到|至)(?:隔天|第二天|次日)?{_CLOCK_ZH}"
)


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
