"""Skill documents: one JSON file per skill or reference in the skills folder, shared by processes.

A *skill* is an instruction for a kind of task (e.g. writing classical Chinese poems) and a
*reference* is a file that skill relies on (``references/qijue.md``). Each lives in its own
JSON file in ``Settings.skills_dir`` (``data/skills/``; ``/data/skills/`` in the add-on):

- ``{skill}-skill-{hash8}.json`` or ``{skill}-reference-{reference}-{hash8}.json`` where
  ``skill`` and ``reference`` are kebab-case (see ``kebab_case``) and ``hash8`` is the first 8 hex
  digits of the SHA-256 of ``content``;
- deprecated documents move to ``.deprecated/`` inside the folder;
- every write takes ``<folder>/.lock`` and replaces files atomically; readers never lock and
  re-read a file only when its (inode, mtime_ns, size) or the folder changed;
- the JSON shape is ``webapp/schemas/skill-document.schema.json``; a file that breaks it is
  skipped by listings and reported by ``problems()``, never overwritten.

At most one live document exists per *key* (kebab skill name, type, kebab reference name): a
second one is refused with ``SkillDocumentConflictError``. Names that differ only by case or
width (``Poem-Writer``, ``poem-writer``, ``ＰＯＥＭ-writer``) have the same key and file prefix,
so they can never collide on a case-insensitive file system.

Runtime memories are skill/reference memories a host program keeps in process (the same
fields, as dicts or ``SkillDocument``). ``merge_memories`` and ``SkillDocumentStore.search``
combine them with the documents; pass them per call (``search(q, runtime=...)``) or once to
the constructor (``SkillDocumentStore(runtime=registry.all)``, a list or a zero-argument callable
read at every call).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import re
import stat
import tempfile
import threading
import time
import unicodedata
import uuid
import zipfile
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO, Callable, Iterable, Literal, Mapping, Union

import filelock
import frontmatter
import jsonschema
import yaml
from rapidfuzz import fuzz

from .errors import StoreBusyError, StoreCorruptError, StoreError
from .jsonfile import RACY_NS, encode, fsync_dir, parse_bytes, write_atomic
from .timefmt import now_ms, parse_ts

TYPES = ("skill", "reference")
DEPRECATED_DIR = ".deprecated"
LOCK_NAME = ".lock"
MAX_NAME_BYTES = 100            # per kebab part: keeps a full file name under 255 bytes
MAX_FILE_BYTES = 4_000_000      # a document file larger than this is reported, not read
MAX_SOURCE_BYTES = 1_000_000    # one SKILL.md or reference file in an import
MAX_REFERENCES = 500
MAX_ZIP_MEMBERS = 1_000
MAX_ZIP_BYTES = 20_000_000      # total unpacked size of an uploaded zip
SNIPPET_CHARS = 200
MAX_QUERY_CHARS = 500

Origin = Literal["document", "runtime"]
RuntimeSource = Union[Iterable[Any], Callable[[], Iterable[Any]], None]
_CONTENT_FIELDS = ("type", "skill", "skillDescription", "reference", "snippet", "content", "meta")
_KNOWN_KEYS = {"id", "createdAt", "updatedAt", *_CONTENT_FIELDS}


# --------------------------------------------------------------------------- errors
class SkillDocumentError(StoreError):
    """Base class for skill document problems a person can act on."""


class UnsafeNameError(SkillDocumentError, ValueError):
    """A skill or reference name cannot be made into a safe file name."""


class InvalidSkillDocumentError(SkillDocumentError, ValueError):
    """A document breaks the schema; ``reasons`` lists every problem found."""

    def __init__(self, reasons: list[str], what: str = "The skill document") -> None:
        self.reasons = reasons
        super().__init__(f"{what} is not valid: " + "; ".join(reasons))


class SkillDocumentConflictError(SkillDocumentError):
    """Saving or moving would clash with another document (same key or same file name)."""


class SkillImportError(SkillDocumentError, ValueError):
    """An Agent Skills folder or zip cannot be imported; nothing was saved."""


# --------------------------------------------------------------------------- names
def _reject_hostile(name: Any, what: str) -> str:
    """The name as text, or UnsafeNameError for what can never be a safe file name."""
    if not isinstance(name, str):
        raise UnsafeNameError(f"The {what} must be text, got {type(name).__name__}.")
    if not name.strip():
        raise UnsafeNameError(f"The {what} is empty.")
    if len(name) > 4 * MAX_NAME_BYTES:
        raise UnsafeNameError(f"The {what} is too long ({len(name)} characters).")
    for ch in name:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            raise UnsafeNameError(
                f"The {what} {name!r} contains the control or invisible character U+{ord(ch):04X}."
            )
    return name


def kebab_case(name: Any, what: str = "skill name") -> str:
    """The kebab-case file-name form of a name, or UnsafeNameError.

    NFKC-normalised and case-folded; camelCase is split; every run of characters that is not a
    Unicode letter, mark or digit becomes one ``-``, so Chinese and other scripts are kept as is
    (``詩人 Helper`` → ``詩人-helper``). Path separators, ``..``, control characters, empty
    results and parts over 100 UTF-8 bytes are refused rather than rewritten.
    """
    name = _reject_hostile(name, what)
    if "/" in name or "\\" in name:
        raise UnsafeNameError(f"The {what} {name!r} contains a path separator.")
    if ".." in name:
        raise UnsafeNameError(f"The {what} {name!r} contains '..'.")
    text = unicodedata.normalize("NFKC", name)
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", text).casefold()
    kept = "".join(ch if unicodedata.category(ch)[0] in "LMN" else "-" for ch in text)
    slug = re.sub(r"-{2,}", "-", kept).strip("-")
    if not slug:
        raise UnsafeNameError(f"The {what} {name!r} has no letters or digits.")
    if len(slug.encode("utf-8")) > MAX_NAME_BYTES:
        raise UnsafeNameError(
            f"The {what} is too long for a file name ({len(slug.encode('utf-8'))} bytes in "
            f"kebab-case; at most {MAX_NAME_BYTES})."
        )
    return slug


def reference_slug(reference: Any) -> str:
    """The kebab-case name of a reference path: ``references/forms/Qijue.md`` → ``forms-qijue``."""
    reference = _reject_hostile(reference, "reference path")
    if "\\" in reference or reference.startswith("/") or re.match(r"^[A-Za-z]:", reference):
        raise UnsafeNameError(f"The reference path {reference!r} must be relative, with '/'.")
    parts = reference.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise UnsafeNameError(f"The reference path {reference!r} has an empty, '.' or '..' part.")
    if parts[0] == "references" and len(parts) > 1:
        parts = parts[1:]
    parts[-1] = PurePosixPath(parts[-1]).stem or parts[-1]
    slug = kebab_case("-".join(parts), "reference name")
    return slug


def content_hash(content: str) -> str:
    """First 8 hex digits of the SHA-256 of the content (UTF-8): de-duplicates file names."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()[:8]


def document_file_name(record: Mapping[str, Any]) -> str:
    """``{skill}-skill-{hash}.json`` or ``{skill}-reference-{reference}-{hash}.json``."""
    skill = kebab_case(record.get("skill"))
    digest = content_hash(str(record.get("content", "")))
    if record.get("type") == "reference":
        return f"{skill}-reference-{reference_slug(record.get('reference'))}-{digest}.json"
    return f"{skill}-skill-{digest}.json"


def document_key(record: Mapping[str, Any]) -> tuple[str, str, str]:
    """What makes a document unique: (kebab skill, type, kebab reference or "")."""
    kind = str(record.get("type"))
    ref = reference_slug(record.get("reference")) if kind == "reference" else ""
    return kebab_case(record.get("skill")), kind, ref


# --------------------------------------------------------------------------- validation
@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    """The schema shipped in the package, compiled once (on first use, not at import)."""
    text = resources.files("webapp").joinpath("schemas/skill-document.schema.json").read_text("utf-8")
    schema = json.loads(text)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def schema() -> dict[str, Any]:
    """The JSON Schema every skill document file must satisfy."""
    return dict(_validator().schema)


def _schema_reasons(record: Any) -> list[str]:
    """Readable schema errors: missing fields in one line, then each wrong value with its path."""
    if _validator().is_valid(record):
        return []
    missing, reasons = [], []
    for error in sorted(_validator().iter_errors(record), key=lambda e: list(map(str, e.path))):
        where = "/".join(str(p) for p in error.path)
        if error.validator == "required" and not where:
            missing.extend(f for f in error.validator_value if f not in record)
        elif error.validator == "not" and not where:
            reasons.append("a skill document must not have a 'reference'")
        else:
            reasons.append(f"{where}: {error.message}" if where else error.message)
    if missing:
        reasons.insert(0, "missing " + ", ".join(dict.fromkeys(missing)))
    return reasons


def _text_reasons(record: Mapping[str, Any]) -> list[str]:
    """Strings that cannot be written as UTF-8 (lone surrogates) or hold NUL."""
    reasons = []
    for key, value in record.items():
        for text in _strings(value):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                reasons.append(f"{key}: contains text that is not valid Unicode")
                break
            if "\x00" in text:
                reasons.append(f"{key}: contains a NUL character")
                break
    return reasons


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def validate_record(record: Any, what: str = "The skill document") -> dict[str, Any]:
    """Check ``record`` against the schema and the naming rules; InvalidSkillDocumentError or UnsafeNameError."""
    if not isinstance(record, Mapping):
        raise InvalidSkillDocumentError([f"expected a JSON object, found {type(record).__name__}"], what)
    record = dict(record)
    reasons = _schema_reasons(record)
    if reasons:
        raise InvalidSkillDocumentError(reasons, what)
    document_key(record)
    reasons = _text_reasons(record)
    if reasons:
        raise InvalidSkillDocumentError(reasons, what)
    return record


def derive_snippet(record: Mapping[str, Any]) -> str:
    """A short summary for listings: ``name — description`` for references, else the description."""
    meta = record.get("meta") if isinstance(record.get("meta"), Mapping) else {}
    name, description = meta.get("name"), meta.get("description")
    if record.get("type") == "reference" and name and description:
        return _shorten(f"{name} — {description}")
    description = record.get("skillDescription") or description
    if record.get("type") == "skill" and description:
        return _shorten(str(description))
    for line in str(record.get("content", "")).splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return _shorten(line)
    return ""


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…"


def _to_ms(value: Any) -> int | None:
    """Unix ms from an int/float or an ISO string; None when absent or unreadable."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float):
        return int(value) if value >= 0 else None
    if isinstance(value, str) and value.strip():
        moment = parse_ts(value)
        return int(moment.timestamp() * 1000) if moment.year > 1970 else None
    return None


# --------------------------------------------------------------------------- documents
@dataclass(frozen=True)
class SkillDocument:
    """One skill or reference document as stored (timestamps in Unix ms).

    ``file_name`` and ``deprecated`` say where the store found it (None/False for runtime
    memories); ``extra`` holds fields this version does not know, kept on rewrite.
    """

    id: str
    type: str
    skill: str
    content: str
    snippet: str = ""
    skill_description: str = ""
    reference: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    created_at: int = 0
    updated_at: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    file_name: str | None = field(default=None, compare=False)
    deprecated: bool = field(default=False, compare=False)

    @classmethod
    def from_dict(cls, record: Mapping[str, Any], *, file_name: str | None = None,
                  deprecated: bool = False) -> "SkillDocument":
        """Build from the on-disk camelCase form (assumed valid; see ``validate_record``)."""
        return cls(
            id=str(record["id"]),
            type=str(record["type"]),
            skill=str(record["skill"]),
            content=str(record["content"]),
            snippet=str(record.get("snippet", "")),
            skill_description=str(record.get("skillDescription", "")),
            reference=record.get("reference"),
            meta=dict(record.get("meta") or {}),
            created_at=int(record.get("createdAt", 0)),
            updated_at=int(record.get("updatedAt", 0)),
            extra={k: v for k, v in record.items() if k not in _KNOWN_KEYS},
            file_name=file_name,
            deprecated=deprecated,
        )

    def to_dict(self) -> dict[str, Any]:
        """The on-disk camelCase form, known fields first, unknown ones kept."""
        record: dict[str, Any] = {"id": self.id, "type": self.type, "skill": self.skill,
                                  "skillDescription": self.skill_description}
        if self.reference is not None:
            record["reference"] = self.reference
        record.update(snippet=self.snippet, content=self.content, meta=dict(self.meta),
                      createdAt=self.created_at, updatedAt=self.updated_at)
        for key, value in self.extra.items():
            record.setdefault(key, value)
        return record

    def __hash__(self) -> int:
        # The generated hash would fail on ``meta`` (a dict); these fields identify a version.
        return hash((self.id, self.type, self.skill, self.reference, self.content, self.updated_at))

    @functools.cached_property
    def key(self) -> tuple[str, str, str]:
        """(kebab skill, type, kebab reference or ""): one live document per key."""
        return document_key({"skill": self.skill, "type": self.type, "reference": self.reference})

    @property
    def hash(self) -> str:
        """The 8-hex content hash in the file name."""
        return content_hash(self.content)

    @property
    def title(self) -> str:
        """What to call it in a listing: the front matter name, else the skill or reference."""
        name = self.meta.get("name") if isinstance(self.meta, Mapping) else None
        return str(name or (self.reference if self.type == "reference" else self.skill))

    @functools.cached_property
    def search_fields(self) -> tuple[str, str, str]:
        """Folded (name, summary, content) texts for ranking, computed once per document."""
        meta = self.meta if isinstance(self.meta, Mapping) else {}
        names = " ".join(str(x) for x in (self.skill, meta.get("name"), self.reference) if x)
        summary = " ".join(str(x) for x in (self.snippet, self.skill_description,
                                            meta.get("description")) if x)
        return fold(names), fold(summary), fold(self.content)


def _sort_key(doc: SkillDocument) -> tuple[Any, ...]:
    skill, kind, ref = _safe_key(doc)
    return (skill, TYPES.index(kind) if kind in TYPES else 9, ref, doc.id)


def _safe_key(doc: SkillDocument) -> tuple[str, str, str]:
    try:
        return doc.key
    except SkillDocumentError:
        return (fold(doc.skill), doc.type, fold(doc.reference or ""))


def fold(text: str) -> str:
    """Case- and width-insensitive form for matching (NFKC + Unicode case folding)."""
    return unicodedata.normalize("NFKC", text).casefold()


def as_document(item: SkillDocument | Mapping[str, Any], what: str = "A runtime memory") -> SkillDocument:
    """A ``SkillDocument`` from a runtime memory (dict or document), defaults filled, validated.

    Missing ``id`` becomes ``runtime:<skill>:<type>[:<reference>]``; missing timestamps 0 (so
    any document is newer); missing ``snippet`` is derived.
    """
    if isinstance(item, SkillDocument):
        return item
    if not isinstance(item, Mapping):
        raise InvalidSkillDocumentError([f"expected a mapping, found {type(item).__name__}"], what)
    record = dict(item)
    deprecated = bool(record.pop("deprecated", False))
    record.setdefault("skillDescription", "")
    record.setdefault("meta", {})
    if "snippet" not in record:
        record["snippet"] = derive_snippet(record)
    for stamp in ("createdAt", "updatedAt"):
        record[stamp] = _to_ms(record.get(stamp)) or 0
    if not record.get("id") and isinstance(record.get("skill"), str):
        record["id"] = ":".join(["runtime", record["skill"], str(record.get("type")),
                                 *([str(record["reference"])] if record.get("reference") else [])])
    return SkillDocument.from_dict(validate_record(record, what), deprecated=deprecated)


# --------------------------------------------------------------------------- merging
@dataclass(frozen=True)
class MergedMemory:
    """One entry of the merged view: the winning ``document``, where it came from, what it beat."""

    document: SkillDocument
    origin: Origin
    overridden: SkillDocument | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return _safe_key(self.document)

    def to_dict(self) -> dict[str, Any]:
        """The document's on-disk form plus ``origin`` ("document" or "runtime")."""
        return {**self.document.to_dict(), "origin": self.origin}


def merge_memories(documented: Iterable[SkillDocument | Mapping[str, Any]],
                   runtime: Iterable[SkillDocument | Mapping[str, Any]]) -> list[MergedMemory]:
    """One entry per key (skill, type, reference): the documented one wins unless it is older.

    A runtime memory replaces the document only when the document's ``updatedAt`` is strictly
    older; on a tie the document wins. Deprecated documents never take part (so a runtime memory
    of the same key is used). Sorted by skill, then the skill before its references.
    """
    winners: dict[tuple[str, str, str], MergedMemory] = {}
    for item in documented:
        doc = as_document(item, "A documented memory")
        if doc.deprecated:
            continue
        current = winners.get(doc.key)
        if current is None or current.document.updated_at < doc.updated_at:
            winners[doc.key] = MergedMemory(doc, "document")
    for item in runtime:
        mem = as_document(item)
        if mem.deprecated:
            continue
        current = winners.get(mem.key)
        if current is None:
            winners[mem.key] = MergedMemory(mem, "runtime")
        elif current.origin == "document":
            if current.document.updated_at < mem.updated_at:
                winners[mem.key] = MergedMemory(mem, "runtime", current.document)
            else:
                winners[mem.key] = replace(current, overridden=mem)
        elif current.document.updated_at < mem.updated_at:
            winners[mem.key] = MergedMemory(mem, "runtime", current.overridden)
    return sorted(winners.values(), key=lambda m: _sort_key(m.document))


# --------------------------------------------------------------------------- search
@dataclass(frozen=True)
class SearchHit:
    """A search result: the merged entry and its score (higher is better)."""

    entry: MergedMemory
    score: float

    @property
    def document(self) -> SkillDocument:
        return self.entry.document


def _query_terms(query: str) -> list[str]:
    """Words for Latin text, character bigrams (or single characters) for CJK and other scripts."""
    terms: list[str] = []
    for run in re.findall(r"[^\W_]+", query):
        for part in re.findall(r"[0-9a-z]+|[^0-9a-z]+", run):
            if part.isascii() or len(part) == 1:
                terms.append(part)
            else:
                terms.extend(part[i:i + 2] for i in range(len(part) - 1))
    return list(dict.fromkeys(terms))


_WEIGHTS = (3.0, 2.0, 1.0)  # name, summary, content


def score_document(doc: SkillDocument, query: str, terms: list[str]) -> float:
    """How well ``doc`` matches the folded ``query``: 0 when it does not match at all.

    Whole-query substring hits count most; otherwise the share of terms (words or character
    bigrams) found; short fields also get a fuzzy score for typos (rapidfuzz partial ratio).
    """
    score, found = 0.0, set()
    for weight, text in zip(_WEIGHTS, doc.search_fields):
        if not text:
            continue
        if query in text:
            score += weight * 2
            found.update(terms)
            continue
        hits = [t for t in terms if t in text]
        found.update(hits)
        part = len(hits) / len(terms) if terms else 0.0
        if weight > 1 and len(query) >= 4 and len(text) <= 400:
            fuzzy = fuzz.partial_ratio(query, text) / 100
            part = max(part, fuzzy if fuzzy >= 0.8 else 0.0)
        score += weight * part
    coverage = len(found) / len(terms) if terms else 0.0
    return score if coverage >= 0.5 or score >= 2.4 else 0.0


def search_entries(entries: Iterable[MergedMemory], query: str, limit: int | None = 20) -> list[SearchHit]:
    """Rank ``entries`` against ``query``, case-insensitively; an empty query lists them all."""
    needle = fold(" ".join((query or "").split()))[:MAX_QUERY_CHARS]
    entries = list(entries)
    if not needle:
        hits = [SearchHit(e, 0.0) for e in entries]
    else:
        terms = _query_terms(needle)
        scored = ((score_document(e.document, needle, terms), e) for e in entries)
        hits = [SearchHit(e, s) for s, e in scored if s > 0]
        hits.sort(key=lambda h: (-h.score, _sort_key(h.document)))
    return hits if limit is None else hits[:limit]


# --------------------------------------------------------------------------- folder cache
@dataclass(frozen=True)
class SkillDocumentProblem:
    """A file in the skills folder that is skipped, and why."""

    file_name: str
    path: Path
    reason: str
    deprecated: bool = False

    def __str__(self) -> str:
        where = f"{DEPRECATED_DIR}/{self.file_name}" if self.deprecated else self.file_name
        return f"{where}: {self.reason}"


@dataclass(frozen=True)
class _Entry:
    """One file as last read: its signature, the document or the problem, raw bytes if racy."""

    sig: tuple[int, int, int]
    document: SkillDocument | None
    problem: str | None
    raw: bytes | None


@dataclass
class _Snapshot:
    """One folder's state: valid documents (one per id), problems, and the files behind them."""

    folder_sig: tuple[int, int] | None = None
    names_trusted: bool = False
    names: tuple[str, ...] = ()
    sigs: tuple[Any, ...] = ()
    entries: dict[str, _Entry] = field(default_factory=dict)
    documents: tuple[SkillDocument, ...] = ()
    by_id: dict[str, SkillDocument] = field(default_factory=dict)
    files_by_id: dict[str, list[str]] = field(default_factory=dict)
    by_key: dict[tuple[str, str, str], SkillDocument] = field(default_factory=dict)
    problems: tuple[SkillDocumentProblem, ...] = ()
    trusted: bool = False


def _read_entry(path: Path, sig: tuple[int, int, int], deprecated: bool,
                previous: _Entry | None, now_ns: int) -> _Entry:
    """Parse one document file (or reuse the previous parse when the bytes are the same)."""
    if sig[2] > MAX_FILE_BYTES:
        return _Entry(sig, None, f"the file is larger than {MAX_FILE_BYTES} bytes", None)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return _Entry(sig, None, f"cannot be read: {exc.strerror or exc}", None)
    keep_raw = raw if now_ns - sig[1] <= RACY_NS else None
    if previous is not None and previous.raw is not None and previous.raw == raw:
        return _Entry(sig, previous.document, previous.problem, keep_raw)
    try:
        record = validate_record(parse_bytes(raw, path), "The file")
        doc = SkillDocument.from_dict(record, file_name=path.name, deprecated=deprecated)
        return _Entry(sig, doc, None, keep_raw)
    except StoreCorruptError as exc:
        reason = exc.reason + (f" (line {exc.line}, column {exc.column})" if exc.line else "")
        return _Entry(sig, None, reason, keep_raw)
    except InvalidSkillDocumentError as exc:
        return _Entry(sig, None, "; ".join(exc.reasons), keep_raw)
    except UnsafeNameError as exc:
        return _Entry(sig, None, str(exc), keep_raw)


class _FolderCache:
    """The documents of one folder, re-read only when the folder or a file changed."""

    def __init__(self, folder: Path, deprecated: bool) -> None:
        self.folder = folder
        self.deprecated = deprecated
        self._prefix = os.fspath(folder)
        self._guard = threading.Lock()
        self._snap = _Snapshot()

    def snapshot(self) -> _Snapshot:
        """The current state; cheap (one stat per file) when nothing changed."""
        with self._guard:
            previous = self._snap
        now_ns = time.time_ns()
        try:
            st = os.stat(self.folder)
        except FileNotFoundError:
            return self._store(_Snapshot())
        folder_sig = (st.st_ino, st.st_mtime_ns)
        if previous.folder_sig == folder_sig and previous.names_trusted:
            names = previous.names
        else:
            names = self._scan_names()
        sigs = tuple(self._stat(name) for name in names)
        if previous.trusted and previous.folder_sig == folder_sig and previous.sigs == sigs:
            return previous
        names_trusted = now_ns - st.st_mtime_ns > RACY_NS
        return self._store(self._rebuild(folder_sig, names_trusted, names, sigs, previous, now_ns))

    def _store(self, snap: _Snapshot) -> _Snapshot:
        with self._guard:
            self._snap = snap
        return snap

    def _scan_names(self) -> tuple[str, ...]:
        try:
            with os.scandir(self.folder) as it:
                return tuple(sorted(e.name for e in it if _is_document_name(e.name)
                                    and e.is_file(follow_symlinks=False)))
        except (FileNotFoundError, NotADirectoryError):
            return ()

    def _stat(self, name: str) -> tuple[int, int, int] | None:
        try:
            st = os.lstat(os.path.join(self._prefix, name))  # str join: Path() per file is slow
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _rebuild(self, folder_sig: tuple[int, int], names_trusted: bool, names: tuple[str, ...],
                 sigs: tuple[Any, ...], previous: _Snapshot, now_ns: int) -> _Snapshot:
        entries: dict[str, _Entry] = {}
        for name, sig in zip(names, sigs):
            if sig is None:
                continue
            old = previous.entries.get(name)
            if old is not None and old.sig == sig and old.raw is None:
                entries[name] = old
            else:
                entries[name] = _read_entry(self.folder / name, sig, self.deprecated, old, now_ns)
        snap = _Snapshot(folder_sig, names_trusted, names, sigs, entries)
        snap.trusted = names_trusted and all(e.raw is None for e in entries.values())
        self._index(snap)
        return snap

    def _index(self, snap: _Snapshot) -> None:
        """Fill documents/by_id/problems; of several files with one id the newest is used."""
        problems = [SkillDocumentProblem(n, self.folder / n, e.problem, self.deprecated)
                    for n, e in snap.entries.items() if e.problem is not None]
        for name, entry in snap.entries.items():
            doc = entry.document
            if doc is None:
                continue
            snap.files_by_id.setdefault(doc.id, []).append(name)
            current = snap.by_id.get(doc.id)
            if current is None or current.updated_at < doc.updated_at:
                snap.by_id[doc.id] = doc
        for doc_id, names in snap.files_by_id.items():
            used = snap.by_id[doc_id].file_name
            for name in names:
                if name != used:
                    problems.append(SkillDocumentProblem(
                        name, self.folder / name,
                        f"an older copy of document {doc_id!r}; {used} is used", self.deprecated))
        snap.documents = tuple(sorted(snap.by_id.values(), key=_sort_key))
        for doc in snap.documents:
            snap.by_key.setdefault(doc.key, doc)
        snap.problems = tuple(sorted(problems, key=lambda p: p.file_name))


def _is_document_name(name: str) -> bool:
    """Document files: visible ``*.json`` (temp files, the lock and .deprecated are hidden)."""
    return name.endswith(".json") and not name.startswith(".")


# --------------------------------------------------------------------------- import sources
@dataclass(frozen=True)
class ImportReport:
    """What an import or export did, per document."""

    added: tuple[SkillDocument, ...] = ()
    updated: tuple[SkillDocument, ...] = ()
    unchanged: tuple[SkillDocument, ...] = ()
    not_in_source: tuple[SkillDocument, ...] = ()  # live documents of the skill the folder lacks

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated)

    def summary(self) -> str:
        """E.g. ``3 added, 0 updated, 0 unchanged``."""
        text = f"{len(self.added)} added, {len(self.updated)} updated, {len(self.unchanged)} unchanged"
        if self.not_in_source:
            text += f"; {len(self.not_in_source)} stored but no longer in the source"
        return text


def _read_markdown(path: Path, root: Path) -> tuple[dict[str, Any], str]:
    """(front matter, body) of a Markdown file inside ``root``; SkillImportError when unusable."""
    shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
    if path.is_symlink() and not path.resolve().is_relative_to(root.resolve()):
        raise SkillImportError(f"{shown} is a link to a file outside the skill folder.")
    try:
        size = path.stat().st_size
        if size > MAX_SOURCE_BYTES:
            raise SkillImportError(f"{shown} is too large ({size} bytes; at most {MAX_SOURCE_BYTES}).")
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillImportError(f"{shown} is not valid UTF-8 (byte {exc.start}).") from exc
    except OSError as exc:
        raise SkillImportError(f"{shown} cannot be read: {exc.strerror or exc}.") from exc
    try:
        post = frontmatter.loads(text.lstrip("\ufeff"))
    except (yaml.YAMLError, ValueError, TypeError) as exc:
        raise SkillImportError(f"{shown} has front matter that is not valid YAML: {exc}") from exc
    meta = json.loads(json.dumps(dict(post.metadata), ensure_ascii=False, default=str))
    return meta, post.content.strip()


def _skill_records(folder: Path) -> list[dict[str, Any]]:
    """The skill record and one reference record per ``references/**/*.md`` of a skill folder."""
    folder = Path(folder)
    skill_md = folder / "SKILL.md"
    if not folder.is_dir():
        raise SkillImportError(f"{folder} is not a folder.")
    if not skill_md.is_file():
        raise SkillImportError(f"{folder} has no SKILL.md; it is not an Agent Skills folder.")
    meta, body = _read_markdown(skill_md, folder)
    name, description = meta.get("name"), meta.get("description", "")
    if not isinstance(name, str) or not name.strip():
        raise SkillImportError("SKILL.md needs a `name` in its front matter.")
    if not isinstance(description, str):
        raise SkillImportError("The `description` in SKILL.md's front matter must be text.")
    if not body:
        raise SkillImportError("SKILL.md has no instructions after its front matter.")
    name = name.strip()
    skill = {"type": "skill", "skill": name, "skillDescription": description.strip(),
             "content": body, "meta": meta}
    records = [skill]
    for ref_path in _reference_files(folder):
        ref_meta, ref_body = _read_markdown(ref_path, folder)
        reference = ref_path.relative_to(folder).as_posix()
        if not ref_body:
            raise SkillImportError(f"{reference} is empty.")
        records.append({"type": "reference", "skill": name, "reference": reference,
                        "skillDescription": description.strip(), "content": ref_body,
                        "meta": ref_meta})
    for record in records:
        record["snippet"] = derive_snippet(record)
    return records


def _reference_files(folder: Path) -> list[Path]:
    """``references/**/*.md`` in a stable order, without following links to folders."""
    base = folder / "references"
    if not base.is_dir() or base.is_symlink():
        return []
    found = []
    for root, dirs, files in os.walk(base, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(root) / f for f in sorted(files)
                     if f.lower().endswith(".md") and not f.startswith("."))
    if len(found) > MAX_REFERENCES:
        raise SkillImportError(f"The skill has {len(found)} reference files; at most {MAX_REFERENCES}.")
    return found


def _safe_member(name: str) -> PurePosixPath | None:
    """The relative path of a zip member, None for entries to ignore; SkillImportError if hostile."""
    if "\x00" in name or any(unicodedata.category(c) == "Cc" for c in name):
        raise SkillImportError(f"The zip holds a file name with control characters: {name!r}.")
    if "\\" in name or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise SkillImportError(f"The zip holds an absolute or Windows-style path: {name!r}.")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise SkillImportError(f"The zip holds a path that climbs out of the folder: {name!r}.")
    if not parts or parts[0] == "__MACOSX" or parts[-1] == ".DS_Store" or name.endswith("/"):
        return None
    return PurePosixPath(*parts)


def _extract_zip(archive: zipfile.ZipFile, target: Path) -> None:
    """Unpack into ``target`` with limits on count and size (read, not trusted from headers)."""
    members = archive.infolist()
    if len(members) > MAX_ZIP_MEMBERS:
        raise SkillImportError(f"The zip holds {len(members)} entries; at most {MAX_ZIP_MEMBERS}.")
    budget = MAX_ZIP_BYTES
    for info in members:
        relative = _safe_member(info.filename)
        if relative is None:
            continue
        if stat.S_ISLNK(info.external_attr >> 16):
            raise SkillImportError(f"The zip holds a symbolic link: {info.filename!r}.")
        if info.flag_bits & 0x1:
            raise SkillImportError(f"The zip entry {info.filename!r} is encrypted.")
        dest = target.joinpath(*relative.parts)
        if not dest.resolve().is_relative_to(target.resolve()):
            raise SkillImportError(f"The zip entry {info.filename!r} points outside the folder.")
        dest.parent.mkdir(parents=True, exist_ok=True)
        budget = _copy_member(archive, info, dest, budget)


def _copy_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path, budget: int) -> int:
    """Copy one member, stopping as soon as the unpacked total would pass the limit."""
    try:
        with archive.open(info) as src, open(dest, "xb") as out:
            while chunk := src.read(65536):
                budget -= len(chunk)
                if budget < 0:
                    raise SkillImportError(
                        f"The zip unpacks to more than {MAX_ZIP_BYTES} bytes; it was not imported.")
                out.write(chunk)
    except FileExistsError as exc:
        raise SkillImportError(f"The zip holds {info.filename!r} twice.") from exc
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as exc:
        raise SkillImportError(f"The zip entry {info.filename!r} cannot be unpacked: {exc}") from exc
    return budget


def _skill_root(unpacked: Path) -> Path:
    """The folder holding SKILL.md: the zip's top level or its single top-level folder."""
    if (unpacked / "SKILL.md").is_file():
        return unpacked
    candidates = [d for d in unpacked.iterdir() if d.is_dir() and (d / "SKILL.md").is_file()]
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        raise SkillImportError("The zip holds several skills; upload one skill folder per zip.")
    raise SkillImportError("The zip has no SKILL.md at its top level or in its top folder.")


# --------------------------------------------------------------------------- the store
class SkillDocumentStore:
    """The skills folder: list, get, save, deprecate/restore, search, import and export documents.

    ``directory`` defaults to ``Settings.from_env().skills_dir``; ``runtime`` (a list or a
    zero-argument callable returning runtime memories) is merged into ``search`` and ``merged``
    when those are called without their own ``runtime``.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None, *,
                 runtime: RuntimeSource = None, lock_timeout: float | None = None) -> None:
        settings = None
        if directory is None or lock_timeout is None:
            from ..settings import Settings

            settings = Settings.from_env()
        self.directory = Path(directory) if directory is not None else settings.skills_dir
        self.deprecated_directory = self.directory / DEPRECATED_DIR
        self.lock_timeout = float(lock_timeout if lock_timeout is not None else settings.lock_timeout)
        self.lock_path = self.directory / LOCK_NAME
        self._lock = filelock.FileLock(str(self.lock_path), timeout=self.lock_timeout)
        self._runtime = runtime
        self._live = _FolderCache(self.directory, deprecated=False)
        self._dead = _FolderCache(self.deprecated_directory, deprecated=True)

    # ----------------------------------------------------------------- reading
    def list(self, include_deprecated: bool = False) -> list[SkillDocument]:
        """Valid documents sorted by skill (skill first, then its references); invalid files skipped."""
        docs = list(self._live.snapshot().documents)
        if include_deprecated:
            docs.extend(self._dead.snapshot().documents)
            docs.sort(key=_sort_key)
        return docs

    def by_skill(self, include_deprecated: bool = False) -> dict[str, list[SkillDocument]]:
        """``list()`` grouped by kebab skill name (for a page that shows one block per skill)."""
        groups: dict[str, list[SkillDocument]] = {}
        for doc in self.list(include_deprecated):
            groups.setdefault(_safe_key(doc)[0], []).append(doc)
        return groups

    def get(self, doc_id: str) -> SkillDocument | None:
        """The document with that id (live first, then deprecated), or None."""
        return self._live.snapshot().by_id.get(doc_id) or self._dead.snapshot().by_id.get(doc_id)

    def problems(self) -> list[SkillDocumentProblem]:
        """Files that are skipped and why: unparseable, invalid, stale copies, clashing keys."""
        live, dead = self._live.snapshot(), self._dead.snapshot()
        found = list(live.problems) + list(dead.problems)
        by_key: dict[tuple[str, str, str], SkillDocument] = {}
        for doc in live.documents:
            other = by_key.setdefault(doc.key, doc)
            if other is not doc:
                found.append(SkillDocumentProblem(
                    doc.file_name or "", self.directory / (doc.file_name or ""),
                    f"same skill/type/reference as {other.file_name}; deprecate one of them"))
        for doc in dead.documents:
            if doc.id in live.by_id:
                found.append(SkillDocumentProblem(
                    doc.file_name or "", self.deprecated_directory / (doc.file_name or ""),
                    f"document {doc.id!r} is also live as {live.by_id[doc.id].file_name}", True))
        return found

    def merged(self, runtime: RuntimeSource = None) -> list[MergedMemory]:
        """``merge_memories(list(), runtime)``; ``runtime`` defaults to the constructor's."""
        return merge_memories(self.list(), self._runtime_items(runtime))

    def search(self, query: str, *, runtime: RuntimeSource = None,
               limit: int | None = 20) -> list[SearchHit]:
        """Rank documents and runtime memories (merged first) against ``query``.

        Case- and width-insensitive; Chinese works (character bigrams, not whitespace words).
        An empty query returns every merged entry in listing order.
        """
        return search_entries(self.merged(runtime), query, limit)

    def _runtime_items(self, runtime: RuntimeSource) -> list[Any]:
        source = self._runtime if runtime is None else runtime
        if source is None:
            return []
        return list(source() if callable(source) else source)

    # ----------------------------------------------------------------- writing
    def save(self, document: SkillDocument | Mapping[str, Any]) -> SkillDocument:
        """Validate and write a document; returns it as stored.

        Without an ``id`` (or with an unknown one) it is created. Fields left out of a mapping
        keep their stored values (unknown fields too), except ``snippet``, which is derived
        again. ``createdAt`` is kept, ``updatedAt`` bumped; when the content changed the file is
        renamed to its new hash. Nothing is written when nothing changed.
        Raises InvalidSkillDocumentError, UnsafeNameError, SkillDocumentConflictError, StoreBusyError.
        """
        raw = document.to_dict() if isinstance(document, SkillDocument) else _plain(document)
        if "snippet" in raw and not isinstance(document, SkillDocument) and raw["snippet"] is None:
            del raw["snippet"]
        with self._locked():
            return self._save_locked(raw)

    def deprecate(self, doc_id: str) -> bool:
        """Move a live document to ``.deprecated/``; False when no live document has that id."""
        with self._locked():
            return self._move(doc_id, self._live, self._dead)

    def restore(self, doc_id: str) -> bool:
        """Move a deprecated document back; False when none has that id.

        Raises SkillDocumentConflictError when a live document now has the same key.
        """
        with self._locked():
            return self._move(doc_id, self._dead, self._live)

    def import_skill(self, folder: str | os.PathLike[str]) -> ImportReport:
        """Save an Agent Skills folder: one skill document and one per ``references/**/*.md``.

        Documents are matched by key (skill, type, reference), so re-importing unchanged
        content writes nothing and changed content updates the stored document (same id).
        Everything is read and checked before anything is written.
        """
        records = _skill_records(Path(folder))
        for record in records:
            validate_record({**record, "id": "import", "createdAt": 0, "updatedAt": 0},
                            f"{record.get('reference') or 'SKILL.md'}")
        with self._locked():
            report = self._upsert_all(records)
            skill_key = document_key(records[0])[0]
            seen = {document_key(r) for r in records}
            stale = tuple(d for d in self._live.snapshot().documents
                          if d.key[0] == skill_key and d.key not in seen)
        return replace(report, not_in_source=stale)

    def import_skill_zip(self, source: bytes | BinaryIO | str | os.PathLike[str]) -> ImportReport:
        """``import_skill`` for an uploaded ``.zip`` of one skill folder, unpacked safely.

        Refuses paths that climb out (``..``, absolute, drive letters), links, encrypted entries,
        more than 1,000 entries or 20 MB unpacked (counted while reading, not from headers).
        """
        data = io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source
        try:
            archive = zipfile.ZipFile(data)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            raise SkillImportError(f"The upload is not a readable zip file: {exc}") from exc
        with archive, tempfile.TemporaryDirectory(prefix="skill-import-") as tmp:
            _extract_zip(archive, Path(tmp))
            return self.import_skill(_skill_root(Path(tmp)))

    def export_runtime(self, memories: Iterable[SkillDocument | Mapping[str, Any]]) -> ImportReport:
        """Write runtime skill memories out as document files (migration from in-memory skills).

        Matched by key like ``import_skill``: an unchanged memory writes nothing, a changed one
        updates the stored document. The runtime ``createdAt`` is kept when creating.
        """
        records = [as_document(m).to_dict() for m in memories]
        with self._locked():
            return self._upsert_all(records)

    # ----------------------------------------------------------------- internals
    def _locked(self) -> "_FolderLock":
        return _FolderLock(self)

    def _upsert_all(self, records: list[dict[str, Any]]) -> ImportReport:
        added, updated, unchanged = [], [], []
        for record in records:
            existing = self._live_by_key(document_key(record))
            if existing is not None:
                record = {**record, "id": existing.id}
                saved = self._save_locked(record)
                (updated if saved.updated_at != existing.updated_at else unchanged).append(saved)
                continue
            if not record.get("id") or self.get(str(record["id"])) is not None:
                record = {**record, "id": str(uuid.uuid4())}
            added.append(self._save_locked(record))
        return ImportReport(tuple(added), tuple(updated), tuple(unchanged))

    def _live_by_key(self, key: tuple[str, str, str]) -> SkillDocument | None:
        return self._live.snapshot().by_key.get(key)

    def _save_locked(self, raw: dict[str, Any]) -> SkillDocument:
        current = self.get(str(raw["id"])) if raw.get("id") else None
        record = {**(current.to_dict() if current else {}), **raw}
        if not record.get("id"):
            record["id"] = str(uuid.uuid4())
        if record.get("type") != "reference" and record.get("reference") is None:
            record.pop("reference", None)
        record.setdefault("skillDescription", "")
        record.setdefault("meta", {})
        if "snippet" not in raw:
            record["snippet"] = derive_snippet(record)
        record = self._stamp(record, current)
        record = validate_record(record)
        if current is not None and _same(current.to_dict(), record):
            return current
        cache = self._dead if current is not None and current.deprecated else self._live
        if cache is self._live:
            self._check_key_free(record)
        return self._write(cache, record)

    def _stamp(self, record: dict[str, Any], current: SkillDocument | None) -> dict[str, Any]:
        now = now_ms()
        if current is not None:
            record["createdAt"] = current.created_at
            record["updatedAt"] = max(now, current.updated_at + 1)
        else:
            created = _to_ms(record.get("createdAt"))
            record["createdAt"] = min(created, now) if created is not None else now
            record["updatedAt"] = now
        return record

    def _check_key_free(self, record: dict[str, Any]) -> None:
        key = document_key(record)
        other = self._live_by_key(key)
        if other is not None and other.id != record["id"]:
            what = f"reference {key[2]!r} of skill {key[0]!r}" if key[1] == "reference" else f"skill {key[0]!r}"
            raise SkillDocumentConflictError(
                f"A document for the {what} already exists ({other.file_name}, id {other.id}); "
                f"edit that one or deprecate it first."
            )

    def _write(self, cache: _FolderCache, record: dict[str, Any]) -> SkillDocument:
        name = document_file_name(record)
        target = cache.folder / name
        if target.parent != cache.folder or not _is_document_name(name):
            raise UnsafeNameError(f"Refusing to write {name!r} outside {cache.folder}.")
        snap = cache.snapshot()
        _check_free(snap, name, record["id"])
        cache.folder.mkdir(parents=True, exist_ok=True)
        saved = SkillDocument.from_dict(record, file_name=name, deprecated=cache.deprecated)
        write_atomic(target, encode(saved.to_dict()))
        for old in snap.files_by_id.get(record["id"], []):
            if old != name:
                _unlink(cache.folder / old)
        fsync_dir(cache.folder)
        return saved

    def _move(self, doc_id: str, source: _FolderCache, dest: _FolderCache) -> bool:
        snap = source.snapshot()
        doc = snap.by_id.get(doc_id)
        if doc is None or doc.file_name is None:
            return False
        if not dest.deprecated:
            self._check_key_free(doc.to_dict())
        _check_free(dest.snapshot(), doc.file_name, doc_id)
        dest.folder.mkdir(parents=True, exist_ok=True)
        os.replace(source.folder / doc.file_name, dest.folder / doc.file_name)
        for old in snap.files_by_id.get(doc_id, []):
            if old != doc.file_name:
                _unlink(source.folder / old)
        fsync_dir(dest.folder)
        fsync_dir(source.folder)
        return True


def _check_free(snap: _Snapshot, name: str, doc_id: str) -> None:
    """Refuse to replace a file that holds another document or cannot be read."""
    occupant = snap.entries.get(name)
    if occupant is None:
        return
    if occupant.document is None:
        raise SkillDocumentConflictError(
            f"{name} already exists and is not a valid document ({occupant.problem}); "
            f"it was left untouched. Fix or remove it first.")
    if occupant.document.id != doc_id:
        raise SkillDocumentConflictError(
            f"{name} already holds document {occupant.document.id!r} with the same content; "
            f"nothing was changed.")


def _same(stored: Mapping[str, Any], record: Mapping[str, Any]) -> bool:
    """Equal apart from the timestamps."""
    strip = lambda r: {k: v for k, v in r.items() if k not in ("createdAt", "updatedAt")}  # noqa: E731
    return strip(stored) == strip(record)


def _plain(document: Any) -> dict[str, Any]:
    if not isinstance(document, Mapping):
        raise InvalidSkillDocumentError([f"expected a mapping, found {type(document).__name__}"])
    return dict(document)


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


class _FolderLock:
    """``<folder>/.lock``, bounded: raises StoreBusyError instead of hanging."""

    def __init__(self, store: SkillDocumentStore) -> None:
        self._store = store

    def __enter__(self) -> "_FolderLock":
        self._store.directory.mkdir(parents=True, exist_ok=True)
        try:
            self._store._lock.acquire()
        except filelock.Timeout as exc:
            raise StoreBusyError(self._store.lock_path, self._store.lock_timeout) from exc
        return self

    def __exit__(self, *exc: object) -> None:
        self._store._lock.release()
