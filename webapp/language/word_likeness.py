"""How alike two facts are in words: compared on their key terms (``terms``), the same reading
every judgement uses, so a fix to how a phrase is read holds here too.

``similarity`` is 0.0 (no key term shared) to 1.0 (the same key terms; one fact extending the
other scores high); ``is_variant`` says two facts are about the same thing (an update rather
than a new fact); ``near_identical`` says they are the same fact in slightly different words,
numbers equal (used to keep a rejected fact from coming back).
"""

from __future__ import annotations

import functools
import re
import unicodedata

from rapidfuzz import fuzz

from ..text import fold, normalize
from .terms import terms

# A close variant of an existing memory ("prefers neovim instead of vim" vs "prefers vim").
VARIANT_THRESHOLD = 0.75
# The same fact in slightly different words; used to keep rejected facts from coming back.
NEAR_IDENTICAL_THRESHOLD = 0.9

_DIGITS = re.compile(r"\d+")


def key_terms(text: str) -> list[str]:
    """The terms that carry the fact (``terms``: content words stemmed, Chinese words, the
    light verbs), sorted."""
    return list(_key_terms(text or ""))


@functools.lru_cache(maxsize=65536)
def _key_terms(text: str) -> tuple[str, ...]:
    read = terms(fold(text))
    return tuple(sorted(read.terms | read.verbs))


def _numbers(text: str) -> list[str]:
    return _DIGITS.findall(unicodedata.normalize("NFKC", text or ""))


def similarity(a: str, b: str) -> float:
    """0.0 (unrelated) to 1.0 (same key terms); one fact extending the other scores high."""
    if normalize(a) == normalize(b):
        return 1.0
    terms_a, terms_b = key_terms(a), key_terms(b)
    if not terms_a or not terms_b:
        return fuzz.ratio(normalize(a), normalize(b)) / 100
    if not set(terms_a) & set(terms_b):
        return 0.0
    return fuzz.token_set_ratio(" ".join(terms_a), " ".join(terms_b)) / 100


def is_variant(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` are about the same thing (an update, not a new fact)."""
    return similarity(a, b) >= VARIANT_THRESHOLD


def near_identical(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` say the same fact (used to honour rejections).

    Numbers must match exactly: "lights at 30%" and "lights at 50%" are different facts.
    """
    if normalize(a) == normalize(b):
        return True
    if _numbers(a) != _numbers(b):
        return False
    terms_a, terms_b = key_terms(a), key_terms(b)
    if not terms_a or not terms_b:
        return fuzz.ratio(normalize(a), normalize(b)) / 100 >= NEAR_IDENTICAL_THRESHOLD
    return (
        fuzz.token_sort_ratio(" ".join(terms_a), " ".join(terms_b)) / 100
        >= NEAR_IDENTICAL_THRESHOLD
    )
