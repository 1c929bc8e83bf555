"""File names of skill documents: kebab-case names, content hashes, one key per document.

``{skill}-skill-{hash8}.json`` or ``{skill}-reference-{reference}-{hash8}.json``. Names that
differ only by case or width (``Poem-Writer``, ``ＰＯＥＭ-writer``) give the same key and prefix,
so they can never collide on a case-insensitive file system; names that cannot be made safe
are refused with UnsafeNameError rather than rewritten.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from .errors import UnsafeNameError

MAX_NAME_BYTES = 100  # per kebab part: keeps a full file name under 255 bytes


def _reject_hostile(name: Any, what: str) -> str:
    """The name as text, or UnsafeNameError for what can never be a safe file name."""
    if not isinstance(name, str):
        raise UnsafeNameError(
            f"The {what} must be text, got {type(name).__name__}.",
            code="name_not_text",
            what=what,
            type=type(name).__name__,
        )
    if not name.strip():
        raise UnsafeNameError(f"The {what} is empty.", code="name_empty", what=what)
    if len(name) > 4 * MAX_NAME_BYTES:
        raise UnsafeNameError(
            f"The {what} is too long ({len(name)} characters).",
            code="name_too_long",
            what=what,
            length=len(name),
        )
    for ch in name:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            raise UnsafeNameError(
                f"The {what} {name!r} contains the control or invisible character U+{ord(ch):04X}.",
                code="name_control_character",
                what=what,
                name=repr(name),
                character=f"U+{ord(ch):04X}",
            )
    return name


def kebab_case(name: Any, what: str = "skill name") -> str:
    """The kebab-case file-name form of a name, or UnsafeNameError.

    NFKC-normalised and case-folded; camelCase is split; every run of characters that is not a
    Unicode letter, mark or digit becomes one ``-``, so Chinese and other scripts are kept as is
    (``詩人 Helper`` → ``詩人-helper``). Path separators, ``..``, control characters, empty
    results and parts over 100 UTF-8 bytes are refused rather than rewritten.
    """
    name = _reject_hostile(name, what)
    if "/" in name or "\\" in name:
        raise UnsafeNameError(
            f"The {what} {name!r} contains a path separator.",
            code="name_path_separator",
            what=what,
            name=repr(name),
        )
    if ".." in name:
        raise UnsafeNameError(
            f"The {what} {name!r} contains '..'.", code="name_dot_dot", what=what, name=repr(name)
        )
    text = unicodedata.normalize("NFKC", name)
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", text).casefold()
    kept = "".join(ch if unicodedata.category(ch)[0] in "LMN" else "-" for ch in text)
    slug = re.sub(r"-{2,}", "-", kept).strip("-")
    if not slug:
        raise UnsafeNameError(
            f"The {what} {name!r} has no letters or digits.",
            code="name_no_letters",
            what=what,
            name=repr(name),
        )
    if len(slug.encode("utf-8")) > MAX_NAME_BYTES:
        raise UnsafeNameError(
            f"The {what} is too long for a file name ({len(slug.encode('utf-8'))} bytes in "
            f"kebab-case; at most {MAX_NAME_BYTES}).",
            code="name_too_long_for_file",
            what=what,
            bytes=len(slug.encode("utf-8")),
            most=MAX_NAME_BYTES,
        )
    return slug


def reference_slug(reference: Any) -> str:
    """The kebab-case name of a reference path: ``references/forms/Qijue.md`` → ``forms-qijue``."""
    reference = _reject_hostile(reference, "reference path")
    if "\\" in reference or reference.startswith("/") or re.match(r"^[A-Za-z]:", reference):
        raise UnsafeNameError(
            f"The reference path {reference!r} must be relative, with '/'.",
            code="reference_not_relative",
            path=repr(reference),
        )
    parts = reference.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise UnsafeNameError(
            f"The reference path {reference!r} has an empty, '.' or '..' part.",
            code="reference_bad_part",
            path=repr(reference),
        )
    if parts[0] == "references" and len(parts) > 1:
        parts = parts[1:]
    parts[-1] = PurePosixPath(parts[-1]).stem or parts[-1]
    return kebab_case("-".join(parts), "reference name")


def content_hash(content: str) -> str:
    """First 8 hex digits of the SHA-256 of the content (UTF-8): de-duplicates file names."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()[:8]


def document_file_name(record: Mapping[str, Any]) -> str:
    """``{skill}-skill-{hash}.json`` or ``{skill}-reference-{reference}-{hash}.json``."""
    skill = kebab_case(record.get("skill"))
    digest = content_hash(str(record.get("content", "")))
    if record.get("type") == "reference":
        return f"{skill}-reference-{reference_slug(record.get('reference'))}-{digest}.json"
    return f"{skill}-skill-{digest}.json"


def document_key(record: Mapping[str, Any]) -> tuple[str, str, str]:
    """What makes a document unique: (kebab skill, type, kebab reference or "")."""
    kind = str(record.get("type"))
    ref = reference_slug(record.get("reference")) if kind == "reference" else ""
    return kebab_case(record.get("skill")), kind, ref


def is_document_name(name: str) -> bool:
    """Document files: visible ``*.json`` (temp files, the lock and .deprecated are hidden)."""
    return name.endswith(".json") and not name.startswith(".")
