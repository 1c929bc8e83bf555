"""The error types of skill documents: each one a problem a person can act on."""

from __future__ import annotations

from ..errors import StoreError


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
