"""``serve``, ``mcp``, ``extract`` and ``demo``: the dashboard, the MCP server over stdio, a run
of extraction, and the demo content."""

from __future__ import annotations

import sys

import click

from ..curator import Curator
from ..settings import Settings
from .common import (
    data_dir_option,
    friendly_errors,
    load_settings,
)


@click.command(name="mcp")
@data_dir_option
@friendly_errors
def mcp_command(data_dir: str | None) -> None:
    """Serve the manage_memory (and review_memory) tools to an assistant over MCP (stdio)."""
    from ..mcp.server import serve  # the MCP SDK is loaded only for this command

    settings = load_settings(data_dir)
    curator = Curator.from_settings(settings, actor="mcp")
    serve(curator, curator.review, settings.mcp_default_person)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=8099,
    show_default=True,
    type=click.IntRange(1, 65535),
    help="Port to listen on.",
)
@click.option(
    "--threads",
    default=8,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Worker threads for the dashboard (MCP calls have threads of their own).",
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
    from ..web.plumbing.serve import check_exposure, run, with_token_file
    from ..web.plumbing.shared_folder import move_to_shared_folder

    settings = with_token_file(load_settings(data_dir), token_file)
    check_exposure(settings, host)
    move_to_shared_folder(settings)
    if with_demo:
        load_demo(settings, force=False, keep_existing=True)
    Curator.from_settings(settings, actor="cli").init_files()
    run(settings, host=host, port=port, threads=threads)


@click.command()
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
    from ..extraction import LlmConfigError
    from ..extraction.report import describe_result

    if conversation_id is not None and all_threads:
        raise click.UsageError("Use either --conversation ID or --all, not both.")
    curator = Curator.from_settings(load_settings(data_dir), actor="cli")
    try:
        results = curator.extract(conversation_id, all_threads=all_threads, dry_run=dry_run)
    except LlmConfigError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    if not results:
        click.echo("No conversations.")
    for result in results:
        click.echo(describe_result(result))


# ----------------------------------------------------------------- demo content
def load_demo(settings: Settings, *, force: bool, keep_existing: bool = False) -> None:
    """Fill the data folder with the demo; with ``keep_existing`` a non-empty one is left as is."""
    from .demo import DemoRefusedError, fill_demo

    try:
        report = fill_demo(Curator.from_settings(settings, actor="demo"), force=force)
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


@click.command()
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
