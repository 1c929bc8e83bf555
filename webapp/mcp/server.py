"""The MCP server over stdio: ``manage_memory`` and its sibling tools on the dashboard's memory file.

The assistant (Claude Code, Claude Desktop, any MCP client) decides what to remember and
calls this tool; every change goes through ``MemoryStore`` with the actor ``mcp``, so the
dashboard's history shows where it came from. Tool errors (memory full, unknown id, a busy
or damaged file, bad arguments) come back as ``isError`` results the model can read and act
on; the server itself never stops because of them. A second, read-only tool,
``review_memory``, lists the extracted facts that wait for the user's review.

The ``manage_memory`` tool itself is ``mcp.tool``, ``recall`` is ``mcp.recall``, and what
the stdio transport reads and writes is screened by ``mcp.screening``.
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
import sys
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from ..curator import Curator, SimilarMemoryError, UnknownPersonError
from ..curator.errors import ForgottenFactError
from ..stores import (
    ConflictError,
    MemoryFullError,
    MemoryTooLongError,
    ReviewItem,
    SecretInputError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreFormatNewerError,
    StoreFormatUnreadableError,
)
from ..stores.readers import ReviewReader
from .recall import RECALL_TOOL_NAME, for_person_default, recall_entry
from .screening import ScreenedLines, SerializableReplies, read_lines
from .tool import TOOL_NAME, MemoryTool, ToolInputError, tool_definition

logger = logging.getLogger(__name__)

SERVER_NAME = "memory-curator"
REVIEW_TOOL_NAME = "review_memory"
ACTOR = "mcp"

REVIEW_DESCRIPTION = """\
Lists the facts that were extracted from past conversations and wait for the user's review \
(approve, edit or reject in the Memory Curator dashboard), newest first, as \
"[review id] action (category) content". Read-only: it changes nothing. Use it when the user \
asks what is waiting for review, or before adding a fact, to see whether it is already \
proposed."""

SERVER_INSTRUCTIONS = (
    "Use the manage_memory tool to keep durable facts and preferences about the user "
    "(names for devices, routines, likes and dislikes). Search before adding; update "
    "instead of adding a contradicting fact; never store secrets."
)


def pending_review(curator: Curator, person: str = "") -> str:
    """The pending review items the session may see, as the model sees them: with a
    ``person`` (the session's, MEMORY_MCP_DEFAULT_PERSON) theirs and the household's, each
    saying whose; without, the household's only — never another person's."""
    view = curator.person(person, reading=True) if person else None
    items = curator.pending(view)
    if not items:
        return "No facts wait for review."
    names = curator.people.names() if view is not None else None
    noun = "fact waits" if len(items) == 1 else "facts wait"
    lines = [f"{len(items)} {noun} for review (the user decides in the dashboard):"]
    lines += [_describe_review_item(item, names) for item in items]
    return "\n".join(lines)


def _describe_review_item(item: ReviewItem, names: Mapping[str, str] | None = None) -> str:
    target = f" [{item.memory_id}]" if item.memory_id else ""
    line = f"[{item.id}] {item.action}{target} ({item.category}) {item.content}"
    if names is not None:
        whose = names.get(item.person, item.person) if item.person else None
        line += f" — {whose}'s" if whose else " — the household's"
    if item.action == "update" and item.current_content:
        line += f" (now: {item.current_content})"
    if item.confidence is not None:
        line += f" (confidence {item.confidence:.2f})"
    if item.tombstone_id:
        line += " (the user deleted this fact before)"
    return line


def error_message(exc: Exception) -> str:
    """The text the model sees for a failed call: what went wrong and what to do next."""
    if isinstance(exc, MemoryTooLongError):
        return str(exc)
    if isinstance(exc, MemoryFullError):
        return (
            f"{exc} (Now {exc.items}/{exc.max_items} items, {exc.chars}/{exc.max_chars} "
            f'chars.) Use "list", then "delete" or "update" a memory that matters less.'
        )
    if isinstance(exc, StoreBusyError):
        return f"{exc} (Another program is writing the memory file; retry in a moment.)"
    if isinstance(exc, SecretInputError):
        return (
            f"Refused ({exc.code}): {exc}. To keep it as it is, call again with "
            f'"confirm_secret": true, only if the user asked for that secret to be kept.'
        )
    if isinstance(exc, SimilarMemoryError):
        return (
            f"Refused ({exc.code}): {exc} Update that memory instead, or call again with "
            f'"confirm_similar": true if the new fact says something else.'
        )
    if isinstance(exc, (UnknownPersonError, ConflictError, ForgottenFactError)):
        return f"Refused ({exc.code}): {exc}"
    if isinstance(exc, (StoreFormatNewerError, StoreFormatUnreadableError)):
        return f"Refused ({exc.code}): {exc} Tell the user; the memories can still be read."
    if isinstance(exc, StoreCorruptError):
        return f"{exc} Tell the user; the memory cannot be read or changed until it is repaired."
    if isinstance(exc, (ToolInputError, ValueError, StoreError)):
        return str(exc)
    if isinstance(exc, OSError):
        return f"The memory file could not be read or written: {exc}"
    return f"Unexpected error ({type(exc).__name__}): {exc}"


def call_tool_safely(run: Callable[[], str]) -> types.CallToolResult:
    """Run one tool call and wrap its text, or its error, as an MCP tool result."""
    try:
        text = run()
    except Exception as exc:  # any failure is the model's to read, never a server crash
        if not isinstance(exc, (ValueError, StoreError, OSError)):
            logger.exception("tool call failed unexpectedly")
        return _error_result(error_message(exc))
    return types.CallToolResult(content=[types.TextContent(text=text)])


def _error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def review_tool_definition() -> types.Tool:
    """The read-only ``review_memory`` tool as ``tools/list`` announces it."""
    return types.Tool(
        name=REVIEW_TOOL_NAME,
        title="Facts waiting for review",
        description=REVIEW_DESCRIPTION,
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        # Every hint spelled out: a client (Home Assistant's) takes a hint left out as the
        # least safe value, so a read-only tool without destructive_hint=False is destructive.
        annotations=types.ToolAnnotations(
            title="Facts waiting for review",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )


def build_server(
    curator: Curator, review: ReviewReader | None = None, *, default_person: str = ""
) -> Server:
    """A low-level MCP server exposing ``manage_memory``, ``recall`` (and ``review_memory``)
    through the curator of one data folder (``default_person``: see mcp_recall)."""
    tools: dict[str, tuple[types.Tool, Callable[[Any], str]]] = {
        # A MemoryTool per call: it keeps the view of the call it runs.
        TOOL_NAME: (tool_definition(), lambda arguments: MemoryTool(curator).run(arguments)),
    }
    if review is not None:
        tools[REVIEW_TOOL_NAME] = (
            review_tool_definition(),
            lambda arguments: pending_review(curator, default_person),
        )
    tools[RECALL_TOOL_NAME] = recall_entry(curator.memories, curator.people)
    # Calls run at once, each in a worker thread of its own (the stores are safe across
    # threads and processes), so the event loop stays responsive (pings, cancellation) while
    # a call waits for another process's lock, and a slow call never holds up the next.

    async def list_tools(_ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[definition for definition, _ in tools.values()])

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in tools:
            return _error_result(f'Unknown tool "{params.name}"; use {" or ".join(tools)}.')
        arguments = for_person_default(params.name, params.arguments, default_person)
        run = functools.partial(tools[params.name][1], arguments)
        return await anyio.to_thread.run_sync(call_tool_safely, run)

    return Server(
        SERVER_NAME,
        version=_package_version(),
        instructions=SERVER_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _package_version() -> str:
    try:
        return importlib.metadata.version("memory-curator")
    except importlib.metadata.PackageNotFoundError:
        return ""


async def serve_stdio(curator: Curator, review: ReviewReader | None, person: str = "") -> None:
    """Serve the tools on stdin/stdout until the client closes the connection."""
    server = build_server(curator, review, default_person=person)
    screened = ScreenedLines(read_lines(sys.stdin.buffer))
    async with stdio_server(stdin=screened) as (read_stream, write_stream):  # type: ignore[arg-type]
        replies = SerializableReplies(write_stream)
        screened.answer_with(replies)
        await server.run(read_stream, replies, server.create_initialization_options())


def serve(curator: Curator, review: ReviewReader | None = None, default_person: str = "") -> None:
    """Run the stdio server through ``curator`` (built once, with actor ``mcp``); Ctrl+C ends
    it quietly.

    The stores re-read their files whenever another process (the dashboard, the CLI)
    changed them, so one store serves the whole session. With ``review``, the
    read-only ``review_memory`` tool lists the facts waiting for review.
    """
    try:
        anyio.run(serve_stdio, curator, review, default_person)
    except KeyboardInterrupt:
        pass
