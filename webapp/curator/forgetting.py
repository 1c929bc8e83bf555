"""Forget a memory: whoever deletes it, the fact is remembered as forgotten (a tombstone), so a
later proposal of it is marked, or dropped after "don't propose again"; Delete forever wipes
its words everywhere and keeps only a fingerprint.

``forget_forever`` removes the words of a deleted fact from every file the stores keep (the
memories and their backup, the history log, the review queue and its backup, the
conversations, the extraction job, the tombstone, the vector cache's rows), file by file as
``wiping`` says, and keeps only its fingerprint; it can be run again to finish a run that was
killed half-way. Recognising a fact deleted before when it is proposed again is extraction's
(``extraction.forgotten``)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from ..attention.semantic import semantic_index
from ..extraction import forgotten
from ..extraction.batch import job_document
from ..extraction.decided import says_the_same
from ..similarity import Judge
from ..stores import ConflictError, Memory, NotFoundError, StoreError
from ..stores.conversations import ConversationStore
from ..stores.document import FileBacked
from ..stores.memories import MemoryStore
from ..stores.review import ReviewQueue
from ..stores.tombstones import Tombstone, TombstoneStore
from ..text import normalize
from .base import CuratorBase
from .errors import DeletedForeverError
from .people import EVERYONE, View, in_view, narrowed, ref_in_view
from .results import Forgetting as Forgotten
from .wiping import Masker, dismissals_without, job_without, reached, said_sentences

log = logging.getLogger(__name__)


def _unknown(memory_id: str) -> NotFoundError:
    return NotFoundError(
        f"No memory with id {memory_id!r}.", code="memory_gone", id=repr(memory_id)
    )


def _tombstone_of_deleted(curator: CuratorBase, memory_id: str, view: View) -> Tombstone | None:
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


def _deleted(curator: CuratorBase, memory_id: str, expected: str | None, actor: str) -> bool:
    """Delete the memory, only while it is at ``expected`` when given (ConflictError with the
    memory as it is now when it changed since); False when it was gone already."""
    if expected is None:
        return curator._memory_store.delete(memory_id, actor=actor)
    deletion = curator._memory_store.delete_unchanged({memory_id: expected}, actor=actor)
    if deletion.left_alone:
        raise ConflictError(deletion.left_alone[0])
    return bool(deletion.deleted)


def _wiped_too(curator: CuratorBase) -> dict[str, Any]:
    """The other files Delete forever takes the words out of."""
    return {
        "conversations": curator._conversation_store,
        "job": job_document(curator.settings),
        "dismissals": curator._dismissal_store,
    }


def deleted_forever(curator: CuratorBase, ref: str) -> bool:
    """``ref`` (a memory's id, or a history entry's hid) names a memory deleted forever, or
    being deleted forever: nothing may bring it back."""
    entry = curator._memory_store.change(ref)
    memory_id = str(entry.get("id")) if entry is not None else ref
    tombstone = curator._tombstone_store.for_memory(memory_id)
    return tombstone is not None and tombstone.forever


# ----------------------------------------------------------------- Delete forever
@dataclass(frozen=True)
class ForgottenForever:
    """What ``forget_forever`` removed: how many history entries and review items held the
    words, how many vectors went from the cache and how many conversation messages now say
    ``MARKER`` in their place."""

    tombstone: Tombstone
    history_entries: int
    review_items: int
    vectors: int
    messages: int = 0


def forget_forever(
    store: MemoryStore,
    queue: ReviewQueue,
    tombstone_id: str,
    *,
    no_propose: bool = True,
    judge: Judge | None = None,
    tombstones: TombstoneStore | None = None,
    conversations: ConversationStore | None = None,
    job: FileBacked | None = None,
    dismissals: FileBacked | None = None,
) -> ForgottenForever:
    """Delete a deleted fact forever: its words go from every file, a fingerprint stays.

    The words (``wiping``) are the tombstone's text, every earlier text of its memory in the
    history log, the review items that proposed the fact again, and the sentences that said
    it. The first step records them in the tombstone with the fingerprint (keyed hashes of
    the words, the vector of the text, the vector cache's rows to drop), so a crash half-way
    never leaves the fact unrecognised, and running this again (or ``finish_forgetting``)
    finishes every step: the review queue, the memories and their history log, the
    conversations, the extraction job, the dismissed findings, the vector cache, and last
    the tombstone's own words. ``judge`` defaults to the memory file's similarity index
    (loading its model once); ``no_propose`` keeps later proposals out of Review.
    """
    tombstones = tombstones or TombstoneStore.beside(store)
    tombstone = tombstones.get(tombstone_id)
    if tombstone is None:
        tombstones.set_no_propose(tombstone_id)  # raises tombstone_not_found
        raise AssertionError  # pragma: no cover
    wordings, said, review_ids = _words_of(store, queue, tombstone)
    if not wordings and not said:  # deleted forever before, nothing of it left anywhere
        if no_propose and not tombstone.no_propose:
            tombstone = tombstones.set_no_propose(tombstone_id)
        return ForgottenForever(tombstone, 0, 0, 0)
    if judge is None:
        judge = semantic_index(store.path).judge()
    vectors = []
    if not tombstone.vectors and wordings:
        vectors = [(judge.embedder.name, judge.cache.vectors([wordings[0]])[0])]
    tombstone = tombstones.begin_forgetting(
        tombstone.id,
        wordings=wordings,
        said=said,
        vectors=vectors,
        vector_keys=[judge.cache.key(t) for t in (*wordings, *said)],
        no_propose=no_propose,
        review_ids=review_ids,
    )
    if store.get(tombstone.memory_id) is not None:  # a run killed before it deleted it
        store.delete(tombstone.memory_id, actor=tombstone.deleted_by)
    reached("intent")
    mask = Masker(wordings, said)
    review_items = queue.forget_text(
        wordings, tombstone_id=tombstone.id, mask=mask, memory_id=tombstone.memory_id
    )
    reached("review")
    history_entries = store.forget_text(tombstone.memory_id, wordings, mask=mask)
    reached("memories")
    messages = 0
    if conversations is not None and _kept(conversations):
        messages = conversations.rewrite_messages(mask)
    reached("conversations")
    if job is not None and _kept(job):
        job.wipe(job_without(wordings, mask))
    if dismissals is not None and _kept(dismissals):
        dismissals.wipe(dismissals_without(tombstone.memory_id))
    reached("job")
    dropped = judge.cache.forget([*wordings, *said])
    judge.cache.save()  # (also drops the rows another process wrote back since)
    reached("vectors")
    done = tombstones.finish_forgetting(tombstone.id)
    reached("done")
    return ForgottenForever(done, history_entries, review_items, dropped, messages)


def _kept(document: FileBacked) -> bool:
    """The file (or its backup) is there: a file never written holds no words."""
    return document.path.exists() or document.path.with_name(f"{document.path.name}.bak").exists()


def _words_of(
    store: MemoryStore, queue: ReviewQueue, tombstone: Tombstone
) -> tuple[list[str], list[str], list[str]]:
    """(wordings, said, review ids) of a deleted fact: what its tombstone, its memory's
    history log and the review items about it still hold of it (and what a Delete forever
    killed half-way recorded). The review items about its memory (``ReviewQueue.of_memory``:
    the proposal approved into it, edited or not, an update or forget of it) give every text
    they hold — the proposal, the edited text, the text it replaced — and their evidence;
    so do the items proposing the fact again. The ids are those of the items to take out."""
    wordings, said = tombstone.forgetting or ((), ())
    texts = [tombstone.content or "", *wordings]
    evidences: list[str] = []
    for entry in store.history(tombstone.memory_id):
        for side in ("before", "after"):
            record: Any = entry.get(side)
            if isinstance(record, dict) and isinstance(record.get("content"), str):
                texts.append(record["content"])
                origin = record.get("origin")
                if isinstance(origin, dict) and isinstance(origin.get("evidence"), str):
                    evidences.append(origin["evidence"])
    about = queue.of_memory(tombstone.memory_id)
    for item in about:
        texts += [item.content, item.applied_content or "", item.current_content or ""]
        if item.evidence:
            evidences.append(item.evidence)
    known = [t for t in texts if t]
    linked = {item.id for item in about}
    taken = [item.id for item in about]
    for item in [*queue.pending(), *queue.decided()]:
        if item.id in linked:
            continue
        if item.tombstone_id == tombstone.id or any(says_the_same(t, item.content) for t in known):
            texts.append(item.content)
            taken.append(item.id)
            if item.evidence:
                evidences.append(item.evidence)
    found = list(dict.fromkeys(t for t in texts if normalize(t)))
    return (
        found,
        list(dict.fromkeys([*said, *said_sentences(found, evidences)])),
        taken,
    )


def _finish_runs(
    store: MemoryStore,
    queue: ReviewQueue,
    *,
    tombstones: TombstoneStore | None = None,
    conversations: ConversationStore | None = None,
    job: FileBacked | None = None,
    dismissals: FileBacked | None = None,
) -> list[ForgottenForever]:
    """Finish every Delete forever a killed process left half-way (``repair``): those whose
    tombstone says so, and those of a memory the history log still holds (a run killed
    before this version recorded its intent)."""
    tombstones = tombstones or TombstoneStore.beside(store)
    logged = {entry.get("id") for entry in store.history()}
    unfinished = [
        t
        for t in tombstones.all()
        if t.forgetting is not None or (t.forever and t.memory_id in logged)
    ]
    return [
        forget_forever(
            store,
            queue,
            tombstone.id,
            no_propose=tombstone.no_propose,
            tombstones=tombstones,
            conversations=conversations,
            job=job,
            dismissals=dismissals,
        )
        for tombstone in unfinished
    ]


def forget_deleted_forever(
    store: MemoryStore,
    queue: ReviewQueue,
    memory_id: str,
    *,
    no_propose: bool = True,
    judge: Judge | None = None,
    tombstones: TombstoneStore | None = None,
    conversations: ConversationStore | None = None,
    job: FileBacked | None = None,
    dismissals: FileBacked | None = None,
) -> ForgottenForever | None:
    """``forget_forever`` for a deleted memory (by its id): its tombstone, made now from the
    history log when a program deleted it without one (as who deleted it). None when the
    memory is in the store or nothing is known of it."""
    tombstones = tombstones or TombstoneStore.beside(store)
    if store.get(memory_id) is not None:
        return None
    tombstone = tombstones.for_memory(memory_id)
    if tombstone is None:
        gone = next((d for d in store.recently_deleted() if d.memory.id == memory_id), None)
        if gone is None:
            return None
        tombstone = tombstones.record(gone.memory, by=gone.deleted_by, via="library")
    return forget_forever(
        store,
        queue,
        tombstone.id,
        no_propose=no_propose,
        judge=judge,
        tombstones=tombstones,
        conversations=conversations,
        job=job,
        dismissals=dismissals,
    )


class Forgetting(CuratorBase):
    """Forgetting a memory, Delete forever, and bringing a deleted memory back."""

    def forget(
        self,
        memory_id: str,
        *,
        dont_propose_again: bool = False,
        forever: bool = False,
        view: View = EVERYONE,
        actor: str | None = None,
        via: str | None = None,
        conversation_id: str | None = None,
        expected: str | None = None,
    ) -> Forgotten:
        """Delete the memory ``memory_id`` and record its tombstone (by ``actor``, ``via`` which
        door, from which conversation). A memory already deleted — by a person, an assistant or a
        program through the library — can still be marked "don't propose again" or deleted
        forever: its tombstone is made from the history log when it has none. NotFoundError
        (``memory_gone``) when nothing is known of it in ``view``."""
        actor = actor or self.actor
        via = via or self.via
        view = narrowed(self, view)
        memory = self._memory_store.get(memory_id)
        if memory is not None and not in_view(memory, view):
            raise _unknown(memory_id)
        tombstone: Tombstone | None = None
        if memory is not None and expected is not None and memory.version != expected:
            raise ConflictError(memory)
        if memory is not None and forever:
            # Delete forever records its intent before anything goes: a process killed at any
            # point after is finished by the command run again, or by ``repair``.
            tombstone = self._tombstone_store.for_memory(memory_id)
            if tombstone is None or not tombstone.forever:
                tombstone = self._tombstone_store.record(
                    memory,
                    by=actor,
                    via=via,
                    conversation_id=conversation_id,
                    no_propose=dont_propose_again,
                    forgetting=True,
                )
            reached("recorded")
            if not self._memory_store.delete(memory_id, actor=actor):
                memory = None  # deleted meanwhile
            reached("deleted")
        elif memory is not None and _deleted(self, memory_id, expected, actor):
            reached("deleted")  # (a kill here: the tombstone is made from the log next time)
            tombstone = self._tombstone_store.record(
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
            tombstone = _tombstone_of_deleted(self, memory_id, view)
            if tombstone is None:
                raise _unknown(memory_id)
            if dont_propose_again and not tombstone.no_propose:
                tombstone = self._tombstone_store.set_no_propose(tombstone.id)
        wiped = None
        if forever:
            wiped = forget_deleted_forever(
                self._memory_store,
                self._review_queue,
                memory_id,
                no_propose=dont_propose_again,
                tombstones=self._tombstone_store,
                **_wiped_too(self),
            )
        return Forgotten(memory, tombstone, wiped)

    def forget_many(
        self,
        memory_ids: list[str],
        *,
        dont_propose_again: bool = False,
        actor: str | None = None,
        via: str | None = None,
    ) -> list[Memory]:
        """``forget`` for several memories in one write per store (the memories deleted); those
        outside the curator's view are left alone, as unknown."""
        actor = actor or self.actor
        found = [self._memory_store.get(i) for i in dict.fromkeys(memory_ids)]
        before = [m for m in found if m is not None and in_view(m, self.view)]
        wanted = [m.id for m in before]
        if not before or not self._memory_store.delete_many(wanted, actor=actor):
            return []
        gone = [m for m in before if self._memory_store.get(m.id) is None]
        self._tombstone_store.record_many(
            gone, by=actor, via=via or self.via, no_propose=dont_propose_again
        )
        return gone

    def finish_forgetting(self) -> int:
        """Finish every Delete forever a killed process left half-way (for ``repair``, and for
        the next start: ``finish_interrupted``); how many."""
        finished = _finish_runs(
            self._memory_store,
            self._review_queue,
            tombstones=self._tombstone_store,
            **_wiped_too(self),
        )
        self._tombstone_store.clear_marker()
        return len(finished)

    def finish_interrupted(self) -> int:
        """At a start (``Curator.from_settings``, the dashboard's first request): finish the
        Delete forever runs a killed process left, when the tombstones' marker says one may be
        waiting (one look at the folder otherwise); how many. A store that cannot be written now
        (busy, damaged) leaves it for the next start or ``repair``, with a warning: the fact is
        refused meanwhile by restore, undo and approve (``DeletedForeverError``)."""
        if not self._tombstone_store.unfinished():
            return 0
        try:
            return self.finish_forgetting()
        except (StoreError, OSError) as exc:
            log.warning("A Delete forever left half-way could not be finished now: %s", exc)
            return 0

    def settle_deletions(self) -> int:
        """Record a tombstone for every memory a host program deleted through the library without
        one (``forgotten.settle_deletions``: the whole history log, however early the deletion);
        how many. The history log is append-only between rewrites: once looked at, only what was
        appended since is searched for such a deletion before the log is read again."""
        log_path = self._memory_store.history_path
        try:
            st = log_path.stat()
        except FileNotFoundError:
            return 0
        seen = self.history_seen
        if seen is not None and seen[0] == st.st_ino and seen[1] <= st.st_size:
            with log_path.open("rb") as handle:
                handle.seek(seen[1])
                appended = handle.read(st.st_size - seen[1])
            if b'"library"' not in appended or b'"delete"' not in appended:
                self.history_seen = (st.st_ino, st.st_size)
                return 0
        recorded = forgotten.settle_deletions(self._memory_store, self._tombstone_store)
        self.history_seen = (st.st_ino, st.st_size)
        return recorded

    def restore(
        self, ref: str, *, expected: Memory | str | None = None, actor: str | None = None
    ) -> Memory:
        """Bring back a deleted memory (by its id) or a memory's state before a history entry
        (by its hid); a memory back is no longer forgotten (its tombstone is lifted). KeyError
        when there is nothing to restore (``MemoryStore.restore``), or the memory is outside
        this curator's view (as if it did not exist)."""
        if not ref_in_view(self, ref):
            raise KeyError(f"Nothing to restore for {ref!r}: no such memory was deleted.")
        if deleted_forever(self, ref):
            raise DeletedForeverError(ref)
        memory = self._memory_store.restore(ref, actor=actor or self.actor, expected=expected)
        self._tombstone_store.lift([memory.id])
        return memory
