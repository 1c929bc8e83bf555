"""A change of mind against memory: the one memory it is about, and how that memory reads after.

``find_target`` picks the memory a change (``changes.ChangeOfMind``) takes back: the one
holding most of what the sentence names, by a clear margin; when no memory is close enough,
or two are equally close, none. ``replaced_content`` is that memory as it reads after the
change: its words swapped and the rest kept ("Weekday alarm is 07:00; on weekends …"), or
for a reversal or correction that gives no words to swap, the sentence rewritten as a fact
about the user (``statement``: "I'm not vegetarian anymore, I eat fish now" → "Is not
vegetarian, eats fish"), never the sentence as it was said.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Sequence

from ..attention.pairs import features
from ..language import stem, terms
from ..language.phrasing import as_user_fact, is_instruction, without_fillers
from ..stores.memories import Memory
from ..text import LATIN_FILLER, fold, traditional_to_simplified
from .changes import STATEMENT_TAIL, ChangeOfMind, bare, clean

# How much of what the sentence names a memory must hold, and by how much it must beat the
# next best, to be the target.
MIN_TARGET_SCORE = 0.5
MIN_TARGET_MARGIN = 0.2

_I = re.IGNORECASE
_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_CHAR = re.compile(rf"[{_CJK}]")
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
        new = bare(found.group("new"))
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
    text = clean(sentence)
    text = re.sub(r"^(?:actually|sorry|correction|oops|wait|no)\b[,:]?\s*", "", text, flags=_I)
    text = re.sub(r"^(?:其實|其实|不對|不对|更正|抱歉)[，,：:]?", "", text)
    clauses: list[str] = []
    for clause in re.split(r"(?<=[,;，；])\s*", text):
        mark = clause[-1] if clause and clause[-1] in ",;，；" else ""
        words = STATEMENT_TAIL.sub("", without_fillers(clause))
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
