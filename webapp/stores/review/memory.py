"""The memory store as the review queue uses it: a Protocol, so the queue (which approves into
long-term memory and undoes what it did) never imports the memory store. ``MemoryStore`` is one;
``ReviewQueue.from_settings`` builds it when given none (``webapp.stores`` wires that)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Protocol

from ...settings import Settings
from ..records import Keep, Memory


class Deletion(Protocol):
    """What ``delete_unchanged`` did: the ids deleted, the memories left alone (changed since)."""

    @property
    def deleted(self) -> list[str]: ...

    @property
    def left_alone(self) -> list[Memory]: ...


class MemoryBook(Protocol):
    """The long-term memory a review queue writes approvals into (``MemoryStore``)."""

    max_chars: int

    def get(self, memory_id: str) -> Memory | None: ...

    def get_all(self, *, person: str | None = None) -> list[Memory]: ...

    def deleted(self, memory_id: str) -> Memory | None: ...

    def history(self, memory_id: str | None = None) -> list[dict[str, Any]]: ...

    def change(self, hid: str) -> dict[str, Any] | None: ...

    def add(
        self,
        content: str,
        *,
        category: str = ...,
        source: str | None = ...,
        actor: str | None = ...,
        allow_duplicate: bool = ...,
        origin: dict[str, Any] | None = ...,
        person: str | None = ...,
        expires_at: datetime | None = ...,
    ) -> Memory: ...

    def update(
        self,
        memory_id: str,
        content: str,
        *,
        expected_updated_at: Any = ...,
        category: str | None = ...,
        actor: str | None = ...,
        origin: dict[str, Any] | None = ...,
        person: str | None | Keep = ...,
    ) -> Memory | None: ...

    def set_expiry(
        self,
        memory_id: str,
        expires_at: datetime | None,
        *,
        expected_updated_at: Any = ...,
        actor: str | None = ...,
    ) -> Memory | None: ...

    def delete(self, memory_id: str, *, actor: str | None = ...) -> bool: ...

    def delete_unchanged(
        self, seen: Mapping[str, Memory | str], *, actor: str | None = ...
    ) -> Deletion: ...

    def restore(
        self, ref: str, *, actor: str | None = ..., expected: Memory | str | None = ...
    ) -> Memory: ...


# The memory store ``ReviewQueue.from_settings`` approves into when it is given none: set to
# ``MemoryStore.from_settings`` by ``webapp.stores`` (the package knows every store; one store
# never imports another), which Python imports before any of its modules.
default_memories: Callable[[Settings, str], MemoryBook] | None = None
