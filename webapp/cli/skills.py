"""``skills``: import Agent Skills folders, list and check the skills folder."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..curator import Curator
from ..settings import Settings
from ..stores import SkillDocumentError, SkillDocumentStore
from ..stores.readers import SkillReader
from ..stores.skills import ImportPlan, SkillDocument, SkillEditedHereError
from .common import data_dir_option, friendly_errors, load_settings


def skill_store(settings: Settings) -> SkillReader:
    """The skill documents folder as the settings describe it (``SkillDocumentStore``)."""
    return SkillDocumentStore.from_settings(settings)


@click.group()
def skills() -> None:
    """Skill documents: import Agent Skills folders, list and check the skills folder."""


def _skill_sources(path: Path) -> list[Path]:
    """A .zip, one skill folder (with SKILL.md), or a folder whose sub-folders are skills."""
    if path.is_file() or (path / "SKILL.md").is_file():
        return [path]
    found = sorted(p for p in path.iterdir() if p.is_dir() and (p / "SKILL.md").is_file())
    if not found:
        raise click.UsageError(f"{path} holds no SKILL.md, no skill folders and is not a .zip.")
    return found


@skills.command(name="import")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--dry-run",
    is_flag=True,
    help="Show what would be added, updated, left unchanged or refused (the dashboard's "
    "import preview); save nothing.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Also replace documents edited here since they were last imported "
    "(the edited versions stay in their history).",
)
@data_dir_option
@friendly_errors
def import_skills(path: Path, dry_run: bool, force: bool, data_dir: str | None) -> None:
    """Import an Agent Skills folder (SKILL.md + references/), a folder of them, or a .zip.

    Unchanged content is left alone; changed content updates the stored documents. A skill
    with a document changed here since it was last imported (edited in the dashboard) is
    refused, nothing of it saved, unless --force. Exit status 1 when a skill was refused or
    could not be read (with --dry-run too: it says what the import would do).
    """
    settings = load_settings(data_dir)
    store = skill_store(settings)
    curator = Curator.from_settings(settings, actor="cli")
    failed = 0
    for source in _skill_sources(path):
        try:
            if dry_run:
                plan = (
                    store.plan_import_zip(source) if source.is_file() else store.plan_import(source)
                )
                failed += _show_plan(source.name, plan, force)
                continue
            report = curator.import_skills(source, replace_edits=force)
        except SkillEditedHereError as exc:
            failed += 1
            click.echo(
                f"{source.name}: Error: not imported; edited here since the last import: "
                f"{_source_names(exc.documents)}. Nothing of this skill was changed; --force "
                "replaces them with the folder's text (the edited versions stay in each "
                "document's history).",
                err=True,
            )
            continue
        except SkillDocumentError as exc:
            failed += 1
            click.echo(f"{source.name}: Error: {exc}", err=True)
            continue
        click.echo(f"{source.name}: {report.summary()}")
        if report.edits_replaced:
            click.echo(
                "  replaced edits made here since the last import: "
                f"{_source_names(report.edits_replaced)}; the edited versions stay in each "
                "document's history (the dashboard's History restores them)"
            )
    if failed:
        sys.exit(1)


def _source_name(doc: SkillDocument | dict[str, Any]) -> str:
    """A document as the skill folder names it (``SKILL.md``, ``references/x.md``), with its
    front matter name when that says more."""
    record = doc.to_dict() if isinstance(doc, SkillDocument) else doc
    path = str(record.get("reference") or "SKILL.md")
    meta = record.get("meta")
    name = meta.get("name") if isinstance(meta, dict) else None
    name = name or (record.get("skill") if path == "SKILL.md" else None)
    return f"{path} ({name})" if name and name != path else path


def _source_names(documents: tuple[SkillDocument, ...]) -> str:
    """'SKILL.md (tea), references/a.md (A)'."""
    return ", ".join(map(_source_name, documents))


def _show_plan(label: str, plan: ImportPlan, force: bool) -> bool:
    """Print what importing would do, as the dashboard's preview shows it; True when the
    import would be refused (documents edited here, without ``force``)."""
    refused = bool(plan.edited_here) and not force
    if refused:
        names = ", ".join(str(d.record.get("reference") or "SKILL.md") for d in plan.edited_here)
        click.echo(
            f"{label}: would be refused (edited here since the last import: {names}); "
            "nothing would be imported without --force"
        )
    else:
        line = (
            f"{label}: would add {len(plan.of_kind('add'))}, update "
            f"{len(plan.of_kind('update'))}, leave {len(plan.of_kind('same'))} unchanged"
        )
        if plan.not_in_source:
            line += f"; {len(plan.not_in_source)} stored but no longer in the source"
        click.echo(line)
    for planned in plan.documents:
        if planned.kind == "same":
            continue
        kind, note = planned.kind, ""
        if planned.edited_here:
            kind = "refused" if refused else "update"
            note = ": edited here since the last import"
            if not refused:
                note += "; the edited version stays in its history"
        click.echo(f"  {kind:<10} {_source_name(planned.record)}{note}")
    for doc in plan.not_in_source:
        click.echo(
            f"  {'kept':<10} {_source_name(doc)}: stored but not in the source; left as it is"
        )
    return refused


@skills.command(name="list")
@click.option("--all", "include_deprecated", is_flag=True, help="Include deprecated documents.")
@data_dir_option
@friendly_errors
def list_skills(include_deprecated: bool, data_dir: str | None) -> None:
    """List the skill documents, grouped by skill."""
    store = skill_store(load_settings(data_dir))
    groups = store.by_skill(include_deprecated)
    if not groups:
        click.echo(f"No skill documents in {store.directory}.")
    for skill, documents in groups.items():
        click.echo(skill)
        for doc in documents:
            mark = " [deprecated]" if doc.deprecated else ""
            click.echo(f"  {doc.type:<9} {doc.file_name}{mark}  {doc.snippet}")
    problems = store.problems()
    if problems:
        click.echo(f"{len(problems)} file(s) skipped; run `memory-curator skills check`.", err=True)


@skills.command(name="check")
@data_dir_option
@friendly_errors
def check_skills(data_dir: str | None) -> None:
    """Validate every skill document file; exit status 1 with a report when any is invalid."""
    store = skill_store(load_settings(data_dir))
    documents = store.list(include_deprecated=True)
    problems = store.problems()
    if not problems:
        click.echo(f"{store.directory}: {len(documents)} document(s), all valid.")
        return
    click.echo(
        f"{store.directory}: {len(documents)} valid document(s), {len(problems)} problem(s):"
    )
    for problem in problems:
        click.echo(f"  {problem}")
    sys.exit(1)
