"""The read-only ``recall`` MCP tool: the ``<long_term_memory>`` block a prompt carries.

An assistant that can only call tools (Home Assistant's Assist, most bots) never sees the
block ``compose_prompt`` puts in front of a prompt; ``recall`` hands it over, built by the
very same functions, so what the assistant reads is what the dashboard's Prompt page shows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import mcp.types as types

from ..prompts import MEMORY_CLOSE, compose_prompt, for_person
from ..stores.readers import MemoryReader, PeopleReader

RECALL_TOOL_NAME = "recall"

RECALL_DESCRIPTION = """\
What you remember about the household and the person you are talking with: their long-term \
memories and the household's, exactly as a prompt would carry them (a <long_term_memory> \
block, one fact a line; facts no longer true are left out). Call it at the start of every \
conversation and before answering anything personal (names, likes, routines, who is who), \
so you answer from what you were told. Read-only: it changes nothing. Give person when you \
know who is speaking; give query (words that must all appear) to get only the facts about \
one thing. To add, change or forget a fact use manage_memory."""

RECALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "person": {
            "type": "string",
            "minLength": 1,
            "description": (
                "Optional: the name or id of the person you are talking with (a first "
                "name does when nobody else here goes by it). Without it, the household's "
                "memories only."
            ),
        },
        "query": {
            "type": "string",
            "minLength": 1,
            "description": (
                "Optional: words a fact must hold (all of them, any order), to narrow the "
                "answer to one subject."
            ),
        },
    },
    "additionalProperties": False,
}

# The longest answer: the memory's own cap keeps the block far shorter by default
# (MEMORY_MAX_CHARS, 10,000); a store allowed more is cut at a whole fact.
MAX_ANSWER_CHARS = 20_000


# Tools that take a ``person`` argument (the default person fills it when a call names nobody).
PERSONAL_TOOLS = frozenset({"manage_memory", RECALL_TOOL_NAME})


class RecallInputError(ValueError):
    """The arguments cannot be used as given; the message says how to fix them."""


def recall_tool_definition() -> types.Tool:
    """The ``recall`` tool as ``tools/list`` announces it."""
    return types.Tool(
        name=RECALL_TOOL_NAME,
        title="Recall long-term memory",
        description=RECALL_DESCRIPTION,
        input_schema=RECALL_SCHEMA,
        annotations=types.ToolAnnotations(
            title="Recall long-term memory",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )


def recall_entry(
    store: MemoryReader, people: PeopleReader
) -> tuple[types.Tool, Callable[[Any], str]]:
    """``recall`` as the server lists it and runs it."""
    return recall_tool_definition(), functools.partial(recall, store, people)


def for_person_default(tool: str, arguments: Any, person: str) -> Any:
    """A call's arguments with ``person`` (MEMORY_MCP_DEFAULT_PERSON) added when the tool takes
    one and the call names nobody: Home Assistant never says who is speaking."""
    arguments = {} if arguments is None else arguments
    named = isinstance(arguments, Mapping) and arguments.get("person") is not None
    if person and tool in PERSONAL_TOOLS and isinstance(arguments, Mapping) and not named:
        return {**arguments, "person": person}
    return arguments


def recall(store: MemoryReader, people: PeopleReader, arguments: Mapping[str, Any] | None) -> str:
    """The ``<long_term_memory>`` block for the person the arguments name (the household's
    alone without one), narrowed to the facts holding every word of ``query``."""
    args = _checked(arguments or {})
    person_id: str | None = None
    unknown = ""
    if "person" in args:
        found = people.matching(args["person"])
        if len(found) > 1:  # never guessed, and none of them named
            unknown = (
                f'\n({len(found)} people of the household go by "{args["person"]}": name the '
                "person by their whole name or id. The household's memories only.)"
            )
        elif not found:
            unknown = (
                f'\n(No person "{args["person"]}" is known yet: the household\'s memories only.)'
            )
        else:
            person_id = found[0].id
    query = args.get("query", "")
    memories = store.search(query, person=person_id) if query else store.get_all()
    block = compose_prompt(for_person(memories, person_id), [], "")
    if not block:
        if query:
            return f'No current memory holds "{query}".{unknown}'
        return f"Nothing is remembered yet.{unknown}"
    return _within_cap(block.rstrip("\n")) + unknown


def _within_cap(block: str) -> str:
    """``block`` as it is when it fits the answer cap, else cut at a whole fact and closed."""
    if len(block) <= MAX_ANSWER_CHARS:
        return block
    lines = block.splitlines()[:-1]  # without the closing tag
    kept: list[str] = []
    size = len(MEMORY_CLOSE) + 200
    for line in lines:
        if size + len(line) + 1 > MAX_ANSWER_CHARS:
            break
        kept.append(line)
        size += len(line) + 1
    left = len(lines) - len(kept)
    return "\n".join(
        [*kept, MEMORY_CLOSE, f"({left} more facts left out: give a query to narrow the answer.)"]
    )


def _checked(arguments: Mapping[str, Any]) -> dict[str, str]:
    if not isinstance(arguments, Mapping):
        raise RecallInputError("The arguments must be a JSON object.")
    unknown = sorted(set(arguments) - set(RECALL_SCHEMA["properties"]))
    if unknown:
        raise RecallInputError(
            f"Unknown argument(s): {', '.join(unknown)}. {RECALL_TOOL_NAME} takes: person, query."
        )
    args: dict[str, str] = {}
    for key, value in arguments.items():
        if value is None:
            continue
        if not isinstance(value, str):
            raise RecallInputError(f'The argument "{key}" must be a string.')
        if value.strip():
            args[key] = value.strip()
    return args
