"""Forgotten facts (tombstones): what a person deleted, so it is not proposed again as new.

A JSON array beside the memories (``memories.tombstones.json``), written through the same
locked, atomic JSON file layer as every store. One tombstone per deleted memory::

    {"id": "ab12cd34ef56", "memoryId": "1f2e3d4c5b6a", "content": "Really likes green tea",
     "category": "preference", "deletedAt": "…Z", "deletedBy": "alice", "via": "dashboard",
     "conversationId": "slack:C1:17.1", "noPropose": false, "person": "p1a2b3"}

``via`` says how it was deleted (``VIAS``); ``conversationId`` names the conversation whose
change of mind deleted it, when one did. ``noPropose``: the person chose "don't propose this
again", so a later proposal of the fact is dropped instead of shown in Review. ``person``:
whose the deleted memory was (null: the household's), so one person's deletion never drops
or marks another person's fact (a tombstone written before it was recorded has no ``person``
key: ``owner_known`` is False and extraction looks its owner up in the history log).

**Delete forever** (``forget_forever``) removes ``content`` and keeps only a fingerprint that
recognises the fact without its words: ``fingerprints`` (HMAC-SHA256, keyed by the random
``memories.tombstones.key`` beside the file, of each wording's ``normalize``d text) and
``vectors`` (the embedding of the text, base64 float32, with its model's name) so that other
wordings are still caught. ``forgottenAt`` says when. ``vectorKeys`` name (keyed hashes, hex)
the vector cache's rows of its wordings, which every process's cache drops when it saves.

Delete forever runs in steps, each file in turn; it starts by recording its intent in the
tombstone: the fingerprints and ``"forgetting": {"wordings": [...], "said": [...]}`` (the
fact's texts and the sentences that said it, needed to find them in the other files). A
process killed half-way leaves that state behind; the command run again, or ``repair``,
finishes every step, and only the last one drops the words from the tombstone.

Caps: the newest ``MAX_TOMBSTONES`` tombstones that still hold their words are kept, and
separately the newest ``MAX_FOREVER`` deleted forever, so ordinary deletions never push a
fingerprint out.

A tombstone whose memory is back in the store (restored) no longer counts (``active``), and
``settle`` drops it; ``lift`` drops those of memories restored now.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from ..language.phrasing import fact_form
from ..problems import InputError
from ..settings import DEFAULTS
from ..text import normalize
from .atomic import fsync_dir, unlink_quietly
from .changes import Changed, Unchanged
from .document import FileBacked
from .jsonfile import JsonFile
from .keys import secret_key
from .owned import FORGETTING, OwnFile, existing, key_file_files
from .timefmt import EPOCH, now_iso, read_time, unreadable_record_times

if TYPE_CHECKING:
    from datetime import datetime

    from ..settings import Settings


class DeletedFact(Protocol):
    """What a tombstone keeps of a deleted memory (a ``Memory`` is one)."""

    @property
    def id(self) -> str: ...

    @property
    def content(self) -> str: ...

    @property
    def category(self) -> str: ...

    @property
    def person(self) -> str | None: ...


class BesideFile(Protocol):
    """A store kept in a memory file (``MemoryStore``), whose tombstones ``beside`` opens."""

    path: Path

    @property
    def lock_timeout(self) -> float: ...


FILE_SUFFIX = ".tombstones.json"
KEY_SUFFIX = ".tombstones.key"
# Beside the tombstones while a Delete forever has not finished: the next start finishes it.
MARKER_SUFFIX = ".forgetting"
VIAS = ("dashboard", "mcp", "review", "cli", "conversation", "library")
MAX_TOMBSTONES = 20_000  # the oldest (still worded) go first beyond this
MAX_FOREVER = 20_000  # fingerprints of facts deleted forever, capped apart
MAX_FINGERPRINTS = 50  # wordings remembered per forgotten fact


def tombstone_path(memory_file: str | os.PathLike[str]) -> Path:
    """memories.json → memories.tombstones.json, beside it."""
    path = Path(memory_file)
    return path.with_name(f"{path.stem}{FILE_SUFFIX}")


def key_path(memory_file: str | os.PathLike[str]) -> Path:
    """memories.json → memories.tombstones.key: the key of the fingerprints (never the words)."""
    path = Path(memory_file)
    return path.with_name(f"{path.stem}{KEY_SUFFIX}")


@dataclass(frozen=True)
class Tombstone:
    """One deleted fact: who deleted it, when, from which memory; its text until forgotten."""

    id: str
    memory_id: str
    content: str | None  # None after Delete forever
    category: str
    deleted_at: datetime
    deleted_by: str
    via: str
    conversation_id: str | None = None
    no_propose: bool = False
    forgotten_at: datetime | None = None
    fingerprints: tuple[str, ...] = ()
    vectors: tuple[tuple[str, npt.NDArray[np.float32]], ...] = field(default=(), repr=False)
    vector_keys: tuple[bytes, ...] = field(default=(), repr=False)
    # While Delete forever runs (a process killed half-way leaves it so): the words to wipe.
    forgetting: tuple[tuple[str, ...], tuple[str, ...]] | None = field(default=None, repr=False)
    person: str | None = None  # whose the memory was; None: the household's
    owner_known: bool = True  # False for a tombstone written before ``person`` was recorded
    # The review items Delete forever took out (those that proposed, edited or applied the
    # fact): ids only, so undoing one of them is refused with a reason.
    review_ids: tuple[str, ...] = field(default=(), repr=False)

    @property
    def forever(self) -> bool:
        """True once Delete forever began (its words are gone, or going)."""
        return self.content is None or self.forgetting is not None

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> Tombstone:
        deleted = read_time(record.get("deletedAt"))
        forgotten = read_time(record.get("forgottenAt"))
        content = record.get("content")
        return cls(
            id=str(record["id"]),
            memory_id=str(record.get("memoryId") or ""),
            content=content if isinstance(content, str) and content else None,
            category=str(record.get("category") or "general"),
            deleted_at=deleted if deleted is not None else EPOCH,
            deleted_by=str(record.get("deletedBy") or "unknown"),
            via=str(record.get("via") or "library"),
            conversation_id=_str(record.get("conversationId")),
            no_propose=record.get("noPropose") is True,
            forgotten_at=forgotten,
            fingerprints=tuple(f for f in record.get("fingerprints") or () if isinstance(f, str)),
            vectors=tuple(_read_vectors(record.get("vectors"))),
            vector_keys=tuple(_read_hex(record.get("vectorKeys"))),
            forgetting=_read_forgetting(record.get("forgetting")),
            person=_str(record.get("person")),
            owner_known="person" in record
            and (record["person"] is None or bool(_str(record["person"]))),
            review_ids=_texts(record.get("reviewIds")),
        )


def _texts(raw: Any) -> tuple[str, ...]:
    return tuple(t for t in raw if isinstance(t, str) and t) if isinstance(raw, list) else ()


def _read_forgetting(raw: Any) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    if not isinstance(raw, dict):
        return None
    return _texts(raw.get("wordings")), _texts(raw.get("said"))


def _read_hex(raw: Any) -> Iterable[bytes]:
    for text in _texts(raw):
        try:
            yield bytes.fromhex(text)
        except ValueError:
            continue


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _read_vectors(raw: Any) -> Iterable[tuple[str, npt.NDArray[np.float32]]]:
    if not isinstance(raw, list):
        return
    for entry in raw:
        if not isinstance(entry, dict) or not isinstance(entry.get("model"), str):
            continue
        try:
            row = np.frombuffer(base64.b64decode(str(entry.get("vector")), validate=True), "<f4")
        except (ValueError, TypeError):
            continue
        if row.size and np.isfinite(row).all():
            yield entry["model"], row.astype(np.float32)


def encode_vector(model: str, vector: npt.NDArray[Any]) -> dict[str, str]:
    """The on-disk form of one fingerprint vector."""
    row = np.asarray(vector, dtype="<f4").reshape(-1)
    return {"model": model, "vector": base64.b64encode(row.tobytes()).decode("ascii")}


def _cap(records: list[dict[str, Any]]) -> None:
    """Keep the newest ``MAX_TOMBSTONES`` worded tombstones and, apart, the newest
    ``MAX_FOREVER`` deleted forever (oldest first within each kind)."""
    forever = [r for r in records if r.get("content") is None or "forgetting" in r]
    worded = len(records) - len(forever)
    if worded <= MAX_TOMBSTONES and len(forever) <= MAX_FOREVER:
        return
    drop_worded, drop_forever = worded - MAX_TOMBSTONES, len(forever) - MAX_FOREVER
    kept: list[dict[str, Any]] = []
    for record in records:
        if record.get("content") is None or "forgetting" in record:
            if drop_forever > 0:
                drop_forever -= 1
                continue
        elif drop_worded > 0:
            drop_worded -= 1
            continue
        kept.append(record)
    records[:] = kept


def _validate(data: Any) -> str | None:
    if not isinstance(data, list):
        return f"expected a JSON array of forgotten facts, found a JSON {type(data).__name__}"
    return None


def _item_problem(record: Any) -> str | None:
    if not isinstance(record, dict) or not isinstance(record.get("id"), str) or not record["id"]:
        return "is not a forgotten fact with a string id"
    content = record.get("content")
    if content is not None and not isinstance(content, str):
        return f"(id {record['id']!r}) has a content that is not text"
    if not isinstance(record.get("memoryId"), str):
        return f"(id {record['id']!r}) names no memory"
    return None


def _unreadable_times(records: Any) -> list[tuple[str, str]]:
    return unreadable_record_times(records, ("deletedAt", "forgottenAt"))


def fingerprint_key(memory_file: str | os.PathLike[str]) -> bytes:
    """The random key of the fingerprints, made once (mode 0600) beside the memory file.

    A damaged key file is set aside (``<name>.corrupt-<stamp>``, bytes kept, a warning in the
    log) and a new key made: fingerprints made with the old one no longer match (their vectors
    still do)."""
    return secret_key(key_path(memory_file), "fingerprint key")


class TombstoneStore(FileBacked):
    """The forgotten facts beside one memory file; shared by every process."""

    def __init__(
        self, path: str | os.PathLike[str], *, lock_timeout: float = DEFAULTS["lock_timeout"]
    ) -> None:
        self.path = Path(path)
        self._file = JsonFile(
            self.path,
            store="tombstones",
            default=list,
            validate=_validate,
            item_problem=_item_problem,
            lock_timeout=lock_timeout,
            unreadable_times=_unreadable_times,
        )
        suffix = FILE_SUFFIX
        stem = self.path.name[: -len(suffix)] if self.path.name.endswith(suffix) else "memories"
        self._memory_file = self.path.with_name(f"{stem}.json")
        self._key: bytes | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> TombstoneStore:
        """The tombstones beside the memory file ``settings`` name."""
        return cls(tombstone_path(settings.memory_file), lock_timeout=settings.lock_timeout)

    @classmethod
    def beside(cls, store: BesideFile) -> TombstoneStore:
        """The tombstones of the memory store ``store``."""
        return cls(tombstone_path(store.path), lock_timeout=store.lock_timeout)

    @property
    def key_path(self) -> Path:
        return key_path(self._memory_file)

    @property
    def marker_path(self) -> Path:
        """``memories.tombstones.json.forgetting``: there while a Delete forever is unfinished
        (made under the file's lock with the intent, removed when none is left), so a start
        knows with one look whether a killed run waits to be finished."""
        return self.path.with_name(self.path.name + MARKER_SUFFIX)

    def unfinished(self) -> bool:
        """Whether a Delete forever may wait to be finished (its marker is there)."""
        return self.marker_path.exists()

    def own_files(self) -> list[OwnFile]:
        """``FileBacked.own_files``, the fingerprints' key file (``fingerprint_key``) and the
        marker of an unfinished Delete forever."""
        return [
            *super().own_files(),
            *key_file_files(self.key_path),
            *existing(self.marker_path, FORGETTING),
        ]

    def _mark_unfinished(self) -> None:
        """Make the marker (the caller holds the lock, and is about to record an intent)."""
        self.marker_path.touch(exist_ok=True)
        fsync_dir(self.marker_path.parent)

    def clear_marker(self) -> bool:
        """Remove the marker when no Delete forever is left unfinished (under the lock, so a
        run recording its intent meanwhile keeps it); whether it went."""
        with self._file.locked():
            if any(t.forgetting is not None for t in self.all()):
                return False
            unlink_quietly(self.marker_path)
            return True

    # ----------------------------------------------------------------- reading
    def all(self) -> list[Tombstone]:
        """Every tombstone, oldest first (cached until the file changes)."""
        return list(
            self._file.view("items", lambda data: tuple(Tombstone.from_dict(r) for r in data))
        )

    def active(self, present: Iterable[str] = ()) -> list[Tombstone]:
        """The tombstones of facts still forgotten: not of a memory back in ``present`` ids."""
        back = set(present)
        return [t for t in self.all() if t.memory_id not in back]

    def get(self, tombstone_id: str) -> Tombstone | None:
        return next((t for t in self.all() if t.id == tombstone_id), None)

    def for_memory(self, memory_id: str) -> Tombstone | None:
        """The latest tombstone of memory ``memory_id``."""
        found = [t for t in self.all() if t.memory_id == memory_id]
        return found[-1] if found else None

    def fingerprint(self, text: str) -> str:
        """The keyed hash of ``text``'s normalised form (recognises it; cannot be read back)."""
        if self._key is None:
            self._key = fingerprint_key(self._memory_file)
        return hmac.new(self._key, normalize(text).encode("utf-8"), hashlib.sha256).hexdigest()

    # ----------------------------------------------------------------- writing
    def record(
        self,
        memory: DeletedFact,
        *,
        by: str,
        via: str = "library",
        conversation_id: str | None = None,
        no_propose: bool = False,
        forgetting: bool = False,
    ) -> Tombstone:
        """Remember that ``memory`` (whoever's it is: its ``person``) was deleted by ``by``
        (how: ``via``); with ``forgetting``, that it is to be deleted forever (recorded before
        it is deleted)."""
        return self.record_many(
            [memory],
            by=by,
            via=via,
            conversation_id=conversation_id,
            no_propose=no_propose,
            forgetting=forgetting,
        )[0]

    def record_many(
        self,
        memories: Sequence[DeletedFact],
        *,
        by: str,
        via: str = "library",
        conversation_id: str | None = None,
        no_propose: bool = False,
        forgetting: bool = False,
    ) -> list[Tombstone]:
        """``record`` for several memories deleted together, in one write; each tombstone
        names whose its memory was (``Memory.person``)."""
        stamp = now_iso()
        records: list[dict[str, Any]] = [
            {
                "id": secrets.token_hex(6),
                "memoryId": memory.id,
                "content": memory.content,
                "category": memory.category,
                "deletedAt": stamp,
                "deletedBy": by,
                "via": via if via in VIAS else "library",
                "conversationId": conversation_id,
                "noPropose": bool(no_propose),
                "person": memory.person,
            }
            | ({"forgetting": {"wordings": [], "said": []}} if forgetting else {})
            for memory in memories
        ]
        if not records:
            return []

        def mutate(existing: list[dict[str, Any]]) -> Changed[list[dict[str, Any]]]:
            if forgetting:
                self._mark_unfinished()
            existing.extend(records)
            _cap(existing)
            return Changed(records)

        return [Tombstone.from_dict(r) for r in self._file.update(mutate)]

    def set_no_propose(self, tombstone_id: str, value: bool = True) -> Tombstone:
        """Say whether a later proposal of the fact is dropped (True) or shown in Review."""

        def mutate(
            records: list[dict[str, Any]],
        ) -> Changed[dict[str, Any]] | Unchanged[dict[str, Any]]:
            record = self._find(records, tombstone_id)
            if record.get("noPropose") is value:
                return Unchanged(record)
            record["noPropose"] = value
            return Changed(record)

        return Tombstone.from_dict(self._file.update(mutate))

    def lift(self, memory_ids: Iterable[str]) -> int:
        """Drop the tombstones of memories restored (not forgotten any more); how many."""
        wanted = set(memory_ids)
        return self._drop(
            lambda r: (
                r.get("memoryId") in wanted
                and r.get("content") is not None
                and "forgetting" not in r
            )
        )

    def settle(self, present: Iterable[str]) -> int:
        """Drop the tombstones of memories that are in the store again (for ``repair``)."""
        return self.lift(present)

    def _drop(self, gone: Callable[[dict[str, Any]], bool]) -> int:
        def mutate(records: list[dict[str, Any]]) -> Changed[int] | Unchanged[int]:
            kept = [r for r in records if not gone(r)]
            if len(kept) == len(records):
                return Unchanged(0)
            dropped = len(records) - len(kept)
            records[:] = kept
            return Changed(dropped)

        return self._file.update(mutate)

    def begin_forgetting(
        self,
        tombstone_id: str,
        *,
        wordings: Sequence[str],
        said: Sequence[str] = (),
        vectors: Sequence[tuple[str, npt.NDArray[Any]]] = (),
        vector_keys: Sequence[bytes] = (),
        no_propose: bool = True,
        review_ids: Sequence[str] = (),
    ) -> Tombstone:
        """Delete forever, its first step: the fingerprints of ``wordings`` (its text and the
        other wordings found of it) and of the sentences that ``said`` it, its ``vectors`` and
        the cache rows to drop (``vector_keys``) and the ids of the review items to take out
        (``review_ids``) are kept, and the words to wipe recorded as "forgetting" until
        ``finish_forgetting``, so a run killed half-way can be finished."""
        texts = [t for t in (*wordings, *said) if t and normalize(t)]
        # Each in its fact form too: the fact said again with a filler has the same print.
        texts = list(dict.fromkeys([*texts, *(fact_form(t) for t in texts)]))
        prints = [self.fingerprint(text) for text in texts]

        def mutate(records: list[dict[str, Any]]) -> Changed[dict[str, Any]]:
            record = self._find(records, tombstone_id)
            self._mark_unfinished()
            reviewed = [i for i in record.get("reviewIds") or () if isinstance(i, str)]
            record["reviewIds"] = list(dict.fromkeys([*reviewed, *review_ids]))
            old = [f for f in record.get("fingerprints") or () if isinstance(f, str)]
            record["fingerprints"] = list(dict.fromkeys([*old, *prints]))[-MAX_FINGERPRINTS:]
            kept = [v for v in record.get("vectors") or () if isinstance(v, dict)]
            record["vectors"] = kept + [encode_vector(model, row) for model, row in vectors]
            rows = [k for k in record.get("vectorKeys") or () if isinstance(k, str)]
            record["vectorKeys"] = list(dict.fromkeys([*rows, *(k.hex() for k in vector_keys)]))
            pending = _read_forgetting(record.get("forgetting")) or ((), ())
            record["forgetting"] = {
                "wordings": list(dict.fromkeys([*pending[0], *wordings])),
                "said": list(dict.fromkeys([*pending[1], *said])),
            }
            record["noPropose"] = bool(no_propose) or record.get("noPropose") is True
            return Changed(record)

        return Tombstone.from_dict(self._file.update(mutate))

    def finish_forgetting(self, tombstone_id: str) -> Tombstone:
        """Delete forever, its last step: the tombstone's words go (its text, the words it
        was to wipe), its fingerprints stay; the backup is refreshed, so the words do not
        live on in ``<file>.bak``."""

        def mutate(records: list[dict[str, Any]]) -> Changed[dict[str, Any]]:
            record = self._find(records, tombstone_id)
            record.pop("content", None)
            record.pop("forgetting", None)
            record["forgottenAt"] = record.get("forgottenAt") or now_iso()
            _cap(records)
            return Changed(record)

        with self._file.locked():
            result = Tombstone.from_dict(self._file.update(mutate))
            self._file.refresh_backup()
            self.clear_marker()
        return result

    def forgetting(self) -> list[Tombstone]:
        """The tombstones whose Delete forever has not finished (a process was killed)."""
        return [t for t in self.all() if t.forgetting is not None]

    def forever_of(self, memory_id: str | None) -> Tombstone | None:
        """The tombstone of memory ``memory_id`` when it was (or is being) deleted forever."""
        tombstone = self.for_memory(memory_id) if memory_id else None
        return tombstone if tombstone is not None and tombstone.forever else None

    def took_out(self, item_id: str) -> Tombstone | None:
        """The tombstone of the fact deleted forever whose run took review item ``item_id``
        out of the queue, or None."""
        return next((t for t in self.all() if item_id in t.review_ids), None)

    def vector_keys(self) -> frozenset[bytes]:
        """The vector cache rows of every fact deleted forever (no cache keeps them)."""
        return self._file.view(
            "vector_keys",
            lambda data: frozenset(
                k for r in data if isinstance(r, dict) for k in _read_hex(r.get("vectorKeys"))
            ),
        )

    @staticmethod
    def _find(records: list[dict[str, Any]], tombstone_id: str) -> dict[str, Any]:
        for record in records:
            if record.get("id") == tombstone_id:
                return record
        raise InputError(
            f"No forgotten fact with id {tombstone_id!r}.",
            code="tombstone_not_found",
            id=repr(tombstone_id),
        )
