"""Undo a change Needs attention made (a Rewrite, an Extend): whether it may be undone, and
undoing it, decided here from the memory's history log, the same for every door."""

from __future__ import annotations

from typing import Any

from ..sensitive.secrets import MASK, find_secrets
from ..stores import ConflictError, Memory, NotFoundError
from ..stores.timefmt import parse_ts
from .base import CuratorBase
from .forgetting import Forgetting
from .people import ref_in_view
from .remembering import Remembering


def _edit(curator: CuratorBase, hid: str) -> tuple[dict[str, Any], Memory]:
    """The edit ``hid`` names and its memory as it is now: KeyError when ``hid`` names no edit
    this curator's view may see, NotFoundError (``memory_gone``) when the memory was deleted."""
    change = curator._memory_store.change(hid) if hid else None
    if change is None or change.get("action") != "update" or not ref_in_view(curator, hid):
        raise KeyError(f"No edit {hid!r} to undo.")
    memory_id = str(change.get("id"))
    memory = curator._memory_store.get(memory_id)
    if memory is None:
        raise NotFoundError(
            f"No memory with id {memory_id!r}.", code="memory_gone", id=repr(memory_id)
        )
    return change, memory


class Undoing(Forgetting, Remembering):
    """Undoing a change Needs attention made (a Rewrite, an Extend)."""

    def undoable_edit(self, memory_id: str) -> str | None:
        """The history id of the memory's latest edit, which an Undo names; None when it has
        none, or when the text before it held a secret: a Rewrite that took a secret out is not
        undone (the secret is gone from the history too, masked)."""
        if not ref_in_view(self, memory_id):
            return None
        entries = self._memory_store.history(memory_id)
        entry = next((e for e in reversed(entries) if e.get("action") == "update"), None)
        if entry is None:
            return None
        before = entry.get("before")
        said = before.get("content") if isinstance(before, dict) else None
        if isinstance(said, str) and (MASK in said or find_secrets(said)):
            return None  # (the history log keeps a secret masked: ``stores.secret_history``)
        return str(entry["hid"])

    def undo_rewrite(self, hid: str, *, actor: str | None = None) -> Memory | None:
        """Put back what a memory said before the edit ``hid`` (a Rewrite); None when it reads as
        before already (nothing to undo). ConflictError when it was edited again since (not
        overwritten), KeyError and NotFoundError as ``_edit`` says."""
        change, memory = _edit(self, hid)
        before, after = change.get("before") or {}, change.get("after") or {}
        if memory.content == before.get("content"):
            return None
        if memory.content != after.get("content"):
            raise ConflictError(memory)
        return self.restore(hid, actor=actor, expected=memory)

    def undo_extend(self, hid: str, *, actor: str | None = None) -> Memory:
        """Put back the expiry a memory had before the edit ``hid`` (an Extend), so it is expired
        again; ConflictError when it was edited since, KeyError and NotFoundError as ``_edit``
        says."""
        change, memory = _edit(self, hid)
        before = (change.get("before") or {}).get("expiresAt")
        saved = self.set_expiry(
            memory.id,
            expires=parse_ts(before) if before else None,
            expected=(change.get("after") or {}).get("updatedAt"),
            actor=actor,
        )
        if saved is None:  # deleted meanwhile
            raise NotFoundError(
                f"No memory with id {memory.id!r}.", code="memory_gone", id=repr(memory.id)
            )
        return saved
