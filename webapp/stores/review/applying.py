"""What approving a review item does in memory, and taking it back: the memory writes a
decision makes (through ``MemoryBook``), after the queue's own change is committed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ConflictError, DuplicateMemoryError
from ..timefmt import read_time
from .items import _str_or_none, review_origin
from .memory import MemoryBook


def apply_approval(
    store: MemoryBook,
    record: dict[str, Any],
    edited: str | None,
    actor: str,
    expected: str | None = None,
) -> dict[str, Any]:
    """Make an approved item's change in ``store`` (the memory store); return what to record
    for undo. An ``update`` replaces the memory only while it is still at version ``expected``
    (when given). Remembering a deleted fact as forgotten is the curator's (``Curator.approve``)."""
    text = edited or record["content"]
    action, memory_id = record["action"], record.get("memoryId")
    if action == "delete" and memory_id:
        if not store.delete(memory_id, actor=actor):
            # Gone already (deleted elsewhere meanwhile): undo must not bring it back.
            return {
                "appliedMemoryId": memory_id,
                "appliedContent": None,
                "appliedAction": "none",
            }
        return {"appliedMemoryId": memory_id, "appliedContent": None, "appliedAction": "delete"}
    origin = review_origin(record, actor)
    before = store.get(memory_id) if action == "update" and memory_id else None
    expires = read_time(record.get("expiresAt"))
    if before is not None:
        memory = store.update(
            before.id,
            text,
            expected_updated_at=expected or None,
            category=record.get("category") or None,
            actor=actor,
            origin=origin,
        )
        if memory is not None and memory.expires_at != expires:
            # The fact as now stated ends when it says (or never).
            memory = store.set_expiry(memory.id, expires, actor=actor) or memory
        if memory is not None:
            return {
                "appliedMemoryId": memory.id,
                "appliedContent": text,
                "appliedAction": "update",
                "currentContent": before.content,
            }
    try:
        memory = store.add(
            text,
            category=record.get("category") or "general",
            source="extracted",
            actor=actor,
            allow_duplicate=False,
            origin=origin,
            person=_str_or_none(record.get("person")),
            expires_at=expires,
        )
    except DuplicateMemoryError as exc:
        # Someone (the assistant, the dashboard) stored it while it waited: no copy, and
        # undo must leave their memory alone.
        return {
            "appliedMemoryId": exc.existing.id,
            "appliedContent": text,
            "appliedAction": "none",
        }
    return {"appliedMemoryId": memory.id, "appliedContent": text, "appliedAction": "add"}


def revert_approval(store: MemoryBook, record: Mapping[str, Any], actor: str) -> None:
    """Undo in memory what an approved item did (``appliedAction``); lifting the tombstone
    of an approved forget is the curator's."""
    memory_id = record.get("appliedMemoryId")
    if not memory_id:
        return
    applied = record.get("appliedAction") or record["action"]
    if applied == "none":
        return
    if applied == "delete":
        if store.get(memory_id) is None:
            store.restore(memory_id, actor=actor)
    elif applied == "update":
        memory = store.get(memory_id)
        if memory is None or not record.get("currentContent"):
            return
        if memory.content != record.get("appliedContent"):
            raise ConflictError(memory)
        store.update(
            memory_id,
            record["currentContent"],
            expected_updated_at=memory.updated_at,
            actor=actor,
        )
    else:
        store.delete(memory_id, actor=actor)
