"""Forget a memory: whoever deletes it, the fact is remembered as forgotten (a tombstone), so a
later proposal of it is marked, or dropped after "don't propose again"; Delete forever wipes
its words everywhere and keeps only a fingerprint."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..extraction import forgotten
from ..extraction.batch import job_document
from ..extraction.forgotten import forget_deleted_forever
from ..extraction.wiping import reached
from ..stores import ConflictError, Memory, NotFoundError, StoreError
from ..stores.tombstones import Tombstone
from .people import EVERYONE, View, in_view, narrowed
from .results import Forgetting

if TYPE_CHECKING:
    from .core import Curator


log = logging.getLogger(__name__)


def _unknown(memory_id: str) -> NotFoundError:
    return NotFoundError(
        f"No memory with id {memory_id!r}.", code="memory_gone", id=repr(memory_id)
    )


def _tombstone_of_deleted(curator: Curator, memory_id: str, view: View) -> Tombstone | None:
    """The tombstone of a memory deleted before (made now from the history log when a program
    deleted it without one, as who deleted it), or None when nothing is known of it in
    ``view``."""
    tombstone = curator._tombstone_store.for_memory(memory_id)
    if tombstone is None:
        gone = next(
            (d for d in curator._memory_store.recently_deleted() if d.memory.id == memory_id), None
        )
        if gone is None or not in_view(gone.memory, view):
            return None
        return curator._tombstone_store.record(gone.memory, by=gone.deleted_by, via="library")
    deleted = curator._memory_store.deleted(memory_id)
    if view is not EVERYONE and deleted is not None and not in_view(deleted, view):
        return None
    return tombstone


def forget(
    curator: Curator,
    memory_id: str,
    *,
    dont_propose_again: bool = False,
    forever: bool = False,
    view: View = EVERYONE,
    actor: str | None = None,
    via: str | None = None,
    conversation_id: str | None = None,
    expected: str | None = None,
) -> Forgetting:
    """Delete the memory ``memory_id`` and record its tombstone (by ``actor``, ``via`` which
    door, from which conversation). A memory already deleted — by a person, an assistant or a
    program through the library — can still be marked "don't propose again" or deleted
    forever: its tombstone is made from the history log when it has none. NotFoundError
    (``memory_gone``) when nothing is known of it in ``view``."""
    actor = actor or curator.actor
    via = via or curator.via
    view = narrowed(curator, view)
    memory = curator._memory_store.get(memory_id)
    if memory is not None and not in_view(memory, view):
        raise _unknown(memory_id)
    tombstone: Tombstone | None = None
    if memory is not None and expected is not None and memory.version != expected:
        raise ConflictError(memory)
    if memory is not None and forever:
        # Delete forever records its intent before anything goes: a process killed at any
        # point after is finished by the command run again, or by ``repair``.
        tombstone = curator._tombstone_store.for_memory(memory_id)
        if tombstone is None or not tombstone.forever:
            tombstone = curator._tombstone_store.record(
                memory,
                by=actor,
                via=via,
                conversation_id=conversation_id,
                no_propose=dont_propose_again,
                forgetting=True,
            )
        reached("recorded")
        if not curator._memory_store.delete(memory_id, actor=actor):
            memory = None  # deleted meanwhile
        reached("deleted")
    elif memory is not None and _deleted(curator, memory_id, expected, actor):
        reached("deleted")  # (a kill here: the tombstone is made from the log next time)
        tombstone = curator._tombstone_store.record(
            memory,
            by=actor,
            via=via,
            conversation_id=conversation_id,
            no_propose=dont_propose_again,
        )
    else:
        memory = None  # deleted meanwhile, or before
        if not (dont_propose_again or forever):
            raise _unknown(memory_id)
        tombstone = _tombstone_of_deleted(curator, memory_id, view)
        if tombstone is None:
            raise _unknown(memory_id)
        if dont_propose_again and not tombstone.no_propose:
            tombstone = curator._tombstone_store.set_no_propose(tombstone.id)
    wiped = None
    if forever:
        wiped = forget_deleted_forever(
            curator._memory_store,
            curator._review_queue,
            memory_id,
            no_propose=dont_propose_again,
            tombstones=curator._tombstone_store,
            **_wiped_too(curator),
        )
    return Forgetting(memory, tombstone, wiped)


def _deleted(curator: Curator, memory_id: str, expected: str | None, actor: str) -> bool:
    """Delete the memory, only while it is at ``expected`` when given (ConflictError with the
    memory as it is now when it changed since); False when it was gone already."""
    if expected is None:
        return curator._memory_store.delete(memory_id, actor=actor)
    deletion = curator._memory_store.delete_unchanged({memory_id: expected}, actor=actor)
    if deletion.left_alone:
        raise ConflictError(deletion.left_alone[0])
    return bool(deletion.deleted)


def _wiped_too(curator: Curator) -> dict[str, Any]:
    """The other files Delete forever takes the words out of."""
    return {
        "conversations": curator._conversation_store,
        "job": job_document(curator.settings),
        "dismissals": curator._dismissal_store,
    }


def finish_forgetting(curator: Curator) -> int:
    """Finish every Delete forever a killed process left half-way (for ``repair``, and for
    the next start: ``finish_interrupted``); how many."""
    finished = forgotten.finish_forgetting(
        curator._memory_store,
        curator._review_queue,
        tombstones=curator._tombstone_store,
        **_wiped_too(curator),
    )
    curator._tombstone_store.clear_marker()
    return len(finished)


def finish_interrupted(curator: Curator) -> int:
    """At a start (``Curator.from_settings``, the dashboard's first request): finish the
    Delete forever runs a killed process left, when the tombstones' marker says one may be
    waiting (one look at the folder otherwise); how many. A store that cannot be written now
    (busy, damaged) leaves it for the next start or ``repair``, with a warning: the fact is
    refused meanwhile by restore, undo and approve (``DeletedForeverError``)."""
    if not curator._tombstone_store.unfinished():
        return 0
    try:
        return finish_forgetting(curator)
    except (StoreError, OSError) as exc:
        log.warning("A Delete forever left half-way could not be finished now: %s", exc)
        return 0


def deleted_forever(curator: Curator, ref: str) -> bool:
    """``ref`` (a memory's id, or a history entry's hid) names a memory deleted forever, or
    being deleted forever: nothing may bring it back."""
    entry = curator._memory_store.change(ref)
    memory_id = str(entry.get("id")) if entry is not None else ref
    tombstone = curator._tombstone_store.for_memory(memory_id)
    return tombstone is not None and tombstone.forever


def forget_many(
    curator: Curator,
    memory_ids: list[str],
    *,
    dont_propose_again: bool = False,
    actor: str | None = None,
    via: str | None = None,
) -> list[Memory]:
    """``forget`` for several memories in one write per store (the memories deleted); those
    outside the curator's view are left alone, as unknown."""
    actor = actor or curator.actor
    found = [curator._memory_store.get(i) for i in dict.fromkeys(memory_ids)]
    before = [m for m in found if m is not None and in_view(m, curator.view)]
    wanted = [m.id for m in before]
    if not before or not curator._memory_store.delete_many(wanted, actor=actor):
        return []
    gone = [m for m in before if curator._memory_store.get(m.id) is None]
    curator._tombstone_store.record_many(
        gone, by=actor, via=via or curator.via, no_propose=dont_propose_again
    )
    return gone


def settle_deletions(curator: Curator) -> int:
    """Record a tombstone for every memory a host program deleted through the library without
    one (``forgotten.settle_deletions``: the whole history log, however early the deletion);
    how many. The history log is append-only between rewrites: once looked at, only what was
    appended since is searched for such a deletion before the log is read again."""
    log_path = curator._memory_store.history_path
    try:
        st = log_path.stat()
    except FileNotFoundError:
        return 0
    seen = curator.history_seen
    if seen is not None and seen[0] == st.st_ino and seen[1] <= st.st_size:
        with log_path.open("rb") as handle:
            handle.seek(seen[1])
            appended = handle.read(st.st_size - seen[1])
        if b'"library"' not in appended or b'"delete"' not in appended:
            curator.history_seen = (st.st_ino, st.st_size)
            return 0
    recorded = forgotten.settle_deletions(curator._memory_store, curator._tombstone_store)
    curator.history_seen = (st.st_ino, st.st_size)
    return recorded
