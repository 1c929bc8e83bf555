"""Whose a memory is, and what a call may see: one rule for every door."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from ..stores import Memory, NotFoundError, ReviewItem
from .errors import AmbiguousPersonError, UnknownPersonError

if TYPE_CHECKING:
    from .base import CuratorBase


class Everyone(Enum):
    """The view of a curator (the dashboard, the command line): every person's memories."""

    EVERYONE = "everyone"


EVERYONE = Everyone.EVERYONE

# A call's view: EVERYONE, one person's id (theirs and the household's), or None (the
# household's alone). A curator holds one (``Curator.view``, ``Curator.within``): every read
# view and write operation of it keeps to it, whatever the door.
View = str | None | Everyone

# The ``person`` filter of ``MemoryStore.query`` and ``search`` that keeps the household's
# memories alone: an id no person has (ids are "p-" and hex).
HOUSEHOLD_ONLY = "\x00household"


def narrowed(curator: CuratorBase, view: View) -> View:
    """The view an operation keeps to: the one it was given, else its curator's."""
    return view if view is not EVERYONE else curator.view


def query_person(view: View) -> str | None:
    """``view`` as the ``person`` filter of ``MemoryStore.query``: None for everyone, a
    person's id for theirs and the household's, ``HOUSEHOLD_ONLY`` for the household's."""
    if view is EVERYONE:
        return None
    return HOUSEHOLD_ONLY if view is None else view


def person_in_view(person: str | None, view: View) -> bool:
    """Whether ``view`` may keep, move or approve something as ``person`` (None: the
    household): only as themselves or the household, never as someone else."""
    return view is EVERYONE or person is None or person == view


def thread_in_view(speakers: tuple[str, ...] | list[str], view: View) -> bool:
    """Whether a conversation whose messages name ``speakers`` (people's ids) may be seen
    within ``view``: one nobody is named in, or one the viewer spoke in; never another
    person's alone."""
    return view is EVERYONE or not speakers or (view is not None and view in speakers)


def unknown_person(person_id: str) -> NotFoundError:
    """The refusal for a person ``view`` may not act as: the same as for no such person."""
    return NotFoundError(
        f"No person has the id {person_id!r}.", code="person_unknown", id=repr(person_id)
    )


def check_person(person: str | None, view: View) -> None:
    """Refuse (``person_unknown``) acting as ``person`` outside ``view``."""
    if person is not None and not person_in_view(person, view):
        raise unknown_person(person)


def visible_memory(curator: CuratorBase, memory_id: str, view: View = EVERYONE) -> Memory:
    """The memory ``memory_id`` when the view (``view``, else the curator's) may see it;
    NotFoundError (``memory_gone``) otherwise: another person's memory is as unknown as one
    that does not exist."""
    memory = curator._memory_store.get(memory_id)
    if memory is None or not in_view(memory, narrowed(curator, view)):
        raise NotFoundError(
            f"No memory with id {memory_id!r}.", code="memory_gone", id=repr(memory_id)
        )
    return memory


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
    curator: CuratorBase, ref: str | None, *, reading: bool = False, record_unknown: bool = True
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
    found = curator._people_store.matching(ref)
    if len(found) == 1:
        return found[0].id
    if found:  # neither a stranger nor one of them: say so, and how to pick
        raise AmbiguousPersonError(ref.strip(), len(found))
    if record_unknown:
        curator._people_store.seen("name", ref.strip())
    if reading:
        return None
    raise UnknownPersonError(ref.strip())


def ref_in_view(curator: CuratorBase, ref: str) -> bool:
    """Whether the curator's view may see the memory a restore names (``ref``: a memory's id
    or a history entry's hid): the memory as it is (or was when deleted) and, for an entry,
    both of its states, so an undo never brings another person's words back to anyone."""
    view = curator.view
    if view is EVERYONE:
        return True
    entry = curator._memory_store.change(ref)
    states = [entry.get("before"), entry.get("after")] if entry is not None else []
    memory_id = str(entry.get("id")) if entry is not None else ref
    persons = [state.get("person") for state in states if isinstance(state, dict)]
    current = curator._memory_store.get(memory_id) or curator._memory_store.deleted(memory_id)
    if current is not None:
        persons.append(current.person)
    elif not persons:
        return False
    return all(person_in_view(p if isinstance(p, str) and p else None, view) for p in persons)


def speakers(curator: CuratorBase, conversation_id: str) -> tuple[str, ...] | None:
    """The people named on a conversation's messages, or None when it has none."""
    for summary in curator._conversation_store.list_conversations():
        if summary.id == conversation_id:
            return summary.speakers
    return None


def check_thread(curator: CuratorBase, conversation_id: str) -> None:
    """Refuse (``conversation_not_found``) a conversation outside the curator's view: another
    person's thread is as unknown as one that does not exist."""
    found = speakers(curator, conversation_id)
    if found is not None and not thread_in_view(found, curator.view):
        raise NotFoundError(
            f"No conversation {conversation_id!r}.",
            code="conversation_not_found",
            id=repr(conversation_id),
        )
