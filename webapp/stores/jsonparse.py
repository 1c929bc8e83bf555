"""Reading a store file's bytes within bounds: nesting depth, number size, lone surrogates.

Every parse is bounded; a file beyond the bounds is damaged like any other
(``StoreCorruptError`` saying where). orjson reads the usual file; the standard library reads
what orjson refuses and says where a broken file breaks.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from pathlib import Path
from typing import Any

import orjson

from .errors import StoreCorruptError
from .jsonbytes import plain_json

# Nesting deeper than this is no store file, export or tool call of ours; refusing it keeps
# every parser (and every caller, however deep its own stack) clear of RecursionError.
MAX_DEPTH = 64

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def _bracket_depth(data: bytes) -> int:
    """Deepest nesting of brackets in ``data``, strings not told apart (an upper bound)."""
    brackets = data.translate(
        None, _NOT_BRACKETS
    )  # UTF-8 never uses these bytes inside a character
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def nesting_depth(text: str | bytes, limit: int = MAX_DEPTH) -> int:
    """How deep the arrays and objects of JSON ``text`` nest, without parsing it (no recursion).

    Exact when deeper than ``limit``; otherwise an upper bound that is at most ``limit`` (the
    quick count, brackets inside strings included, settles the usual case without the
    slower string-aware count).
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    quick = _bracket_depth(data)
    if quick <= limit:
        return quick
    unquoted = _JSON_STRING.sub("", data.decode("utf-8", "replace"))
    return _bracket_depth(unquoted.encode("utf-8", "surrogatepass"))


def object_depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deep a parsed value nests (lists and dicts), counted without recursion up to ``limit + 1``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def loads_bounded(text: str, limit: int = MAX_DEPTH, *, raw: bytes | None = None) -> Any:
    """``json.loads`` within the bounds: ValueError (a JSONDecodeError for bad syntax) otherwise.

    ``raw``, the UTF-8 bytes ``text`` came from, saves encoding it again for the depth count.
    """
    depth = nesting_depth(text if raw is None else raw, limit)
    if depth > limit:
        raise ValueError(f"it is nested too deep ({depth} levels; at most {limit})")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise ValueError(f"it is nested too deep (at most {limit} levels)") from None
    except ValueError as exc:  # an integer beyond sys.get_int_max_str_digits()
        raise ValueError(f"a number in it is too long ({exc})") from None


# A JSON escape of a surrogate: the only way a lone one gets into text read from valid UTF-8.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogate_escape(raw: bytes) -> bool:
    """True when ``raw`` may hold a lone surrogate once parsed (a quick test on the bytes)."""
    return _SURROGATE_ESCAPE.search(raw) is not None


def without_lone_surrogates(value: Any) -> tuple[Any, int]:
    """``value`` (parsed JSON) with every lone surrogate in its texts and keys replaced by
    U+FFFD, and how many texts held one. A surrogate pair is one character once parsed, so
    every surrogate left is a lone one: no UTF-8 encoder (or page, or serializer) takes it.

    Lists and dicts are changed in place (``value`` must be freshly parsed); a key that would
    become equal to another gets " (2)", " (3)"... so nothing is lost.
    """
    count = 0

    def clean(text: str) -> str:
        nonlocal count
        if _LONE_SURROGATE.search(text) is None:
            return text
        count += 1
        return _LONE_SURROGATE.sub("\ufffd", text)

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return clean(item)
        if isinstance(item, list):
            item[:] = [walk(child) for child in item]
        elif isinstance(item, dict):
            if any(_LONE_SURROGATE.search(key) for key in item):
                renamed: dict[str, Any] = {}
                for key, child in item.items():
                    new_key = base = clean(key)
                    number = 2
                    while new_key in renamed or (new_key != key and new_key in item):
                        new_key, number = f"{base} ({number})", number + 1
                    renamed[new_key] = child
                item.clear()
                item.update(renamed)
            for key, child in item.items():
                item[key] = walk(child)
        return item

    return walk(value), count


def parse_bytes(raw: bytes, path: Path) -> Any:
    """Parse the bytes of ``path`` or raise StoreCorruptError saying where it breaks.

    A lone surrogate in a text (JSON can hold one as an escape, UTF-8 cannot) is replaced by
    U+FFFD, so none reaches a page, a tool's answer or a write (see ``without_lone_surrogates``).
    """
    data = parse_bytes_as_is(raw, path)
    if has_surrogate_escape(raw):
        data = without_lone_surrogates(data)[0]
    return data


def parse_bytes_as_is(raw: bytes, path: Path) -> Any:
    if not raw.strip():
        raise StoreCorruptError(path, "the file is empty", offset=0)
    if not raw.startswith(b"\xef\xbb\xbf"):
        try:
            data = orjson.loads(raw)  # (orjson's own depth limit is 1024: ours is checked)
        except orjson.JSONDecodeError:
            pass  # json says where it breaks (or reads what orjson refuses), below
        else:
            if plain_json(data):
                depth = nesting_depth(raw)
                if depth > MAX_DEPTH:
                    raise StoreCorruptError(
                        path, f"it is nested too deep ({depth} levels; at most {MAX_DEPTH})"
                    )
                return data
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StoreCorruptError(path, "it is not valid UTF-8", offset=exc.start) from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return loads_bounded(text, raw=raw)
    except json.JSONDecodeError as exc:
        raise StoreCorruptError(path, exc.msg, line=exc.lineno, column=exc.colno) from exc
    except ValueError as exc:
        raise StoreCorruptError(path, str(exc)) from exc
