"""Two memories become one: merge, "Keep this one", and "Move to household" — each only while
the memories are still as the person saw them, and never carrying a person's words to everyone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..problems import InputError
from ..stores import ConflictError, Memory, NotFoundError, check_secret
from ..stores.memories import MergeResult, clean_content
from .people import in_view

if TYPE_CHECKING:
    from .core import Curator


def _gone(memory_id: str) -> NotFoundError:
    return NotFoundError(
        f"The memory {memory_id!r} is gone: it was deleted elsewhere.",
        code="memory_gone",
        id=repr(memory_id),
    )


def merge(
    curator: Curator,
    keep_id: str,
    drop_id: str,
    content: str,
    *,
    expected: dict[str, str] | None = None,
    confirm_secret: bool = False,
    actor: str | None = None,
) -> MergeResult:
    """Keep ``keep_id`` saying ``content`` and delete ``drop_id`` (restorable), while both are
    still at the versions in ``expected`` (ConflictError otherwise). The kept text is checked
    for secrets like any other. When the other is a person's and the kept memory is not theirs
    (the household's, or another person's), the kept memory keeps its own words: a person's
    wording never reaches anyone else through a merge (``merge_private``). A memory outside
    the curator's view is as gone as a deleted one (``memory_gone``)."""
    text = clean_content(content)
    check_secret(text, confirmed=confirm_secret)
    keep, drop = curator.memories.get(keep_id), curator.memories.get(drop_id)
    keep = keep if in_view(keep, curator.view) else None
    drop = drop if in_view(drop, curator.view) else None
    if keep is None or drop is None:
        raise _gone(keep_id if keep is None else drop_id)
    if drop.person is not None and drop.person != keep.person and text != keep.content:
        raise InputError(
            "The memory kept is the household's and the other is one person's: the "
            "household's keeps its own words (or keep the person's instead), so that a "
            "person's private wording never reaches everyone. Nothing was changed.",
            code="merge_private",
        )
    return curator.memories.merge(
        keep_id, drop_id, text, actor=actor or curator.actor, expected=expected
    )


def move_to_household(
    curator: Curator,
    memory_ids: list[str],
    *,
    expected: dict[str, str],
    actor: str | None = None,
) -> Memory:
    """A fact several people each keep becomes the household's, once: the first copy is moved
    to the household, the others deleted (restorable) — only while every copy is still at the
    version the person saw (``expected``; ConflictError otherwise, nothing changed)."""
    actor = actor or curator.actor
    if len(memory_ids) < 2:
        raise InputError("Choose at least two memories.", code="merge_same")
    found = [curator.memories.get(memory_id) for memory_id in memory_ids]
    found = [memory if in_view(memory, curator.view) else None for memory in found]
    for memory_id, memory in zip(memory_ids, found, strict=True):
        if memory is None:
            raise _gone(memory_id)
        seen = expected.get(memory_id)
        if not seen or memory.version != seen:
            raise ConflictError(memory)
    kept = [memory for memory in found if memory is not None]
    first = kept[0]
    moved = curator.memories.update(
        first.id, first.content, expected_updated_at=first.version, actor=actor, person=None
    )
    if moved is None:
        raise _gone(first.id)
    curator.memories.delete_many([memory.id for memory in kept[1:]], actor=actor)
    return moved
