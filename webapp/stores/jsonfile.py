"""One JSON file shared by several processes: locked read-modify-write, atomic replace, cached reads.

How a write works (ARCHITECTURE.md, "One write, from a click to the disk"): take the sidecar ``<file>.lock`` and make sure the lock held
is the file at that path (``locking.SidecarLock``), read the file afresh, change the data,
validate it, write a temp file in the same folder (write, fsync); then, under a short lock on
the folder, verify the data file is still the one read (a program that does not know the lock,
or a writer let in by a deleted lock file, may have replaced it: then read again and re-apply),
append the history entry (written ahead), keep the previous version as ``<file>.bak``,
``os.replace``; fsync the folder; release the lock. Readers never take the lock and never
re-parse a file whose bytes have not changed.

Speed without changing a byte on disk: JSON is encoded and decoded with orjson, whose
indented UTF-8 output is exactly ``json.dumps(indent=2, ensure_ascii=False)`` for documents of
text, whole numbers, booleans and null; anything else (a float, an integer beyond 64 bits, a
lone surrogate, NaN) goes through the standard library as before. Under the lock the file is
read afresh and its bytes compared with the cached parse, which is reused only when they are
identical; a store that says how to copy its document (``copy=``) then also reuses the encoded
form of every item it did not replace, so a write encodes only what changed.

Every parse is bounded (nesting depth, number size); a file beyond the bounds is damaged like
any other. Records a store cannot use (``item_problem``) are set aside, bytes intact, in
``<file>.rejected-<stamp>`` and the usable ones kept; a file with no usable record left is
damaged. ``repair`` starts from ``<file>.bak`` and replays the history log's newer entries.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from glob import escape as glob_escape
from itertools import accumulate, compress, repeat
from operator import and_, eq, is_, itemgetter, not_
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

import orjson

from ..settings import DEFAULTS
from .errors import StoreBusyError, StoreCorruptError, StoreSymlinkError, StoreWriteError
from .locking import Gated, SidecarLock, commit_lock

T = TypeVar("T")
Signature = tuple[int, int, int]

log = logging.getLogger(__name__)

# A file modified this recently may be changed again within the same mtime tick (coarse
# clocks, reused inodes) without its (inode, mtime_ns, size) changing, so its signature
# alone is not trusted: the bytes are re-read and compared instead ("racy git").
RACY_NS = 2_000_000_000
DEFAULT_MODE = 0o644
# Nesting deeper than this is no store file, export or tool call of ours; refusing it keeps
# every parser (and every caller, however deep its own stack) clear of RecursionError.
MAX_DEPTH = 64
# How often a write re-reads and re-applies its change when another program keeps replacing
# the file between our read and our replace, before it gives up with StoreBusyError.
REAPPLY_LIMIT = 10
EXCLUSIVE_AFTER = 2
# Replaying history onto the backup starts this long before the backup was written: entries
# of that moment are applied again, which changes nothing when they are already in it.
REPLAY_SLACK_NS = RACY_NS

Journal = Callable[[Any], Callable[[], None] | None]
Replay = Callable[[Any, int | None], int]
# What a store's records hold that is kept but cannot be read as a time: (record, problem).
TimeCheck = Callable[[Any], list[tuple[str, str]]]


class Unchanged(Generic[T]):
    """Returned by a mutation that decided not to change anything: no write happens."""

    def __init__(self, value: T) -> None:
        self.value = value


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
    reused only for that very object (and, in a dict, under the same key), so the caller must
    never change an item of a cached document in place. ``fragments`` itself may be extended
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


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_BRACKET = re.compile(r"[\[\]{}]")


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
    data = _parse_bytes(raw, path)
    if has_surrogate_escape(raw):
        data = without_lone_surrogates(data)[0]
    return data


def _parse_bytes(raw: bytes, path: Path) -> Any:
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


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, payload: bytes) -> None:
    """os.write until every byte is written (a short write is not an error)."""
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _unlink_quietly(path: str | os.PathLike[str]) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _mode_of(path: Path) -> int:
    """Permissions for the replacement: the current file's, else rw-r--r-- (mkstemp gives 0600)."""
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        return DEFAULT_MODE


def write_temp(path: Path, payload: bytes) -> str:
    """Write ``payload`` to a new temp file beside ``path`` (mode of ``path``), fsync'd; its name.

    On failure no temp file is left and StoreWriteError (an OSError with the errno) is raised.
    """
    mode = _mode_of(path)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise StoreWriteError(path, exc) from exc
    try:
        try:
            os.fchmod(fd, mode)
            _write_all(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException as exc:
        _unlink_quietly(tmp_name)
        if isinstance(exc, OSError):
            raise StoreWriteError(path, exc) from exc
        raise
    return tmp_name


def replace_with(tmp_name: str, path: Path, *, backup: Path | None = None) -> None:
    """Keep the current file as ``backup`` (best effort) and move the temp file over ``path``.

    The backup is the current file's inode, which the replace takes away from ``path``: the
    two never share an inode afterwards (a program rewriting the file in place would change
    the backup with it). When the replace fails, the backup is made a copy instead.
    """
    try:
        if backup is not None:
            _keep_backup(path, backup)
        os.replace(tmp_name, path)
    except OSError as exc:
        if backup is not None:
            _unshare_backup(path, backup)
        raise StoreWriteError(path, exc) from exc


def sync_folder_after_replace(path: Path) -> None:
    """fsync the folder of a file just replaced; a failure is logged, not raised."""
    try:
        fsync_dir(path.parent)
    except OSError as exc:
        # The new content is in place and visible; failing the call now would make the
        # caller retry a change that happened. Only durability across power loss is in doubt.
        log.warning("Saved %s but could not fsync its folder: %s", path, exc)


def write_atomic(path: Path, payload: bytes, *, backup: Path | None = None) -> None:
    """Replace ``path`` with ``payload`` so that a reader or a crash sees old or new, never half.

    On any failure the original file is untouched, no temp file is left and StoreWriteError
    (an OSError with the original errno) is raised.
    """
    path = Path(path)
    tmp_name = write_temp(path, payload)
    try:
        replace_with(tmp_name, path, backup=backup)
    finally:
        _unlink_quietly(tmp_name)
    sync_folder_after_replace(path)


def _keep_backup(path: Path, backup: Path) -> None:
    """Hard-link the current (good) file as the backup, just before it is replaced; a
    failure here never blocks a write."""
    link_tmp = backup.with_name(backup.name + ".tmp")
    try:
        _unlink_quietly(link_tmp)
        os.link(path, link_tmp)
        os.replace(link_tmp, backup)
    except OSError:
        pass
    finally:
        # Renaming a link over another link of the same file does nothing: remove it.
        _unlink_quietly(link_tmp)


def _copy_backup(path: Path, backup: Path) -> None:
    """Make the backup a copy of the current file: its own inode, whatever later happens to
    the file. When that fails the backup is removed, so it never holds what the file no
    longer does (a purged memory)."""
    try:
        write_atomic(backup, path.read_bytes())
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("Could not copy %s to %s (%s); removed the backup instead", path, backup, exc)
        _unlink_quietly(backup)


def _unshare_backup(path: Path, backup: Path) -> None:
    """When the backup is the live file itself (its replace failed), make it a copy."""
    try:
        shared = os.path.samefile(path, backup)
    except OSError:
        return
    if shared:
        _copy_backup(path, backup)


def utc_stamp() -> str:
    """A UTC timestamp safe in a file name, e.g. 20261122T015444123456Z."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")


def temp_files_of(path: Path) -> list[Path]:
    """Temp files ``write_atomic`` makes for ``path`` (left behind only by a killed writer)."""
    pattern = re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}\.tmp")
    try:
        names = os.listdir(path.parent)
    except FileNotFoundError:
        return []
    return [path.parent / name for name in names if pattern.fullmatch(name)]


@dataclass(frozen=True)
class SetAside:
    """A file of records set aside because they could not be used, and how many it holds
    (None when it cannot be read as a JSON array)."""

    path: Path
    records: int | None


def _record_count(path: Path) -> int | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    return len(data) if isinstance(data, list) else None


def free_path(path: Path, kind: str) -> Path:
    """``<name>.<kind>-<UTC timestamp>`` beside ``path``, never an existing file."""
    base = f"{path.name}.{kind}-{utc_stamp()}"
    candidate, n = path.with_name(base), 1
    while candidate.exists():
        candidate, n = path.with_name(f"{base}-{n}"), n + 1
    return candidate


_WS = re.compile(r"[ \t\n\r]*")


def array_item_texts(text: str) -> list[str]:
    """The exact text of each item of a JSON array (``text`` is known to parse)."""
    decoder = json.JSONDecoder()
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    if not text.startswith("[", pos):
        return []
    pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
    items: list[str] = []
    while not text.startswith("]", pos):
        _, end = decoder.raw_decode(text, pos)
        items.append(text[pos:end])
        pos = _WS.match(text, end).end()  # type: ignore[union-attr]
        if text.startswith(",", pos):
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
    return items


@dataclass(frozen=True)
class Rejected:
    """Records of a store file that the store cannot use: their text as on disk and why."""

    texts: tuple[str, ...]
    reasons: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.texts)


@dataclass
class _Read:
    """The file as read under the lock: its signature (None when missing) and usable data."""

    sig: Signature | None
    data: Any
    rejected: Rejected | None = None
    fragments: Fragments = field(default_factory=dict)  # encoded items, see encode_spliced


@dataclass
class RepairReport:
    """What ``repair`` did to one file."""

    path: Path
    quarantine: Path | None = None  # the whole damaged file, set aside
    source: str = ""  # what the file started again from
    replayed: int = 0  # records brought back from the history log
    rejected: int = 0  # unusable records set aside
    rejected_path: Path | None = None
    surrogates: int = 0  # texts whose lone surrogates were replaced by U+FFFD
    # Records kept whose times cannot be read (they count as unknown): (record, what is wrong).
    unreadable_times: list[tuple[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return (
            self.quarantine is not None or self.rejected_path is not None or bool(self.surrogates)
        )

    def describe(self) -> str:
        """One line for ``memory-curator repair``."""
        if self.quarantine is not None:
            line = f"{self.path}: damaged; moved to {self.quarantine}, started from {self.source}"
            if self.replayed:
                line += f"; replayed {_plural(self.replayed, 'change')} from the history log"
        elif self.rejected_path is not None:
            line = (
                f"{self.path}: {_plural(self.rejected, 'unusable record')} moved to "
                f"{self.rejected_path}; the usable records were kept"
            )
        else:
            line = f"{self.path}: ok"
        if self.surrogates:
            line += (
                f"; {_plural(self.surrogates, 'text')} held a lone surrogate (half of a "
                "character, which UTF-8 cannot hold), now written as U+FFFD"
            )
        return line + self._describe_times()

    def _describe_times(self) -> str:
        if not self.unreadable_times:
            return ""
        records = list(dict.fromkeys(record for record, _ in self.unreadable_times))
        have = "has" if len(records) == 1 else "have"
        shown = "; ".join(f"{record}: {problem}" for record, problem in self.unreadable_times[:5])
        more = len(self.unreadable_times) - 5
        if more > 0:
            shown += f"; and {_plural(more, 'more time')}"
        return (
            f"; {_plural(len(records), 'record')} {have} a time that cannot be read (treated as "
            f"unknown, left as it is): {shown}"
        )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


@dataclass
class _Snapshot:
    """One parse of the file: its bytes, the result (or the error) and views built from it."""

    sig: Signature
    raw: bytes
    data: Any
    error: StoreCorruptError | None
    trusted: bool
    views: dict[str, Any] = field(default_factory=dict)
    fragments: Fragments = field(default_factory=dict)  # encoded items, see encode_spliced
    rejected: Rejected | None = None  # records of ``raw`` left out of ``data``


class _FileChanged(Exception):
    """The data file is no longer the one read under the lock; read again and re-apply."""


class JsonFile(Gated):
    """A JSON document on disk that several processes read and change safely.

    ``validate`` checks the document's shape (a problem makes the file damaged);
    ``item_problem`` checks one item of an array document (an unusable item is set aside
    and the rest kept); ``replay`` (data, since_ns) re-applies the history log's entries
    newer than ``since_ns`` (all when None) to ``data`` in place and returns how many
    records it changed, for ``repair``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        default: Callable[[], Any],
        validate: Callable[[Any], str | None] | None = None,
        item_problem: Callable[[Any], str | None] | None = None,
        replay: Replay | None = None,
        lock_timeout: float = DEFAULTS["lock_timeout"],
        copy: Callable[[Any], Any] | None = None,
        validate_item: Callable[[Any], str | None] | None = None,
        unreadable_times: TimeCheck | None = None,
    ) -> None:
        """``validate`` checks a whole document (each parse and, without ``validate_item``,
        each write). ``copy`` makes the mutable document ``update`` hands to a mutation from
        the cached parse: every part the store's mutations change in place must be a new object
        in it, the rest may be shared (and is then never re-encoded). ``validate_item`` checks
        one item of the top-level list or dict; with it a write validates (and bounds the depth
        of) only the new items, so it must refuse whatever ``item_problem`` would. Without ``copy`` each write parses the file's bytes again, as before.
        ``unreadable_times`` lists the times in a document that cannot be read (kept, read as
        unknown), for ``repair`` to report."""
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.backup_path = self.path.with_name(self.path.name + ".bak")
        self._default = default
        self._validate = validate
        self._validate_item = validate_item
        self._copy = copy
        self._item_problem = item_problem
        self.replay = replay
        self._unreadable_times = unreadable_times
        self.lock_timeout = lock_timeout
        self._lock = SidecarLock(self.lock_path, timeout=lock_timeout, busy_path=self.path)
        self._cache_guard = threading.Lock()
        self._snapshot: _Snapshot | None = None
        self._set_aside_cache: tuple[int, list[SetAside]] | None = None

    # ----------------------------------------------------------------- reading
    def signature(self) -> Signature | None:
        """(inode, mtime_ns, size) of the file, or None when it does not exist."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def read(self) -> Any:
        """The parsed document, shared and cached: callers must not mutate it."""
        snapshot = self._load()
        return self._default() if snapshot is None else snapshot.data

    def view(self, key: str, build: Callable[[Any], T]) -> T:
        """``build(document)`` cached until the file changes (e.g. a list of Memory objects)."""
        snapshot = self._load()
        if snapshot is None:
            return build(self._default())
        with self._cache_guard:
            if key in snapshot.views:
                return cast(T, snapshot.views[key])
        value = build(snapshot.data)
        with self._cache_guard:
            return cast(T, snapshot.views.setdefault(key, value))

    def set_aside(self) -> list[SetAside]:
        """The files of unusable records set aside beside this one (``<file>.rejected-*``),
        oldest first, with how many records each holds. Cached until the folder changes:
        a page asks on every view, and there is almost never one."""
        folder = self.path.parent
        try:
            stamp = os.stat(folder).st_mtime_ns
        except OSError:
            return []
        cached = self._set_aside_cache
        if cached is not None and cached[0] == stamp:
            return cached[1]
        found = [
            SetAside(path, _record_count(path))
            for path in sorted(folder.glob(glob_escape(self.path.name) + ".rejected-*"))
            if path.is_file()
        ]
        self._set_aside_cache = (stamp, found)
        return found

    def status(self) -> str:
        """'ok', 'missing', 'corrupt' or 'unreadable' (permissions, a folder in its place)."""
        if not self.path.exists():
            return "missing"
        try:
            self.read()
        except StoreCorruptError:
            return "corrupt"
        except OSError:
            return "unreadable"
        return "ok"

    def _load(self) -> _Snapshot | None:
        """The current snapshot, re-read only when the file may have changed; None if missing."""
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - only a missing file is caught here
        except FileNotFoundError:
            return None
        with handle:
            st = os.fstat(handle.fileno())
            sig = (st.st_ino, st.st_mtime_ns, st.st_size)
            with self._cache_guard:
                previous = self._snapshot
            if previous is not None and previous.sig == sig and previous.trusted:
                return _checked(previous)
            raw = handle.read()
        trusted = time.time_ns() - st.st_mtime_ns > RACY_NS
        if previous is not None and previous.raw == raw:
            snapshot = _Snapshot(
                sig,
                raw,
                previous.data,
                previous.error,
                trusted,
                previous.views,
                previous.fragments,
                previous.rejected,
            )
        else:
            try:
                data, rejected = self._parse_split(raw)
                snapshot = _Snapshot(sig, raw, data, None, trusted, rejected=rejected)
            except StoreCorruptError as exc:
                snapshot = _Snapshot(sig, raw, None, exc, trusted)
        with self._cache_guard:
            self._snapshot = snapshot
        return _checked(snapshot)

    def _parse(self, raw: bytes, path: Path | None = None) -> Any:
        """The usable document in ``raw`` (unusable records left out); StoreCorruptError."""
        return self._parse_split(raw, path)[0]

    def _parse_split(self, raw: bytes, path: Path | None = None) -> tuple[Any, Rejected | None]:
        """(usable document, unusable records or None); StoreCorruptError when nothing is usable."""
        path = self.path if path is None else path
        data = parse_bytes(raw, path)
        problem = self._validate(data) if self._validate else None
        if problem:
            raise StoreCorruptError(path, problem)
        if self._item_problem is None or not isinstance(data, list):
            return data, None
        problems = [self._item_problem(item) for item in data]
        bad = [i for i, p in enumerate(problems) if p]
        if not bad:
            return data, None
        if len(bad) == len(data):
            raise StoreCorruptError(path, f"item {bad[0]} {problems[bad[0]]}")
        texts = array_item_texts(raw.decode("utf-8").lstrip("\ufeff"))
        rejected = Rejected(
            tuple(texts[i] for i in bad), tuple(f"item {i} {problems[i]}" for i in bad)
        )
        return [item for i, item in enumerate(data) if not problems[i]], rejected

    def _read_under_lock(self) -> _Read:
        """Under the lock: the current document as a new, mutable object, its signature, the
        records set aside and the encoded items it shares with the cached parse.

        The file's bytes are always read; the cached parse stands in for parsing them only when
        they are identical to the bytes it was parsed from (whatever the timestamps say).
        """
        self._refuse_symlink()
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - only a missing file is caught here
        except FileNotFoundError:
            return _Read(None, self._default())
        with handle:
            st = os.fstat(handle.fileno())
            raw = handle.read()
        sig = (st.st_ino, st.st_mtime_ns, st.st_size)
        with self._cache_guard:
            cached = self._snapshot
        if cached is not None and cached.error is None and cached.raw == raw:
            if self._copy is None:
                # Parsed (bounded) again for a mutable copy; validated when it was cached.
                data = parse_bytes(raw, self.path)
                if cached.rejected is None:
                    return _Read(sig, data)
                return _Read(sig, *self._parse_split(raw))
            if not cached.fragments and cached.rejected is None:
                # The second write in a row: worth cutting them now.
                cached.fragments = fragments_of(raw, cached.data)
            return _Read(sig, self._copy(cached.data), cached.rejected, cached.fragments)
        data, rejected = self._parse_split(raw)
        if self._copy is None:
            return _Read(sig, data, rejected)
        trusted = time.time_ns() - st.st_mtime_ns > RACY_NS
        # Fragments are cut from these bytes only if this process writes again without
        # another writer in between (above): when writers take turns, one encode is cheaper.
        with self._cache_guard:
            self._snapshot = _Snapshot(sig, raw, data, None, trusted, rejected=rejected)
        return _Read(sig, self._copy(data), rejected)

    def _refuse_symlink(self) -> None:
        """A link would be replaced by a plain file on the first write, splitting the store."""
        if self.path.is_symlink():
            raise StoreSymlinkError(self.path, Path(os.path.realpath(self.path)))

    # ----------------------------------------------------------------- writing
    def locked(self) -> SidecarLock:
        """The sidecar lock, bounded: raises StoreBusyError instead of hanging."""
        return self._lock

    def update(self, mutate: Callable[[Any], Any], journal: Journal | None = None) -> Any:
        """Apply ``mutate`` to a fresh copy of the document under the lock and save it.

        ``mutate`` changes the document in place and returns a result; returning
        ``Unchanged(result)`` skips the write. ``journal(result)`` (the history log) runs
        under the lock *before* the file is replaced, so no change can land without its
        entry — a deletion stays restorable even when the disk fills up right after it;
        it returns an undo, called when the write then fails. When the file was replaced
        by someone else after it was read, ``mutate`` runs again on the new content.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.locked():
            for attempt in range(REAPPLY_LIMIT):
                # After two lost races the whole read-change-write runs under the commit
                # lock, which every writer of this folder must pass to replace a file.
                alone = attempt >= EXCLUSIVE_AFTER
                with commit_lock(self.path.parent) if alone else contextlib.nullcontext():
                    read = self._read_under_lock()
                    result = mutate(read.data)
                    if isinstance(result, Unchanged):
                        return result.value
                    try:
                        payload, fresh = self.encode_valid(read.data, read.fragments)
                        sig = self._save(read, payload, journal, result, commit_held=alone)
                    except _FileChanged:
                        log.info("%s was replaced meanwhile; applying the change again", self.path)
                        continue
                    if self._copy is not None:
                        self._remember(read.data, payload, fresh, sig)
                return result
        raise StoreBusyError(
            self.path,
            self.lock_timeout,
            replaced=True,
        )

    def remove_key(self, key: str) -> bool:
        """Delete ``key`` from an object document; False, writing nothing, when it is absent."""

        def mutate(data: dict[str, Any]) -> Any:
            if key not in data:
                return Unchanged(False)
            del data[key]
            return True

        return bool(self.update(mutate))

    def encode_valid(
        self, data: Any, fragments: Fragments | None = None
    ) -> tuple[bytes, Fragments]:
        """The on-disk bytes of ``data`` and their fragments; ValueError when it is not valid.

        ``fragments`` are the encoded items ``data`` shares with the cached parse (from
        ``update``); only the other items are encoded and, with ``validate_item``, validated
        and measured (a shared item was checked when it was parsed or first written).
        """
        try:
            payload, fresh, new_items = encode_spliced(data, fragments or {})
        except RecursionError:
            raise ValueError(
                f"Refusing to write {self.path}: it would be nested deeper than {MAX_DEPTH} levels"
            ) from None
        if self._validate_item is not None and type(data) in (list, dict):
            problem = next(filter(None, map(self._validate_item, new_items)), None)
            inner = MAX_DEPTH - 1  # the items sit inside the top-level list or dict
            too_deep = any(object_depth(item, inner) > inner for item in new_items)
        else:
            problem = self._validate(data) if self._validate else None
            if not problem and self._item_problem is not None and isinstance(data, list):
                problem = next(
                    (f"item {i} {p}" for i, p in enumerate(map(self._item_problem, data)) if p),
                    None,
                )
            too_deep = object_depth(data) > MAX_DEPTH
        if not problem and too_deep:
            problem = f"it would be nested deeper than {MAX_DEPTH} levels"
        if problem:
            raise ValueError(f"Refusing to write {self.path}: {problem}")
        return payload, fresh

    def _save(
        self,
        read: _Read,
        payload: bytes,
        journal: Journal | None,
        result: Any,
        *,
        commit_held: bool = False,
    ) -> Signature | None:
        """Write ``payload`` in place of the file read as ``read``; _FileChanged if it changed.

        Returns the signature of the file just written (None if it could not be taken).
        """
        tmp_name = write_temp(self.path, payload)
        try:
            if not commit_held:  # (retaking the lock under the commit lock could deadlock)
                self.verify_lock()
            with contextlib.nullcontext() if commit_held else commit_lock(self.path.parent):
                self.verify_unchanged(read)
                if read.rejected:
                    self._set_aside(read.rejected)
                undo = journal(result) if journal is not None else None
                try:
                    replace_with(tmp_name, self.path, backup=self.backup_path if read.sig else None)
                except BaseException:
                    if undo is not None:
                        undo()
                    raise
                sig = self.signature() if self._copy is not None else None
        finally:
            _unlink_quietly(tmp_name)
        sync_folder_after_replace(self.path)
        return sig

    def verify_lock(self) -> None:
        """Make sure the lock held is still the file at its path; if it was deleted, take it again.

        Whoever took the new lock file meanwhile may have saved: ``verify_unchanged`` sees that.
        """
        if not self._lock.still_held():
            log.info("The lock file of %s was deleted while held; taking it again", self.path)
            self._lock.retake()

    def verify_unchanged(self, read: _Read) -> None:
        """Raise _FileChanged when the data file is not the one ``read`` describes."""
        if self.signature() != read.sig or self.path.is_symlink():
            raise _FileChanged

    def _set_aside(self, rejected: Rejected) -> Path:
        """Write the unusable records (their text as it was) to ``<file>.rejected-<stamp>``."""
        target = free_path(self.path, "rejected")
        body = "[\n" + ",\n".join(rejected.texts) + "\n]\n"
        write_atomic(target, body.encode("utf-8"))
        log.warning(
            "%s had %s; set aside in %s (%s). The usable records were kept.",
            self.path,
            _plural(len(rejected), "unusable record"),
            target,
            "; ".join(rejected.reasons[:5]),
        )
        return target

    def write_locked(self, data: Any, fragments: Fragments | None = None) -> None:
        """Validate and atomically write ``data``; the caller holds the lock.

        ``fragments`` are the encoded items ``data`` shares with the cached parse; only the
        other items are encoded and, with ``validate_item``, validated.
        """
        self._refuse_symlink()
        payload, fresh = self.encode_valid(data, fragments)
        backup = self.backup_path if self.path.exists() else None
        write_atomic(self.path, payload, backup=backup)
        if self._copy is not None:
            self._remember(data, payload, fresh, self.signature())

    def _remember(
        self, data: Any, payload: bytes, fragments: Fragments, sig: Signature | None
    ) -> None:
        """Cache what was just written, so neither readers nor the next write parse it again.

        Never trusted by its signature alone: readers compare the bytes until it is older.
        """
        if sig is None:
            return
        with self._cache_guard:
            self._snapshot = _Snapshot(sig, payload, data, None, False, {}, fragments)

    def refresh_backup(self) -> None:
        """Make ``<file>.bak`` a copy of the current file, so a purged record does not live on
        in it (a copy, never a link: the backup must survive the file being rewritten in place).

        The caller holds the lock.
        """
        if self.path.exists():
            _copy_backup(self.path, self.backup_path)

    def ensure(self) -> None:
        """Create the folder and, if missing, the file with the default document; check it parses.

        Also removes temp files a killed writer left behind (safe: temps exist only under the lock).
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists() or temp_files_of(self.path):
            with self.locked():
                self._remove_stale_temps()
                if not self.path.exists() and not self.path.is_symlink():
                    write_atomic(self.path, encode(self._default()))
        self.read()

    def _remove_stale_temps(self) -> None:
        """Under the lock no writer is running, so any temp file of ours is a dead writer's."""
        for stale in temp_files_of(self.path):
            _unlink_quietly(stale)

    def repair(self) -> Path | None:
        """Set a damaged file aside (bytes intact), start from the backup and replay history.

        Returns the quarantine path, or None when the whole file was not set aside.
        """
        return self.repair_report().quarantine

    def repair_report(self) -> RepairReport:
        """Repair the file and say what was done (see ``RepairReport``).

        A file with a few unusable records keeps the usable ones (the others are set aside);
        a damaged file is set aside whole, and the store starts again from ``<file>.bak``
        (else empty) with the history log's newer entries replayed on top.
        """
        report = RepairReport(self.path)
        with self.locked():
            self._refuse_symlink()
            try:
                read = self._read_under_lock()
            except StoreCorruptError:
                pass
            else:
                report.surrogates = self._lone_surrogates_on_disk()
                if read.rejected:
                    report.rejected = len(read.rejected)
                    report.rejected_path = self._set_aside(read.rejected)
                if read.rejected or report.surrogates:
                    self.write_locked(read.data)  # (read with U+FFFD for each lone surrogate)
                self._note_times(report, read.data)
                return report
            self._remove_stale_temps()
            report.quarantine = free_path(self.path, "corrupt")
            try:
                # A link keeps a file at the path at every moment; replace is the fallback
                # for filesystems without hard links.
                os.link(self.path, report.quarantine)
            except OSError:
                os.replace(self.path, report.quarantine)
            fsync_dir(self.path.parent)
            restored, since = self._default(), None
            report.source = "an empty store"
            try:
                restored = self._parse(self.backup_path.read_bytes(), self.backup_path)
                since = os.stat(self.backup_path).st_mtime_ns - REPLAY_SLACK_NS
                report.source = "the last good backup"
            except (OSError, StoreCorruptError):
                pass
            if self.replay is not None:
                report.replayed = self.replay(restored, since)
            write_atomic(self.path, self.encode_valid(restored)[0])
            self._note_times(report, restored)
            return report

    def _lone_surrogates_on_disk(self) -> int:
        """How many texts of the file (as it is on disk) hold a lone surrogate."""
        try:
            raw = self.path.read_bytes()
            return (
                without_lone_surrogates(_parse_bytes(raw, self.path))[1]
                if has_surrogate_escape(raw)
                else 0
            )
        except (OSError, StoreCorruptError):
            return 0

    def _note_times(self, report: RepairReport, data: Any) -> None:
        if self._unreadable_times is not None:
            report.unreadable_times = self._unreadable_times(data)


def _checked(snapshot: _Snapshot) -> _Snapshot:
    """The snapshot, or a fresh copy of its error (re-raising one instance grows its traceback)."""
    error = snapshot.error
    if error is not None:
        raise StoreCorruptError(
            error.path, error.reason, line=error.line, column=error.column, offset=error.offset
        )
    return snapshot
