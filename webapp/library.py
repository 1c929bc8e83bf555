"""The public library: the household's memory for a host program (a bot, a script), under the
seed's names, every write through the curator (``webapp.curator``).

``MemoryStore`` here keeps the seed's calls (``add``, ``get``, ``get_all``, ``for_person``,
``search``, ``update``, ``delete``) and applies the curator's rules on each write, as the
dashboard, the command line and the MCP server do: a secret, a fact a person deleted forever,
a full store, an unknown category or person are refused with a coded error
(``webapp.problems.CodedError``: ``code`` and the words to show), nothing written; the same
fact again returns the memory that already says it. The raw store (``webapp.stores``) is the
curator's own and applies none of these rules.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from .curator import SAID, Curator, Said, SimilarMemoryError, UnknownPersonError
from .curator.errors import ForgottenFactError
from .problems import CodedError
from .prompts import compose_prompt
from .settings import Settings
from .stores import (
    ConversationStore,
    DuplicateMemoryError,
    Memory,
    MemoryFullError,
    NotFoundError,
    PeopleStore,
    SecretInputError,
    slack_key,
    slack_person,
)
from .stores.memories import KEEP, Keep

__all__ = [
    "SAID",
    "CodedError",
    "ConversationStore",
    "Curator",
    "ForgottenFactError",
    "Memory",
    "MemoryFullError",
    "MemoryStore",
    "PeopleStore",
    "SecretInputError",
    "Settings",
    "SimilarMemoryError",
    "UnknownPersonError",
    "compose_prompt",
    "slack_key",
    "slack_person",
]


class MemoryStore:
    """The memories of one data folder as the seed named their calls, curated.

    ``MemoryStore(path, max_items=, max_chars=, lock_timeout=)`` is the seed's constructor (the
    folder of ``path`` holds the other stores); ``MemoryStore.from_settings(settings)`` opens
    the folder the settings name. ``curator`` is the whole curator of that folder (approve,
    extract, Delete forever, ...)."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        max_items: int | None = None,
        max_chars: int | None = None,
        lock_timeout: int | None = None,
        settings: Settings | None = None,
        actor: str = "library",
    ) -> None:
        chosen = settings or Settings.from_env()
        if path is not None:
            chosen = replace(chosen.with_data_dir(Path(path).parent), memory_file=Path(path))
        caps: dict[str, Any] = {
            "memory_max_items": max_items,
            "memory_max_chars": max_chars,
            "lock_timeout": lock_timeout,
        }
        chosen = replace(chosen, **{k: v for k, v in caps.items() if v is not None})
        self.curator = Curator.from_settings(chosen, actor=actor, via="library")

    @classmethod
    def from_settings(
        cls, settings: Settings | None = None, *, actor: str = "library"
    ) -> MemoryStore:
        """The memories of the data folder ``settings`` name (read from the environment when
        None), written as ``actor``."""
        return cls(settings=settings, actor=actor)

    def init(self) -> MemoryStore:
        """Create the memory file when missing (``[]``); returns the store."""
        self.curator.init_files()
        return self

    @property
    def path(self) -> Path:
        return self.curator.memories.path

    # ----------------------------------------------------------------- reading
    def get(self, memory_id: str) -> Memory | None:
        return self.curator.memories.get(memory_id)

    def get_all(self, *, person: str | None = None) -> list[Memory]:
        """Every memory in creation order; with ``person``, theirs and the household's."""
        return self.curator.memories.get_all(person=person)

    def for_person(self, person_id: str | None) -> list[Memory]:
        """What one person's prompt gets: the household's memories and their own."""
        return self.curator.memories.for_person(person_id)

    def search(self, keyword: str, *, person: str | None = None) -> list[Memory]:
        """Memories holding every word of ``keyword`` (case, width and Chinese script ignored)."""
        return self.curator.memories.search(keyword, person=person)

    # ----------------------------------------------------------------- writing (the curator)
    def add(
        self,
        content: str,
        *,
        category: str = "general",
        person: str | None = None,
        expires_at: datetime | None | Said = SAID,
        source: str | None = None,
        origin: dict[str, Any] | None = None,
        confirm_secret: bool = False,
        allow_similar: bool = False,
    ) -> Memory:
        """Keep a new fact (``Curator.remember``) and return it with its id; the same fact
        already kept in that view returns that memory, nothing added. Refused with a coded
        error, nothing written: a secret (``secret_input``) unless ``confirm_secret``, a fact
        a person deleted forever (``deleted_forever``), the same fact in other words
        (``similar_memory``, ``existing`` names it) unless ``allow_similar``, a full store
        (``memory_full``, ``memory_full_chars``), empty or too long words (a ValueError)."""
        try:
            return self.curator.remember(
                content,
                category=category,
                person=person,
                expires_at=expires_at,
                source=source,
                origin=origin,
                confirm_secret=confirm_secret,
                allow_similar=allow_similar,
            )
        except DuplicateMemoryError as exc:
            existing: Memory = exc.existing
            return existing

    def update(
        self,
        memory_id: str,
        content: str,
        *,
        category: str | None = None,
        person: str | None | Keep = KEEP,
        expires_at: datetime | None | Keep | Said = SAID,
        confirm_secret: bool = False,
        expected: str | None = None,
    ) -> Memory | None:
        """Change a memory's words (``Curator.revise``, a secret refused as in ``add``); None
        when there is no such memory. ``expected``: the version the caller showed (a change
        since is refused, ``conflict``)."""
        try:
            revision = self.curator.revise(
                memory_id,
                content=content,
                category=category,
                person=person,
                expires_at=expires_at,
                confirm_secret=confirm_secret,
                expected=expected,
            )
        except NotFoundError as exc:
            if exc.code != "memory_gone":
                raise
            return None
        return revision.after

    def delete(
        self, memory_id: str, *, forever: bool = False, dont_propose_again: bool = False
    ) -> bool:
        """Forget a memory (``Curator.forget``: its tombstone recorded, so extraction does not
        bring it back unmarked); ``forever`` wipes its words everywhere. False when there is
        no such memory."""
        if self.curator.memories.get(memory_id) is None:
            return False
        try:
            self.curator.forget(memory_id, dont_propose_again=dont_propose_again, forever=forever)
        except NotFoundError as exc:
            if exc.code != "memory_gone":
                raise
            return False
        return True
