"""Facts a person deleted: recognising them when they are proposed again, and Delete forever.

``deleted_match`` says which tombstone (``webapp.stores.tombstones``) a proposed fact repeats,
among the tombstones of the fact's owner only (Leo's deleted "Likes jazz" says nothing about
Maya's "I like jazz"): in the same words or others, by the same judge ``already_decided`` asks (the similarity
layer's ``Judge.repeats``), by words alone when there is no judge; a fact deleted forever is
recognised by the keyed hash of its normalised words and by its vector (cosine at the judge's
duplicate threshold for the language of the new text).

``forget_forever`` removes the words of a deleted fact from every file the stores keep (the
memories and their backup, the history log, the review queue and its backup, the
conversations, the extraction job, the tombstone, the vector cache's rows) and keeps only its
fingerprint; it can be run again to finish a run that was killed half-way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

import numpy as np

from ..attention.semantic import semantic_index
from ..language.phrasing import fact_form
from ..similarity import Judge
from ..similarity.facts import analyse
from ..stores.conversations import ConversationStore
from ..stores.document import FileBacked
from ..stores.memories import MemoryStore
from ..stores.review import Proposal, ReviewItem, ReviewQueue
from ..stores.timefmt import parse_ts
from ..stores.tombstones import Tombstone, TombstoneStore
from ..text import normalize
from .decided import JUDGED_CANDIDATES, says_the_same
from .sentences import split_sentences
from .wiping import MARKER, Masker, dismissals_without, job_without, reached, said_sentences

# The newest deleted facts the judge compares a proposal with by meaning (each needs a vector
# once: embedding thousands would hold up the first extraction for minutes); words and
# fingerprints are compared with every one.
MAX_JUDGED = 1000


class Anyone(Enum):
    """``deleted_match``'s owner when nobody of the household is known: every tombstone."""

    ANYONE = "anyone"


ANYONE = Anyone.ANYONE
Owner = str | None | Anyone


def owned_by(tombstone: Tombstone, owner: Owner) -> bool:
    """Whether ``tombstone`` is of a fact ``owner`` kept (a person's id, None for the
    household's). A tombstone whose owner is unknown (written before owners were recorded,
    its memory gone from the history log) counts for everyone: a fact deleted stays
    forgotten rather than come back."""
    return owner is ANYONE or not tombstone.owner_known or tombstone.person == owner


# MemoryStore's actor when a host program names none: a deletion by it went round the curator.
LIBRARY_ACTOR = "library"


def settle_deletions(store: MemoryStore, tombstones: TombstoneStore) -> int:
    """Record a tombstone for every memory a host program deleted through the library without
    one (``MemoryStore.delete`` with the store's default actor, "library"), however long ago:
    the whole history log is read (``recently_deleted``, parsed once per version of the log),
    so a deletion made before anything looked is remembered like one made since. Every
    reader of the tombstones that decides about a proposal (extraction, imports) settles
    first; how many were recorded. Deletions the doors make go through the curator's
    ``forget``; the other deletions they make (undoing an approval, a merge) are not a person
    forgetting."""
    try:
        if b'"library"' not in store.history_path.read_bytes():
            return 0  # (no deletion by it: a byte search, without parsing the log)
    except FileNotFoundError:
        return 0
    library = [d for d in store.recently_deleted() if d.deleted_by == LIBRARY_ACTOR]
    if not library:
        return 0
    known = {t.memory_id for t in tombstones.all()}
    missing = [d for d in library if d.memory.id not in known]
    for deleted in missing:
        tombstones.record(deleted.memory, by=deleted.deleted_by, via="library")
    return len(missing)


def with_owners(tombstones: Iterable[Tombstone], store: MemoryStore) -> list[Tombstone]:
    """``tombstones`` with the owner of those written before owners were recorded read from
    the history log (the memory's last state), where it still holds it."""
    found = list(tombstones)
    if all(t.owner_known for t in found):
        return found
    owners = {d.memory.id: d.memory.person for d in store.recently_deleted()}
    return [
        replace(t, person=owners[t.memory_id], owner_known=True)
        if not t.owner_known and t.memory_id in owners
        else t
        for t in found
    ]


def deleted_match(
    content: str,
    tombstones: Sequence[Tombstone],
    *,
    fingerprint: Callable[[str], str],
    judge: Judge | None = None,
    owner: Owner = ANYONE,
) -> Tombstone | None:
    """The tombstone of the deleted fact ``content`` states again, or None; only a tombstone
    of a fact ``owner`` kept counts (``owned_by``): a person's deletion never drops or marks
    another person's fact."""
    tombstones = [t for t in tombstones if owned_by(t, owner)]
    if not content or not tombstones:
        return None
    # Matched on the fact form too (``phrasing.fact_form``): "I really like green tea, just so
    # you know" is the deleted "Really likes green tea" said again with a filler.
    forms = list(dict.fromkeys([content, fact_form(content)]))
    worded = [t for t in tombstones if t.content]
    for tombstone in reversed(worded):
        assert tombstone.content is not None
        deleted = dict.fromkeys([tombstone.content, fact_form(tombstone.content)])
        if any(says_the_same(kept, form) for kept in deleted for form in forms):
            return tombstone
    printed = [t for t in tombstones if t.fingerprints]
    if printed:
        mine = {fingerprint(form) for form in forms}
        for tombstone in reversed(printed):
            if mine & set(tombstone.fingerprints):
                return tombstone
    if judge is None:
        return None
    recent = worded[-MAX_JUDGED:]
    texts = [str(t.content) for t in recent]
    for index, _ in judge.most_similar(content, texts, JUDGED_CANDIDATES):
        if judge.repeats(texts[index], content):
            return recent[index]
    model = judge.embedder.name
    fingerprinted = [(t, row) for t in tombstones for name, row in t.vectors if name == model]
    if not fingerprinted:
        return None
    vector = judge.cache.vectors([content])[0]
    limit = judge.limits(analyse(content).language).duplicate
    best, score = None, -1.0
    for tombstone, row in fingerprinted:
        if row.shape != vector.shape:
            continue
        cosine = float(np.clip(row @ vector, -1.0, 1.0))
        if cosine > score:
            best, score = tombstone, cosine
    return best if best is not None and score >= limit else None


def still_deciding(items: Sequence[ReviewItem], tombstone: Tombstone) -> list[ReviewItem]:
    """The review items that still say something about a fact deleted since: an approval from
    before the deletion is undone by it (a rejection, or a decision after it, still counts)."""
    return [
        item
        for item in items
        if item.status != "approved" or parse_ts(item.decided_at) > tombstone.deleted_at
    ]


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


def finish_forgetting(
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


def _owner_of(record: dict[str, Any]) -> str | None:
    person = record.get("person")
    return person if isinstance(person, str) and person else None


def import_minding_forgotten(
    store: MemoryStore,
    queue: ReviewQueue,
    records: Any,
    *,
    actor: str | None = None,
    source: str | None = None,
    allow_secrets: bool = False,
    judge: Judge | None = None,
    tombstones: TombstoneStore | None = None,
) -> dict[str, int]:
    """``MemoryStore.import_records``, except that a record stating a fact a person deleted
    (and has not restored) is not imported: it waits in Review marked as deleted before (or,
    when the person chose "don't propose again" or deleted it forever, is left out), counted
    as ``forgotten``. A fact deleted forever is recognised by its memory's id as well (an old
    backup), and a sentence that said it is masked in the other records' evidence.
    The whole file is checked first: a bad record stops the import before anything is queued."""
    store.plan_import(records, allow_secrets=True)  # raises for an unusable file
    tombstones = tombstones or TombstoneStore.beside(store)
    settle_deletions(store, tombstones)
    present = {m.id for m in store.get_all()}
    active = with_owners(tombstones.active(present), store)
    forever = {t.memory_id: t for t in active if t.forever}
    prints = {f for t in forever.values() for f in t.fingerprints}
    held: list[tuple[dict[str, Any], Tombstone]] = []
    kept: list[dict[str, Any]] = []
    for record in records:
        content = record.get("content")
        match = forever.get(str(record.get("id"))) or (
            deleted_match(
                content,
                active,
                fingerprint=tombstones.fingerprint,
                judge=judge,
                owner=_owner_of(record),
            )
            if isinstance(content, str) and record.get("id") not in present
            else None
        )
        if match is None:
            kept.append(_without_forgotten_evidence(record, prints, tombstones.fingerprint))
        else:
            held.append((record, match))
    counts = store.import_records(kept, actor=actor, source=source, allow_secrets=allow_secrets)
    waiting = [
        Proposal(
            "add",
            str(record["content"]),
            category=str(record.get("category") or "general"),
            evidence=f"Imported from {source}" if source else "Imported",
            tombstone_id=match.id,
            person=_owner_of(record),
        )
        for record, match in held
        if not match.no_propose and not match.forever  # an old backup brings none back
    ]
    queue.submit(waiting)
    counts["forgotten"] = len(held)
    return counts


def _without_forgotten_evidence(
    record: dict[str, Any], prints: set[str], fingerprint: Callable[[str], str]
) -> dict[str, Any]:
    """``record`` with the sentences of its evidence that said a fact deleted forever (their
    fingerprints are the tombstone's) replaced by ``MARKER``."""
    origin = record.get("origin")
    evidence = origin.get("evidence") if isinstance(origin, dict) else None
    if not prints or not isinstance(origin, dict) or not isinstance(evidence, str):
        return record
    masked = evidence
    for sentence in {evidence, *split_sentences(evidence)}:
        if normalize(sentence) and fingerprint(sentence) in prints:
            masked = masked.replace(sentence, MARKER)
    if masked == evidence:
        return record
    return {**record, "origin": {**origin, "evidence": masked}}
