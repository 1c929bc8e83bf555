"""Facts a person deleted: recognising them when they are proposed again (Delete forever itself
is the curator's: ``curator.forgetting``, ``curator.wiping``).

``deleted_match`` says which tombstone (``webapp.stores.tombstones``) a proposed fact repeats,
among the tombstones of the fact's owner only (Leo's deleted "Likes jazz" says nothing about
Maya's "I like jazz"): in the same words or others, by the same judge ``already_decided`` asks (the similarity
layer's ``Judge.repeats``), by words alone when there is no judge; a fact deleted forever is
recognised by the keyed hash of its normalised words and by its vector (cosine at the judge's
duplicate threshold for the language of the new text).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from enum import Enum

import numpy as np

from ..language.phrasing import fact_form
from ..similarity import Judge
from ..similarity.facts import analyse
from ..stores.memories import MemoryStore
from ..stores.review import ReviewItem
from ..stores.timefmt import parse_ts
from ..stores.tombstones import Tombstone, TombstoneStore
from .decided import JUDGED_CANDIDATES, says_the_same

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
