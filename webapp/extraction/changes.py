"""Changes of mind: forget requests, reversals, corrections and switches, read from what was said.

People take facts back in passing: "Forget that I like green tea", "I no longer drink coffee,
I switched to tea", "Actually it's Mia, not Maya", "以後不用再提醒我倒垃圾了",
"请忘记我对猫毛过敏这件事". Such a sentence is never a fact to store. ``find_changes`` reads
the user's sentences and returns what each one takes back (``ChangeOfMind``); which memory it
is about, and how that memory reads after it, is ``change_targets``'s: ``delete`` when
nothing replaces it, ``update`` with the new fact when the sentence gives one, nothing when
the memory is not clear.

A switch ("Switch the morning routine to 07:00 from now on instead of 06:45", "Use tabs
instead of spaces", 把晨間流程改成七點) edits the memory it is about and keeps the rest of it;
when no memory holds what it changes, it is the fact it implies (``ChangeOfMind.fact``:
"Morning routine at 07:00"), proposed as new.

Look-alikes change nothing: "Don't forget to water the plants" and "別忘了提醒我買綠茶" ask
for a reminder, "I don't remember if…" and "我忘了帶鑰匙" say the user forgot something,
"Forget it, let's…" names no memory, and "今天不用提醒我了" is for one day only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..attention.pairs import features
from ..language.phrasing import as_preference, as_user_fact, without_fillers
from .sentences import user_sentences

KINDS = ("forget", "reversal", "correction", "switch")

_I = re.IGNORECASE

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
_ZH_DURABLE = re.compile(
    r"以後|以后|今後|今后|往後|往后|從今以後|从今以后|從現在開始|从现在开始|從現在起|从现在起|"
    r"從今天開始|从今天开始|從今天起|从今天起|每次|一律|一直|都"
)
_ZH_NOW = re.compile(r"^(?:(?:現在|现在|馬上|马上|立刻|先)(?!開始|开始|起))")
_ARTICLE = re.compile(r"^(?:the|a|an|my|our)\s+", _I)
_CLOCK = re.compile(r"\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?|\d{1,2}:\d{2}", _I)
# Words a statement of a change ends with that a memory does not need.
STATEMENT_TAIL = re.compile(
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

    kind: str  # "forget", "reversal", "correction" or "switch"
    about: str  # the words naming the remembered fact ("I like green tea", "倒垃圾")
    sentence: str  # the user's sentence, cleaned
    replaces: bool = False  # the sentence states a new fact that replaces the old one
    old: str | None = None  # for "X, not Y" and "from X to Y": the old words…
    new: str | None = None  # …and the new ones
    evidence: str | None = None  # the user's message
    extractor: str = "regex"
    # For a switch: the fact it implies, proposed as new when no memory holds what it changes.
    fact: str | None = None


def clean(text: str) -> str:
    """``text`` without the spaces and punctuation around it."""
    return text.strip().strip(" ,，.。!！?？;；:：")


def _first_clause(text: str) -> str:
    return re.split(r"\s*[,;，；、]\s*|\s+(?:and|but|because|since|so)\s+", text, maxsplit=1)[0]


def _about_en(text: str) -> str:
    return clean(_EN_TAIL.sub("", clean(_first_clause(text))))


def _about_zh(text: str) -> str:
    return clean(_ZH_TAIL.sub("", clean(re.split(r"[，,；;。]", text, maxsplit=1)[0])))


def match_change(sentence: str) -> ChangeOfMind | None:
    """The change of mind a sentence states, or None (most sentences, and every look-alike)."""
    body = clean(
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
        old = clean(found.group("old"))
        new = _new_words(found.group("body"), old)
        if old and new and old.casefold() != new.casefold():
            return ChangeOfMind("correction", found.group("body"), body, True, old, new)
    found = _ZH_CORRECTION.match(body)
    if found is not None:
        old = clean(found.group("old"))
        text = clean(found.group("body"))
        swapped = text[-len(old) :] if old and len(text) > len(old) else None
        if old and swapped and old != swapped:
            return ChangeOfMind("correction", text, body, True, old, swapped)
    return None


def _new_words(body: str, old: str) -> str:
    """The words of ``body`` that take the place of ``old`` ("it's Mia" → "Mia")."""
    body = clean(re.sub(r"\s+now$", "", body.strip(), flags=_I))
    pronoun = re.match(
        r"^(?:it|that|this|she|he|they)(?:'s|’s|\s+is|\s+are|\s+was)\s+(.+)$", body, _I
    )
    if pronoun:
        return clean(pronoun.group(1))
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


def bare(words: str) -> str:
    """Words without the article or "my" in front and "now"/"please" after them."""
    words = clean(STATEMENT_TAIL.sub("", clean(words)))
    words = re.sub(r"\s+(?:please|too|as well)$", "", words, flags=_I)
    return _ARTICLE.sub("", words)


def _switch(body: str) -> ChangeOfMind | None:
    """An instruction that changes something from now on, or "X instead of Y"."""
    durable = bool(_DURABLE.search(body))
    plain = clean(re.sub(r"\s{2,}", " ", _DURABLE.sub(" ", without_fillers(body))))
    found = _EN_SWITCH_TO.match(plain)
    if found is not None:
        old = bare(found.group("old") or "") or None
        what, new = clean(found.group("what")), bare(found.group("new"))
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
        old, head = bare(found.group("old")), found.group("head")
        if not old or len(old.split()) > 4:
            return None
        use = _EN_USE.match(head)
        if use is not None:
            new = bare(use.group("new"))
        else:
            words = bare(head).split()
            count = len(old.split())
            new = " ".join(words[-count:]) if len(words) > count else ""
        if not new or new.casefold() == old.casefold():
            return None
        fact = as_preference(as_user_fact(STATEMENT_TAIL.sub("", plain)))
        return ChangeOfMind("switch", head, body, True, old, _ARTICLE.sub("", new), fact=fact)
    return _zh_switch(body)


def _zh_switch(body: str) -> ChangeOfMind | None:
    found = _ZH_SWITCH.match(without_fillers(body))
    # From now on (以後…, 一律), or in place of something: not "现在把空调调到二十六度".
    if found is None or not (found.group("old") or _ZH_DURABLE.search(body)):
        return None
    if _ZH_NOW.search(body):
        return None
    what, new = clean(found.group("what")), clean(found.group("new"))
    what = re.sub(r"^(?:我(?:現在|现在|已經|已经)?(?:想|要)?)?", "", what) or what
    if len(what) < 2 or not new:
        return None
    old = clean(found.group("old") or "") or None
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
    body = clean(sentence)
    return bool(_EN_REMINDER.search(body) or _ZH_REMINDER.search(body))
