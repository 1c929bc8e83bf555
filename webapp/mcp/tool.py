"""The ``manage_memory`` MCP tool: what ``tools/list`` announces (its description and input
schema), its arguments checked with a message saying how to fix them (``ToolInputError``),
and its actions carried out through the curator within one view (``MemoryTool``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import mcp.types as types

from ..curator import Curator
from ..curator.people import in_view
from ..stores import CATEGORIES, DuplicateMemoryError, Memory, NotFoundError
from ..stores.readers import MemoryReader
from ..text import count_noun
from .words import describe, describe_listed, expired_line, until_phrase

TOOL_NAME = "manage_memory"
ACTIONS = ("add", "list", "search", "update", "delete")

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
                id,
                content=content,
                category=category,
                confirm_secret=confirm_secret,
                view=self._view,
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
