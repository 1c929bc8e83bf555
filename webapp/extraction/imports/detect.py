"""Which format a file is in, from its content alone (``auto``)."""

from __future__ import annotations

from typing import Any

from . import letta, mcp_jsonl, mem0
from .base import ImportFormatError, read_json

_NOT_JSON = object()


def as_json(text: str) -> Any:
    """The JSON value of ``text`` (one more level for an agent file saved as a JSON string),
    or ``_NOT_JSON``."""
    try:
        data = read_json(text)
    except ValueError:
        return _NOT_JSON
    if isinstance(data, str) and data.lstrip()[:1] in ("{", "["):
        try:
            return read_json(data)
        except ValueError:
            return _NOT_JSON
    return data


def is_own_export(data: Any) -> bool:
    """A JSON array of memory records (this program's export), empty included."""
    return isinstance(data, list) and all(
        isinstance(record, dict) and "content" in record for record in data
    )


def detect(text: str) -> str | None:
    """The format of ``text`` (a key of FORMATS), or None when it is JSON of no known shape."""
    if text.lstrip()[:1] not in ("{", "["):
        return "text"
    data = as_json(text)
    if data is _NOT_JSON:
        return "mcp-jsonl" if mcp_jsonl.records(text) is not None else None
    if is_own_export(data):
        return "json"
    if mem0.items_of(data) is not None:
        return "mem0"
    if letta.blocks_of(data) is not None:
        return "letta"
    return None


def unknown() -> ImportFormatError:
    """The error for JSON that is none of the formats."""
    return ImportFormatError(
        "This file is JSON of a shape no importer reads: not a mem0 export, an MCP memory "
        "file, a Letta agent file or a Memory Curator export.",
        code="import_unknown_json",
    )
