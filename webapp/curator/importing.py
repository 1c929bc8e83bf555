"""Imports, one path for every format: a file from another memory system is reconciled and
queued for review; this program's own export is imported as it is — and in both a fact a person
deleted stays forgotten."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..extraction.attribution import OwnerUndecidedError
from ..extraction.forgotten import import_minding_forgotten
from ..extraction.imports import (
    ImportPlan,
    SourceDecision,
    plan_import,
    queue_import,
    read_own_export,
)
from ..extraction.imports import resolve_format as _resolve_format
from ..extraction.imports.exporters import export_as
from ..stores import ImportPreview, ReviewItem
from ..stores.errors import ConflictError, MemoryFullError, NotFoundError, SecretInputError
from . import reviewing
from .people import EVERYONE, View, in_view

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
