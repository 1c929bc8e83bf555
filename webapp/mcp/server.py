"""The ``manage_memory`` MCP tool: an MCP server over stdio on the same memory file as the dashboard.

The assistant (Claude Code, Claude Desktop, any MCP client) decides what to remember and
calls this tool; every change goes through ``MemoryStore`` with the actor ``mcp``, so the
dashboard's history shows where it came from. Tool errors (memory full, unknown id, a busy
or damaged file, bad arguments) come back as ``isError`` results the model can read and act
on; the server itself never stops because of them. A second, read-only tool,
``review_memory``, lists the extracted facts that wait for the user's review.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import json
import logging
import re
import sys
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from datetime import UTC, datetime
from typing import Any, BinaryIO, Protocol

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic_core import PydanticSerializationError

from ..curator import Curator, SimilarMemoryError, UnknownPersonError
from ..curator.errors import ForgottenFactError
from ..curator.people import in_view
from ..stores import (
    CATEGORIES,
    MAX_DEPTH,
    ConflictError,
    DuplicateMemoryError,
    Memory,
    MemoryFullError,
    MemoryTooLongError,
    NotFoundError,
    ReviewItem,
    SecretInputError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreFormatNewerError,
    StoreFormatUnreadableError,
    nesting_depth,
)
from ..stores.readers import MemoryReader, ReviewReader
from ..text import count_noun, has_lone_surrogate, without_lone_surrogates
from .recall import RECALL_TOOL_NAME, for_person_default, recall_entry
from .words import describe, describe_listed, expired_line, until_phrase

logger = logging.getLogger(__name__)

SERVER_NAME = "memory-curator"
TOOL_NAME = "manage_memory"
REVIEW_TOOL_NAME = "review_memory"
ACTIONS = ("add", "list", "search", "update", "delete")
ACTOR = "mcp"

TOOL_DESCRIPTION = """\
The user's long-term memory: facts and preferences kept across conversations and shown to \
you at the start of each one.

Remember only durable, long-term facts and preferences that will still matter in weeks: the \
names the user uses for devices, rooms and people, routines, likes and dislikes, how they \
want you to work. Do not store one-off requests, things that only matter in this \
conversation, or secrets (passwords, PIN codes, tokens, keys). A situation that holds for a \
while may be added with its end in its words ("Is in Lisbon until Friday"): it expires then. \
When the user says "remember that ...", add it; when they say "forget that ...", search for \
it and delete it.

Search before adding, to avoid duplicates. When a stored fact is outdated or the user \
contradicts it, update that memory (by its id) instead of adding a second, conflicting one. \
Write each memory as one short, self-contained sentence.

Actions:
- add: content (required), category (optional, default general), confirm_secret \
(optional: true keeps content that holds a secret; refused otherwise), confirm_similar \
(optional: true adds a fact a memory already states in other words; refused otherwise)
- list: every memory still true as "[id] (category) content — where it came from" (and \
"— until <time>" when it expires), how many expired ones were left out, and how full the \
memory is
- search: keyword (required); finds memories holding every word, in any order, ignoring case; \
same format as list
- update: id and content (required), category (optional), confirm_secret (optional)
- delete: id (required)
Every action takes an optional person: the name or id of the person you are talking with (several people may share this assistant). With it, list and search show that person's memories and the household's (each says whose it is), add keeps the fact as theirs, and update and delete reach only those; without it, every action acts on the household's memories (shared by everyone). Keep facts about the home or everyone ("our Wi-Fi is ...") for the household, the person's own likes and habits for them.
The memory is capped; when it is full, delete or shorten memories that matter least."""

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

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {
            "type": "string",
            "enum": list(ACTIONS),
            "description": "What to do: add, list, search, update or delete.",
        },
        "content": {
            "type": "string",
            "minLength": 1,
            "description": "For add and update: the fact, as one short self-contained sentence.",
        },
        "category": {
            "type": "string",
            "enum": list(CATEGORIES),
            "description": (
                "For add and update (optional): preference = likes, dislikes, how the user "
                "wants things; project = something the user is working on; workflow = "
                "routines and habits; tool = devices, apps and their names; convention = "
                "naming and formatting rules; general = anything else (the default)."
            ),
        },
        "id": {
            "type": "string",
            "minLength": 1,
            "description": "For update and delete: the memory's id, shown in brackets by list, search and add.",
        },
        "keyword": {
            "type": "string",
            "minLength": 1,
            "description": 'For search: one or more words (all must appear, any order; "quote" a phrase).',
        },
        "person": {
            "type": "string",
            "minLength": 1,
            "description": (
                "Optional, for every action: the name or id of the person you are talking "
                "with (a first name does when nobody else here goes by it). Their view is their own memories and the household's; without it, "
                "the household's only."
            ),
        },
        "confirm_secret": {
            "type": "boolean",
            "description": (
                "For add and update (optional, default false): content that holds a secret (a "
                "password, a door, alarm or PIN code, an API key or token, a card or bank "
                "account number, a one-time code) is refused with the error code "
                "memory_secret, because a memory is shown in every conversation. Pass true "
                "only when the user has said they want that secret kept; otherwise store "
                'only that they have one ("Has a garage door code.").'
            ),
        },
        "confirm_similar": {
            "type": "boolean",
            "description": (
                "For add (optional, default false): a fact a memory already states in other "
                "words is refused with the error code similar_memory, naming that memory "
                "(update it instead). Pass true only when the new fact says something else."
            ),
        },
    },
    "required": ["action"],
    "additionalProperties": False,
}

# Which arguments each action needs, and what to say when one is missing.
_REQUIRED: dict[str, tuple[str, ...]] = {
    "add": ("content",),
    "list": (),
    "search": ("keyword",),
    "update": ("id", "content"),
    "delete": ("id",),
}
_ARGUMENT_HINTS = {
    "content": "the fact to remember, as one short sentence",
    "id": "the memory's id from list or search",
    "keyword": "a word or short phrase to look for",
}


class ToolInputError(ValueError):
    """The tool's arguments cannot be used as given; the message says how to fix them."""


def usage_line(store: MemoryReader) -> str:
    """How full the memory is, so the model knows when to tidy up."""
    used = store.usage()
    return f"Memory use: {used.items}/{used.max_items} items, {used.chars}/{used.max_chars} chars."


class MemoryTool:
    """The ``manage_memory`` actions through one Curator; each returns text or raises.

    Each call acts within one view: the household's memories (no ``person`` argument) or one
    person's (theirs and the household's), never another person's."""

    def __init__(self, curator: Curator) -> None:
        self.curator = curator
        self.store = curator.memories
        self._view: str | None = None  # the person of the call being run (None: household)
        self._names: dict[str, str] | None = None  # set when a call names a person

    def run(self, arguments: Mapping[str, Any] | None) -> str:
        """Check the arguments, then carry out the action they name."""
        args = _check_arguments(arguments or {})
        name = args.pop("action")
        self._view, self._names = None, None
        if "person" in args:
            self._view = self.curator.person(args.pop("person"), reading=name != "add")
            self._names = self.curator.people.names()
        action: Callable[..., str] = getattr(self, f"do_{name}")
        return action(**args)

    def _whose(self, memory: Memory) -> str:
        """`` — Maya's`` / `` — the household's`` after a memory, when a call named a person."""
        if self._names is None:
            return ""
        if memory.person is None:
            return " — the household's"
        return f" — {self._names.get(memory.person, memory.person)}'s"

    def _in_view(self, memories: list[Memory]) -> list[Memory]:
        return [m for m in memories if in_view(m, self._view)]

    def do_add(
        self,
        content: str,
        category: str | None = None,
        confirm_secret: bool = False,
        confirm_similar: bool = False,
        **_: Any,
    ) -> str:
        """Remember a new fact, unless it is already kept (in these or other words) or it
        holds a secret the caller did not confirm."""
        try:
            memory = self.curator.remember(
                content,
                category=category or "general",
                person=self._view,
                confirm_secret=confirm_secret,
                allow_similar=confirm_similar,
            )
        except DuplicateMemoryError as exc:
            # A retried or repeated call must not fill the memory with copies.
            return (
                f"Already remembered: {describe(exc.existing)}{self._whose(exc.existing)}\n"
                f"Nothing was added."
            )
        added = f"Added {describe(memory)}{self._whose(memory)}{until_phrase(memory)}"
        return f"{added}\n{usage_line(self.store)}"

    def do_list(self, **_: Any) -> str:
        """Every memory still true in this view with its id, how many expired ones were left
        out, and how full the memory is."""
        listed = self._in_view(self.store.query(sort="oldest", per_page=None).items)
        now = datetime.now(UTC)
        memories = [memory for memory in listed if not memory.expired(now)]
        left_out = expired_line(len(listed) - len(memories))
        if not memories:
            return "\n".join(
                [
                    "No memories yet." if not left_out else "No current memories.",
                    *left_out,
                    usage_line(self.store),
                ]
            )
        heading = f"{count_noun(len(memories), 'memory', 'memories')}:"
        lines = [describe_listed(m) + self._whose(m) for m in memories]
        return "\n".join([heading, *lines, *left_out, usage_line(self.store)])

    def do_search(self, keyword: str, **_: Any) -> str:
        """The memories whose text contains ``keyword``."""
        keyword = keyword.strip()
        if not keyword:
            raise ToolInputError("The keyword is empty; give a word or short phrase to look for.")
        found = self._in_view(self.store.query(keyword, sort="oldest", per_page=None).items)
        if not found:
            return f'No memory contains "{keyword}".'
        noun = "memory contains" if len(found) == 1 else "memories contain"
        lines = [describe_listed(m) + self._whose(m) for m in found]
        return "\n".join([f'{len(found)} {noun} "{keyword}":', *lines])

    def do_update(
        self,
        id: str,
        content: str,
        category: str | None = None,
        confirm_secret: bool = False,
        **_: Any,
    ) -> str:
        """Replace a memory's text (and category), saying what it replaced; new text holding a
        secret the caller did not confirm is refused; a change made meanwhile is never
        overwritten."""
        try:
            revision = self.curator.revise(
                id, content, category=category, confirm_secret=confirm_secret, view=self._view
            )
        except NotFoundError:
            raise ToolInputError(_unknown_id(id)) from None
        before, memory = revision.before, revision.after
        if not revision.changed:
            return f"No change: {describe(memory)} already says that."
        was = f"\n(was: {before.content})" if before.content != memory.content else ""
        return f"Updated {describe(memory)}{until_phrase(memory)}{was}\n{usage_line(self.store)}"

    def do_delete(self, id: str, **_: Any) -> str:
        """Forget a memory (the history log keeps it for the dashboard's undo); remembered as
        forgotten, so a later proposal of it is marked in Review."""
        try:
            memory = self.curator.forget(id, view=self._view).memory
        except NotFoundError:
            raise ToolInputError(_unknown_id(id)) from None
        if memory is None:
            raise ToolInputError(_unknown_id(id))
        gone = describe(memory) + self._whose(memory)
        return f"Deleted {gone}\n{usage_line(self.store)}"


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


def _unknown_id(memory_id: str) -> str:
    return (
        f'No memory has the id "{memory_id}". Use the action "list" or "search" to find '
        f"the right id."
    )


def _check_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Validate the raw tool arguments into clean keyword arguments (nulls count as missing)."""
    if not isinstance(arguments, Mapping):
        raise ToolInputError("The arguments must be a JSON object.")
    unknown = sorted(set(arguments) - set(INPUT_SCHEMA["properties"]))
    if unknown:
        raise ToolInputError(
            f"Unknown argument(s): {', '.join(unknown)}. {TOOL_NAME} takes: "
            f"{', '.join(INPUT_SCHEMA['properties'])}."
        )
    args: dict[str, Any] = {
        key: _flag(key, value) if key in _FLAGS else _text(key, value)
        for key, value in arguments.items()
        if value is not None
    }
    action = args.get("action")
    if action is None:
        raise ToolInputError(f'The argument "action" is required: one of {", ".join(ACTIONS)}.')
    if action not in ACTIONS:
        raise ToolInputError(f'Unknown action "{action}"; use one of {", ".join(ACTIONS)}.')
    for name in _REQUIRED[action]:
        if name not in args:
            raise ToolInputError(
                f'The action "{action}" needs the argument "{name}": {_ARGUMENT_HINTS[name]}.'
            )
    if "id" in args:
        # Models often copy the id with the brackets it is shown in.
        args["id"] = args["id"].strip().strip("[]").strip()
    if "category" in args and args["category"] not in CATEGORIES:
        raise ToolInputError(
            f'Unknown category "{args["category"]}"; use one of {", ".join(CATEGORIES)}.'
        )
    return args


_FLAGS = ("confirm_secret", "confirm_similar")


def _flag(name: str, value: Any) -> bool:
    """A true/false argument, or ToolInputError (a "yes" or a 1 is not taken for true)."""
    if not isinstance(value, bool):
        raise ToolInputError(f'The argument "{name}" must be true or false.')
    return value


def _text(name: str, value: Any) -> str:
    """An argument as text that can be stored (UTF-8 encodable), or ToolInputError."""
    if not isinstance(value, str):
        raise ToolInputError(f'The argument "{name}" must be a string, not {type(value).__name__}.')
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolInputError(f'The argument "{name}" is not valid Unicode text.') from None
    if "\ufffd" in value:
        # The stdio transport decodes invalid UTF-8 bytes as U+FFFD; storing those loses the text.
        raise ToolInputError(
            f'The argument "{name}" contains U+FFFD replacement characters: the text was not '
            f"valid UTF-8. Send it again as valid UTF-8 text."
        )
    return value


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


def tool_definition() -> types.Tool:
    """The ``manage_memory`` tool as ``tools/list`` announces it."""
    return types.Tool(
        name=TOOL_NAME,
        title="Long-term memory",
        description=TOOL_DESCRIPTION,
        input_schema=INPUT_SCHEMA,
        annotations=types.ToolAnnotations(
            title="Long-term memory",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    )


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


MAX_MESSAGE_DEPTH = MAX_DEPTH
# The longest line read from the client. A request carries one memory (MEMORY_MAX_CHARS, 10,000
# characters by default) or a search; a line longer than this is refused, and never held whole.
MAX_LINE_BYTES = 4 * 1024 * 1024
_DISCARD_CHUNK = 1024 * 1024
_ID_WINDOW = 64 * 1024  # how much of each end of a long line is searched for the request id
_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def _answerable(request_id: Any) -> bool:
    """Whether an answer may carry ``request_id``: an integer, or text UTF-8 can encode."""
    if isinstance(request_id, bool):
        return False
    if isinstance(request_id, int):
        return True
    return isinstance(request_id, str) and not has_lone_surrogate(request_id)


def _guess_id(text: str, *, last: bool = False) -> int | str | None:
    """The request id of a line that cannot be parsed, when one can be made out (the first
    ``"id"`` in ``text``, or with ``last`` the last one)."""
    found = list(_ID.finditer(text))
    if not found:
        return None
    try:
        value = json.loads(found[-1 if last else 0].group(1))
    except ValueError:
        return None
    return value if _answerable(value) else None


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


def invalid_request(message: str) -> types.JSONRPCError:
    """A JSON-RPC "Invalid Request" error (-32600) with id null."""
    return _error(None, types.INVALID_REQUEST, message)


class _NotJson(ValueError):
    """NaN, Infinity or -Infinity: Python's json reads them, JSON has no such numbers."""


def _no_constant(name: str) -> Any:
    raise _NotJson(f"{name} is not JSON")


def too_long(head: bytes, tail: bytes) -> types.JSONRPCError:
    """The answer to a line longer than ``MAX_LINE_BYTES``, of which ``head`` is the start and
    ``tail`` the end (the id is at one end or the other, outside the long text)."""
    request_id = _guess_id(head.decode("utf-8", errors="replace"))
    if request_id is None:
        request_id = _guess_id(tail.decode("utf-8", errors="replace"), last=True)
    return _error(
        request_id,
        types.INVALID_REQUEST,
        f"The request is too long (over {MAX_LINE_BYTES // (1024 * 1024)} MB on one line); "
        f"a memory is a short sentence.",
    )


def screen_line(line: str) -> tuple[bool, types.JSONRPCError | None]:
    """(pass it to the SDK?, the error to answer with instead) for one line from the client.

    The SDK drops a line it cannot read without answering, so the assistant waits forever;
    every such request is answered here with a JSON-RPC error, with its id when the id can be
    echoed and null when it cannot (a lone surrogate, a fraction, a list). Responses and
    notifications are never answered (JSON-RPC), only dropped when unreadable.
    """
    text = line.strip()
    if not text:
        return False, None
    depth = nesting_depth(text)
    if depth > MAX_MESSAGE_DEPTH:
        return False, _error(
            _guess_id(text),
            types.INVALID_REQUEST,
            f"The request is nested too deep ({depth} levels; at most {MAX_MESSAGE_DEPTH}).",
        )
    try:
        message = json.loads(text, parse_constant=_no_constant)  # NaN, Infinity: not JSON
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            reason = exc.msg
        elif isinstance(exc, _NotJson):
            reason = str(exc)
        else:
            reason = "a number is too long"
        return False, _error(_guess_id(text), types.PARSE_ERROR, f"Parse error: {reason}.")
    if not isinstance(message, dict):
        return False, _error(None, types.INVALID_REQUEST, "A request must be a JSON object.")
    problem = _request_problem(message)
    if problem is None:
        try:
            types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except Exception as exc:  # whatever the SDK would have dropped silently
            problem = (types.INVALID_REQUEST, f"Invalid request: {str(exc).splitlines()[0]}")
    if problem is None:
        return True, None
    if (
        "id" not in message
        or "method" not in message
        and ("result" in message or "error" in message)
    ):
        logger.warning("Dropped a message the server cannot read: %s", problem[1])
        return False, None
    request_id = message["id"]
    return False, _error(request_id if _answerable(request_id) else None, *problem)


def _request_problem(message: dict[str, Any]) -> tuple[int, str] | None:
    if "id" in message and not _answerable(message["id"]):
        return (
            types.INVALID_REQUEST,
            "Invalid request: the id must be an integer or a string of valid Unicode text "
            "(no lone surrogate such as \\ud800).",
        )
    if "params" in message and not isinstance(message["params"], dict):
        return types.INVALID_PARAMS, "Invalid params: params must be a JSON object."
    try:
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return (
            types.INVALID_PARAMS,
            "Invalid params: the text has a lone surrogate (such as \\ud800), which is not "
            "valid Unicode. Send it again as valid UTF-8 text.",
        )
    return None


def serializable(item: SessionMessage) -> SessionMessage:
    """``item`` as the SDK's stdio writer can write it: a lone surrogate anywhere in the
    message (a stored memory's text, an id) would make ``model_dump_json`` raise and stop the
    server, so each becomes U+FFFD. Any other message is returned as it is."""
    try:
        item.message.model_dump_json(by_alias=True, exclude_unset=True)
    except PydanticSerializationError:
        data = item.message.model_dump(mode="json", by_alias=True, exclude_unset=True)
        message = types.jsonrpc_message_adapter.validate_python(
            without_lone_surrogates(data), by_name=False
        )
        logger.warning("Replaced lone surrogates (not valid Unicode) in an answer with U+FFFD")
        return dataclasses.replace(item, message=message)
    return item


class _Sender(Protocol):
    async def send(self, item: SessionMessage, /) -> None: ...
    async def aclose(self) -> None: ...


class SerializableReplies:
    """The SDK's write stream, with every message made writable first (``serializable``)."""

    def __init__(self, stream: _Sender) -> None:
        self._stream = stream

    async def send(self, item: SessionMessage, /) -> None:
        await self._stream.send(serializable(item))

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> SerializableReplies:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()


async def read_lines(stream: BinaryIO) -> AsyncIterator[str | types.JSONRPCError]:
    """The client's lines as text (invalid UTF-8 as U+FFFD), split on newlines only; for a
    line over ``MAX_LINE_BYTES``, the error that answers it, its rest read and let go."""
    while True:
        line = await anyio.to_thread.run_sync(stream.readline, MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            head, tail = line[:_ID_WINDOW], line[-_ID_WINDOW:]
            del line
            while not tail.endswith(b"\n"):
                rest = await anyio.to_thread.run_sync(stream.readline, _DISCARD_CHUNK)
                if not rest:
                    break
                tail = (tail + rest)[-_ID_WINDOW:]
            yield too_long(head, tail)
            continue
        yield line.decode("utf-8", errors="replace")


class ScreenedLines:
    """The client's lines for the SDK's stdio transport, hostile ones answered here instead."""

    def __init__(self, lines: AsyncIterable[str | types.JSONRPCError]) -> None:
        self._lines = lines
        self._replies: SerializableReplies | None = None
        self._ready = anyio.Event()

    def answer_with(self, replies: SerializableReplies) -> None:
        """The stream the server's own answers go out on (one writer, so lines never mix)."""
        self._replies = replies
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._lines:
            forward, reply = (
                (False, line) if isinstance(line, types.JSONRPCError) else screen_line(line)
            )
            if forward:
                assert isinstance(line, str)
                yield line
            elif reply is not None:
                await self._ready.wait()
                assert self._replies is not None
                logger.warning("Answered a request the server cannot read: %s", reply.error.message)
                await self._replies.send(SessionMessage(reply))


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
