"""Findings of the "Needs attention" view that a person dismissed, so they stay dismissed.

A small JSON object next to the memories (``attention-dismissed.json``), written through the
same locked, atomic JSON file layer: ``{"<finding key>": {"at": ISO time, "by": actor}}``.
A finding's key names its kind, its memories and their text, so editing a memory brings a
dismissed finding back only when the edit makes it a new one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..problems import InputError
from ..settings import DEFAULTS
from .changes import Changed, Unchanged
from .document import FileBacked
from .jsonfile import JsonFile
from .timefmt import now_iso, unreadable_entry_times

if TYPE_CHECKING:
    from ..settings import Settings

FILE_NAME = "attention-dismissed.json"
MAX_DISMISSED = 20_000  # the oldest dismissals go first beyond this
MAX_KEY_CHARS = 200


def _validate(data: Any) -> str | None:
    if not isinstance(data, dict):
        return f"expected a JSON object of dismissed findings, found a JSON {type(data).__name__}"
    for key, value in data.items():
        if not isinstance(value, dict):
            return f"the dismissal {key!r} is not a JSON object"
    return None


def _unreadable_times(data: Any) -> list[tuple[str, str]]:
    """When dismissals were made, where that cannot be read (kept; only the oldest-first
    pruning uses it)."""
    return unreadable_entry_times(data, ("at",))


class DismissalStore(FileBacked):
    """Which findings were dismissed, by whom and when; shared by every process."""

    def __init__(
        self, path: str | os.PathLike[str], *, lock_timeout: float = DEFAULTS["lock_timeout"]
    ) -> None:
        self.path = Path(path)
        self._file = JsonFile(
            self.path,
            store="dismissals",
            default=dict,
            validate=_validate,
            lock_timeout=lock_timeout,
            unreadable_times=_unreadable_times,
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> DismissalStore:
        """The dismissals next to the memory file ``settings`` name."""
        return cls(settings.memory_file.with_name(FILE_NAME), lock_timeout=settings.lock_timeout)

    def keys(self) -> frozenset[str]:
        """Every dismissed finding's key (cached until the file changes)."""
        return self._file.view("keys", lambda data: frozenset(data))

    def dismiss(self, key: str, *, actor: str = "dashboard") -> bool:
        """Dismiss a finding; False when it already was. ValueError for an unusable key."""
        if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS:
            raise InputError(
                "That is not a finding of the Needs attention view.", code="not_a_finding"
            )

        def mutate(data: dict[str, Any]) -> Changed[bool] | Unchanged[bool]:
            if key in data:
                return Unchanged(False)
            data[key] = {"at": now_iso(), "by": actor}
            if len(data) > MAX_DISMISSED:
                for oldest in sorted(data, key=lambda k: str(data[k].get("at", "")))[
                    : len(data) - MAX_DISMISSED
                ]:
                    del data[oldest]
            return Changed(True)

        return self._file.update(mutate)

    def restore(self, key: str) -> bool:
        """Bring a dismissed finding back (the Undo of Dismiss); False when it was not dismissed."""
        return self._file.remove_key(key)
