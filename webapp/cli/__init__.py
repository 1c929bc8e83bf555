"""The ``memory-curator`` command line: one sub-command per job.

Each sub-command reads ``Settings`` once, calls the curator (or the library) and prints a
readable result. Errors a person can act on (bad settings, damaged files, a busy lock) end with
a clear message and a non-zero exit status, never a traceback. The commands live by subject:
``memories`` (memories, people, delete, prompt), ``transfer`` (import, export), ``skills``,
``running`` (serve, mcp, extract, demo) and ``upkeep`` (stats, settings, repair).
"""

from __future__ import annotations

import click

from ..settings import VERSION
from .memories import delete_memory, memories, people, prompt
from .running import demo, extract, load_demo, mcp_command, serve
from .skills import skills
from .transfer import export_memories, import_memories
from .upkeep import repair, show_settings, stats

__all__ = ["load_demo", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(VERSION, prog_name="memory-curator")
def main() -> None:
    """Memory Curator: curate the long-term memory of a personal LLM assistant."""


for _command in (
    stats,
    show_settings,
    repair,
    export_memories,
    delete_memory,
    import_memories,
    mcp_command,
    serve,
    extract,
    skills,
    demo,
    people,
    memories,
    prompt,
):
    main.add_command(_command)
