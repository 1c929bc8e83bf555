"""Stores built straight on a file, with the small caps most tests want: the factories say the
usual caps once, and a test names only the cap it is about."""

from __future__ import annotations

from pathlib import Path

from webapp.stores import ConversationStore, MemoryStore


def memory_store(
    path: Path,
    *,
    max_items: int = 100,
    max_chars: int = 10_000,
    lock_timeout: float = 5,
    actor: str = "library",
) -> MemoryStore:
    """A memory store on ``path``: 100 memories of up to 10,000 characters, a 5 s lock wait."""
    return MemoryStore(
        path, max_items=max_items, max_chars=max_chars, lock_timeout=lock_timeout, actor=actor
    )


def conversation_store(
    path: Path,
    *,
    max_turns: int = 20,
    max_chars: int = 8000,
    max_age_days: int = 7,
    lock_timeout: float = 5,
) -> ConversationStore:
    """A conversation store on ``path``: 20 turns of up to 8,000 characters a thread, kept a
    week, a 5 s lock wait."""
    return ConversationStore(
        path,
        max_turns=max_turns,
        max_chars=max_chars,
        max_age_days=max_age_days,
        lock_timeout=lock_timeout,
    )
