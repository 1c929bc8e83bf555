"""Whose a memory is, and what a call may see: one rule for every door."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from ..stores import Memory, ReviewItem
from .errors import AmbiguousPersonError, UnknownPersonError

if TYPE_CHECKING:
    from .core import Curator


class Everyone(Enum):
    """The view of a curator (the dashboard, the command line): every person's memories."""

    EVERYONE = "everyone"


EVERYONE = Everyone.EVERYONE

# A call's view: EVERYONE, one person's id (theirs and the household's), or None (the
# household's alone).
View = str | None | Everyone


def in_view(memory: Memory | None, view: View) -> bool:
    """Whether ``memory`` may be seen and changed within ``view``: another person's is not."""
    if memory is None:
        return False
    return view is EVERYONE or memory.person is None or memory.person == view


def item_in_view(item: ReviewItem, view: View) -> bool:
    """Whether a proposal may be seen within ``view``: another person's is not (nor is one
    whose owner nobody could tell: it may be anyone's)."""
    if view is EVERYONE:
        return True
    if item.owner_undecided:
        return False
    return item.person is None or item.person == view


def resolve_person(
    curator: Curator, ref: str | None, *, reading: bool = False, record_unknown: bool = True
) -> str | None:
    """The id of the person ``ref`` names (``PeopleStore.matching``: their id or an identity,
    else a whole name of theirs, else their first name), None for no one (``ref`` empty or
    None). A name nobody has is recorded on the People page as seen (with ``record_unknown``)
    and refused with UnknownPersonError: a fact meant for a person is never kept as
    everyone's instead. When only ``reading``, an unknown name reads the household's memories
    (which everyone may see) instead of being refused. A name two or more people answer to
    ("Ana" for Ana Souza and Ana Lima) is refused with AmbiguousPersonError, which names none
    of them: it is never guessed, and a caller learns nothing of who lives here."""
    if ref is None or not ref.strip():
        return None
    found = curator.people.matching(ref)
    if len(found) == 1:
        return found[0].id
    if found:  # neither a stranger nor one of them: say so, and how to pick
        raise AmbiguousPersonError(ref.strip(), len(found))
    if record_unknown:
        curator.people.seen("name", ref.strip())
    if reading:
        return None
    raise UnknownPersonError(ref.strip())
