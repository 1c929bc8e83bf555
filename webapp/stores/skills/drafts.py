"""What a person types into a skill document form: checked field by field against the schema's
limits and the naming rules, and turned into the record ``SkillDocumentStore.save`` takes."""

from __future__ import annotations

from typing import Any

from ...problems import InputError, Problem
from .documents import TYPES, SkillDocument
from .errors import UnsafeNameError
from .naming import kebab_case, reference_slug
from .validation import schema


def max_length(field: str) -> int:
    """The schema's ``maxLength`` of a top-level field (``content``, ``skillDescription``)."""
    return int(schema()["properties"][field]["maxLength"])


NEEDS_DESCRIPTION = (
    "A skill needs a description: one sentence saying what it does and when to use it "
    "(the assistant picks skills by it)."
)


def _problem(message: str, code: str, **values: Any) -> Problem:
    return Problem(InputError(message, code=code, **values))


def text_problems(content: str, description: str, *, kind: str = "") -> dict[str, str]:
    """A message (a ``Problem``) for ``content`` and ``description`` when the schema would refuse them, or
    when a skill (``kind="skill"``) has no description. The dashboard's form and the skill
    import both use these rules, so they refuse the same things in the same words."""
    problems: dict[str, str] = {}
    if kind == "skill" and not description.strip():
        problems["description"] = _problem(NEEDS_DESCRIPTION, "skill_needs_description")
    most = max_length("content")
    if not content.strip():
        problems["content"] = _problem("Content cannot be empty.", "skill_content_empty")
    elif len(content) > most:
        problems["content"] = _problem(
            f"Content is too long ({len(content):,} characters; at most {most:,}).",
            "skill_content_too_long",
            length=len(content),
            most=most,
        )
    elif "\x00" in content:
        problems["content"] = _problem(
            "Content cannot contain NUL characters.", "skill_content_nul"
        )
    most = max_length("skillDescription")
    if "description" not in problems and len(description) > most:
        problems["description"] = _problem(
            f"The description is too long ({len(description):,} characters; at most {most:,}).",
            "skill_description_too_long",
            length=len(description),
            most=most,
        )
    return problems


def name_problems(kind: str, skill: str, reference: str) -> dict[str, str]:
    """A message for ``type``, ``skill`` and ``reference`` of a new document when unusable
    (each a ``Problem``: its code and values come along)."""
    if kind not in TYPES:
        return {"type": _problem("Choose Skill or Reference.", "skill_type_unknown")}
    problems: dict[str, str] = {}
    try:
        kebab_case(skill)
    except UnsafeNameError as exc:
        problems["skill"] = Problem(exc)
    if kind == "reference":
        if not reference.strip():
            problems["reference"] = _problem(
                "A reference needs its path, e.g. references/qijue.md.", "reference_needs_path"
            )
        else:
            try:
                reference_slug(reference.strip())
            except UnsafeNameError as exc:
                problems["reference"] = Problem(exc)
    return problems


def new_record(
    kind: str, skill: str, reference: str, description: str, content: str
) -> dict[str, Any]:
    """The record of a new document (a skill's front matter name is the skill's name)."""
    record: dict[str, Any] = {
        "type": kind,
        "skill": skill.strip(),
        "skillDescription": description.strip(),
        "content": content,
        "meta": {"name": skill.strip()} if kind == "skill" else {},
    }
    if kind == "reference":
        record["reference"] = reference.strip()
    return record


def description_of(doc: SkillDocument) -> str:
    """What a form shows as the description: a reference's front matter, else skillDescription."""
    if doc.type == "reference":
        return str(doc.meta.get("description", ""))
    return doc.skill_description


def edited_record(doc: SkillDocument, content: str, description: str) -> dict[str, Any]:
    """The record that saves new ``content`` and ``description`` into ``doc``: a skill's
    description is its skillDescription (and its front matter's, if it has one); a
    reference's is its front matter's."""
    description = description.strip()
    record: dict[str, Any] = {"id": doc.id, "content": content}
    meta = dict(doc.meta)
    if doc.type == "reference":
        meta["description"] = description
    else:
        record["skillDescription"] = description
        if "description" in meta:
            meta["description"] = description
    record["meta"] = meta
    return record
