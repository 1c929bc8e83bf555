"""A sentence the user said about themselves, rewritten as a fact about the user.

"I prefer the hallway lights at 30% after 22:00" → "Prefers the hallway lights at 30% after
22:00"; "我喜歡喝無糖綠茶" → "喜歡喝無糖綠茶". Only a sentence that opens with the speaker
("I …", "I'm …", "My …", 我…, 我的…) is rewritten; anything else is returned unchanged.
"""

from __future__ import annotations

import re

# Words between "I" and the verb that stay as they are: "I really prefer" → "Really prefers".
_ADVERBS = frozenset(
    [
        "always",
        "usually",
        "normally",
        "generally",
        "never",
        "often",
        "sometimes",
        "rarely",
        "really",
        "much",
        "strongly",
        "also",
        "still",
        "only",
        "just",
        "mostly",
        "typically",
        "definitely",
        "absolutely",
        "actually",
    ]
)
# Verbs that do not take an -s: "I can't stand" → "Can't stand".
_MODALS = frozenset(
    [
        "can",
        "can't",
        "cannot",
        "could",
        "couldn't",
        "will",
        "won't",
        "would",
        "wouldn't",
        "should",
        "shouldn't",
        "must",
        "mustn't",
        "might",
        "may",
        "shall",
    ]
)
_IRREGULAR = {
    "am": "is",
    "'m": "is",
    "’m": "is",
    "have": "has",
    "'ve": "has",
    "’ve": "has",
    "do": "does",
    "don't": "doesn't",
    "don’t": "doesn’t",
    "'d": "would",
    "’d": "would",
    "'ll": "will",
    "’ll": "will",
    "was": "was",
}
_OPENING_I = re.compile(r"^I(?=\s|['’](?:m|ve|d|ll)\b)(?P<contraction>['’](?:m|ve|d|ll))?\s*", re.I)
_OPENING_MY = re.compile(r"^my\s+(?=\S)", re.I)
_WORD = re.compile(r"^(?P<word>[A-Za-z'’-]+)(?P<rest>.*)$", re.S)
# 我 at the start, not 我們/我们 (the user's team speaks for several people).
_OPENING_WO = re.compile(r"^我(?![們们])(?:的)?")


def third_person(verb: str) -> str:
    """The verb as it goes after "he" or "she": prefer → prefers, go → goes, study → studies."""
    lower = verb.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if lower in _MODALS or lower.endswith(("n't", "n’t")):
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def is_first_person(text: str) -> bool:
    """True when the text is the user's own sentence ("I prefer…", "My…", "我喜歡…")."""
    stripped = text.strip()
    return bool(
        _OPENING_I.match(stripped) or _OPENING_MY.match(stripped) or _OPENING_WO.match(stripped)
    )


def as_user_fact(text: str) -> str:
    """``text`` rewritten from the user's first person into a fact about the user."""
    stripped = text.strip()
    if _OPENING_WO.match(stripped):
        rest = _OPENING_WO.sub("", stripped, count=1).lstrip("，,、 ")
        return rest or stripped
    if _OPENING_MY.match(stripped):
        return _capitalised(_OPENING_MY.sub("", stripped, count=1))
    opening = _OPENING_I.match(stripped)
    if opening is None:
        return stripped
    rest = stripped[opening.end() :]
    if opening.group("contraction"):
        verb = third_person(opening.group("contraction"))
        return _capitalised(f"{verb} {rest}".strip())
    words: list[str] = []
    while True:
        found = _WORD.match(rest)
        if found is None:
            return stripped  # "I" followed by no verb: leave the sentence as it was
        word, rest = found.group("word"), found.group("rest")
        if word.lower() in _ADVERBS:
            words.append(word)
            rest = rest.lstrip()
            continue
        words.append(third_person(word))
        return _capitalised(" ".join(words) + rest)
