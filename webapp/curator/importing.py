"""Imports, one path for every format: a file from another memory system is reconciled and
queued for review; this program's own export is imported as it is — and in both a fact a person
deleted stays forgotten."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..extraction.attribution import OwnerUndecidedError
from ..extraction.forgotten import deleted_match, settle_deletions, with_owners
from ..extraction.sentences import split_sentences
from ..imports import (
    ImportPlan,
    SourceDecision,
    plan_import,
    queue_import,
    read_own_export,
)
from ..imports import resolve_format as _resolve_format
from ..imports.exporters import export_as
from ..similarity import Judge
from ..stores import ImportPreview, ReviewItem
from ..stores.errors import ConflictError, MemoryFullError, NotFoundError, SecretInputError
from ..stores.memories import MemoryStore
from ..stores.review import Proposal, ReviewQueue
from ..stores.tombstones import Tombstone, TombstoneStore
from ..text import normalize
from . import reviewing
from .people import EVERYONE, View, in_view
from .wiping import MARKER

OWN_FORMAT = "json"  # this program's own export form

if TYPE_CHECKING:
    from .core import Curator


def resolve_format(content: str, wanted: str = "auto") -> str:
    """The format of ``content`` (``wanted``, or recognised from the content with "auto")."""
    return _resolve_format(content, wanted)


def export_view(curator: Curator, fmt: str, view: View) -> bytes:
    """The memories ``view`` may see, in this program's own form (``json``, lossless) or
    another system's; a person's are under their name."""
    if fmt == OWN_FORMAT and view is EVERYONE:
        return curator._memory_store.export()
    memories = [m for m in curator._memory_store.get_all() if in_view(m, view)]
    if fmt == OWN_FORMAT:
        records = [m.to_dict() for m in memories]
        return (json.dumps(records, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    return export_as(memories, fmt, curator._people_store.names())


def preview_own(curator: Curator, content: str) -> tuple[list[dict[str, Any]], ImportPreview]:
    """This program's export read and previewed (what would be added, updated, refused)."""
    records = read_own_export(content)
    curator.check_import(records)
    return records, curator._memory_store.preview_import(records)


def import_own(
    curator: Curator,
    records: list[dict[str, Any]],
    *,
    source: str,
    confirm_secrets: bool = False,
    actor: str | None = None,
) -> dict[str, int]:
    """Import this program's own export as it is (ids, times, origins), in one write, except a
    fact a person deleted: it waits in Review marked as deleted before, or is left out after
    "don't propose again" (counted as ``forgotten``)."""
    semantic = curator.semantic
    return import_minding_forgotten(
        curator._memory_store,
        curator._review_queue,
        records,
        actor=actor or curator.actor,
        source=source,
        allow_secrets=confirm_secrets,
        judge=semantic.cached_judge(),
        tombstones=curator._tombstone_store,
    )


def plan_file(
    curator: Curator,
    content: str,
    *,
    fmt: str = "auto",
    file_name: str | None = None,
    day: str | None = None,
    owner: str | None = None,
    lines: Mapping[int, str | None] | None = None,
) -> ImportPlan:
    """Another memory system's file read and reconciled with memory and Review (nothing
    saved). Its statements are ``owner``'s (the person importing; None: the household's)
    unless the file names a person of the household, or ``lines`` names a line's owner;
    each is reconciled within its owner's view, so an import made by one person never
    proposes to change another person's private memory (``plan_import``). An owner id no
    person has is refused (``person_unknown``)."""
    for person_id in {owner, *(lines or {}).values()} - {None}:
        if curator._people_store.get(person_id) is None:
            raise NotFoundError(
                f"No person has the id {person_id!r}.", code="person_unknown", id=repr(person_id)
            )
    return plan_import(
        curator._memory_store,
        curator._review_queue,
        content,
        fmt=fmt,
        file_name=file_name,
        day=day,
        people=curator._people_store,
        owner=owner,
        lines=lines,
    )


def queue_plan(curator: Curator, plan: ImportPlan) -> list[ReviewItem]:
    """Put a plan's proposals in Review (one write)."""
    return queue_import(curator._review_queue, plan)


def approve_source(curator: Curator, source: str, *, actor: str | None = None) -> SourceDecision:
    """Approve every proposal waiting from one import, oldest first, until memory is full,
    each through the curator's one approve (``reviewing.approve``: the secrets check, the
    tombstone, whose it is); one holding a secret, or whose owner waits for a person's
    choice, stays pending; one about a fact deleted forever, or decided meanwhile, is
    passed over."""
    who = actor or curator.actor
    result = SourceDecision()
    for item_id in curator._review_queue.pending_from(source):
        try:
            reviewing.approve(curator, item_id, actor=who)
        except SecretInputError:
            result.secrets += 1
            continue
        except OwnerUndecidedError:
            result.undecided += 1
            continue
        except NotFoundError:
            continue
        except ConflictError:
            result.changed += 1
            continue
        except MemoryFullError as exc:
            result.full = exc
            break
        result.approved += 1
    return result


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
