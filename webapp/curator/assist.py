"""Home Assistant's Assist: whose memory a voice request is answered with, and what it may do.

The Assist API (``webapp.assist.http``) is a door like any other: it parses the request and
calls these operations, which decide whose memory a request reads and changes (``speaker``)
and keep every tool to that view through ``Curator.within``, with the rules of every door
(secrets, duplicates, tombstones, caps). One rule decides the speaker:

1. a device chosen on the People page wins: the household's, or a person's;
2. else the Home Assistant user linked to a person (an identity of kind ``ha``);
3. else nobody known: the household's memories alone.

A user or a device seen for the first time is recorded for the People page. Another person's
private memory is never in a prompt, a tool's answer or a refusal.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ..prompts import compose_prompt_sections
from ..stores import DuplicateMemoryError, Memory, NotFoundError
from ..stores.conversations import Stored
from ..text import fold
from .errors import AmbiguousMemoryError
from .people import in_view, query_person

if TYPE_CHECKING:
    from .core import Curator

RECALL_LIMIT = 50  # memories one recall answers with at most
CANDIDATES_LIMIT = 10  # memories an ambiguous forget names at most


@dataclass(frozen=True)
class AssistContext:
    """Who and where a request comes from, as Home Assistant's LLM context says it."""

    user_id: str | None = None
    user_name: str | None = None
    device_id: str | None = None
    device_name: str | None = None
    language: str | None = None
    agent_id: str | None = None
    conversation_id: str | None = None


@dataclass(frozen=True)
class Speaker:
    """Whose memory a request reads and changes: a person's (``person``, their id, and
    ``name``) or, with ``person`` None, the household's alone."""

    person: str | None = None
    name: str | None = None

    @property
    def scope(self) -> str:
        return "person" if self.person is not None else "household"


HOUSEHOLD = Speaker()


def speaker(curator: Curator, context: AssistContext, at: datetime | None = None) -> Speaker:
    """Whose memory the request of ``context`` is answered with (the module's rule), by the
    device choices and user links of now or, with ``at``, of that moment (an exchange said
    then and delivered later is credited as it would have been then); records a Home
    Assistant user or a device seen for the first time (or under a new name)."""
    if context.user_id:
        curator._people_store.seen("ha", context.user_id, label=context.user_name or "")
    if context.device_id:
        curator._people_store.seen_device(context.device_id, label=context.device_name or "")
    if at is None:
        people, devices = (
            tuple(curator._people_store.people()),
            tuple(curator._people_store.devices()),
        )
    else:
        people, devices = curator._people_store.as_of(at)
    device = next((d for d in devices if d.id == context.device_id), None)
    if device is not None and device.choice == "household":
        return HOUSEHOLD
    if device is not None and device.choice == "person":
        chosen = device.person
    else:
        wanted = ("ha", context.user_id or "")
        user = next((p for p in people if any(i.key == wanted for i in p.identities)), None)
        chosen = user.id if user is not None else None
    # Only someone still in the household: a person removed since gets the household's,
    # never whoever happens to speak.
    now = curator._people_store.get(chosen) if chosen is not None else None
    return Speaker(now.id, now.name) if now is not None else HOUSEHOLD


def memory_block(curator: Curator, who: Speaker) -> str:
    """The long-term memory block of ``who``'s prompt, exactly as the dashboard's prompt
    preview composes it for them (``compose_prompt_sections``); "" when nothing is kept."""
    kept = curator._memory_store.get_all()
    if who.person is None:  # an unknown speaker: the household's only
        kept = [memory for memory in kept if memory.person is None]
    composed = compose_prompt_sections(kept, [], "", person=who.person)
    return next(section.text for section in composed.sections if section.name == "memory")


def remember(curator: Curator, who: Speaker, fact: str) -> tuple[str, Memory]:
    """Keep ``fact`` as ``who``'s (the household's for nobody known): ("added", the memory),
    or ("already_known", the memory of the view that says it). Refused as every door refuses
    (``Curator.remember``)."""
    try:
        return "added", curator.within(who.person).remember(fact, person=who.person)
    except DuplicateMemoryError as exc:
        if not in_view(exc.existing, who.person):  # never name another person's memory
            raise
        return "already_known", exc.existing


def _unknown(memory_id: str) -> NotFoundError:
    return NotFoundError(f"No memory has the id {memory_id!r}.", code="not_found", id=memory_id)


def seen_by(curator: Curator, who: Speaker, query: str = "") -> list[Memory]:
    """The memories ``who`` sees that match ``query`` (every word; all for ""), still true
    now, newest first."""
    page = curator._memory_store.query(
        query, person=query_person(who.person), sort="newest", per_page=None
    )
    now = datetime.now(UTC)
    return [m for m in page.items if in_view(m, who.person) and not m.expired(now)]


def forget(
    curator: Curator, who: Speaker, *, memory_id: str | None = None, fact: str | None = None
) -> Memory:
    """Forget the memory ``memory_id``, or the one memory of ``who``'s view ``fact`` names
    (the one saying exactly that, else the only one matching its words). NotFoundError
    (``not_found``) for a memory outside the view, as for one that does not exist;
    AmbiguousMemoryError with the candidates when several match."""
    if memory_id is None:
        text = (fact or "").strip()
        found = seen_by(curator, who, text) if text else []
        exact = [m for m in found if fold(m.content).strip(" .") == fold(text).strip(" .")]
        if len(exact) == 1:
            found = exact
        if not found:
            raise NotFoundError(
                f"No memory matches {text!r}.", code="not_found", id=repr(text[:200])
            )
        if len(found) > 1:
            raise AmbiguousMemoryError(text[:200], found[:CANDIDATES_LIMIT])
        memory_id = found[0].id
    try:
        gone = curator.within(who.person).forget(memory_id).memory
    except NotFoundError:
        raise _unknown(memory_id) from None
    if gone is None:
        raise _unknown(memory_id)
    return gone


def recall(curator: Curator, who: Speaker, query: str = "") -> tuple[list[Memory], int]:
    """What ``who`` sees matching ``query`` (everything for ""), newest first, at most
    RECALL_LIMIT, and how many more there are."""
    found = seen_by(curator, who, query.strip())
    return found[:RECALL_LIMIT], max(0, len(found) - RECALL_LIMIT)


def record_exchange(
    curator: Curator,
    context: AssistContext,
    *,
    key: str,
    conversation_id: str,
    user_text: str,
    reply: str,
    said_at: datetime,
) -> Stored:
    """Store what was said and the reply in the thread ``conversation_id`` as said at
    ``said_at`` (``ConversationStore.add_exchange``: never later than now, in the thread's
    time order), with the person of the speaker as of then (``speaker``) when one is known
    (else no person: its facts wait in Review for someone to say whose), once per ``key``
    whoever sends it again, also after a crash between the turns' write and the key's (the
    user's turn carries the key): "stored", "duplicate", or "expired" (said before the
    conversations' max age: nothing kept). The agent and device are kept with the key (the
    conversation store has no place for them)."""
    who = speaker(curator, context, at=min(said_at, datetime.now(UTC)))
    record = {
        "conversation": conversation_id,
        "said": said_at.astimezone(UTC).isoformat(),
        "agent": context.agent_id or "",
        "device": context.device_id or "",
    }
    done: list[Stored] = []

    def store() -> bool:
        done.append(
            curator._conversation_store.add_exchange(
                conversation_id, user_text, reply, person=who.person, at=said_at, key=key
            )
        )
        return done[0] != "expired"

    if not curator._exchange_key_store.once(key, record, store):
        return "duplicate"
    return done[0]
