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
    ASK,
    ImportPlan,
    SourceDecision,
    read_own_export,
)
from ..imports import plan_import as reconcile_file
from ..imports import queue_import as queue_proposals
from ..imports import resolve_format as _resolve_format
from ..imports.exporters import export_as
from ..similarity import Judge
from ..stores import ImportPreview, ReviewItem
from ..stores.errors import ConflictError, MemoryFullError, NotFoundError, SecretInputError
from ..stores.memories import MemoryStore
from ..stores.review import Proposal, ReviewQueue
from ..stores.tombstones import Tombstone, TombstoneStore
from ..text import normalize
from .people import EVERYONE, View, check_person, in_view, person_in_view, visible_memory
from .reviewing import Reviewing
from .wiping import MARKER

OWN_FORMAT = "json"  # this program's own export form

if TYPE_CHECKING:
    from .base import CuratorBase


def resolve_format(content: str, wanted: str = "auto") -> str:
    """The format of ``content`` (``wanted``, or recognised from the content with "auto")."""
    return _resolve_format(content, wanted)


def _plan_file(
    curator: CuratorBase,
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
    return reconcile_file(
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


class Importing(Reviewing):
    """Imports and exports: this program's own export, another system's file planned and
    queued in Review, and a whole import approved."""

    def export(self, fmt: str = "json", *, view: View = EVERYONE) -> bytes:
        """The memories ``view`` (else this curator's) may see (``people.in_view``: a
        person's own and the household's, never another person's) in this program's own form
        (``json``, lossless) or another system's ``fmt``; a person's are under their name."""
        view = view if view is not EVERYONE else self.view
        if fmt == OWN_FORMAT and view is EVERYONE:
            return self._memory_store.export()
        memories = [m for m in self._memory_store.get_all() if in_view(m, view)]
        if fmt == OWN_FORMAT:
            records = [m.to_dict() for m in memories]
            return (json.dumps(records, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
        return export_as(memories, fmt, self._people_store.names())

    def preview_export(self, content: str) -> tuple[list[dict[str, Any]], ImportPreview]:
        """This program's own export read and previewed (what would be added, updated,
        refused), within a view only as ``check_import`` allows."""
        records = read_own_export(content)
        self.check_import(records)
        return records, self._memory_store.preview_import(records)

    def import_export(
        self,
        records: list[dict[str, Any]],
        *,
        source: str,
        confirm_secrets: bool = False,
        actor: str | None = None,
    ) -> dict[str, int]:
        """Import this program's own export as it is (ids, times, origins), in one write, except a
        fact a person deleted: it waits in Review marked as deleted before, or is left out after
        "don't propose again" (counted as ``forgotten``); within a view only as
        ``check_import`` allows."""
        self.check_import(records)
        semantic = self.semantic
        return import_minding_forgotten(
            self._memory_store,
            self._review_queue,
            records,
            actor=actor or self.actor,
            source=source,
            allow_secrets=confirm_secrets,
            judge=semantic.cached_judge(),
            tombstones=self._tombstone_store,
        )

    def check_import(self, records: list[dict[str, Any]]) -> None:
        """Within a view, an own export may hold only the viewer's memories and the
        household's, and change no memory outside the view: ``person_unknown`` or
        ``memory_gone`` otherwise, as if that person or memory did not exist."""
        if self.view is EVERYONE:
            return
        for record in records:
            if not isinstance(record, dict):
                continue
            person = record.get("person")
            check_person(person if isinstance(person, str) and person else None, self.view)
            memory_id = record.get("id")
            if isinstance(memory_id, str) and memory_id:
                existing = self._memory_store.get(memory_id) or self._memory_store.deleted(
                    memory_id
                )
                if existing is not None and not self.visible(existing):
                    visible_memory(self, memory_id)  # raises memory_gone

    def plan_import(
        self,
        content: str,
        *,
        fmt: str = "auto",
        file_name: str | None = None,
        day: str | None = None,
        owner: str | None = None,
        lines: Mapping[int, str | None] | None = None,
    ) -> ImportPlan:
        """Another system's file reconciled with memory and Review, each statement within
        its owner's view (``_plan_file``); within a person's view, every owner is that
        person or the household (``person_unknown`` otherwise)."""
        for person in {owner, *(lines or {}).values()}:
            check_person(person, self.view)
        plan = _plan_file(
            self, content, fmt=fmt, file_name=file_name, day=day, owner=owner, lines=lines
        )
        # A line the file says is another person's is the importer's own within a view:
        # nobody imports as someone else, nor is it compared with their memories.
        outside = {
            line: owner
            for line, whose in plan.owners.items()
            if whose != ASK and not person_in_view(whose, self.view)
        }
        if not outside:
            return plan
        return _plan_file(
            self,
            content,
            fmt=fmt,
            file_name=file_name,
            day=day,
            owner=owner,
            lines={**(lines or {}), **outside},
        )

    def queue_import(self, plan: ImportPlan) -> list[ReviewItem]:
        """Put a plan's proposals in Review (one write)."""
        return queue_proposals(self._review_queue, plan)

    def approve_source(self, source: str, *, actor: str | None = None) -> SourceDecision:
        """Approve every proposal waiting from one import, oldest first, until memory is full,
        each through the curator's one approve (``Reviewing.approve``: the secrets check, the
        tombstone, whose it is); one holding a secret, or whose owner waits for a person's
        choice, stays pending; one about a fact deleted forever, or decided meanwhile, is
        passed over."""
        who = actor or self.actor
        result = SourceDecision()
        for item_id in self._review_queue.pending_from(source):
            try:
                self.approve(item_id, actor=who)
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
