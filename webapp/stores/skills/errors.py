"""The error types of skill documents: each one a problem a person can act on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import StoreError

if TYPE_CHECKING:
    from .documents import SkillDocument


class SkillDocumentError(StoreError):
    """Base class for skill document problems a person can act on."""

    code = "skill_document_error"


class UnsafeNameError(SkillDocumentError, ValueError):
    """A skill or reference name cannot be made into a safe file name; ``what`` is
    ``"skill name"``, ``"reference path"`` or ``"reference name"``."""

    code = "name_unsafe"
    codes = (
        "name_unsafe",
        "name_not_text",
        "name_empty",
        "name_too_long",
        "name_control_character",
        "name_path_separator",
        "name_dot_dot",
        "name_no_letters",
        "name_too_long_for_file",
        "reference_not_relative",
        "reference_bad_part",
        "name_outside_folder",
    )


class InvalidSkillDocumentError(SkillDocumentError, ValueError):
    """A document breaks the schema; ``reasons`` lists every problem found (the schema's
    English words). ``file`` names the file checked, if it is not a stored document."""

    code = "invalid_skill_document"
    codes = ("invalid_skill_document", "invalid_skill_file")

    def __init__(self, reasons: list[str], what: str | None = None) -> None:
        self.reasons = reasons
        super().__init__(
            f"{what or 'The skill document'} is not valid: " + "; ".join(reasons),
            code="invalid_skill_file" if what else "invalid_skill_document",
            file=what,
            reasons="; ".join(reasons),
        )


class SkillDocumentConflictError(SkillDocumentError):
    """Saving or moving would clash with another document: one for the same skill or
    reference (``skill_document_exists``), or a file that is not a valid document
    (``skill_file_unreadable``) or holds another one (``skill_file_taken``)."""

    code = "skill_document_exists"
    codes = ("skill_document_exists", "skill_file_unreadable", "skill_file_taken")


class SkillImportError(SkillDocumentError, ValueError):
    """An Agent Skills folder or zip cannot be imported; nothing was saved."""

    code = "skill_import"
    codes: tuple[str, ...] = (
        "skill_import",
        "skill_import_problem",
        "skill_import_outside_link",
        "skill_import_too_large_file",
        "skill_import_not_utf8",
        "skill_import_unreadable",
        "skill_import_bad_yaml",
        "skill_import_yaml_alias",
        "skill_import_yaml_value",
        "skill_import_yaml_same_key",
        "skill_import_too_deep",
        "skill_import_not_folder",
        "skill_import_no_skill_md",
        "skill_import_needs_name",
        "skill_import_description_not_text",
        "skill_import_no_instructions",
        "skill_import_empty_reference",
        "skill_import_too_many_references",
        "zip_unreadable",
        "zip_control_characters",
        "zip_absolute_path",
        "zip_climbs_out",
        "zip_too_many_entries",
        "zip_symlink",
        "zip_encrypted",
        "zip_points_outside",
        "zip_too_large",
        "zip_twice",
        "zip_entry_unreadable",
        "zip_several_skills",
        "zip_no_skill_md",
    )


class SkillEditedHereError(SkillDocumentError):
    """An import would replace documents changed here (the dashboard, the library) since they
    were last imported, and was told to keep such edits; nothing was saved.

    ``documents`` are the stored, edited versions.
    """

    code = "skill_edited_here"

    def __init__(self, skill: str, documents: Sequence[SkillDocument]) -> None:
        self.skill = skill
        self.documents = tuple(documents)
        names = ", ".join(doc.reference or doc.title for doc in self.documents)
        super().__init__(
            f"Skill {skill!r} was not imported: {names} changed here since the last import, "
            f"and importing would replace those edits. Nothing was changed.",
            skill=skill,
            names=names,
        )
