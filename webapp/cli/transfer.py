"""``export`` and ``import``: memories out to a file (this program's own form or another
system's), and a file of memories in (another system's into Review; an own export as it is,
except the facts a person deleted)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..curator import Curator
from ..curator.people import EVERYONE
from ..settings import Settings
from ..stores import write_atomic
from .common import data_dir_option, friendly_errors, load_settings


@click.command(name="export")
@data_dir_option
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="File to write (default: standard output).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "mcp-jsonl", "markdown", "mem0"]),
    default="json",
    show_default=True,
    help="json: this program's own form (lossless); mcp-jsonl: the MCP memory server's "
    "memory.jsonl; markdown: one heading per category; mem0: mem0's get_all JSON.",
)
@click.option(
    "--person",
    default=None,
    help="Only what this person may see (their memories and the household's): a name or id.",
)
@friendly_errors
def export_memories(
    data_dir: str | None, output: Path | None, fmt: str = "json", person: str | None = None
) -> None:
    """Write every memory as a JSON array (the on-disk form), for backup or import; or, with
    --format, in another system's format; with --person, only that person's view."""
    settings = load_settings(data_dir)
    curator = Curator.from_settings(settings, actor="cli")
    view = EVERYONE if person is None else curator.person(person)
    payload = curator.export(fmt, view=view)
    if output is None:
        click.echo(payload.decode("utf-8"), nl=False)
    else:
        try:
            write_atomic(output, payload)
        except OSError as exc:
            raise click.ClickException(f"Could not write {output}: {exc}") from exc
        click.echo(f"Wrote {output}", err=True)


@click.command(name="import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "text", "mem0", "mcp-jsonl", "letta", "json"]),
    default="auto",
    show_default=True,
    help="The file's format; auto recognises it from the content.",
)
@click.option(
    "--dry-run", is_flag=True, help="Print the preview only; queue nothing, change nothing."
)
@click.option(
    "--person",
    default=None,
    help="Whose the file's facts are (a name or id; default: the household's), unless the "
    "file names a person of the household; each is compared only with what that person may "
    "see. Not for a Memory Curator export, which keeps whose each memory is.",
)
@data_dir_option
@friendly_errors
def import_memories(
    file: Path, fmt: str, dry_run: bool, data_dir: str | None, person: str | None = None
) -> None:
    """Import memories from another system (pasted text, mem0, the MCP memory server's JSONL,
    a Letta .af) into Review, reconciled with what is kept; a Memory Curator export (json) is
    imported as it is, losslessly. Prints the preview first. Exit status 1 when the file
    cannot be read as asked."""
    from ..imports import (
        MAX_IMPORT_BYTES,
        ImportFormatError,
        decode,
        resolve_format,
    )

    settings = load_settings(data_dir)
    curator = Curator.from_settings(settings, actor="cli")
    owner = curator.person(person)
    try:
        with file.open("rb") as handle:
            content = decode(handle.read(MAX_IMPORT_BYTES + 1))
        chosen = resolve_format(content, fmt)
        if chosen == "json":
            if person is not None:
                raise click.UsageError(
                    "--person is for other systems' files: a Memory Curator export keeps "
                    "whose each memory is."
                )
            _import_own_export(settings, content, file.name, dry_run)
            return
        plan = curator.plan_import(content, fmt=chosen, file_name=file.name, owner=owner)
    except ImportFormatError as exc:
        click.echo(f"Error: {file.name}: {exc}", err=True)
        sys.exit(1)
    except ValueError as exc:  # an unusable record of an own export
        click.echo(f"Error: {file.name}: {exc}", err=True)
        sys.exit(1)
    counts = plan.counts
    click.echo(
        f"{file.name} ({plan.format}): {counts['add']} to add, {counts['update']} to update, "
        f"{counts['known']} skipped as known, {counts['refused']} refused; "
        f"whose: {curator.people.names().get(owner, owner) if owner else 'the household'}"
    )
    for refusal in plan.parsed.refused:
        click.echo(f"  line {refusal.line}: refused ({refusal.why}): {refusal.text}")
    if dry_run:
        click.echo("Dry run: nothing was queued.")
        return
    queued = curator.queue_import(plan)
    click.echo(
        f"Queued {len(queued)} for review, from {plan.source}; approve or reject them on the "
        "Review page (bulk by source there)."
    )


def _import_own_export(settings: Settings, content: str, name: str, dry_run: bool) -> None:
    """A Memory Curator export: preview, then (without dry run) import it as it is — except
    the facts a person deleted, which wait in Review marked so (``Curator.import_export``)."""
    curator = Curator.from_settings(settings, actor="cli")
    records, preview = curator.preview_export(content)
    counts = preview.counts
    click.echo(
        f"{name} (json): {counts['add']} to add, {counts['update']} to update, "
        f"{counts['same']} already the same, {counts['secret']} refused (secrets)"
    )
    if dry_run:
        click.echo("Dry run: nothing was imported.")
        return
    if not preview.fits:
        click.echo("Error: the import would not fit in memory's caps; nothing imported.", err=True)
        sys.exit(1)
    done = curator.import_export(records, source=name)
    forgotten = done.get("forgotten", 0)
    click.echo(
        f"Imported: {done['added']} added, {done['updated']} updated, "
        f"{done['unchanged']} already the same, {done['refused']} refused"
        + (f", {forgotten} not imported: a person deleted them before." if forgotten else ".")
    )
