"""Memories in other systems' formats: the MCP memory server's JSONL, Markdown, mem0 JSON.

Each takes the memories as ``MemoryStore.get_all`` gives them and returns UTF-8 bytes. A
memory's ``person`` (the household's people, when the record carries one) decides whose
entity (MCP) or ``user_id`` (mem0) it belongs to; without one it is the household's.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from ..stores import CATEGORIES, Memory
from ..stores.timefmt import to_iso
from ..text import fold

EXPORT_FORMATS = ("json", "mcp-jsonl", "markdown", "mem0")
# The entity (MCP) and user (mem0) of memories of no one person; one of mcp_jsonl's
# SELF_TYPES, so importing the file gives its observations back as they are.
HOUSEHOLD = "household"
EXTENSIONS = {"json": "json", "mcp-jsonl": "jsonl", "markdown": "md", "mem0": "json"}
MIMETYPES = {
    "json": "application/json",
    "mcp-jsonl": "application/jsonl",
    "markdown": "text/markdown",
    "mem0": "application/json",
}


def _person(memory: Memory, names: Mapping[str, str] | None = None) -> str | None:
    """Whose memory it is: the display name of the person the record's optional ``person``
    field names (``names``: id → name), else the field as it is stored; None: the household's."""
    value = memory.extra.get("person")
    if not isinstance(value, str) or not value.strip():
        return None
    return (names or {}).get(value, value)


def to_mcp_jsonl(memories: Sequence[Memory], names: Mapping[str, str] | None = None) -> bytes:
    """One entity for the household and one per person, their memories as observations (no
    relations: importing the file gives back exactly the memories' texts)."""
    owners: dict[str, list[str]] = {HOUSEHOLD: []}
    for memory in memories:
        owners.setdefault(_person(memory, names) or HOUSEHOLD, []).append(memory.content)
    lines = [
        {
            "type": "entity",
            "name": name,
            "entityType": HOUSEHOLD if name == HOUSEHOLD else "person",
            "observations": observations,
        }
        for name, observations in owners.items()
        if observations or name == HOUSEHOLD
    ]
    body = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines)
    return (body + "\n").encode("utf-8")


def _markdown_line(text: str) -> str:
    """A memory as one list item: on one line, Markdown's own characters at its start escaped."""
    flat = " ".join(text.split())
    return "- " + ("\\" + flat if flat[:1] in "#>-*+|" else flat)


def to_markdown(memories: Sequence[Memory], names: Mapping[str, str] | None = None) -> bytes:
    """One heading per category (in the categories' order), one list item per memory."""
    lines = ["# Memories", ""]
    known = [*CATEGORIES, *sorted({m.category for m in memories} - set(CATEGORIES))]
    for category in known:
        chosen = [m for m in memories if m.category == category]
        if not chosen:
            continue
        lines += [f"## {category.capitalize()}", ""]
        for memory in chosen:
            person = _person(memory, names)
            lines.append(
                _markdown_line(f"{person}: {memory.content}" if person else memory.content)
            )
        lines.append("")
    return "\n".join(lines).encode("utf-8")


def to_mem0(memories: Sequence[Memory], names: Mapping[str, str] | None = None) -> bytes:
    """``{"results": [...]}`` as mem0's ``get_all`` answers, one object per memory."""
    results = [
        {
            "id": memory.id,
            "memory": memory.content,
            "hash": hashlib.md5(memory.content.encode("utf-8"), usedforsecurity=False).hexdigest(),
            "metadata": {"category": memory.category},
            "created_at": to_iso(memory.created_at),
            "updated_at": to_iso(memory.updated_at),
            "user_id": _person(memory, names) or HOUSEHOLD,
        }
        for memory in memories
    ]
    return json.dumps({"results": results}, ensure_ascii=False, indent=2).encode("utf-8")


EXPORTERS: dict[str, Callable[[Sequence[Memory], Mapping[str, str] | None], bytes]] = {
    "mcp-jsonl": to_mcp_jsonl,
    "markdown": to_markdown,
    "mem0": to_mem0,
}


def export_as(
    memories: Sequence[Memory], fmt: str, names: Mapping[str, str] | None = None
) -> bytes:
    """The memories in ``fmt`` (one of EXPORT_FORMATS but json, which the store writes); a
    person's are under their display name (``names``: id → name, ``PeopleStore.names``), or
    their id when another person has the same name, so that importing the file gives each
    their own memories back."""
    return EXPORTERS[fmt](memories, unique_names(names or {}))


def unique_names(names: Mapping[str, str]) -> dict[str, str]:
    """``names`` with a name two people share (case and width ignored) replaced by each one's
    id: an import finds a person by their id, never by a name that names two."""
    count = Counter(fold(name) for name in names.values())
    return {pid: name if count[fold(name)] == 1 else pid for pid, name in names.items()}
