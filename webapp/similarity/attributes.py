"""What one thing is: "<subject> is <value>" ("the family car is a blue Corolla", 家里宽带是电信的),
a value the thing has one of at a time, so another value is a change rather than a second fact."""

from __future__ import annotations

import re

from ..language import stem
from ..language.terms import CJK, CJK_RUN, wordlist

__all__ = ["attribute"]

_CJK = CJK

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
