"""The ``memory-curator`` command line: one sub-command per job.

Each sub-command reads ``Settings`` once, calls the library and prints a readable result.
Errors a person can act on (bad settings, damaged files, a busy lock) end with a clear
message and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from . import __version__
from .curation.approval import extraction_quality, format_quality
from .curation.semantic import describe_cache, drop_damaged_cache
from .curator import Curator
from .curator.people import EVERYONE
from .problems import InputError
from .prompts import compose_prompt
from .settings import Settings, SettingsError
from .similarity import cache_path_for
from .stores import (
    ConversationStore,
    FileBacked,
    Memory,
    MemoryStore,
    NotFoundError,
    ReviewQueue,
    SkillDocumentError,
    SkillDocumentStore,
    StoreError,
    write_atomic,
)
from .stores.dismissals import DismissalStore
from .stores.people import PeopleStore
from .stores.skills import DEPRECATED_DIR, ImportPlan, SkillDocument, SkillEditedHereError
from .stores.tombstones import TombstoneStore, key_path


def load_settings(data_dir: str | None = None) -> Settings:
    """Settings from the environment, with ``--data-dir`` taking precedence over it."""
    settings = Settings.from_env()
    return settings.with_data_dir(data_dir) if data_dir else settings


def data_dir_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--data-dir DIR`` to a command."""
    return click.option(
        "--data-dir",
        type=click.Path(file_okay=False),
        default=None,
        help="Folder holding the stores (default: MEMORY_DATA_DIR, or ./data; /data in the add-on).",
    )(func)


def friendly_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn settings, store and file-system errors into a one-line message and exit status 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (SettingsError, StoreError) as exc:
            click.echo(f"Error: {exc}{_code(exc)}", err=True)
            sys.exit(2)
        except OSError as exc:  # unreadable file or folder, a file where a folder belongs…
            click.echo(f"Error: {describe_os_error(exc)}", err=True)
            sys.exit(2)

    return wrapper


def _code(exc: Exception) -> str:
    """`` [code]`` after an error's message: the stable code a script can test for."""
    code = getattr(exc, "code", None)
    return f" [{code}]" if isinstance(code, str) and code else ""


def curator_of(data_dir: str | None) -> Curator:
    """The curator of the data folder the settings (or ``--data-dir``) name, acting as "cli"."""
    return Curator.from_settings(load_settings(data_dir), actor="cli")


def describe_os_error(exc: OSError) -> str:
    """An OSError as one line that names the file: ``Cannot use data/x.json: Permission denied``."""
    if exc.filename is None:
        return str(exc)
    return f"Cannot use {exc.filename}: {exc.strerror or exc}."


def file_status(store: FileBacked) -> str:
    """``status()`` of a store's file, or 'unreadable' when it cannot even be opened."""
    try:
        return store.status()
    except OSError:
        return "unreadable"


def memory_store(settings: Settings, actor: str = "cli") -> MemoryStore:
    """The long-term memory store as the settings describe it."""
    return MemoryStore.from_settings(settings, actor=actor)


def conversation_store(settings: Settings) -> ConversationStore:
    """The conversation store as the settings describe it."""
    return ConversationStore.from_settings(settings)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memory-curator")
def main() -> None:
    """Memory Curator: curate the long-term memory of a personal LLM assistant."""


@main.command()
@data_dir_option
@friendly_errors
def stats(data_dir: str | None) -> None:
    """Show where the stores are and how full they are; exit status 1 when a file is damaged."""
    settings = load_settings(data_dir)
    memories = memory_store(settings)
    conversations = conversation_store(settings)
    mode = "Home Assistant add-on" if settings.is_addon else "standalone"
    problems: list[Exception] = []
    click.echo(f"Memory Curator ({mode}), data in {settings.data_dir}")
    click.echo(f"Memories:      {settings.memory_file} [{file_status(memories)}]")
    try:
        used = memories.usage()
        click.echo(
            f"  {used.items} of {used.max_items} memories, "
            f"{used.chars} of {used.max_chars} characters"
        )
    except (StoreError, OSError) as exc:
        problems.append(exc)
    click.echo(f"Conversations: {settings.conversation_file} [{file_status(conversations)}]")
    try:
        threads = conversations.list_conversations()
        turns = sum(t.turn_count for t in threads)
        click.echo(
            f"  {len(threads)} threads, {turns} turns "
            f"(cap {settings.conversation_max_turns} turns / "
            f"{settings.conversation_max_chars} characters per thread, "
            f"{settings.conversation_max_age_days} days)"
        )
    except (StoreError, OSError) as exc:
        problems.append(exc)
    problems += _review_stats(settings)
    for data_file in data_files(settings)[3:]:
        store = data_file.store
        if store.path.exists():
            click.echo(f"{data_file.label}: {store.path} [{file_status(store)}]")
            problems += _readable(store)
    problems += _skills_stats(settings)
    vectors = describe_cache(settings.memory_file)
    if vectors is not None:
        state = (
            f"{vectors.vectors} vectors of {vectors.model}"
            if vectors.problem is None
            else f"cannot be read ({vectors.problem}); the next scan computes it again"
        )
        click.echo(f"Vectors:       {vectors.path} [{state}]")
    for line in describe_data_folder(settings):
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


@main.command(name="settings")
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


def _review_stats(settings: Settings) -> list[Exception]:
    """Print the review queue's line of ``stats`` (when it exists); return its problem if any."""
    queue = ReviewQueue.from_settings(settings, memory_store(settings))
    if not queue.path.exists():
        return []
    click.echo(f"Review queue:  {queue.path} [{file_status(queue)}]")
    try:
        click.echo(f"  {queue.pending_count()} facts wait for review")
        click.echo("Extractor approval rates (review decisions):")
        for line in format_quality(extraction_quality(queue)):
            click.echo(line)
    except (StoreError, OSError) as exc:
        return [exc]
    return []


def _readable(store: FileBacked) -> list[Exception]:
    """[] when the store's file can be read, else what is wrong with it."""
    try:
        store.check_readable()
    except (StoreError, OSError) as exc:
        return [exc]
    return []


def _skills_stats(settings: Settings) -> list[Exception]:
    """Print the skills folder's line of ``stats``; its unreadable files are a problem."""
    if not settings.skills_dir.is_dir():
        return []
    store = skill_store(settings)
    count = len(store.list(include_deprecated=True))
    skipped = store.problems()
    state = f"{count} documents" + (f", {len(skipped)} cannot be read" if skipped else "")
    click.echo(f"Skills:        {settings.skills_dir} [{state}]")
    if skipped:
        return [SkillsUnreadable(settings.skills_dir, len(skipped))]
    return []


class SkillsUnreadable(Exception):
    """Files of the skills folder that cannot be read (``skills check`` lists them)."""

    def __init__(self, folder: Path, count: int) -> None:
        super().__init__(
            f"{count} file(s) in {folder} cannot be read; run `memory-curator skills check`."
        )


@dataclass(frozen=True)
class DataFile:
    """A JSON file the program keeps in the data folder: what it holds, and its store."""

    label: str
    store: FileBacked


def data_files(settings: Settings) -> list[DataFile]:
    """Every JSON file the program keeps (whether it exists yet or not), as ``stats`` and
    ``repair`` go through them: the stores, the extraction state and job, the dismissed
    findings and the dashboard's logins."""
    from .extraction import ExtractionState
    from .extraction.batch import job_document
    from .web.auth import ATTEMPTS_FILE, SESSIONS_FILE, LoginLimiter, SessionRegistry

    memories = memory_store(settings)
    data_dir = Path(settings.data_dir)
    return [
        DataFile("Memories", memories),
        DataFile("Conversations", conversation_store(settings)),
        DataFile("Review queue", ReviewQueue.from_settings(settings, memories)),
        DataFile("Extraction state", ExtractionState.from_settings(settings)),
        DataFile("Extraction job", job_document(settings)),
        DataFile("Dismissed findings", DismissalStore.from_settings(settings)),
        DataFile("People", PeopleStore.from_settings(settings)),
        DataFile("Login sessions", SessionRegistry(data_dir / SESSIONS_FILE).document),
        DataFile("Login attempts", LoginLimiter(data_dir / ATTEMPTS_FILE).document),
        DataFile("Forgotten facts", TombstoneStore.from_settings(settings)),
    ]


# What else the program leaves in the data folder, beside each JSON file it keeps.
_TEMP = r"[a-z0-9_]{8}\.tmp"  # tempfile.mkstemp's names (an unfinished write)
_BESIDE_EACH_FILE = (
    (r"{name}", ""),  # the file itself: its label
    (r"{name}\.bak", "backup"),
    (r"{name}\.bak\.tmp", "backup being made"),
    (r"{name}\.lock", "lock file"),
    (r"{name}\.rejected-.+", "file of set-aside records"),
    (r"{name}\.corrupt-.+", "damaged file set aside"),
    (r"\.{name}\." + _TEMP, "unfinished write"),
    (r"\.{name}\.bak\." + _TEMP, "unfinished write"),  # (a backup copied after a purge)
)
_SECRET_KEY = ".secret_key"
_STAGED_UPLOADS = ".skill-imports"
_PLURALS = {
    "backup being made": "backups being made",
    "file of set-aside records": "files of set-aside records",
    "damaged file set aside": "damaged files set aside",
}


def _known_names(settings: Settings) -> list[tuple[Path, re.Pattern[str], str]]:
    """(folder, name pattern, what such a file is) for every file the program writes."""
    from .stores.history import HistoryLog

    known: list[tuple[Path, re.Pattern[str], str]] = []
    history = HistoryLog(settings.memory_file).path
    for data_file in data_files(settings):
        path = data_file.store.path
        for pattern, what in _BESIDE_EACH_FILE:
            name = pattern.replace("{name}", re.escape(path.name))
            known.append((path.parent, re.compile(name), what or data_file.label))
    vectors = cache_path_for(settings.memory_file)
    for pattern, what in (
        (re.escape(vectors.name), "vector cache"),
        (rf"\.{re.escape(vectors.name)}\.{_TEMP}", "unfinished write"),
    ):
        known.append((vectors.parent, re.compile(pattern), what))
    for log in (history, PeopleStore.from_settings(settings).history_path):
        for pattern, what in (
            (re.escape(log.name), "history log"),
            (rf"\.{re.escape(log.name)}\.{_TEMP}", "unfinished write"),
        ):
            known.append((log.parent, re.compile(pattern), what))
    fingerprint_key = key_path(settings.memory_file)
    for pattern, what in (
        (re.escape(fingerprint_key.name), "the key of the forgotten facts' fingerprints"),
        (rf"\.{re.escape(fingerprint_key.name)}\.[0-9a-f]{{8}}\.tmp", "unfinished write"),
        (rf"{re.escape(fingerprint_key.name)}\.corrupt-.+", "damaged file set aside"),
    ):
        known.append((fingerprint_key.parent, re.compile(pattern), what))
    data_dir = Path(settings.data_dir)
    for pattern, what in (
        (re.escape(_SECRET_KEY), "the secret key"),
        (rf"{re.escape(_SECRET_KEY)}\.corrupt-.+", "damaged file set aside"),
        (rf"{re.escape(_SECRET_KEY)}\.\d+\.[0-9a-f]+\.tmp", "unfinished write"),
        (r"options\.json", "the add-on's options"),
    ):
        known.append((data_dir, re.compile(pattern), what))
    known.append((data_dir / _STAGED_UPLOADS, re.compile(r"[0-9a-f]{32}\.zip"), "kept upload"))
    skills = Path(settings.skills_dir)
    for folder in (skills, skills / DEPRECATED_DIR):
        known.append((folder, re.compile(r"[^.].*\.json"), "skill document"))
        known.append((folder, re.compile(r"\..+\." + _TEMP), "unfinished write"))
    known.append((skills, re.compile(r"\.lock"), "lock file"))
    known.append((skills, re.compile(r"\.skills\.history\.jsonl"), "history log"))
    known.append((skills / ".imports", re.compile(r"[0-9a-f]{32}\.zip"), "kept upload"))
    return known


def data_folder_files(settings: Settings) -> dict[Path, str]:
    """Every file in the data folder (and the skills folder), and what it is: a JSON file's
    label ("Memories"), a kind of file kept beside them ("backup", "lock file", "history
    log", ...), or "" for a file the program does not write."""
    known = _known_names(settings)
    folders = [Path(settings.data_dir), Path(settings.skills_dir)]
    found: dict[Path, str] = {}
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            if path in found or not (path.is_file() or path.is_symlink()):
                continue
            found[path] = next(
                (
                    what
                    for where, name, what in known
                    if path.parent == where and name.fullmatch(path.name)
                ),
                "",
            )
    return found


def _counted(what: str, count: int) -> str:
    """'3 backups', '1 lock file'; a single thing ('the secret key') as it is."""
    if what.startswith("the "):
        return what
    return f"{count} {what if count == 1 else _PLURALS.get(what, what + 's')}"


def describe_data_folder(settings: Settings) -> list[str]:
    """The lines ``stats`` and ``repair`` end with: what else the data folder holds, and the
    files in it the program did not write (left alone)."""
    labels = {data_file.label for data_file in data_files(settings)}
    found = data_folder_files(settings)
    kinds = Counter(what for what in found.values() if what and what not in labels)
    lines = []
    if kinds:
        ordered = sorted(kinds.items(), key=lambda pair: (-pair[1], pair[0]))
        lines.append(
            "Also in the data folder: " + ", ".join(_counted(what, n) for what, n in ordered)
        )
    strangers = [str(path) for path, what in found.items() if not what]
    if strangers:
        lines.append(
            "Also in the data folder, not written by Memory Curator (left alone): "
            + ", ".join(strangers)
        )
    return lines


@main.command()
@data_dir_option
@friendly_errors
def repair(data_dir: str | None) -> None:
    """Set damaged store files (or their unusable records) aside, bytes intact; start from the
    last good backup and replay the history log's newer changes. Also says which times
    cannot be read (they count as unknown) and what else the data folder holds."""
    settings = load_settings(data_dir)
    for data_file in data_files(settings):
        if not data_file.store.path.exists():
            continue
        click.echo(data_file.store.repair_report().describe())
    tombstones = TombstoneStore.from_settings(settings)
    if tombstones.path.exists():
        try:
            back = tombstones.settle(m.id for m in memory_store(settings).get_all())
        except StoreError as exc:
            click.echo(f"{tombstones.path}: not checked against the memories ({exc})")
        else:
            if back:
                click.echo(
                    f"{tombstones.path}: {back} forgotten fact(s) dropped: their memories are "
                    "back in the store"
                )
    if settings.skills_dir.is_dir():
        skipped = skill_store(settings).problems()
        state = (
            "ok"
            if not skipped
            else (
                f"{len(skipped)} file(s) cannot be read (left as they are); "
                "run `memory-curator skills check` to see why"
            )
        )
        click.echo(f"{settings.skills_dir}: {state}")
    vectors = drop_damaged_cache(settings.memory_file)
    if vectors is not None:
        click.echo(
            f"{vectors.path}: ok"
            if vectors.problem is None
            else f"{vectors.path}: cannot be read ({vectors.problem}); deleted, the next scan"
            " computes the vectors again"
        )
    for line in describe_data_folder(settings):
        click.echo(line)


@main.command(name="export")
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
    payload = curator.export(fmt, view)
    if output is None:
        click.echo(payload.decode("utf-8"), nl=False)
    else:
        try:
            write_atomic(output, payload)
        except OSError as exc:
            raise click.ClickException(f"Could not write {output}: {exc}") from exc
        click.echo(f"Wrote {output}", err=True)


@main.command(name="delete")
@click.argument("memory_id")
@click.option(
    "--dont-propose-again",
    "no_propose",
    is_flag=True,
    help="Drop a later proposal of the same fact instead of showing it in Review.",
)
@click.option(
    "--forever",
    is_flag=True,
    help="Remove its words from every file (history too); keep only a fingerprint that "
    "recognises the fact. Also for a memory deleted before.",
)
@data_dir_option
@friendly_errors
def delete_memory(memory_id: str, no_propose: bool, forever: bool, data_dir: str | None) -> None:
    """Delete a memory, remembering that it was deleted (a later proposal of the fact is marked
    in Review); the dashboard's Recently deleted can bring it back unless --forever."""
    try:
        done = curator_of(data_dir).forget(
            memory_id, dont_propose_again=no_propose, forever=forever
        )
    except NotFoundError:
        click.echo(f"Error: No memory with id {memory_id!r}. [memory_gone]", err=True)
        sys.exit(1)
    if done.memory is not None:
        click.echo(f"Deleted [{done.memory.id}] {done.memory.content}")
    if forever:
        if done.forever is None:
            click.echo(f"Error: No deleted memory with id {memory_id!r}.", err=True)
            sys.exit(1)
        click.echo(
            f"Deleted forever: its words are gone from {done.forever.history_entries} history "
            f"entries, {done.forever.review_items} review items and {done.forever.vectors} "
            "vectors; a fingerprint still recognises it."
        )
    if no_propose:
        click.echo("It will not be proposed again.")


@main.command(name="import")
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
@data_dir_option
@friendly_errors
def import_memories(file: Path, fmt: str, dry_run: bool, data_dir: str | None) -> None:
    """Import memories from another system (pasted text, mem0, the MCP memory server's JSONL,
    a Letta .af) into Review, reconciled with what is kept; a Memory Curator export (json) is
    imported as it is, losslessly. Prints the preview first. Exit status 1 when the file
    cannot be read as asked."""
    from .extraction.imports import (
        MAX_IMPORT_BYTES,
        ImportFormatError,
        decode,
        plan_import,
        queue_import,
        read_own_export,
        resolve_format,
    )

    settings = load_settings(data_dir)
    store = memory_store(settings)
    queue = ReviewQueue.from_settings(settings, store)
    try:
        with file.open("rb") as handle:
            content = decode(handle.read(MAX_IMPORT_BYTES + 1))
        chosen = resolve_format(content, fmt)
        if chosen == "json":
            _import_own_export(settings, read_own_export(content), file.name, dry_run)
            return
        people = PeopleStore.from_settings(settings)
        plan = plan_import(store, queue, content, fmt=chosen, file_name=file.name, people=people)
    except ImportFormatError as exc:
        click.echo(f"Error: {file.name}: {exc}", err=True)
        sys.exit(1)
    except ValueError as exc:  # an unusable record of an own export
        click.echo(f"Error: {file.name}: {exc}", err=True)
        sys.exit(1)
    counts = plan.counts
    click.echo(
        f"{file.name} ({plan.format}): {counts['add']} to add, {counts['update']} to update, "
        f"{counts['known']} skipped as known, {counts['refused']} refused"
    )
    for refusal in plan.parsed.refused:
        click.echo(f"  line {refusal.line}: refused ({refusal.why}): {refusal.text}")
    if dry_run:
        click.echo("Dry run: nothing was queued.")
        return
    queued = queue_import(queue, plan)
    click.echo(
        f"Queued {len(queued)} for review, from {plan.source}; approve or reject them on the "
        "Review page (bulk by source there)."
    )


def _import_own_export(
    settings: Settings, records: list[dict[str, Any]], name: str, dry_run: bool
) -> None:
    """A Memory Curator export: preview, then (without dry run) import it as it is — except
    the facts a person deleted, which wait in Review marked so (``Curator.import_export``)."""
    curator = Curator.from_settings(settings, actor="cli")
    preview = curator.memories.preview_import(records)
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


@main.command(name="mcp")
@data_dir_option
@friendly_errors
def mcp_command(data_dir: str | None) -> None:
    """Serve the manage_memory (and review_memory) tools to an assistant over MCP (stdio)."""
    from .mcp_server import serve  # the MCP SDK is loaded only for this command

    settings = load_settings(data_dir)
    curator = Curator.from_settings(settings, actor="mcp")
    serve(curator, curator.review, settings.mcp_default_person)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=8099,
    show_default=True,
    type=click.IntRange(1, 65535),
    help="Port to listen on.",
)
@click.option(
    "--threads", default=8, show_default=True, type=click.IntRange(1, 64), help="Worker threads."
)
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="File holding the access token for direct visitors "
    "(instead of MEMORY_DASHBOARD_TOKEN); needed to listen beyond 127.0.0.1.",
)
@click.option(
    "--demo",
    "with_demo",
    is_flag=True,
    help="Fill an empty data folder with the demo content first (see `demo`).",
)
@data_dir_option
@friendly_errors
def serve(
    host: str,
    port: int,
    threads: int,
    token_file: str | None,
    with_demo: bool,
    data_dir: str | None,
) -> None:
    """Serve the web dashboard (production server, not Flask's development server)."""
    from .web.serve import check_exposure, run, with_token_file
    from .web.shared_folder import move_to_shared_folder

    settings = with_token_file(load_settings(data_dir), token_file)
    check_exposure(settings, host)
    move_to_shared_folder(settings)
    if with_demo:
        load_demo(settings, force=False, keep_existing=True)
    memory_store(settings).init()
    conversation_store(settings).init()
    run(settings, host=host, port=port, threads=threads)


@main.command()
@click.option(
    "--conversation",
    "conversation_id",
    default=None,
    metavar="ID",
    help="Extract from this thread only, every message, even if not due.",
)
@click.option(
    "--all",
    "all_threads",
    is_flag=True,
    help="Every thread with new messages, even if fewer than 4 or within 60 s.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Say what the run would queue, apply or skip, making the same decisions; save nothing.",
)
@data_dir_option
@friendly_errors
def extract(
    conversation_id: str | None, all_threads: bool, dry_run: bool, data_dir: str | None
) -> None:
    """Find durable facts in conversations; queue them for review or apply them (MEMORY_REVIEW_MODE)."""
    from .extraction import LlmConfigError, extract_conversation, extract_due
    from .extraction.report import describe_result

    if conversation_id is not None and all_threads:
        raise click.UsageError("Use either --conversation ID or --all, not both.")
    settings = load_settings(data_dir)
    try:
        if conversation_id is not None:
            results = [
                extract_conversation(settings, conversation_id, dry_run=dry_run, actor="cli")
            ]
        else:
            results = extract_due(settings, all_threads=all_threads, dry_run=dry_run, actor="cli")
    except LlmConfigError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    if not results:
        click.echo("No conversations.")
    for result in results:
        click.echo(describe_result(result))


# ----------------------------------------------------------------- skill documents
def skill_store(settings: Settings) -> Any:
    """The skill documents folder as the settings describe it (``SkillDocumentStore``)."""
    return SkillDocumentStore.from_settings(settings)


@main.group()
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
    store = skill_store(load_settings(data_dir))
    failed = 0
    for source in _skill_sources(path):
        try:
            if dry_run:
                plan = (
                    store.plan_import_zip(source) if source.is_file() else store.plan_import(source)
                )
                failed += _show_plan(source.name, plan, force)
                continue
            if source.is_file():
                report = store.import_skill_zip(source, replace_edits=force)
            else:
                report = store.import_skill(source, replace_edits=force)
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


# ----------------------------------------------------------------- demo content
def load_demo(settings: Settings, *, force: bool, keep_existing: bool = False) -> None:
    """Fill the data folder with the demo; with ``keep_existing`` a non-empty one is left as is."""
    from .demo import DemoRefusedError, fill_demo

    try:
        report = fill_demo(
            memory_store(settings, actor="demo"),
            conversation_store(settings),
            settings.skills_dir,
            force=force,
            lock_timeout=settings.lock_timeout,
            review_file=settings.review_file,
        )
    except DemoRefusedError as exc:
        if keep_existing:
            click.echo(
                "Demo not loaded: the data folder already holds data; serving it as it is.",
                err=True,
            )
            return
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    click.echo(f"Demo content loaded into {settings.data_dir}:")
    for line in report.lines():
        click.echo(f"  {line}")


@main.command()
@data_dir_option
@click.option(
    "--force",
    is_flag=True,
    help="Load even into a data folder that holds data (the demo's own items are "
    "replaced, everything else is kept).",
)
@friendly_errors
def demo(data_dir: str | None, force: bool) -> None:
    """Fill a data folder with sample memories, conversations and skills, freshly dated."""
    load_demo(load_settings(data_dir), force=force)


# ------------------------------------------------------------------ a household: people
def people_store(settings: Settings) -> PeopleStore:
    """The household's people as the settings describe them."""
    return PeopleStore.from_settings(settings, actor="cli")


def person_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--person NAME`` to a command."""
    return click.option(
        "--person",
        default=None,
        metavar="NAME",
        help="A person's name, id or name identity: act within their view (their own memories "
        "and the household's). Without it: the household (add) or everyone (list, search).",
    )(func)


def _person_id(settings: Settings, ref: str | None, *, reading: bool = False) -> str | None:
    """The id of the person ``--person`` names (``Curator.person``: a name nobody has is
    recorded on the People page and refused, exit status 2 — read commands read the
    household's instead)."""
    return Curator.from_settings(settings, actor="cli").person(ref, reading=reading)


def _whose(names: dict[str, str], memory: Memory) -> str:
    return "household" if memory.person is None else names.get(memory.person, memory.person)


def _input_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """What a person typed that the library refuses: its message and exit status 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except InputError as exc:
            click.echo(f"Error: {exc}{_code(exc)}", err=True)
            sys.exit(2)

    return wrapper


@main.group()
def people() -> None:
    """The people of the household and the identities that map to them."""


@people.command(name="list")
@data_dir_option
@friendly_errors
def list_people(data_dir: str | None) -> None:
    """Each person with their id and identities, then the identities seen that map to nobody."""
    store = people_store(load_settings(data_dir))
    everyone = store.people()
    if not everyone:
        click.echo("No people yet: every memory is the household's.")
    for person in everyone:
        identities = ", ".join(f"{i.kind}:{i.value}" for i in person.identities)
        click.echo(f"[{person.id}] {person.name}" + (f"  ({identities})" if identities else ""))
    for identity in store.unlinked():
        label = f" ({identity.label})" if identity.label else ""
        click.echo(f"unlinked {identity.kind}:{identity.value}{label}")


@people.command(name="add")
@click.argument("name")
@click.option(
    "--identity",
    "identities",
    multiple=True,
    metavar="KIND:VALUE",
    help="An identity of theirs: ha:<user id>, slack:<user id> or name:<name> (repeatable).",
)
@data_dir_option
@friendly_errors
@_input_errors
def add_person(name: str, identities: tuple[str, ...], data_dir: str | None) -> None:
    """Add a person to the household (an unlinked identity given here becomes theirs)."""
    store = people_store(load_settings(data_dir))
    pairs = tuple(tuple(item.split(":", 1)) if ":" in item else ("", item) for item in identities)
    if any(kind == "" for kind, _ in pairs):
        click.echo("Error: an identity is KIND:VALUE, e.g. slack:U123.", err=True)
        sys.exit(2)
    person = store.add(name, identities=tuple((k, v) for k, v in pairs))
    click.echo(f"Added [{person.id}] {person.name}")


@people.command(name="new")
@click.argument("kind")
@click.argument("value")
@click.option("--name", default=None, help="Their name (default: what the identity was seen as).")
@data_dir_option
@friendly_errors
@_input_errors
def new_person(kind: str, value: str, name: str | None, data_dir: str | None) -> None:
    """Make a new person of an identity seen (``people list`` shows the unlinked ones)."""
    person = people_store(load_settings(data_dir)).person_from(kind, value, name=name)
    click.echo(f"Added [{person.id}] {person.name}")


@people.command(name="rename")
@click.argument("person_id")
@click.argument("name")
@data_dir_option
@friendly_errors
@_input_errors
def rename_person(person_id: str, name: str, data_dir: str | None) -> None:
    """Give a person another display name."""
    person = people_store(load_settings(data_dir)).rename(person_id, name)
    click.echo(f"Renamed [{person.id}] {person.name}")


@people.command(name="link")
@click.argument("person_id")
@click.argument("kind")
@click.argument("value")
@data_dir_option
@friendly_errors
@_input_errors
def link_identity(person_id: str, kind: str, value: str, data_dir: str | None) -> None:
    """Map an identity (ha, slack or name, and its value) to a person."""
    person = people_store(load_settings(data_dir)).link(person_id, kind, value)
    click.echo(f"Linked {kind}:{value} to [{person.id}] {person.name}")


@people.command(name="unlink")
@click.argument("person_id")
@click.argument("kind")
@click.argument("value")
@data_dir_option
@friendly_errors
@_input_errors
def unlink_identity(person_id: str, kind: str, value: str, data_dir: str | None) -> None:
    """Take an identity from a person (it is offered again as unlinked)."""
    person = people_store(load_settings(data_dir)).unlink(person_id, kind, value)
    click.echo(f"Unlinked {kind}:{value} from [{person.id}] {person.name}")


@main.group()
def memories() -> None:
    """Add, list and search memories from the command line."""


@memories.command(name="add")
@click.argument("content")
@click.option("--category", default="general", show_default=True)
@click.option("--confirm-secret", is_flag=True, help="Keep it although it holds a secret.")
@click.option(
    "--add-similar", is_flag=True, help="Add it although a memory says it in other words."
)
@person_option
@data_dir_option
@friendly_errors
@_input_errors
def add_memory(
    content: str,
    category: str,
    confirm_secret: bool,
    add_similar: bool,
    person: str | None,
    data_dir: str | None,
) -> None:
    """Remember a fact: the household's, or with --person that person's. Refused (exit status
    2) when it is kept already, in these or other words, or holds a secret."""
    curator = curator_of(data_dir)
    memory = curator.remember(
        content,
        category=category,
        person=curator.person(person),
        confirm_secret=confirm_secret,
        allow_similar=add_similar,
    )
    names = curator.people.names()
    click.echo(
        f"Added [{memory.id}] ({memory.category}) {memory.content} — {_whose(names, memory)}"
    )


@memories.command(name="update")
@click.argument("memory_id")
@click.argument("content")
@click.option("--category", default=None, help="A new category (default: unchanged).")
@click.option(
    "--version",
    "expected",
    default=None,
    help="The version you saw (`memories list --versions`): refused if it changed since.",
)
@click.option("--confirm-secret", is_flag=True, help="Keep it although it holds a secret.")
@data_dir_option
@friendly_errors
@_input_errors
def update_memory(
    memory_id: str,
    content: str,
    category: str | None,
    expected: str | None,
    confirm_secret: bool,
    data_dir: str | None,
) -> None:
    """Change a memory's words (and category); a change made since --version is never
    overwritten (exit status 2)."""
    revision = curator_of(data_dir).revise(
        memory_id, content, category=category, expected=expected, confirm_secret=confirm_secret
    )
    memory = revision.after
    click.echo(f"Updated [{memory.id}] ({memory.category}) {memory.content}")


def _print_memories(settings: Settings, found: list[Memory]) -> None:
    names = people_store(settings).names()
    for memory in found:
        click.echo(f"[{memory.id}] ({memory.category}) {memory.content} — {_whose(names, memory)}")


@memories.command(name="list")
@person_option
@data_dir_option
@friendly_errors
def list_memories(person: str | None, data_dir: str | None) -> None:
    """Every memory and whose it is; with --person, that person's and the household's."""
    settings = load_settings(data_dir)
    viewer = _person_id(settings, person, reading=True)
    _print_memories(settings, memory_store(settings).get_all(person=viewer))


@memories.command(name="search")
@click.argument("keyword")
@person_option
@data_dir_option
@friendly_errors
def search_memories(keyword: str, person: str | None, data_dir: str | None) -> None:
    """Memories holding every word of KEYWORD; with --person, within their view."""
    settings = load_settings(data_dir)
    viewer = _person_id(settings, person, reading=True)
    found = memory_store(settings).search(keyword, person=viewer)
    _print_memories(settings, found)


@main.command()
@click.argument("message")
@click.option("--conversation", default=None, help="A conversation's key: its history goes in.")
@person_option
@click.option(
    "--household",
    is_flag=True,
    help="The prompt of an unknown speaker (a shared room): the household's memories only.",
)
@data_dir_option
@friendly_errors
def prompt(
    message: str,
    conversation: str | None,
    person: str | None,
    household: bool,
    data_dir: str | None,
) -> None:
    """Print the exact prompt sent for MESSAGE: with --person, their own memories and the
    household's; with --household, the household's only; without either, every memory."""
    if person is not None and household:
        raise click.UsageError("Use either --person or --household, not both.")
    settings = load_settings(data_dir)
    history = conversation_store(settings).get_history(conversation) if conversation else []
    store = memory_store(settings)
    memories = store.for_person(None) if household else store.get_all()
    person_id = _person_id(settings, person)
    click.echo(compose_prompt(memories, history, message, person=person_id))


if __name__ == "__main__":
    main()
