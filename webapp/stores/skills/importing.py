"""Reading an Agent Skills folder (SKILL.md plus ``references/**/*.md``) into document records."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from .documents import SkillDocument, derive_snippet
from .drafts import text_problems
from .errors import SkillImportError
from .validation import validate_record

MAX_SOURCE_BYTES = 1_000_000  # one SKILL.md or reference file in an import
MAX_REFERENCES = 500
MAX_FRONT_MATTER_DEPTH = 32  # the stored document nests it two levels deeper


@dataclass(frozen=True)
class ImportReport:
    """What an import or export did, per document."""

    added: tuple[SkillDocument, ...] = ()
    updated: tuple[SkillDocument, ...] = ()
    unchanged: tuple[SkillDocument, ...] = ()
    not_in_source: tuple[SkillDocument, ...] = ()  # live documents of the skill the folder lacks
    # The stored versions, edited here since the last import, that the import replaced (each
    # stays in its document's history).
    edits_replaced: tuple[SkillDocument, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated)

    def summary(self) -> str:
        """E.g. ``3 added, 0 updated, 0 unchanged``."""
        text = (
            f"{len(self.added)} added, {len(self.updated)} updated, {len(self.unchanged)} unchanged"
        )
        if self.not_in_source:
            text += f"; {len(self.not_in_source)} stored but no longer in the source"
        return text


@dataclass(frozen=True)
class PlannedDocument:
    """One document of a planned import: what would happen to it."""

    kind: str  # "add", "update" or "same"
    record: dict[str, Any]  # the document as the source has it
    current: SkillDocument | None  # what is stored under its key now
    edited_here: bool  # the stored one was changed here since it was last imported


@dataclass(frozen=True)
class ImportPlan:
    """What importing a skill folder would change; nothing is written while planning."""

    skill: str
    documents: tuple[PlannedDocument, ...]
    not_in_source: tuple[SkillDocument, ...] = ()  # stored documents the folder lacks

    def of_kind(self, kind: str) -> list[PlannedDocument]:
        return [d for d in self.documents if d.kind == kind]

    @property
    def overwrites(self) -> bool:
        """Would the import replace a stored document (or leave one behind)?"""
        return bool(self.of_kind("update") or self.not_in_source)

    @property
    def edited_here(self) -> list[PlannedDocument]:
        """The updates that would replace a version edited here since the last import."""
        return [d for d in self.documents if d.edited_here]


def read_skill_folder(folder: Path) -> list[dict[str, Any]]:
    """The folder's records (skill first), each checked against the schema; nothing is written."""
    records = _skill_records(Path(folder))
    for record in records:
        validate_record(
            {**record, "id": "import", "createdAt": 0, "updatedAt": 0},
            f"{record.get('reference') or 'SKILL.md'}",
        )
    skill = records[0]
    problems = text_problems(skill["content"], skill["skillDescription"], kind="skill")
    if problems:  # the same rules, in the same words, as the dashboard's form
        problem = next(iter(problems.values()))
        raise SkillImportError(
            f"SKILL.md: {problem}", code="skill_import_problem", file="SKILL.md", problem=problem
        )
    return records


def _read_markdown(path: Path, root: Path) -> tuple[dict[str, Any], str]:
    """(front matter, body) of a Markdown file inside ``root``; SkillImportError when unusable."""
    import frontmatter  # deferred with yaml: only an import reads Markdown
    import yaml

    shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
    if path.is_symlink() and not path.resolve().is_relative_to(root.resolve()):
        raise SkillImportError(
            f"{shown} is a link to a file outside the skill folder.",
            code="skill_import_outside_link",
            file=shown,
        )
    try:
        size = path.stat().st_size
        if size > MAX_SOURCE_BYTES:
            raise SkillImportError(
                f"{shown} is too large ({size} bytes; at most {MAX_SOURCE_BYTES}).",
                code="skill_import_too_large_file",
                file=shown,
                size=size,
                most=MAX_SOURCE_BYTES,
            )
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillImportError(
            f"{shown} is not valid UTF-8 (byte {exc.start}).",
            code="skill_import_not_utf8",
            file=shown,
            byte=exc.start,
        ) from exc
    except OSError as exc:
        raise SkillImportError(
            f"{shown} cannot be read: {exc.strerror or exc}.",
            code="skill_import_unreadable",
            file=shown,
            reason=str(exc.strerror or exc),
            errno=exc.errno,
        ) from exc
    text = text.lstrip("\ufeff")
    try:
        check_front_matter(text, shown)
        # parse, not loads: a Post takes the keys as keyword arguments, so a date as a key
        # at the top of the front matter would read as "keywords must be strings".
        metadata, content = frontmatter.parse(text)
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        if isinstance(exc, SkillImportError):
            raise
        raise SkillImportError(
            f"{shown} has front matter that is not valid YAML: {exc}",
            code="skill_import_bad_yaml",
            file=shown,
            detail=str(exc),
        ) from exc
    return json_front_matter(metadata, shown), content.strip()


def json_front_matter(metadata: dict[Any, Any], shown: str) -> dict[str, Any]:
    """Front matter as a skill document keeps it, in JSON: dates and timestamps as ISO 8601
    text, keys as text the way JSON writes them (``1`` → ``"1"``, ``true`` → ``"true"``,
    ``~`` → ``"null"``). SkillImportError for what JSON has no form for (a set, binary data,
    ``.nan``, ``.inf``) and for two keys that become the same text."""
    return _json_mapping(metadata, shown, "")


def _json_value(value: Any, shown: str, where: str) -> Any:
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise _not_json(shown, where, _yaml_float(value))
    if isinstance(value, date):  # a timestamp is a datetime, which is a date
        return value.isoformat()
    if isinstance(value, (list, tuple)):  # a tuple: a pair of !!omap or !!pairs
        return [_json_value(item, shown, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict):
        return _json_mapping(value, shown, where)
    raise _not_json(shown, where, _yaml_tag(value))


def _json_mapping(mapping: dict[Any, Any], shown: str, where: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in mapping.items():
        if isinstance(key, str):
            text = key
        elif isinstance(key, date):
            text = key.isoformat()
        elif key is None or isinstance(key, (bool, int, float)):
            text = json.dumps(key)
        else:
            raise _not_json(shown, _path(where, "?"), _yaml_tag(key))
        path = _path(where, text)
        if text in result:
            raise SkillImportError(
                f'{shown} has front matter with two keys at "{path}" once dates, numbers, '
                f"true, false and null are written as text. Keep one of them.",
                code="skill_import_yaml_same_key",
                file=shown,
                where=path,
            )
        result[text] = _json_value(value, shown, path)
    return result


def _path(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _yaml_float(value: float) -> str:
    return ".nan" if math.isnan(value) else ".inf" if value > 0 else "-.inf"


def _yaml_tag(value: Any) -> str:
    if isinstance(value, (set, frozenset)):
        return "!!set"
    if isinstance(value, bytes):
        return "!!binary"
    return type(value).__name__


def _not_json(shown: str, where: str, tag: str) -> SkillImportError:
    return SkillImportError(
        f"{shown} has front matter a skill document cannot keep: {where} is {tag}. "
        f"Write it as text, a number or a list.",
        code="skill_import_yaml_value",
        file=shown,
        where=where,
        tag=tag,
    )


def check_front_matter(text: str, shown: str) -> None:
    """Refuse YAML front matter with aliases (a few bytes can expand to gigabytes) or nesting
    deeper than MAX_FRONT_MATTER_DEPTH (the YAML composer recurses), before it is loaded.

    Only the event stream is read here: PyYAML's parser keeps its own stack, so this is safe.
    """
    import yaml
    from frontmatter.default_handlers import YAMLHandler

    handler = YAMLHandler()
    if not handler.detect(text):
        return
    front, _ = handler.split(text)
    depth = 0
    for event in yaml.parse(front, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            raise SkillImportError(
                f"{shown} has front matter with a YAML alias (*{event.anchor}); aliases are "
                f"not accepted in front matter. Write the values out.",
                code="skill_import_yaml_alias",
                file=shown,
                alias=f"*{event.anchor}",
            )
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_FRONT_MATTER_DEPTH:
                raise SkillImportError(
                    f"{shown} has front matter nested too deep (more than "
                    f"{MAX_FRONT_MATTER_DEPTH} levels).",
                    code="skill_import_too_deep",
                    file=shown,
                    most=MAX_FRONT_MATTER_DEPTH,
                )
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _skill_records(folder: Path) -> list[dict[str, Any]]:
    """The skill record and one reference record per ``references/**/*.md`` of a skill folder."""
    skill_md = folder / "SKILL.md"
    if not folder.is_dir():
        raise SkillImportError(
            f"{folder} is not a folder.", code="skill_import_not_folder", folder=folder
        )
    if not skill_md.is_file():
        raise SkillImportError(
            f"{folder} has no SKILL.md; it is not an Agent Skills folder.",
            code="skill_import_no_skill_md",
            folder=folder,
        )
    meta, body = _read_markdown(skill_md, folder)
    name, description = meta.get("name"), meta.get("description", "")
    if not isinstance(name, str) or not name.strip():
        raise SkillImportError(
            "SKILL.md needs a `name` in its front matter.", code="skill_import_needs_name"
        )
    if not isinstance(description, str):
        raise SkillImportError(
            "The `description` in SKILL.md's front matter must be text.",
            code="skill_import_description_not_text",
        )
    if not body:
        raise SkillImportError(
            "SKILL.md has no instructions after its front matter.",
            code="skill_import_no_instructions",
        )
    name = name.strip()
    skill = {
        "type": "skill",
        "skill": name,
        "skillDescription": description.strip(),
        "content": body,
        "meta": meta,
    }
    records = [skill]
    for ref_path in _reference_files(folder):
        ref_meta, ref_body = _read_markdown(ref_path, folder)
        reference = ref_path.relative_to(folder).as_posix()
        if not ref_body:
            raise SkillImportError(
                f"{reference} is empty.", code="skill_import_empty_reference", file=reference
            )
        records.append(
            {
                "type": "reference",
                "skill": name,
                "reference": reference,
                "skillDescription": description.strip(),
                "content": ref_body,
                "meta": ref_meta,
            }
        )
    for record in records:
        record["snippet"] = derive_snippet(record)
    return records


def _reference_files(folder: Path) -> list[Path]:
    """``references/**/*.md`` in a stable order, without following links to folders."""
    base = folder / "references"
    if not base.is_dir() or base.is_symlink():
        return []
    found: list[Path] = []
    for root, dirs, files in os.walk(base, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(
            Path(root) / f
            for f in sorted(files)
            if f.lower().endswith(".md") and not f.startswith(".")
        )
    if len(found) > MAX_REFERENCES:
        raise SkillImportError(
            f"The skill has {len(found)} reference files; at most {MAX_REFERENCES}.",
            code="skill_import_too_many_references",
            count=len(found),
            most=MAX_REFERENCES,
        )
    return found
