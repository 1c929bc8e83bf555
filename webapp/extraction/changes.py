"""Changes of mind: forget requests, reversals and corrections, and the memory each one is about.

People take facts back in passing: "Forget that I like green tea", "I no longer drink coffee,
I switched to tea", "Actually it's Mia, not Maya", "以後不用再提醒我倒垃圾了",
"请忘记我对猫毛过敏这件事". Such a sentence is never a fact to store. ``find_changes`` reads
the user's sentences and returns what each one takes back; ``resolve_change`` picks the one
memory it is about and says what to do with it: ``delete`` when nothing replaces it,
``update`` with the new fact when the sentence gives one. When the memory is not clear (no
memory close enough, or two equally close), it proposes nothing rather than the wrong one.

A switch ("Switch the morning routine to 07:00 from now on instead of 06:45", "Use tabs
instead of spaces", 把晨間流程改成七點) edits the memory it is about and keeps the rest of it
("Weekday alarm is 07:00; on weekends …"); when no memory holds what it changes, or the edit
is not clear, it is the fact it implies ("Morning routine at 07:00"), proposed as new. An
update never carries the user's sentence as it was said: the memory edited, or the sentence
rewritten as a fact about the user ("I'm not vegetarian anymore, I eat fish now" → "Is not
vegetarian, eats fish").

Look-alikes change nothing: "Don't forget to water the plants" and "別忘了提醒我買綠茶" ask
for a reminder, "I don't remember if…" and "我忘了帶鑰匙" say the user forgot something,
"Forget it, let's…" names no memory, and "今天不用提醒我了" is for one day only.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..attention.pairs import features
from ..language import stem, terms
from ..language.phrasing import as_preference, as_user_fact, is_instruction, without_fillers
from ..stores.memories import Memory
from ..text import LATIN_FILLER, fold, traditional_to_simplified
from .sentences import user_sentences

KINDS = ("forget", "reversal", "correction", "switch")
# How much of what the sentence names a memory must hold, and by how much it must beat the
# next best, to be the target.
MIN_TARGET_SCORE = 0.5
MIN_TARGET_MARGIN = 0.2

_I = re.IGNORECASE
_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_CHAR = re.compile(rf"[{_CJK}]")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# --------------------------------------------------------------------------- what is a change
_EN_FORGET = re.compile(
    r"^(?:please\s+|(?:you\s+)?(?:can|could|would|will)\s+you\s+|you can\s+|just\s+)*"
    r"(?P<verb>forget|stop remembering|(?:don't|do not) remember|unremember|"
    r"(?:delete|remove|erase|drop|clear)\s+(?:the\s+)?(?:memory|memories|note|notes|fact|"
    r"what you (?:remember|know|have|stored|saved))(?:\s+(?:about|of|that|on))?)\b"
    r"(?:\s+(?P<link>that|about|what you (?:know|remember) about|the (?:thing|bit|part|fact|"
    r"memory|note) (?:about|that)|the memory (?:about|of)))?\s*(?P<about>.*)$",
    _I,
)
_EN_REVERSALS = (
    # "I no longer drink coffee", "I don't drink coffee anymore", "I won't need X anymore"
    re.compile(r"\bI\s+no\s+longer\s+(?P<about>.+)$", _I),
    re.compile(
        r"\bI\s+(?:don't|do not|doesn't|won't|will not|can't|cannot)\s+(?P<about>.+?)\s+"
        r"(?:anymore|any more|any longer)\b",
        _I,
    ),
    # "I'm not vegetarian anymore", "I'm no longer vegetarian", "Not into jazz anymore"
    re.compile(r"\bI(?:'m|’m|\s+am)\s+no\s+longer\s+(?P<about>.+)$", _I),
    re.compile(
        r"(?:\bI(?:'m|’m|\s+am)\s+|^)not\s+(?P<about>.+?)\s+(?:anymore|any more|any longer)\b", _I
    ),
    # "I stopped going to the gym", "I've quit smoking" (not "I stopped at the bakery")
    re.compile(
        r"\bI(?:'ve|’ve|\s+have)?\s+(?:stopped|quit|given up|gave up)\s+"
        r"(?!at\b|by\b|in\b|for\b|to\b|on\b|there\b|here\b|and\b|when\b|because\b)(?P<about>.+)$",
        _I,
    ),
)
# "I switched from vim to neovim": the old thing and the new one.
_EN_SWITCH = re.compile(
    r"\bI(?:'ve|’ve|\s+have)?\s+(?:switched|changed|moved|migrated|gone|went)\s+from\s+"
    r"(?P<old>.+?)\s+to\s+(?P<new>.+)$",
    _I,
)
# "Actually it's Mia, not Maya", "The dentist is on Thursdays now, not Tuesdays"
_EN_CORRECTION = re.compile(
    r"^(?:(?P<mark>actually|sorry|correction|oops|wait|no)\b[,:]?\s*)?(?P<body>.+?)"
    r"(?P<now>\s+now)?\s*[,;—-]\s*(?:and\s+)?not\s+(?P<old>[^,.;!?]+?)\s*(?:anymore|any more)?$",
    _I,
)
# A clause that says what holds now: "I switched to tea", "I eat fish now".
_EN_REPLACEMENT = re.compile(
    r"\b(?:switched|changed|moved|migrated)\s+to\b|\bnow\b|\binstead\b|\bthese days\b|"
    r"\bnowadays\b|\bfrom now on\b",
    _I,
)
# Requests about doing something, not about a memory.
_EN_REMINDER = re.compile(r"^(?:please\s+)?(?:don't|do not|never)\s+forget\s+to\b", _I)
_EN_NOT_ABOUT_A_FACT = re.compile(r"^(?:remember|recall|know|see|hear|understand)\b", _I)
# A bare "forget X" must be about the user ("Forget my old address"), not "Forget the milk".
_EN_ABOUT_THE_USER = re.compile(r"^(?:I|I'm|I’m|I've|I’ve|my|me|mine)\b", _I)
_EN_PRONOUN_ONLY = re.compile(r"^(?:it|this|that|them|everything|all|about it)\b", _I)

_ZH_FORGET = re.compile(
    r"^(?P<lead>請|请|麻煩|麻烦|拜託|拜托)?(?P<who>你|幫我|帮我)?(?:可以)?"
    r"(?:(?P<bare>忘掉|忘記|忘记|忘了|刪掉|删掉|刪除|删除)|"
    r"(?:不要|不用|不必|別|别)再?(?:記得|记得|記住|记住)|(?:不要|別|别)再?記著|(?:不要|別|别)再?记着)"
    r"(?P<link>關於|关于|有關|有关)?(?P<about>.+)$"
)
_ZH_FORGET_BA = re.compile(
    r"^(?:請|请|麻煩|麻烦)?(?:你|幫我|帮我)?把(?P<about>.+?)(?:的?記憶|的?记忆|這條|这条|這件事|这件事)?"
    r"(?:刪掉|删掉|刪除|删除|忘掉|忘記|忘记|拿掉|去掉)"
)
_ZH_NO_LONGER = re.compile(
    r"^(?:(?:以後|以后|之後|之后|從現在開始|从现在开始)(?:都)?(?:你)?(?:不用|不必|不需要)再?|"
    r"(?:你)?(?:不用再|不必再|不需要再))(?P<about>.+)$"
)
# "我不喜歡喝無糖綠茶了": 了 says it changed (without it, "我不喜歡燈一直閃" is a dislike).
_ZH_NO_LONGER_LIKE = re.compile(
    r"^我(?:現在|现在|已經|已经)?不(?:再)?(?P<about>(?:喜歡|喜欢|愛|爱|習慣|习惯)[^，,。；;]+?)了$"
)
# A bare 忘記/忘了 ("忘记带伞了" = I forgot the umbrella) asks to forget only when it is about
# the user or names the memory ("忘掉我喜欢喝拿铁这件事吧").
_ZH_ABOUT_THE_USER = re.compile(r"^我|這件事|这件事|那件事|這條|这条|吧$")
_ZH_REVERSAL = re.compile(
    r"^(?:其實|其实)?我?(?:(?:現在|现在|已經|已经|目前|早就|最近)+(?:不再|不|沒有再|没有再|沒在|没在)|不再)"
    r"(?P<about>[^，,。；;]+?)(?:了|啦)"
)
_ZH_REPLACEMENT = re.compile(
    r"改成|改為|改为|改喝|改用|改坐|改吃|改去|改到|改搭|改騎|改骑|換成|换成|換到|换到|搬到|搬去|轉到|转到"
)
_ZH_CORRECTION = re.compile(
    r"^(?:其實|其实|不對|不对|更正|糾正|纠正|抱歉|說錯了|说错了)[，,：:]?\s*(?P<body>.+?)[，,]\s*"
    r"(?:而)?不是(?P<old>[^，,。；;！!]+)"
)
_ZH_REMINDER = re.compile(
    r"^(?:請|请)?(?:你)?(?:別忘了|别忘了|不要忘了|不要忘記|不要忘记|記得|记得)"
    r"(?:提醒我|幫我|帮我|要|去|明天|今天|今晚|晚上)"
)
# One day only: "今天不用提醒我了", "No need to remind me tonight".
_ONE_OFF = re.compile(
    r"\b(?:today|tonight|this (?:time|once|morning|evening|afternoon|week)|for now|right now)\b|"
    r"\btoday's\b|今天|今晚|這次|这次|這一次|这一次|暫時|暂时",
    _I,
)
_QUESTION = re.compile(r"[?？]\s*$|(?:嗎|吗)[\s。]*$")

# ----------------------------------------------------------------------------- switches
# Said of an instruction that holds from now on (a one-off "Switch the lights to blue" is not).
_DURABLE = re.compile(
    r"\s*,?\s*\b(?:from now on|going forward|from today on|in (?:the )?future|by default|"
    r"starting (?:today|now))\b,?",
    _I,
)
# "Switch the morning routine to 07:00 (from now on) instead of 06:45"
_EN_SWITCH_TO = re.compile(
    r"^(?:please\s+)?(?P<verb>switch|change|move|set|shift|push|bump)\s+(?P<what>.+?)\s+"
    r"(?:over\s+)?(?:to|into)\s+(?P<new>.+?)(?:\s*[,;]?\s*(?:and\s+)?"
    r"(?:instead\s+of|rather\s+than|not)\s+(?P<old>[^,;]+?))?\s*$",
    _I,
)
_EN_SWITCHED = {
    "switch": "switched",
    "change": "changed",
    "move": "moved",
    "set": "set",
    "shift": "shifted",
    "push": "pushed",
    "bump": "bumped",
}
# "Use tabs instead of spaces", "I take the bus instead of the train now"
_EN_INSTEAD = re.compile(
    r"^(?P<head>.+?)\s*,?\s+(?:instead\s+of|rather\s+than)\s+(?P<old>[^,;]+?)\s*$", _I
)
_HABIT = re.compile(
    r"\b(?:now|these days|nowadays|usually|always|normally|generally|every|from now on|"
    r"going forward|by default|in (?:the )?future)\b",
    _I,
)
_EN_USE = re.compile(r"^(?:please\s+)?(?:use|go with|stick (?:to|with))\s+(?P<new>.+)$", _I)
# "把晨間流程改成七點", "回答改成用繁體中文，不要用英文"
_ZH_SWITCH = re.compile(
    r"^(?:把|將|将)?(?P<what>[^，,。；;]+?)(?:改成|改為|改为|換成|换成|調成|调成|調到|调到|改到)"
    r"(?P<new>[^，,。；;]+?)(?:了|吧|啦)?(?:[，,]\s*(?:而)?(?:不是|不要|不用|別再|别再)(?:再)?"
    r"(?:用)?(?P<old>[^，,。；;]+?)(?:了)?)?$"
)
# What replaces the old habit in a reversal: "…, I switched to tea", 我改喝燕麥奶了
_EN_NEW = re.compile(
    r"\b(?:switched|changed|moved|migrated)\s+(?:over\s+)?to\s+(?P<new>[^,;.]+)", _I
)
_ZH_NEW = re.compile(
    r"改(?P<verb>喝|用|坐|吃|搭|騎|骑|去|穿|聽|听|看)(?P<new>[^，,。；;]+?)(?:了|啦)?(?:[，,。；;]|$)"
)
_ZH_OLD = re.compile(
    r"(?:不再|不|沒有再|没有再|沒再|没再)(?P<old>[^，,。；;不]{2,}?)(?:了|啦)?(?:[，,。；;]|$)"
)
_ZH_DURABLE = re.compile(
    r"以後|以后|今後|今后|往後|往后|從今以後|从今以后|從現在開始|从现在开始|從現在起|从现在起|"
    r"從今天開始|从今天开始|從今天起|从今天起|每次|一律|一直|都"
)
_ZH_NOW = re.compile(r"^(?:(?:現在|现在|馬上|马上|立刻|先)(?!開始|开始|起))")
_ARTICLE = re.compile(r"^(?:the|a|an|my|our)\s+", _I)
_CLOCK = re.compile(r"\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?|\d{1,2}:\d{2}", _I)
# Words a statement of a change ends with that a memory does not need.
_STATEMENT_TAIL = re.compile(
    r"(?:\s+(?:anymore|any more|any longer|now|these days|nowadays|already|for good))+$", _I
)

_ZH_TAIL = re.compile(
    r"(?:這件事|这件事|這個|这个|這條|这条|的事情|的事|的記憶|的记忆|的部分|這回事|这回事)?"
    r"(?:吧|了|啦|喔|哦|好了|就好)*$"
)
_EN_TAIL = re.compile(
    r"(?:\s+(?:anymore|any more|any longer|last (?:week|month|year)|recently|a while ago|"
    r"already|now|these days|please|for good|thanks|thank you))+$",
    _I,
)


@dataclass(frozen=True)
class ChangeOfMind:
    """A sentence taking a remembered fact back: what it is about, and what replaces it if any."""

    kind: str  # "forget", "reversal" or "correction"
    about: str  # the words naming the remembered fact ("I like green tea", "倒垃圾")
    sentence: str  # the user's sentence, cleaned
    replaces: bool = False  # the sentence states a new fact that replaces the old one
    old: str | None = None  # for "X, not Y" and "from X to Y": the old words…
    new: str | None = None  # …and the new ones
    evidence: str | None = None  # the user's message
    extractor: str = "regex"
    # For a switch: the fact it implies, proposed as new when no memory holds what it changes.
    fact: str | None = None


def _clean(text: str) -> str:
    return text.strip().strip(" ,，.。!！?？;；:：")


def _first_clause(text: str) -> str:
    return re.split(r"\s*[,;，；、]\s*|\s+(?:and|but|because|since|so)\s+", text, maxsplit=1)[0]


def _about_en(text: str) -> str:
    return _clean(_EN_TAIL.sub("", _clean(_first_clause(text))))


def _about_zh(text: str) -> str:
    return _clean(_ZH_TAIL.sub("", _clean(re.split(r"[，,；;。]", text, maxsplit=1)[0])))


def match_change(sentence: str) -> ChangeOfMind | None:
    """The change of mind a sentence states, or None (most sentences, and every look-alike)."""
    body = _clean(
        re.sub(
            r"^(?:also|and|oh|ok|okay|btw|by the way|hey|hmm|well)\b[,:]?\s*",
            "",
            sentence,
            flags=_I,
        )
    )
    body = re.sub(r"^(?:另外|還有|还有|對了|对了|喔|哦|嗯)[，,]?", "", body)
    if not body or len(body) > 300 or _ONE_OFF.search(body):
        return None
    if _EN_REMINDER.search(body) or _ZH_REMINDER.search(body):
        return None
    question = bool(_QUESTION.search(body))
    if question:
        return _forget(body, question)
    return _forget(body, False) or _correction(body) or _reversal(body) or _switch(body)


def _forget(body: str, question: bool) -> ChangeOfMind | None:
    found = _EN_FORGET.match(body)
    if found is not None:
        if question and not re.match(r"^(?:can|could|would|will)\s+you\b", body, _I):
            return None
        about = _about_en(found.group("about"))
        if not about or _EN_PRONOUN_ONLY.match(about):
            return None
        explicit = found.group("verb").casefold() != "forget" or (
            found.group("link") or ""
        ).casefold() not in ("", "about")
        if not explicit and not _EN_ABOUT_THE_USER.match(about):
            return None
        return ChangeOfMind("forget", about, body)
    if question:
        return None
    for pattern in (_ZH_FORGET_BA, _ZH_FORGET):
        found = pattern.match(body)
        if found is not None:
            groups = found.groupdict()
            bare = groups.get("bare") and not (groups.get("lead") or groups.get("who"))
            if bare and not groups.get("link") and not _ZH_ABOUT_THE_USER.search(found["about"]):
                continue
            about = _about_zh(found.group("about"))
            if len(about) >= 2 and about not in ("這個", "这个", "它", "那個", "那个"):
                return ChangeOfMind("forget", about, body)
    return None


def _correction(body: str) -> ChangeOfMind | None:
    found = _EN_CORRECTION.match(body)
    if found is not None and (found.group("mark") or found.group("now")):
        old = _clean(found.group("old"))
        new = _new_words(found.group("body"), old)
        if old and new and old.casefold() != new.casefold():
            return ChangeOfMind("correction", found.group("body"), body, True, old, new)
    found = _ZH_CORRECTION.match(body)
    if found is not None:
        old = _clean(found.group("old"))
        text = _clean(found.group("body"))
        swapped = text[-len(old) :] if old and len(text) > len(old) else None
        if old and swapped and old != swapped:
            return ChangeOfMind("correction", text, body, True, old, swapped)
    return None


def _new_words(body: str, old: str) -> str:
    """The words of ``body`` that take the place of ``old`` ("it's Mia" → "Mia")."""
    body = _clean(re.sub(r"\s+now$", "", body.strip(), flags=_I))
    pronoun = re.match(
        r"^(?:it|that|this|she|he|they)(?:'s|’s|\s+is|\s+are|\s+was)\s+(.+)$", body, _I
    )
    if pronoun:
        return _clean(pronoun.group(1))
    words = body.split()
    count = max(1, len(old.split()))
    return " ".join(words[-count:]) if len(words) > count else ""


def _reversal(body: str) -> ChangeOfMind | None:
    found = _EN_SWITCH.search(body)
    if found is not None:
        old, new = _about_en(found.group("old")), _about_en(found.group("new"))
        if old and new:
            return ChangeOfMind("reversal", old, body, True, old, new)
    for pattern in _EN_REVERSALS:
        found = pattern.search(body)
        if found is None:
            continue
        about = _about_en(found.group("about"))
        if not about or _EN_NOT_ABOUT_A_FACT.match(about) or _EN_PRONOUN_ONLY.match(about):
            return None
        rest = body[found.end("about") :] if found.end("about") < len(body) else ""
        tail = body[len(_first_clause(body)) :]
        replaces = bool(_EN_REPLACEMENT.search(tail or rest))
        return ChangeOfMind("reversal", about, body, replaces)
    if _zh_switch(body) is not None:
        return None  # "回答改成用繁體中文": a switch, which edits the memory
    replaces = bool(_ZH_REPLACEMENT.search(body))
    found = _ZH_NO_LONGER.match(body) or _ZH_NO_LONGER_LIKE.match(body)
    if found is not None:
        about = _about_zh(found.group("about"))
        return ChangeOfMind("reversal", about, body, replaces) if len(about) >= 2 else None
    found = _ZH_REVERSAL.search(body)
    if found is None:
        # "我改喝燕麥奶了，不喝全脂牛奶": the old habit in its own clause.
        if replaces:
            habit = re.search(
                r"(?:不再|不|沒有再|没有再)(?P<about>[^，,。；;不]{2,}?)(?:了|啦)?(?:[，,。；;]|$)",
                body,
            )
            about = _about_zh(habit.group("about")) if habit else _ZH_REPLACEMENT.sub("", body)
            return ChangeOfMind("reversal", about, body, True)
        return None
    about = _about_zh(found.group("about"))
    if len(about) < 1:
        return None
    return ChangeOfMind("reversal", about, body, replaces)


def _bare(words: str) -> str:
    """Words without the article or "my" in front and "now"/"please" after them."""
    words = _clean(_STATEMENT_TAIL.sub("", _clean(words)))
    words = re.sub(r"\s+(?:please|too|as well)$", "", words, flags=_I)
    return _ARTICLE.sub("", words)


def _switch(body: str) -> ChangeOfMind | None:
    """An instruction that changes something from now on, or "X instead of Y"."""
    durable = bool(_DURABLE.search(body))
    plain = _clean(re.sub(r"\s{2,}", " ", _DURABLE.sub(" ", without_fillers(body))))
    found = _EN_SWITCH_TO.match(plain)
    if found is not None:
        old = _bare(found.group("old") or "") or None
        what, new = _clean(found.group("what")), _bare(found.group("new"))
        if not (old or durable) or not new or _EN_PRONOUN_ONLY.match(what):
            return None
        subject = _ARTICLE.sub("", what)
        # Said to hold from now on, it is a fact even when no memory is about it; otherwise
        # ("Switch the lights to blue instead of red") it edits a memory or nothing.
        fact = None
        if durable and _CLOCK.fullmatch(new):
            fact = f"{subject[:1].upper()}{subject[1:]} at {new}"
        elif durable:
            fact = f"Wants {subject} {_EN_SWITCHED[found.group('verb').lower()]} to {new}"
        return ChangeOfMind("switch", what, body, True, old, new, fact=fact)
    found = _EN_INSTEAD.match(plain)
    # A habit or a rule ("I take the bus instead of the train now"), not a one-off ("Let's
    # take the stairs instead of the lift").
    if found is not None and _HABIT.search(body):
        old, head = _bare(found.group("old")), found.group("head")
        if not old or len(old.split()) > 4:
            return None
        use = _EN_USE.match(head)
        if use is not None:
            new = _bare(use.group("new"))
        else:
            words = _bare(head).split()
            count = len(old.split())
            new = " ".join(words[-count:]) if len(words) > count else ""
        if not new or new.casefold() == old.casefold():
            return None
        fact = as_preference(as_user_fact(_STATEMENT_TAIL.sub("", plain)))
        return ChangeOfMind("switch", head, body, True, old, _ARTICLE.sub("", new), fact=fact)
    return _zh_switch(body)


def _zh_switch(body: str) -> ChangeOfMind | None:
    found = _ZH_SWITCH.match(without_fillers(body))
    # From now on (以後…, 一律), or in place of something: not "现在把空调调到二十六度".
    if found is None or not (found.group("old") or _ZH_DURABLE.search(body)):
        return None
    if _ZH_NOW.search(body):
        return None
    what, new = _clean(found.group("what")), _clean(found.group("new"))
    what = re.sub(r"^(?:我(?:現在|现在|已經|已经)?(?:想|要)?)?", "", what) or what
    if len(what) < 2 or not new:
        return None
    old = _clean(found.group("old") or "") or None
    timed = any(v.kind == "time" for v in features(new).values)
    fact = as_user_fact(what + ("在" if timed else "") + new) if _ZH_DURABLE.search(body) else None
    return ChangeOfMind("switch", what, body, True, old, new, fact=fact)


def find_changes(messages: Iterable[Any]) -> list[ChangeOfMind]:
    """The changes of mind in the user messages, each with the user's sentence as evidence."""
    changes: list[ChangeOfMind] = []
    seen: set[tuple[str, str]] = set()
    for _, sentence in user_sentences(messages):
        change = match_change(sentence)
        if change is not None and (change.kind, change.sentence) not in seen:
            seen.add((change.kind, change.sentence))
            changes.append(
                ChangeOfMind(
                    change.kind,
                    change.about,
                    change.sentence,
                    change.replaces,
                    change.old,
                    change.new,
                    evidence=sentence,
                    fact=change.fact,
                )
            )
    return changes


def is_change_sentence(sentence: str) -> bool:
    """True when the sentence takes something back (so it must not be stored as a fact)."""
    return match_change(sentence) is not None


def is_reminder_request(sentence: str) -> bool:
    """ "Don't forget to water the plants", "別忘了提醒我買綠茶": a to-do, not a fact."""
    body = _clean(sentence)
    return bool(_EN_REMINDER.search(body) or _ZH_REMINDER.search(body))


# Words that say how or who, not what: they never pick a memory. Text's filler (less eight
# words target matching has always counted) and the words a change of mind is said with.
_STOP = (
    LATIN_FILLER
    - {"instead", "preference", "preferred", "rather", "than", "users", "using", "wanted"}
) | {
    "old",
    "previous",
    "former",
    "current",
    "thing",
    "things",
    "stuff",
    "about",
    "anymore",
    "any",
    "more",
    "longer",
    "no",
    "not",
    "don",
    "t",
    "do",
    "does",
    "did",
    "don't",
    "doesn't",
    "won't",
    "can",
    "cannot",
    "into",
    "being",
    "been",
    "have",
    "has",
    "had",
    "ve",
    "m",
    "re",
    "ll",
    "d",
    "now",
    "these",
    "days",
    "fact",
    "memory",
    "remember",
    "know",
}
_ZH_STOP = set("我你他她的了是都要在很也就吧呢啊嗎吗這这那件事個个再不用記得记得忘掉記忘记")
_STOP_TERMS = frozenset(stem(word) for word in _STOP) | frozenset(fold(c) for c in _ZH_STOP)


@functools.lru_cache(maxsize=4096)
def _terms(text: str) -> frozenset[str]:
    """The key terms a change names (``webapp.language.terms``: folded, stemmed, jieba's
    words), without the words a change of mind is said with."""
    read = terms(fold(text))
    return frozenset(t for t in read.terms | read.verbs if t not in _STOP_TERMS)


def _match(term: str, terms: frozenset[str]) -> bool:
    if term in terms:
        return True
    if len(term) < 4 or _CJK_CHAR.search(term):
        return False
    return any(len(t) >= 4 and (t.startswith(term) or term.startswith(t)) for t in terms)


def target_score(about: str, memory: str) -> float:
    """How much of what ``about`` names the memory holds (0.0 to 1.0)."""
    wanted = _terms(about)
    if not wanted:
        return 0.0
    have = _terms(memory)
    return sum(1 for term in wanted if _match(term, have)) / len(wanted)


def _contains(memory: str, words: str) -> bool:
    folded, target = fold(memory), fold(words)
    if _CJK_CHAR.search(target):
        return target in folded
    return re.search(rf"(?<!\w){re.escape(target)}(?!\w)", folded) is not None


def _subject(change: ChangeOfMind) -> frozenset[str]:
    """The terms naming what a switch changes, without its old and new words."""
    return _terms(change.about) - _terms(change.old or "") - _terms(change.new or "")


def _about_subject(change: ChangeOfMind, memory: Memory) -> bool:
    subject = _subject(change)
    if not subject:
        return False
    have = _terms(memory.content)
    return sum(1 for term in subject if _match(term, have)) / len(subject) >= MIN_TARGET_SCORE


def _holds_value(memory: str, words: str) -> bool:
    """``memory`` says ``words``, or the same value ("06:45" in "alarm at 6:45am")."""
    return _contains(memory, words) or _value_span(memory, words) is not None


def find_target(change: ChangeOfMind, memories: Sequence[Memory]) -> Memory | None:
    """The one memory the change is about, or None when no memory, or more than one, fits."""
    if change.kind == "switch":
        # Only a memory about the same thing: "Use tabs instead of spaces" names no subject,
        # and must not edit "Prefers spaces around operators".
        about = [m for m in memories if _about_subject(change, m)]
        if change.old:
            about = [m for m in about if _holds_value(m.content, change.old)]
            return about[0] if len(about) == 1 else _best(change.about, about)
        return _best(change.about, about)
    if change.old:
        holding = [m for m in memories if _contains(m.content, change.old)]
        if len(holding) == 1:
            return holding[0]
        if len(holding) > 1:
            return _best(change.sentence, holding)
        if change.kind == "correction":
            return None
    return _best(change.about, memories)


def _best(about: str, memories: Sequence[Memory]) -> Memory | None:
    scored = sorted(
        ((target_score(about, m.content), index) for index, m in enumerate(memories)),
        reverse=True,
    )
    if not scored or scored[0][0] < MIN_TARGET_SCORE:
        return None
    if len(scored) > 1 and scored[0][0] - scored[1][0] < MIN_TARGET_MARGIN:
        return None
    return memories[scored[0][1]]


def holds_already(change: ChangeOfMind, memories: Sequence[Memory]) -> bool:
    """True when a memory about what the switch changes already says its new value (the
    change was made: "Weekday alarm is 07:00; … morning routine …")."""
    return bool(change.new) and any(
        _about_subject(change, m) and _holds_value(m.content, change.new or "") for m in memories
    )


def replaced_content(change: ChangeOfMind, memory: Memory) -> str | None:
    """The memory as it reads after the change — its words swapped, the rest kept — or for a
    reversal or correction that gives no words to swap, the user's sentence as a fact about
    them; None when there is no clean content (a switch whose place in the memory is unclear)."""
    old, new = change.old, change.new
    if change.kind == "reversal" and change.replaces and not new:
        old, new = _reversal_words(change, memory.content)
    if change.kind == "correction" and old:
        new = _aligned_new(memory.content, change.about, old) or new
    if new:
        edited = _edited(memory.content, old, new, change.about if change.kind == "switch" else "")
        if edited is not None:
            return edited
    if change.kind == "switch":
        return None
    return statement(change.sentence)


def _reversal_words(change: ChangeOfMind, memory: str) -> tuple[str | None, str | None]:
    """The old words a reversal takes back (as the memory has them) and the new ones."""
    found = _EN_NEW.search(change.sentence)
    if found is not None:
        new = _bare(found.group("new"))
        words = change.about.split()
        for start in range(len(words)):
            old = " ".join(words[start:])
            if _contains(memory, old):
                return old, new
        return None, new
    found = _ZH_NEW.search(change.sentence)
    if found is not None:
        taken_back = _ZH_OLD.search(change.sentence)
        return (taken_back.group("old") if taken_back else None), found.group("verb") + found.group(
            "new"
        )
    return None, None


def _aligned_new(memory: str, said: str, old: str) -> str | None:
    """The words of ``said`` standing where ``memory`` has ``old`` ("my car is a blue Honda
    Civic" against "My car is a red Honda Civic": blue), or None when they do not line up."""
    if _CJK_CHAR.search(old):
        return None
    mine, theirs = memory.split(), said.split()
    wanted = [w.casefold() for w in old.split()]
    matcher = difflib.SequenceMatcher(
        a=[w.casefold().strip(",.;") for w in mine],
        b=[w.casefold().strip(",.;") for w in theirs],
        autojunk=False,
    )
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace" and [w.casefold().strip(",.;") for w in mine[i1:i2]] == wanted:
            return " ".join(theirs[j1:j2]).strip(",.;")
    return None


def statement(sentence: str) -> str | None:
    """The user's sentence as a fact about them, clause by clause: "I'm not vegetarian anymore,
    I eat fish now" → "Is not vegetarian, eats fish"; None when it is an instruction."""
    text = _clean(sentence)
    text = re.sub(r"^(?:actually|sorry|correction|oops|wait|no)\b[,:]?\s*", "", text, flags=_I)
    text = re.sub(r"^(?:其實|其实|不對|不对|更正|抱歉)[，,：:]?", "", text)
    clauses: list[str] = []
    for clause in re.split(r"(?<=[,;，；])\s*", text):
        mark = clause[-1] if clause and clause[-1] in ",;，；" else ""
        words = _STATEMENT_TAIL.sub("", without_fillers(clause))
        if words:
            words = as_user_fact(words)
            if clauses and words[:1].isascii():
                words = words[:1].lower() + words[1:]
            clauses.append(words + (mark if mark in "，；" else ""))
    joined = "".join(c if c.endswith(("，", "；")) else c + ", " for c in clauses).rstrip(", ")
    joined = joined[:1].upper() + joined[1:] if joined[:1].isascii() else joined
    if not joined or is_instruction(joined):
        return None
    return joined


def _edited(content: str, old: str | None, new: str, about: str) -> str | None:
    """``content`` with ``old`` (or the one value, or the clause, ``new`` replaces) replaced
    by ``new`` and the rest kept; None when where ``new`` goes is not clear."""
    span = None
    if old:
        span = _word_span(content, old) or _value_span(content, old)
    elif features(new).values:
        span = _value_span(content, new, same_kind=True)
    elif _CJK_CHAR.search(new) and about:
        span = _clause_after(content, about)
    if span is None:
        return None
    start, end = span
    if _CJK_CHAR.search(new):
        new = _without_overlap(content, start, end, new)
    edited = content[:start] + new + content[end:]
    return None if normalize_spaces(edited) == normalize_spaces(content) else edited


def normalize_spaces(text: str) -> str:
    return " ".join(fold(text).split())


def _word_span(content: str, words: str) -> tuple[int, int] | None:
    """Where ``words`` are in ``content`` (whole words; Chinese in either script)."""
    if _CJK_CHAR.search(words):
        table = traditional_to_simplified()
        at = content.translate(table).find(words.translate(table))
        return (at, at + len(words)) if at != -1 else None
    found = re.search(rf"(?<!\w){re.escape(words)}(?!\w)", content, _I)
    return found.span() if found else None


def _value_span(content: str, words: str, same_kind: bool = False) -> tuple[int, int] | None:
    """Where ``content`` writes the one value ``words`` states (the same amount), or with
    ``same_kind`` the only value of its kind ("07:00" → the one time in the memory)."""
    said = features(words).values
    if len(said) != 1:
        return None
    wanted = said[0]
    held = [v for v in features(content).values if v.kind == wanted.kind]
    if not same_kind:
        held = [v for v in held if v.amount == wanted.amount]
    if len(held) != 1:
        return None
    return _word_span(content, held[0].text)


def _clause_after(content: str, about: str) -> tuple[int, int] | None:
    """The words after ``about`` up to the end of its clause (回答 in 以後回答都用英文)."""
    span = _word_span(content, about)
    if span is None:
        return None
    end = span[1]
    while end < len(content) and content[end] not in "，,。；;.!！":
        end += 1
    return (span[1], end) if end > span[1] else None


def _without_overlap(content: str, start: int, end: int, new: str) -> str:
    """``new`` without what ``content`` already has around the span it replaces
    (骑自行车 → 坐地铁上班 in 我每天骑自行车上班 puts 坐地铁, keeping 上班 once)."""
    after, before = content[end:], content[:start]
    for size in range(len(new) - 1, 0, -1):
        if after.startswith(new[-size:]):
            new = new[:-size]
            break
    for size in range(len(new) - 1, 0, -1):
        if before.endswith(new[:size]):
            new = new[size:]
            break
    return new
