"""Taking an approval back in memory: what ``ReviewQueue.undo`` writes (through
``MemoryBook``) after the queue's own change is committed. Approving itself writes memory in
the curator (``curator.reviewing``), never here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ConflictError
from .memory import MemoryBook


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
