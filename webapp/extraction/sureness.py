"""Whether auto mode may apply a reconciled action by itself: only when it can say why it is sure.

``weighed`` (reconcile) marks what the sentence itself doubts (``stance``: in doubt, hearsay,
a bulk instruction, an unreliable source). ``assured`` marks the rest of what is not sure, each
with a reason code (``ReconcileAction.doubt``) that Review shows in words:

- ``older``: the statement is dated before the memory it would replace or stand beside ("as of
  2019 …" against "as of 2026 …", "last year it was …"; ``language.dating``). It never
  replaces the memory: an update becomes a new fact beside it (``current_content`` names the
  newer memory), waiting in Review; approved, it is kept with its date beside the newer one.
- ``unframed``: an update the sentence does not frame as a change ("now", "switched to", 換成,
  改到, 搬到 …) and the judge did not read as a new value of the same attribute (a clash of
  values or days): matched by closeness or by words alone, it could overwrite a true memory.
- ``unplaced``: a new fact the sentence frames as a change, with a kept memory about the same
  subject that the judge did not match: a change of which memory is not sure, so it is not
  added beside the old value either.

An automatic update needs a change framed or a new value of the same attribute, nothing
doubted and (``MemoryExtractor.submit``) the memory's version the one read; an automatic add
needs a fact that is close to no memory it might change. Everything else waits in Review.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..language.dating import older
from ..language.framing import says_also, says_change
from ..similarity import Judge
from ..stores.memories import Memory
from ..stores.timefmt import now_iso
from .slots import CHANGE_CANDIDATES, shares_subject

if TYPE_CHECKING:
    from .actions import ReconcileAction

# Judge reasons that say the fact is a new value of the kept memory's attribute, or that the
# sentence framed it as a change (``slots.settle``, ``decisions.decide_contradiction``); a rule's
# change of mind ("change") is framed by what found it.
SURE_UPDATES = frozenset(
    {"says_change", "different_values", "different_days", "yes_and_no", "change", "same_text"}
)


def assured(
    actions: Sequence[ReconcileAction], memories: Sequence[Memory], judge: Judge | None
) -> list[ReconcileAction]:
    """``actions`` with those auto mode may not apply by itself marked why (see the module)."""
    this_year = int(now_iso()[:4])
    by_id = {memory.id: memory for memory in memories}
    marked = []
    for action in actions:
        if action.action == "delete" or action.doubt is not None:
            marked.append(action)
            continue
        said = [text for text in (action.evidence, action.content) if text]
        target = by_id.get(action.id or "")
        if action.action == "update" and target is not None:
            words = _older(said, target.content, this_year, replacing=True)
            if words is not None:
                action = replace(
                    action, action="add", id=None, version=None, doubt="older", doubt_words=words
                )
            elif not (action.reason in SURE_UPDATES or any(says_change(t) for t in said)):
                action = replace(action, doubt="unframed")
        elif action.action == "add":
            near = _nearest_subject(action.content, memories, judge)
            if near is not None:
                words = _older(said, near.content, this_year, replacing=False)
                if words is not None:
                    action = replace(
                        action, current_content=near.content, doubt="older", doubt_words=words
                    )
                elif any(says_change(t) for t in said) and not any(says_also(t) for t in said):
                    action = replace(action, current_content=near.content, doubt="unplaced")
        marked.append(action)
    return marked


def _older(said: Sequence[str], memory: str, this_year: int, *, replacing: bool) -> str | None:
    for text in said:
        words = older(text, memory, this_year, replacing=replacing)
        if words is not None:
            return words
    return None


def _nearest_subject(fact: str, memories: Sequence[Memory], judge: Judge | None) -> Memory | None:
    """The kept memory nearest ``fact`` by meaning that is about the same subject, or None."""
    if judge is None or not memories:
        return None
    texts = [memory.content for memory in memories]
    for index, _cosine in judge.most_similar(fact, texts, CHANGE_CANDIDATES):
        if shares_subject(fact, texts[index]):
            return memories[index]
    return None
