"""The curator's own refusals (the stores' errors pass through as they are)."""

from __future__ import annotations

from typing import Any

from ..extraction.attribution import OwnerUndecidedError
from ..problems import InputError
from ..stores import StoreError

__all__ = ["OwnerUndecidedError", "SimilarMemoryError", "UnknownPersonError"]


class SimilarMemoryError(StoreError):
    """A memory already says this fact in other words; ``existing`` is that memory. Adding it
    anyway is the caller's to confirm (``allow_similar``)."""

    code = "similar_memory"

    def __init__(self, existing: Any) -> None:
        self.existing = existing
        super().__init__(
            f"This looks like a memory already kept (id {existing.id}): “{existing.content}”. "
            "Nothing was added; add it anyway only if it says something else.",
            id=existing.id,
            content=existing.content,
        )


class UnknownPersonError(InputError):
    """A person named by a door (a name, an id) whom nobody on the People page is; the name is
    recorded there as seen, and a private fact is never kept as the household's instead."""

    code = "unknown_person"

    def __init__(self, name: str) -> None:
        super().__init__(
            f'No person "{name}" is known yet; the name now waits on the People page of the '
            "Memory Curator dashboard to be added as a person or linked to one. Nothing was "
            "changed.",
            name=name,
        )
