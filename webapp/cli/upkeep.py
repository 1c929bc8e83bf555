"""``stats``, ``settings`` and ``repair``: where the data is, how full, and putting damaged files
right. The curator finds, checks and repairs the files (``Curator.stats``, ``Curator.repair``:
each store names its own); these commands put its findings in words."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..attention.semantic import CacheState
from ..curator import Curator
from ..curator.upkeep import FolderSummary, FormatCheck, RepairStep, Settled, SkillsCheck
from ..extraction.approval import format_quality
from ..extraction.waiting import describe_waiting, waiting
from ..stores import RepairReport, StoreError
from ..stores import owned as kind
from .common import curator_of, data_dir_option, describe_os_error, friendly_errors, load_settings

# What ``stats`` calls each file the program keeps (``Curator.data_files`` names them).
LABELS = {
    "memories": "Memories",
    "conversations": "Conversations",
    "review": "Review queue",
    "extraction_state": "Extraction state",
    "extraction_job": "Extraction job",
    "dismissals": "Dismissed findings",
    "people": "People",
    "login_sessions": "Login sessions",
    "login_attempts": "Login attempts",
    "tombstones": "Forgotten facts",
    "assist_exchanges": "Assist exchanges",
}
# What else the program keeps beside them, in words (``stores.owned`` names the kinds).
KINDS = {
    kind.BACKUP: "backup",
    kind.BACKUP_BEING_MADE: "backup being made",
    kind.LOCK: "lock file",
    kind.FORMAT: "format file",
    kind.SET_ASIDE: "file of set-aside records",
    kind.DAMAGED: "damaged file set aside",
    kind.UNFINISHED: "unfinished write",
    kind.HISTORY: "history log",
    kind.KEY: "the key of the forgotten facts' fingerprints",
    kind.VECTORS: "vector cache",
    kind.VECTORS_KEY: "the key of the vector cache",
    kind.SKILL: "skill document",
    kind.UPLOAD: "kept upload",
    kind.SECRET_KEY: "the secret key",
    kind.OPTIONS: "the add-on's options",
    kind.FORGETTING: "marker of a Delete forever not finished yet",
    kind.MOVE_RECORD: "the record of the move into the shared folder",
}
_PLURALS = {
    "backup being made": "backups being made",
    "file of set-aside records": "files of set-aside records",
    "damaged file set aside": "damaged files set aside",
    "marker of a Delete forever not finished yet": "markers of a Delete forever not finished yet",
}


def _extraction_lines(curator: Curator) -> list[str]:
    """When extraction last ran and what waits for it (none when a file cannot be read: the
    problem is named with its file)."""
    try:
        found = waiting(curator.settings, curator.conversations)
    except (StoreError, OSError):
        return []
    return describe_waiting(found, auto=curator.settings.auto_extract)


@click.command()
@data_dir_option
@friendly_errors
def stats(data_dir: str | None) -> None:
    """Show where the stores are and how full they are; exit status 1 when a file is damaged."""
    curator = curator_of(data_dir)
    settings = curator.settings
    found = curator.stats()
    mode = "Home Assistant add-on" if settings.is_addon else "standalone"
    problems: list[Exception] = list(found.problems)
    click.echo(f"Memory Curator ({mode}), data in {settings.data_dir}")
    click.echo(f"Memories:      {found.memories.path} [{found.memories.status}]")
    if found.usage is not None:
        used = found.usage
        click.echo(
            f"  {used.items} of {used.max_items} memories, "
            f"{used.chars} of {used.max_chars} characters"
        )
    click.echo(f"Conversations: {found.conversations.path} [{found.conversations.status}]")
    if found.threads is not None:
        click.echo(
            f"  {found.threads} threads, {found.turns} turns "
            f"(cap {settings.conversation_max_turns} turns / "
            f"{settings.conversation_max_chars} characters per thread, "
            f"{settings.conversation_max_age_days} days)"
        )
        for line in _extraction_lines(curator):
            click.echo(line)
    if found.review is not None:
        click.echo(f"Review queue:  {found.review.path} [{found.review.status}]")
        if found.pending is not None:
            click.echo(f"  {found.pending} facts wait for review")
            click.echo("Extractor approval rates (review decisions):")
        for line in format_quality(found.quality or []):
            click.echo(line)
    for other in found.others:
        click.echo(f"{LABELS[other.name]}: {other.path} [{other.status}]")
    if found.skills is not None:
        skills = found.skills
        unreadable = f", {skills.unreadable} cannot be read" if skills.unreadable else ""
        click.echo(f"Skills:        {skills.folder} [{skills.documents} documents{unreadable}]")
        if skills.unreadable:
            problems.append(SkillsUnreadable(skills.folder, skills.unreadable))
    vectors = found.vectors
    if vectors is not None:
        state = (
            f"{vectors.vectors} vectors of {vectors.model}"
            if vectors.problem is None
            else f"cannot be read ({vectors.problem}); the next scan computes it again"
        )
        click.echo(f"Vectors:       {vectors.path} [{state}]")
    if found.formats:
        click.echo("Formats:       " + ", ".join(map(_format_words, found.formats)))
    for line in describe_data_folder(found.folder):
        click.echo(line)
    for problem in problems:
        text = (
            describe_os_error(problem)
            if isinstance(problem, OSError) and not isinstance(problem, StoreError)
            else problem
        )
        click.echo(f"Error: {text}", err=True)
    if problems:
        sys.exit(1)


@click.command(name="settings")
@click.option("--json", "as_json", is_flag=True, help="Print the settings as one JSON object.")
@data_dir_option
@friendly_errors
def show_settings(as_json: bool, data_dir: str | None) -> None:
    """Show the settings as the program reads them (environment, then the add-on's options);
    secrets are shown as set or not, never printed."""
    settings = load_settings(data_dir)
    values = settings.public_values()
    paths = {
        "mode": "addon" if settings.is_addon else "standalone",
        "MEMORY_DATA_DIR": str(settings.data_dir),
        "memory_file": str(settings.memory_file),
        "conversation_file": str(settings.conversation_file),
        "review_file": str(settings.review_file),
        "skills_dir": str(settings.skills_dir),
    }
    if as_json:
        click.echo(json.dumps({**paths, **values}, ensure_ascii=False, indent=2))
        return
    width = max(len(key) for key in [*paths, *values])
    for key, value in {**paths, **values}.items():
        shown = ", ".join(value) if isinstance(value, list) else value
        click.echo(f"{key:<{width}}  {shown}")


def _format_words(check: FormatCheck) -> str:
    """'memories 1'; 'memories 3 (newer than this release's 1: read only)'."""
    state = check.state
    if state is None:
        return f"{check.name} unknown (its format file cannot be read)"
    if state.newer:
        return f"{check.name} {state.version} (newer than this release's {state.known}: read only)"
    if state.pending:
        return f"{check.name} {state.version} (upgraded to {state.known} at the next write)"
    return f"{check.name} {state.version}"


class SkillsUnreadable(Exception):
    """Files of the skills folder that cannot be read (``skills check`` lists them)."""

    def __init__(self, folder: Path, count: int) -> None:
        super().__init__(
            f"{count} file(s) in {folder} cannot be read; run `memory-curator skills check`."
        )


def _counted(what: str, count: int) -> str:
    """'3 backups', '1 lock file'; a single thing ('the secret key') as it is."""
    if what.startswith("the "):
        return what
    return f"{count} {what if count == 1 else _PLURALS.get(what, what + 's')}"


def describe_data_folder(summary: FolderSummary) -> list[str]:
    """The lines ``stats`` and ``repair`` end with: what else the data folder holds, and the
    files in it the program did not write (left alone)."""
    lines = []
    if summary.kinds:
        counted = sorted(
            ((KINDS.get(what, what), count) for what, count in summary.kinds.items()),
            key=lambda pair: (-pair[1], pair[0]),
        )
        lines.append(
            "Also in the data folder: " + ", ".join(_counted(what, n) for what, n in counted)
        )
    if summary.strangers:
        lines.append(
            "Also in the data folder, not written by Memory Curator (left alone): "
            + ", ".join(map(str, summary.strangers))
        )
    return lines


@click.command()
@data_dir_option
@friendly_errors
def repair(data_dir: str | None) -> None:
    """Set damaged store files (or their unusable records) aside, bytes intact; start from the
    last good backup and replay the history log's newer changes. Also says which times
    cannot be read (they count as unknown) and what else the data folder holds."""
    for step in curator_of(data_dir).repair():
        for line in _repair_lines(step):
            click.echo(line)


def _repair_lines(step: RepairStep) -> list[str]:
    """One step of ``Curator.repair`` in words."""
    if isinstance(step, RepairReport):
        return [step.describe()]
    if isinstance(step, Settled):
        if step.problem is not None:
            return [f"{step.path}: not checked against the memories ({step.problem})"]
        lines = []
        if step.finished:
            lines.append(
                f"{step.path}: {step.finished} Delete forever run(s) left half-way were "
                "finished: their words are gone from every file"
            )
        if step.dropped:
            lines.append(
                f"{step.path}: {step.dropped} forgotten fact(s) dropped: their memories are "
                "back in the store"
            )
        return lines
    if isinstance(step, SkillsCheck):
        state = (
            "ok"
            if not step.unreadable
            else (
                f"{step.unreadable} file(s) cannot be read (left as they are); "
                "run `memory-curator skills check` to see why"
            )
        )
        return [f"{step.folder}: {state}"]
    if isinstance(step, CacheState):
        return [
            f"{step.path}: ok"
            if step.problem is None
            else f"{step.path}: cannot be read ({step.problem}); deleted, the next scan"
            " computes the vectors again"
        ]
    return describe_data_folder(step)
