"""Whose a fact is: the speaker's, the household's, or a named person's (issue #24).

A first-person fact goes to whoever said it ("I'm allergic to cats" by Maya → Maya's "Is
allergic to cats"); a fact about the home or everyone goes to the household ("our Wi-Fi…",
"我們家…"); a fact whose subject is a known person by name goes to them ("Leo is allergic to
nuts" → Leo's). The speaker of a message is what ``ConversationStore.add_exchange(...,
person=...)`` recorded; a message without one (an unknown speaker) gives the household's. An
LLM's evidence that quotes nobody word for word is the thread's only speaker's, or waits for a
person to say whose (``UNDECIDED``): a private fact never becomes everyone's by a loose quote.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Any

from rapidfuzz import fuzz

from ..problems import InputError
from ..stores.memories import Memory
from ..stores.people import Person
from ..text import fold

# Words that make a fact the household's: the home, all of us, everyone.
HOUSEHOLD = re.compile(
    r"(?<![\w'])(?:our|ours|ourselves|we|we're|we've|us|everyone|everybody|"
    r"the household|the family|the whole family|all of us)(?![\w'])"
    r"|我們家|我们家|我們|我们|大家|全家|咱們|咱们",
    re.IGNORECASE,
)


def is_household(text: str) -> bool:
    """True when ``text`` is about the home or everyone in it."""
    return HOUSEHOLD.search(text) is not None


def named_subject(content: str, people: Sequence[Person]) -> str | None:
    """The id of the one known person ``content`` is about by name ("Leo is…", "Leo's…",
    "Leo對…"), or None."""
    folded = fold(content.strip())
    found = set()
    for person in people:
        names = [person.name, *(i.value for i in person.identities if i.kind == "name")]
        for name in names:
            wanted = fold(name.strip())
            if not wanted or not folded.startswith(wanted):
                continue
            rest = folded[len(wanted) :]
            if not rest or not (rest[0].isalnum() and rest[0].isascii()):
                found.add(person.id)
    return found.pop() if len(found) == 1 else None


def _person_of(turn: Any) -> str | None:
    person = getattr(turn, "person", None)
    if person is None and isinstance(turn, Mapping):
        person = turn.get("person")
    return person if isinstance(person, str) and person else None


def _role_of(turn: Any) -> Any:
    return turn.get("role") if isinstance(turn, Mapping) else getattr(turn, "role", None)


def speakers(messages: Iterable[Any]) -> set[str | None]:
    """Who wrote the user messages of a thread: people's ids, None for an unknown speaker."""
    return {_person_of(turn) for turn in messages if _role_of(turn) == "user"}


def thread_view(memories: Iterable[Memory], messages: Iterable[Any]) -> list[Memory]:
    """The memories an LLM reading this thread may be shown: the household's and those of the
    people who speak in it, never another person's."""
    present = speakers(messages)
    return [m for m in memories if m.person is None or m.person in present]


def _said_in(evidence: str | None, messages: Sequence[Any]) -> Any | None:
    """The user message holding ``evidence`` word for word (the latest such), or None."""
    if not evidence:
        return None
    wanted = " ".join(evidence.split()).casefold()
    for turn in reversed(messages):
        if _role_of(turn) != "user":
            continue
        if wanted in " ".join(str(getattr(turn, "content", "")).split()).casefold():
            return turn
    return None


# How close (rapidfuzz's 0-100) a quote not word for word must come to one speaker's message,
# and by how much more than to any other speaker's, to count as theirs.
CLOSE_QUOTE = 75.0
CLEAR_MARGIN = 10.0


def _closest_speaker(quote: str, messages: Sequence[Any]) -> tuple[bool, str | None]:
    """(found, who): the one speaker whose message a paraphrased ``quote`` clearly comes from."""
    best: dict[str | None, float] = {}
    wanted = fold(quote)
    for turn in messages:
        if _role_of(turn) != "user":
            continue
        said = fold(str(getattr(turn, "content", "")))
        score = max(fuzz.partial_ratio(wanted, said), fuzz.token_set_ratio(wanted, said))
        who = _person_of(turn)
        best[who] = max(best.get(who, 0.0), score)
    ranked = sorted(best.items(), key=lambda pair: pair[1], reverse=True)
    if not ranked or ranked[0][1] < CLOSE_QUOTE:
        return False, None
    if len(ranked) > 1 and ranked[0][1] - ranked[1][1] < CLEAR_MARGIN:
        return False, None
    return True, ranked[0][0]


class Undecided(Enum):
    """Whose a fact is could not be told: it waits in Review for a person to choose."""

    UNDECIDED = "undecided"


UNDECIDED = Undecided.UNDECIDED
Whose = str | None | Undecided


class OwnerUndecidedError(InputError):
    """A proposal whose owner nobody could tell is approved without saying whose it is."""

    code = "owner_undecided"

    def __init__(self) -> None:
        super().__init__(
            "Nobody could tell whose this fact is: choose the household or a person before "
            "approving it. Nothing was changed."
        )


def attribute(
    content: str, evidence: str | None, messages: Iterable[Any], people: Sequence[Person]
) -> Whose:
    """Whose the fact ``content`` (said in ``evidence``) is: a person's id, None for the
    household, or UNDECIDED.

    The household's when it is about the home or everyone; a known person's when it names
    them; else the speaker of the message the evidence quotes (word for word, or clearly
    closer to one speaker's words than to anyone else's). A quote that matches nobody is the
    thread's only speaker's; with several speakers it is UNDECIDED — never the household's,
    which everyone sees."""
    if is_household(content):
        return None
    named = named_subject(content, people)
    if named is not None:
        return named
    turns = list(messages)
    turn = _said_in(evidence, turns)
    if turn is not None:
        return _person_of(turn)
    found, who = _closest_speaker(evidence or content, turns)
    if found:
        return who
    present = speakers(turns)
    if len(present) <= 1:
        return next(iter(present), None)
    return UNDECIDED


def group_by_person(
    candidates: Iterable[Any],
    messages: Sequence[Any],
    people: Sequence[Person],
    owners: Mapping[str, str | None] | None = None,
) -> Mapping[Whose, list[Any]]:
    """The candidates (facts, changes of mind) by whose they are, in first-seen order; an
    LLM's update or delete of a memory it was shown is that memory's owner's (``owners``:
    memory id → person)."""
    groups: dict[Whose, list[Any]] = {}
    for candidate in candidates:
        target = getattr(candidate, "memory_id", None)
        if owners is not None and isinstance(target, str) and target in owners:
            groups.setdefault(owners[target], []).append(candidate)
            continue
        content = str(getattr(candidate, "content", None) or getattr(candidate, "about", ""))
        whose = attribute(content, getattr(candidate, "evidence", None), messages, people)
        groups.setdefault(whose, []).append(candidate)
    return groups
