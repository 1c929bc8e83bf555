"""One subject's one attribute: when a new fact replaces a kept memory, and when it stands beside it.

The similarity judge (``Judge.reconcile``) reads what two facts say; this settles its verdict
with how the new fact is framed (``webapp.language.framing``), precision first:

- a fact that says it adds one more value ("also allergic to penicillin", 也對…過敏) never
  replaces a memory, and is not taken as already known when it says something the memory
  does not;
- a fact that says a value changed ("… is Northwind now", "moved the router to the study",
  換成, 改到, 搬到) updates the kept memory about the same subject (the nearest by meaning
  that shares a key term with it), unless the two state values of different kinds (a
  company against a month: another attribute) or the memory says more than the fact
  replaces; when only the sentence it came from says so, the judge's doubt ("close") is
  lifted;
- otherwise an update that would drop what the memory says (its days, a kind of value it
  states, its terms: ``drops_information``) is another attribute of the same subject: an add.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..attention.pairs import drops_information, restates
from ..language.framing import says_also, says_change
from ..similarity import Judge
from ..similarity.decisions import Reconciled
from ..similarity.facts import analyse
from ..similarity.pair_parts import term_matches

# The kept memories, nearest by meaning first, a change is matched against.
CHANGE_CANDIDATES = 3
# Reasons of the verdicts settled here: an add that no fallback may turn into an update.
ANOTHER_VALUE = "another_value"
ANOTHER_ATTRIBUTE = "another_attribute"


def shares_subject(fact: str, memory: str) -> bool:
    """The two are about the same subject: they share a key term ("boiler", 外婆, 讀書會), a
    light verb (drives, 開), who holds the fact (grandma's …) or a value (a car)."""
    mine, theirs = analyse(fact), analyse(memory)
    if any(term_matches(term, mine.terms) for term in theirs.terms):
        return True
    if (mine.holder and mine.holder == theirs.holder) or mine.verbs & theirs.verbs:
        return True
    said = {(v.kind, v.amount) for v in mine.values if v.kind not in _NUMBERS}
    return any((v.kind, v.amount) in said for v in theirs.values)


# Kinds of values that say nothing of the subject alone (2015 and 2021 are both numbers).
_NUMBERS = frozenset({"number"})
# Kinds of values that are one kind for this purpose (a coach named Ben, a new coach, Carla).
_SAME_KIND = {"name": "proper"}


def _value_kinds_differ(fact: str, memory: str) -> bool:
    """Both state values, of no common kind (a company against a month)."""

    def kinds(text: str) -> set[str]:
        return {_SAME_KIND.get(kind, kind) for kind in analyse(text).value_kinds()}

    ours, theirs = kinds(fact), kinds(memory)
    return bool(ours and theirs and not ours & theirs)


def _states_more(memory: str, fact: str) -> bool:
    """``memory`` states more values of one kind than ``fact`` (two times against one): the
    fact changes one of them at most, so it cannot replace the memory."""
    kept, new = analyse(memory).value_kinds(), analyse(fact).value_kinds()
    return any(
        len({v.amount for v in values}) > len({v.amount for v in new.get(kind, [])})
        for kind, values in kept.items()
        if len(values) > 1
    )


def _drops(memory: str, fact: str) -> bool:
    """Replacing ``memory`` with ``fact`` would lose what it says: its terms or values
    (``drops_information``), its days, or a kind of value the fact does not state."""
    if drops_information(memory, fact):
        return True
    kept, new = analyse(memory), analyse(fact)
    if kept.days is not None and new.days is None:
        return True
    return bool(set(kept.value_kinds()) - set(new.value_kinds()))


def settle(
    fact: str, kept: Sequence[str], verdict: Reconciled, judge: Judge, evidence: str | None = None
) -> Reconciled:
    """The judge's ``verdict`` on ``fact`` against ``kept``, settled by its framing (or that of
    the sentence it came from, ``evidence``: "I moved my gym membership to CoreClub today")."""
    if not kept:
        return verdict
    if says_also(fact):
        if verdict.action == "update":
            return Reconciled("add", None, verdict.score, ANOTHER_VALUE)
        known = verdict.target if verdict.action == "skip" else None
        if known is not None and not restates(kept[known], fact):
            return Reconciled("add", None, verdict.score, ANOTHER_VALUE)
        return verdict
    if says_change(fact):
        if verdict.action == "skip":
            return verdict
        for index, cosine in judge.most_similar(fact, kept, CHANGE_CANDIDATES):
            memory = kept[index]
            if shares_subject(fact, memory):
                if _value_kinds_differ(fact, memory) or _states_more(memory, fact):
                    return Reconciled("add", None, cosine, ANOTHER_ATTRIBUTE)
                return Reconciled("update", index, cosine, "says_change")
        return verdict
    target = verdict.target if verdict.action == "update" else None
    if target is None:
        return verdict
    if verdict.reason not in ("close", "adds_detail", "different_values"):
        return verdict
    if _drops(kept[target], fact):
        return Reconciled("add", None, verdict.score, ANOTHER_ATTRIBUTE)
    if verdict.reason == "close" and evidence is not None and says_change(evidence):
        # The sentence said it changed ("I moved my gym membership to CoreClub today"): the
        # judge's nearest memory is its older value.
        return Reconciled("update", target, verdict.score, "says_change")
    return verdict
