"""The error types of skill documents: each one a problem a person can act on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import StoreError

if TYPE_CHECKING:
    from .documents import SkillDocument


class SkillDocumentError(StoreError):
    """Base class for skill document problems a person can act on."""


class UnsafeNameError(SkillDocumentError, ValueError):
    """A skill or reference name cannot be made into a safe file name."""


class InvalidSkillDocumentError(SkillDocumentError, ValueError):
    """A document breaks the schema; ``reasons`` lists every problem found."""

    def __init__(self, reasons: list[str], what: str = "The skill document") -> None:
        self.reasons = reasons
        super().__init__(f"{what} is not valid: " + "; ".join(reasons))


class SkillDocumentConflictError(SkillDocumentError):
    """Saving or moving would clash with another document (same key or same file name)."""


class SkillImportError(SkillDocumentError, ValueError):
    """An Agent Skills folder or zip cannot be imported; nothing was saved."""


class SkillEditedHereError(SkillDocumentError):
    """An import would replace documents changed here (the dashboard, the library) since they
    were last imported, and was told to keep such edits; nothing was saved.

    ``documents`` are the stored, edited versions.
    """

    def __init__(self, skill: str, documents: Sequence[SkillDocument]) -> None:
        self.skill = skill
        self.documents = tuple(documents)
        names = ", ".join(doc.reference or doc.title for doc in self.documents)
        super().__init__(
            f"Skill {skill!r} was not imported: {names} changed here since the last import, "
            f"and importing would replace those edits. Nothing was changed."
        )
