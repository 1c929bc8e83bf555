"""Which format a file is in, from its content alone (``auto``)."""

from __future__ import annotations

import json
import re
from typing import Any

from ..stores import MAX_DEPTH, nesting_depth
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


# How JSON starts (an object, or an array of values); "[Work] Prefers tea" is a line of text.
_JSON_START = re.compile(r'\s*(?:\{|\[\s*(?:[{\["\]0-9-]|true|false|null|$))')


def looks_like_json(text: str) -> bool:
    """``text`` starts as JSON does (whether or not the rest is valid)."""
    return _JSON_START.match(text) is not None


def detect(text: str) -> str | None:
    """The format of ``text`` (a key of FORMATS), or None when it is JSON (or broken JSON) of
    no known shape."""
    if text.lstrip()[:1] not in ("{", "[", '"'):
        return "text"
    data = as_json(text)
    if data is _NOT_JSON:
        if mcp_jsonl.records(text) is not None:
            return "mcp-jsonl"
        return None if looks_like_json(text) else "text"
    if isinstance(data, str):
        return "text"  # one quoted line
    if mcp_jsonl.is_record(data):
        return "mcp-jsonl"  # a memory file of one line
    if is_own_export(data):
        return "json"
    if mem0.items_of(data) is not None:
        return "mem0"
    if letta.blocks_of(data) is not None:
        return "letta"
    return None


def too_deep(text: str) -> ImportFormatError | None:
    """The error for ``text`` when its lists and objects nest deeper than any file of ours
    (counted without parsing, so no parser recurses into it); None otherwise."""
    depth = nesting_depth(text)
    if depth <= MAX_DEPTH:
        return None
    return ImportFormatError(
        f"This file nests lists and objects {depth} levels deep; an import reads at most "
        f"{MAX_DEPTH}.",
        code="import_too_deep",
        depth=depth,
        most=MAX_DEPTH,
    )


def unknown(text: str) -> ImportFormatError:
    """The error for JSON that is none of the formats, nested too deep, or that is no valid
    JSON at all."""
    deep = too_deep(text)
    if deep is not None:
        return deep
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return ImportFormatError(
            f"This file looks like JSON but is not valid JSON: {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}.",
            code="import_bad_json",
            problem=exc.msg,
            line=exc.lineno,
            column=exc.colno,
        )
    except (ValueError, RecursionError):  # a number too long; nesting ``too_deep`` did not see
        pass
    return ImportFormatError(
        "This file is JSON of a shape no importer reads: not a mem0 export, an MCP memory "
        "file, a Letta agent file or a Memory Curator export.",
        code="import_unknown_json",
    )
