"""Forgotten facts (tombstones): what a person deleted, so it is not proposed again as new.

A JSON array beside the memories (``memories.tombstones.json``), written through the same
locked, atomic JSON file layer as every store. One tombstone per deleted memory::

    {"id": "ab12cd34ef56", "memoryId": "1f2e3d4c5b6a", "content": "Really likes green tea",
     "category": "preference", "deletedAt": "…Z", "deletedBy": "alice", "via": "dashboard",
     "conversationId": "slack:C1:17.1", "noPropose": false}

``via`` says how it was deleted (``VIAS``); ``conversationId`` names the conversation whose
change of mind deleted it, when one did. ``noPropose``: the person chose "don't propose this
again", so a later proposal of the fact is dropped instead of shown in Review.

**Delete forever** (``forget_forever``) removes ``content`` and keeps only a fingerprint that
recognises the fact without its words: ``fingerprints`` (HMAC-SHA256, keyed by the random
``memories.tombstones.key`` beside the file, of each wording's ``normalize``d text) and
``vectors`` (the embedding of the text, base64 float32, with its model's name) so that other
wordings are still caught. ``forgottenAt`` says when.

A tombstone whose memory is back in the store (restored) no longer counts (``active``), and
``settle`` drops it; ``lift`` drops those of memories restored now.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..plainfiles import NotRegularFileError, read_regular
from ..problems import InputError
from ..settings import DEFAULTS
from ..text import normalize
from .changes import Changed, Unchanged
from .document import FileBacked, fsync_dir
from .jsonfile import JsonFile
from .memories import Memory
from .setaside import free_path
from .timefmt import EPOCH, now_iso, read_time, unreadable_record_times

if TYPE_CHECKING:
    from datetime import datetime

    from ..settings import Settings
    from .memories import MemoryStore

log = logging.getLogger(__name__)

FILE_SUFFIX = ".tombstones.json"
KEY_SUFFIX = ".tombstones.key"
VIAS = ("dashboard", "mcp", "review", "cli", "conversation", "library")
MAX_TOMBSTONES = 20_000  # the oldest go first beyond this
MAX_FINGERPRINTS = 50  # wordings remembered per forgotten fact
KEY_BYTES = 32


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

    @property
    def forever(self) -> bool:
        """True once its words are gone (Delete forever)."""
        return self.content is None

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
        )


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


def _read_key(path: Path) -> bytes | None:
    try:
        raw = read_regular(path).strip()
    except (FileNotFoundError, NotRegularFileError):  # (a FIFO is set aside as damaged)
        return None
    try:
        key = bytes.fromhex(raw.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None
    return key if len(key) == KEY_BYTES else None


def fingerprint_key(memory_file: str | os.PathLike[str]) -> bytes:
    """The random key of the fingerprints, made once (mode 0600) beside the memory file.

    A damaged key file is set aside (``<name>.corrupt-<stamp>``, bytes kept, a warning in the
    log) and a new key made: fingerprints made with the old one no longer match (their vectors
    still do)."""
    path = key_path(memory_file)
    key = _read_key(path)
    if key is not None:
        return key
    if path.exists():  # damaged: set aside with its bytes, never overwritten
        try:
            os.replace(path, free_path(path, "corrupt"))
        except FileNotFoundError:
            pass  # another process set it aside first
        else:
            log.warning("The fingerprint key %s was damaged; it was set aside", path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, secrets.token_hex(KEY_BYTES).encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # first writer wins; the others read its key
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)
    key = _read_key(path)
    if key is None:  # pragma: no cover - the file was just written
        raise OSError(f"Could not read the fingerprint key {path}")
    return key


class TombstoneStore(FileBacked):
    """The forgotten facts beside one memory file; shared by every process."""

    def __init__(
        self, path: str | os.PathLike[str], *, lock_timeout: float = DEFAULTS["lock_timeout"]
    ) -> None:
        self.path = Path(path)
        self._file = JsonFile(
            self.path,
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
    def beside(cls, store: MemoryStore) -> TombstoneStore:
        """The tombstones of the memory store ``store``."""
        return cls(tombstone_path(store.path), lock_timeout=store.lock_timeout)

    @property
    def key_path(self) -> Path:
        return key_path(self._memory_file)

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
        memory: Memory,
        *,
        by: str,
        via: str = "library",
        conversation_id: str | None = None,
        no_propose: bool = False,
    ) -> Tombstone:
        """Remember that ``memory`` was deleted by ``by`` (how: ``via``)."""
        return self.record_many(
            [memory], by=by, via=via, conversation_id=conversation_id, no_propose=no_propose
        )[0]

    def record_many(
        self,
        memories: Sequence[Memory],
        *,
        by: str,
        via: str = "library",
        conversation_id: str | None = None,
        no_propose: bool = False,
    ) -> list[Tombstone]:
        """``record`` for several memories deleted together, in one write."""
        stamp = now_iso()
        records = [
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
            }
            for memory in memories
        ]
        if not records:
            return []

        def mutate(existing: list[dict[str, Any]]) -> Changed[list[dict[str, Any]]]:
            existing.extend(records)
            if len(existing) > MAX_TOMBSTONES:
                del existing[: len(existing) - MAX_TOMBSTONES]
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
        return self._drop(lambda r: r.get("memoryId") in wanted and r.get("content") is not None)

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

    def forget_words(
        self,
        tombstone_id: str,
        *,
        wordings: Sequence[str],
        vectors: Sequence[tuple[str, npt.NDArray[Any]]] = (),
        no_propose: bool = True,
    ) -> Tombstone:
        """Delete forever: the tombstone's text goes, fingerprints of ``wordings`` (its text and
        the other wordings found of it) and ``vectors`` stay. The backup is refreshed, so the
        words do not live on in ``<file>.bak``."""
        prints = [self.fingerprint(text) for text in wordings if text and normalize(text)]

        def mutate(records: list[dict[str, Any]]) -> Changed[dict[str, Any]]:
            record = self._find(records, tombstone_id)
            old = [f for f in record.get("fingerprints") or () if isinstance(f, str)]
            record["fingerprints"] = list(dict.fromkeys([*old, *prints]))[-MAX_FINGERPRINTS:]
            kept = [v for v in record.get("vectors") or () if isinstance(v, dict)]
            record["vectors"] = kept + [encode_vector(model, row) for model, row in vectors]
            record.pop("content", None)
            record["forgottenAt"] = now_iso()
            record["noPropose"] = bool(no_propose) or record.get("noPropose") is True
            return Changed(record)

        with self._file.locked():
            result = Tombstone.from_dict(self._file.update(mutate))
            self._file.refresh_backup()
        return result

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


def forget_memory(
    store: MemoryStore,
    memory_id: str,
    *,
    actor: str | None = None,
    via: str = "library",
    conversation_id: str | None = None,
    no_propose: bool = False,
    tombstones: TombstoneStore | None = None,
) -> Memory | None:
    """Delete a memory because a person asked to, and remember that it was forgotten (by
    ``actor``, ``via`` which way, from which conversation); the memory as it was, or None when
    it was not there. The history log keeps it for undo until it is deleted forever."""
    memory = store.get(memory_id)
    if memory is None or not store.delete(memory_id, actor=actor):
        return None
    (tombstones or TombstoneStore.beside(store)).record(
        memory,
        by=actor or store.actor,
        via=via,
        conversation_id=conversation_id,
        no_propose=no_propose,
    )
    return memory


def forget_memories(
    store: MemoryStore,
    memory_ids: Iterable[str],
    *,
    actor: str | None = None,
    via: str = "library",
    no_propose: bool = False,
    tombstones: TombstoneStore | None = None,
) -> list[Memory]:
    """``forget_memory`` for several memories in one write each (the memories deleted)."""
    wanted = list(dict.fromkeys(memory_ids))
    before = [m for m in (store.get(i) for i in wanted) if m is not None]
    if not before or not store.delete_many(wanted, actor=actor):
        return []
    gone = [m for m in before if store.get(m.id) is None]
    (tombstones or TombstoneStore.beside(store)).record_many(
        gone, by=actor or store.actor, via=via, no_propose=no_propose
    )
    return gone
