"""The curator's own refusals (the stores' errors pass through as they are)."""

from __future__ import annotations

from typing import Any

from ..extraction.attribution import OwnerUndecidedError
from ..problems import InputError
from ..stores import Memory, NotFoundError, StoreError

__all__ = [
    "AmbiguousMemoryError",
    "DeletedForeverError",
    "ForgottenFactError",
    "OwnerUndecidedError",
    "SimilarMemoryError",
    "UnknownPersonError",
]


class DeletedForeverError(NotFoundError):
    """The memory ``id`` was deleted forever (or its Delete forever is being finished):
    nothing brings it back — not a restore, not undoing the approval that added it, not
    approving a proposal about it again. A ``KeyError``, as a memory with nothing to restore
    is."""

    code = "deleted_forever"
    codes: tuple[str, ...] = ("deleted_forever",)

    def __init__(self, memory_id: str) -> None:
        super().__init__(
            f"The memory {memory_id} was deleted forever: its words are gone and nothing can "
            "bring it back. Nothing was changed.",
            code="deleted_forever",
            id=memory_id,
        )


class ForgottenFactError(DeletedForeverError):
    """A fact to keep that states again one a person deleted forever (its words, or its
    fingerprint, ``extraction.forgotten.deleted_match``): it is not kept again, whoever asks.
    ``memory_id`` is the memory that held it."""

    def __init__(self, memory_id: str) -> None:
        NotFoundError.__init__(
            self,
            f"A person deleted this fact forever (memory {memory_id}): it is not kept again. "
            "Nothing was added.",
            code="deleted_forever",
            id=memory_id,
        )
        self.memory_id = memory_id


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


class AmbiguousPersonError(UnknownPersonError):
    """A name two or more people answer to (a shared first name, "Ana" for Ana Souza and Ana
    Lima): it picks no one, and nothing is changed. The refusal names none of them (a caller
    may be anyone the assistant talks with): only how many, and to use a whole name or id."""

    code = "person_ambiguous"

    def __init__(self, name: str, count: int) -> None:
        InputError.__init__(
            self,
            f'{count} people of the household go by "{name}": name the person by their whole '
            "name or by their id (the People page of the Memory Curator dashboard shows both). "
            "Nothing was changed.",
            name=name,
            count=count,
        )


class AmbiguousMemoryError(InputError):
    """A text to forget that several memories of the view match: none is forgotten, and the
    caller is given them (``candidates``, each within the view) to name one by id."""

    code = "ambiguous"

    def __init__(self, text: str, candidates: list[Memory]) -> None:
        super().__init__(
            f"{len(candidates)} memories match {text!r}: say which one to forget by its id. "
            "Nothing was forgotten.",
            code="ambiguous",
            count=len(candidates),
        )
        self.candidates = candidates
