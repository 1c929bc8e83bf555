"""Whose a fact is: the speaker's, the household's, or a named person's (issue #24).

A first-person fact goes to whoever said it ("I'm allergic to cats" by Maya → Maya's "Is
allergic to cats"); a fact about the home or everyone goes to the household ("our Wi-Fi…",
"我們家…"); a fact whose subject is a known person by name goes to them ("Leo is allergic to
nuts" → Leo's). The speaker of a message is what ``ConversationStore.add_exchange(...,
person=...)`` recorded; a message without one (an unknown speaker) gives the household's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

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


def speaker_of(evidence: str | None, messages: Iterable[Any]) -> str | None:
    """Who wrote the user message holding ``evidence`` (the latest such), or None."""
    if not evidence:
        return None
    wanted = " ".join(evidence.split()).casefold()
    for turn in reversed(list(messages)):
        if getattr(turn, "role", None) != "user":
            continue
        if wanted in " ".join(str(getattr(turn, "content", "")).split()).casefold():
            person = getattr(turn, "person", None)
            return person if isinstance(person, str) and person else None
    return None


def attribute(
    content: str, evidence: str | None, messages: Iterable[Any], people: Sequence[Person]
) -> str | None:
    """Whose the fact ``content`` (said in ``evidence``) is: None for the household."""
    if is_household(content):
        return None
    named = named_subject(content, people)
    if named is not None:
        return named
    return speaker_of(evidence, messages)


def group_by_person(
    candidates: Iterable[Any], messages: Sequence[Any], people: Sequence[Person]
) -> Mapping[str | None, list[Any]]:
    """The candidates (facts, changes of mind) by whose they are, in first-seen order."""
    groups: dict[str | None, list[Any]] = {}
    for candidate in candidates:
        content = str(getattr(candidate, "content", None) or getattr(candidate, "about", ""))
        whose = attribute(content, getattr(candidate, "evidence", None), messages, people)
        groups.setdefault(whose, []).append(candidate)
    return groups
