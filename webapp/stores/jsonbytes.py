"""The on-disk form of a store file: encoding, and splicing the items that did not change.

JSON is encoded with orjson, whose indented UTF-8 output is exactly
``json.dumps(indent=2, ensure_ascii=False)`` for documents of text, whole numbers, booleans and
null; anything else (a float, an integer beyond 64 bits, a lone surrogate, NaN) goes through
the standard library. A write of a store that shares records with its cached parse reuses the
encoded line of every record it did not replace (``encode_spliced``); ``encodes_as`` is the
check, as fast as orjson, that no shared record was changed in place meanwhile; for a big file
it runs (``PendingCheck``) while the written bytes are fsynced, so a write costs about the raw
write of its bytes.
"""

from __future__ import annotations

import json
import re
from itertools import compress, repeat
from operator import and_, eq, is_, itemgetter, not_
from typing import Any

import orjson

_ORJSON_OPTIONS = (
    orjson.OPT_INDENT_2
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
_PLAIN_LEAVES = (str, int, bool, type(None))


def _refuse(value: Any) -> Any:
    """orjson's fallback for a type it would write differently from json: use json instead."""
    raise TypeError(type(value).__name__)


def plain_json(value: Any) -> bool:
    """True when ``value`` holds only dicts, lists, text, whole numbers, booleans and null
    (no floats, tuples or subclasses): the documents orjson writes byte for byte like json."""
    stack = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is dict:
            push(item.values())
        elif kind is list:
            push(item)
        elif kind not in _PLAIN_LEAVES:
            return False
    return True


def encode_value(value: Any) -> bytes:
    """``value`` as ``json.dumps(value, ensure_ascii=False, indent=2)`` writes it, in UTF-8."""
    if plain_json(value):
        try:
            return orjson.dumps(value, default=_refuse, option=_ORJSON_OPTIONS)
        except (orjson.JSONEncodeError, TypeError):
            pass  # a non-text key, a lone surrogate, an integer beyond 64 bits
    return json.dumps(value, ensure_ascii=False, indent=2).encode("utf-8")


def encode(data: Any) -> bytes:
    """The on-disk form: UTF-8, human-readable (indented by 2), non-ASCII kept as is."""
    return encode_value(data) + b"\n"


Fragments = dict[int, tuple[Any, bytes, str | None]]


def encode_spliced(data: Any, fragments: Fragments) -> tuple[bytes, Fragments, list[Any]]:
    """``encode(data)`` for a top-level list or dict, reusing the encoded items in ``fragments``.

    ``fragments`` maps ``id(item)`` to ``(item, its encoded line, its key)``; an entry is
    reused only for that very object (and, in a dict, under the same key): an item changed in
    place since it was encoded would be written as it was, which the caller checks for
    (``encodes_as``, see ``JsonFile.update``). ``fragments`` itself may be extended
    and returned (the caller holds the lock; readers never use it). Returns the bytes, the
    fragments of this document and the items that were encoded anew (the ones to validate).
    """
    kind = type(data)
    if kind is not list and kind is not dict:
        return encode(data), {}, [data]
    if not fragments or not data:  # nothing to reuse: one call encodes it all, faster
        return encode(data), {}, list(data.values() if kind is dict else data)
    # Item by item, but in C (map, zip, compress): a file of 10,000 records is spliced in
    # about the time it takes to copy its bytes.
    items: list[Any] = list(data.values()) if kind is dict else data
    count = len(items)
    keys: list[Any] | None = list(data) if kind is dict else None
    ids = list(map(id, items))
    hits = list(map(fragments.get, ids, repeat(_NO_FRAGMENT, count)))
    reused = map(is_, map(_FIRST, hits), items)
    if keys is not None:
        reused = map(and_, reused, map(eq, map(_THIRD, hits), keys))
    lines: list[bytes] = list(map(_SECOND, hits))
    new_items: list[Any] = []
    added: list[tuple[int, tuple[Any, bytes, str | None]]] = []
    for index in compress(range(count), map(not_, reused)):
        item = items[index]
        line = encode_value(item).replace(b"\n", b"\n  ")
        key = None
        if keys is not None:
            key = keys[index]
            if type(key) is not str:
                return encode(data), {}, items
            line = encode_value(key) + b": " + line
        lines[index] = line
        new_items.append(item)
        added.append((ids[index], (item, line, key)))
    if len(fragments) + len(added) <= 2 * count + 64:
        # Grown in place (no new entry per reused item): an entry of an item that is gone
        # keeps that object alive, so its id cannot come back for another one.
        fresh = fragments
        fresh.update(added)
    else:
        fresh = dict(
            zip(ids, zip(items, lines, keys or repeat(None, count), strict=True), strict=True)
        )
    opening, closing = (b"[\n  ", b"\n]\n") if kind is list else (b"{\n  ", b"\n}\n")
    lines[0] = opening + lines[0]
    lines[-1] = lines[-1] + closing
    return b",\n  ".join(lines), fresh, new_items


_NO_FRAGMENT: tuple[Any, bytes, str | None] = (object(), b"", None)
_FIRST, _SECOND, _THIRD = itemgetter(0), itemgetter(1), itemgetter(2)


_TOP_LEVEL_SEPARATOR = re.compile(rb",\n  (?! )")


def fragments_of(raw: bytes, data: Any) -> Fragments:
    """The encoded items of ``data`` cut out of ``raw``, the bytes it was parsed from.

    Only when ``raw`` is exactly ``encode(data)``: then every line is structure (text has its
    line breaks escaped), an item of the top level starts on a line indented by exactly two
    spaces after a line that ends with a comma, and the cut pieces are what ``encode_spliced``
    would make. Anything else gives no fragments (the next write encodes every item).
    """
    kind = type(data)
    if (kind is not list and kind is not dict) or not data or encode(data) != raw:
        return {}
    pieces = _TOP_LEVEL_SEPARATOR.split(raw[4:-3])  # between "[\n  " and "\n]\n"
    if len(pieces) != len(data):
        return {}
    if kind is list:
        return {id(item): (item, piece, None) for item, piece in zip(data, pieces, strict=True)}
    return {
        id(item): (item, piece, key)
        for (key, item), piece in zip(data.items(), pieces, strict=True)
    }


def encodes_as(data: Any, raw: bytes) -> bool:
    """True when ``raw`` is ``data`` as it is now, encoded: the check that nothing in a cached
    document was changed in place since ``raw`` was read or written, or that a spliced write
    reused no stale item. For a document orjson writes like json (text, whole numbers,
    booleans, null) it takes about as long as orjson takes to write ``data``."""
    try:
        body = orjson.dumps(data, default=_refuse, option=_ORJSON_OPTIONS)
        if len(raw) == len(body) + 1 and raw.startswith(body) and raw.endswith(b"\n"):
            return True  # (compared where it lies: no copy of a file's worth of bytes)
    except (orjson.JSONEncodeError, TypeError):
        pass  # a non-text key, a lone surrogate, an integer beyond 64 bits
    try:
        return encode(data) == raw  # a float, say, which json may write otherwise
    except (TypeError, ValueError, RecursionError):
        return False


# A document at least this big is checked while its bytes are fsynced: the fsync waits in a
# thread of its own then, which costs less than the check.
OVERLAP_BYTES = 1 << 20


class PendingCheck:
    """``encodes_as(data, payload)`` for a write that reused encoded items, asked once before
    the file is replaced (calling it). For a big payload ``overlaps`` says to run it (``run``)
    while the temp file is fsynced: orjson holds the GIL, the fsync does not, so the check
    costs the write about nothing beyond the wait for the disk."""

    def __init__(self, data: Any, payload: bytes) -> None:
        self._data, self._payload = data, payload
        self._answer: bool | None = None

    @property
    def overlaps(self) -> bool:
        return len(self._payload) >= OVERLAP_BYTES

    def run(self) -> None:
        if self._answer is None:
            self._answer = encodes_as(self._data, self._payload)

    def __call__(self) -> bool:
        self.run()
        return bool(self._answer)
