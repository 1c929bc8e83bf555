"""How the ``manage_memory`` tool words a memory for the model: ``[id] (category) content``,
where it came from, and until when it holds (``until_phrase``, which the CLI's answers use too)."""

from __future__ import annotations

from ..stores import Memory, describe_origin
from ..stores.timefmt import to_iso
from ..text import count_noun

__all__ = ["describe", "describe_listed", "expired_line", "origin_phrase", "until_phrase"]


def describe(memory: Memory) -> str:
    """One memory as the model sees it: ``[id] (category) content``."""
    return f"[{memory.id}] ({memory.category}) {memory.content}"


def origin_phrase(memory: Memory) -> str:
    """Where a memory came from, in a few words ("told through manage_memory", …)."""
    if memory.origin is None and memory.source:
        return f"source: {memory.source}"
    return describe_origin(memory.origin)


def describe_listed(memory: Memory) -> str:
    """A memory in list and search results: ``[id] (category) content — origin``, and when it
    stops being true if it has an expiry."""
    return f"{describe(memory)} — {origin_phrase(memory)}{until_phrase(memory)}"


def until_phrase(memory: Memory) -> str:
    """ " — until <time>" for a memory that stops being true then; nothing for one that never does."""
    return f" — until {to_iso(memory.expires_at)}" if memory.expires_at is not None else ""


def expired_line(count: int) -> list[str]:
    """What ``list`` says of the expired memories it left out (nothing when there are none)."""
    if not count:
        return []
    noun = count_noun(count, "expired memory", "expired memories")
    return [
        f"{noun} left out: no longer true, so not in prompts (a person can delete or "
        "extend them in the dashboard's Needs attention)."
    ]
