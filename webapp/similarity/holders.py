"""Whose fact it is: the people and animals a fact can start with ("Daughter's…", 老公…, 我家的猫)."""

from __future__ import annotations

import re

__all__ = ["ANIMALS", "HOLDERS", "holder_at_end", "holder_at_start"]


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
ANIMALS = frozenset({"cat", "dog"})
# Words before the holder that still leave it first: "my daughter", 我老公, 家里的猫.
_HOLDER_PREFIX = re.compile(
    r"^(?:(?:the\s+)?user'?s?\s+|my\s+|our\s+|the\s+|his\s+|her\s+|their\s+)"
    r"|^(?:我们家的|我们家|我家的|我家|家里的|家里|我的|我)"
)


def holder_at_end(text: str) -> str:
    """The holder that ``text`` (the words before a name: 我女儿, 老公的) ends with, or ""."""
    for length in (3, 2, 1):
        if len(text) >= length and text[-length:] in HOLDERS:
            return HOLDERS[text[-length:]]
    return ""


def holder_at_start(folded: str) -> tuple[str, str]:
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
