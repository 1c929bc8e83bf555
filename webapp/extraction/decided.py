"""Whether a proposal was decided already: memory holds it, or a person approved it, rejected
it or has it waiting in Review.

Every extraction run, by the rules or by an LLM, asks ``already_decided`` before it proposes
anything, so approving or rejecting a fact settles it for every later run over the same
threads, in whatever words the run finds it again. It is the one place that says "this is the
same fact": by words (``webapp.text`` and ``curation.pairs``), and with a ``judge`` (the
similarity layer, once its model is loaded) by meaning too, where the judge says the two state
the same fact and the new adds nothing; without one, by words alone.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ..attention.pairs import SIMILAR_ENOUGH, restates, similarity_of
from ..language.framing import says_also
from ..language.phrasing import as_user_fact
from ..language.word_likeness import VARIANT_THRESHOLD, key_terms, similarity
from ..sensitive.secrets import mask_secrets
from ..similarity import Judge
from ..stores.memories import Memory
from ..stores.review import ReviewItem
from ..text import normalize

# The texts most like a proposal (by the judge's vectors) that it asks whether they say the same.
JUDGED_CANDIDATES = 5

# Evidence shorter than this (folded letters and digits) is too little to say two proposals
# came from the same words.
MIN_EVIDENCE_CHARS = 6


# Every run compares each candidate with every memory and review item: what is said of one
# text is worked out once (a few MB at most; memories and items rarely change).
@functools.lru_cache(maxsize=65536)
def _key(text: str) -> str:
    return normalize(text)


@functools.lru_cache(maxsize=65536)
def _terms(text: str) -> frozenset[str]:
    return frozenset(key_terms(text))


@functools.lru_cache(maxsize=65536)
def _evidence_key(text: str) -> str:
    return normalize(mask_secrets(text))


def says_the_same(kept: str, new: str) -> bool:
    """``new`` says nothing ``kept`` does not: the same text, or all of its terms and values
    within a close variant ("Always uses metric units" in "I always use metric units"; not
    "Daughter's name is Mia" in "Daughter's name is Maya")."""
    if not kept or not new:
        return False
    if _key(kept) == _key(new):
        return True
    terms_kept, terms_new = _terms(kept), _terms(new)
    if terms_kept and terms_new and not terms_kept & terms_new:
        return False  # no word in common: not the same fact (similarity would say 0)
    if similarity(kept, new) < VARIANT_THRESHOLD:
        return False
    return restates(kept, new) or restates(as_user_fact(kept), new)


def _same_words(a: str | None, b: str | None) -> bool:
    """The two evidences are the same words, or one quotes the other."""
    if not a or not b:
        return False
    a, b = _evidence_key(a), _evidence_key(b)
    if min(len(a), len(b)) < MIN_EVIDENCE_CHARS:
        return False
    return a in b or b in a


def _judged_same(judge: Judge, content: str, texts: Sequence[str]) -> bool:
    """The judge says one of ``texts`` (the closest few by meaning) states ``content``."""
    kept = [text for text in dict.fromkeys(texts) if text]
    if not kept or not content:
        return False
    # "Also allergic to penicillin" adds a value: the same only when it says nothing more.
    adds = says_also(content)
    return any(
        judge.repeats(kept[index], content) and (not adds or restates(kept[index], content))
        for index, _ in judge.most_similar(content, kept, JUDGED_CANDIDATES)
    )


def _repeats(item: ReviewItem, content: str, action: str, memory_id: str | None) -> bool:
    return (
        item.action == action
        and item.memory_id == memory_id
        and _key(item.content) == _key(content)
    )


def already_decided(
    content: str,
    *,
    memories: Sequence[Memory],
    items: Sequence[ReviewItem],
    action: str = "add",
    memory_id: str | None = None,
    evidence: str | None = None,
    judge: Judge | None = None,
) -> bool:
    """True when proposing ``action`` with ``content`` (on memory ``memory_id``, said in
    ``evidence``) would ask a person again what is decided: memory already says it, or a
    review item a person approved or rejected proposed the same fact or the same change, in
    the same words or others; or an item (waiting too) came from the same words of the user's
    and says much the same. With ``judge``, a new fact (``add``) that the judge says memory or a
    decided item states already, in other words, counts too ("Is vegetarian" / "Doesn't eat meat").

    A ``delete`` is decided when one on the same memory, from the same evidence, was approved
    or rejected (other words asking again are a new request). An exact repeat of a waiting
    proposal is left to the review queue, which skips it and says so.
    """
    if action == "delete":
        return any(
            item.action == "delete"
            and item.status != "pending"
            and item.memory_id == memory_id
            and _evidence_key(item.evidence or "") == _evidence_key(evidence or "")
            for item in items
        )
    for memory in memories:
        if (action == "add" or memory.id == memory_id) and says_the_same(memory.content, content):
            return True
    for item in items:
        if item.status == "pending" and _repeats(item, content, action, memory_id):
            continue  # the queue counts an exact repeat of a waiting proposal as skipped
        said = [item.content, *([item.applied_content] if item.applied_content else [])]
        same_change = action == "add" or (item.action == action and item.memory_id == memory_id)
        decided = item.status != "pending"
        if decided and same_change and any(says_the_same(text, content) for text in said):
            return True
        # The same words of the user's gave this fact before: a rewording of it ("以后帮我写
        # 自动化的时候都用 YAML" after "自动化一律用 YAML 格式编写" was approved).
        if _same_words(item.evidence, evidence) and any(
            similarity_of(text, content) >= SIMILAR_ENOUGH for text in said
        ):
            return True
    if judge is None or action != "add":
        return False  # a change is about its memory: "close" there is what it changes
    kept = [m.content for m in memories]
    for item in items:
        if item.status != "pending":
            kept += [item.content, *([item.applied_content] if item.applied_content else [])]
    return _judged_same(judge, content, kept)
