"""Two memories become one: merge, "Keep this one", and "Move to household" — each only while
the memories are still as the person saw them (the version of every memory named is required:
a missing one is refused, never a check skipped), only for what Needs attention can offer (two
different memories, never two people's; copies of one fact, one per person), and never carrying
a person's words to everyone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..attention.findings import across_people
from ..problems import InputError
from ..stores import ConflictError, Memory, NotFoundError, check_secret
from ..stores.memories import MergeResult, clean_content
from ..text import same_fact_key
from .base import CuratorBase
from .people import in_view, ref_in_view


def _gone(memory_id: str) -> NotFoundError:
    return NotFoundError(
        f"The memory {memory_id!r} is gone: it was deleted elsewhere.",
        code="memory_gone",
        id=repr(memory_id),
    )


def _distinct(memory_ids: Sequence[str]) -> None:
    if len(set(memory_ids)) != len(memory_ids):
        raise InputError("Choose two different memories to merge.", code="merge_same")


def _one_fact_per_person(memories: Sequence[Memory]) -> None:
    """``household_not_one_fact`` unless each memory is a different person's and all say the
    same fact (what ``curation.attention.held_by_everyone`` offers)."""
    owners = [memory.person for memory in memories]
    keys = {same_fact_key(memory.content) for memory in memories}
    if None in owners or len(set(owners)) != len(owners) or len(keys) != 1:
        raise InputError(
            "Only copies of one fact, each kept by a different person, can become the "
            "household's. Nothing was changed.",
            code="household_not_one_fact",
        )


class Merging(CuratorBase):
    """Two memories made one, copies made the household's, and a merge undone."""

    def require_versions(
        self, memory_ids: Sequence[str], *, expected: Mapping[str, str] | None
    ) -> None:
        """``version_missing`` unless ``expected`` holds a version for every memory named: a
        change made from a page says which version it saw, so one made since is not overwritten
        unseen (a form without it is refused, not let through unchecked)."""
        for memory_id in memory_ids:
            seen = (expected or {}).get(memory_id)
            if not (isinstance(seen, str) and seen):
                raise InputError(
                    f"The version of the memory {memory_id!r} as you saw it is missing, so "
                    "nobody can tell whether it changed since; reload and try again. Nothing "
                    "was changed.",
                    code="version_missing",
                    id=repr(memory_id),
                )

    def merge(
        self,
        keep_id: str,
        drop_id: str,
        *,
        content: str,
        expected: Mapping[str, str] | None,
        confirm_secret: bool = False,
        actor: str | None = None,
    ) -> MergeResult:
        """Keep ``keep_id`` saying ``content`` and delete ``drop_id`` (restorable), while both are
        still at the versions in ``expected`` (ConflictError otherwise; ``version_missing`` when
        one is not given). The two must be different memories (``merge_same``) and not two
        people's (``merge_across_people``: Needs attention never offers such a pair). The kept
        text is checked for secrets like any other. When the other is a person's and the kept
        memory is not theirs (the household's, or another person's), the kept memory keeps its own
        words: a person's wording never reaches anyone else through a merge (``merge_private``). A
        memory outside the curator's view is as gone as a deleted one (``memory_gone``)."""
        _distinct([keep_id, drop_id])
        self.require_versions([keep_id, drop_id], expected=expected)
        text = clean_content(content)
        check_secret(text, confirmed=confirm_secret)
        keep, drop = self._memory_store.get(keep_id), self._memory_store.get(drop_id)
        keep = keep if in_view(keep, self.view) else None
        drop = drop if in_view(drop, self.view) else None
        if keep is None or drop is None:
            raise _gone(keep_id if keep is None else drop_id)
        if across_people([keep, drop]):
            raise InputError(
                "These are two people's memories: one person's fact is never merged into "
                "another's. Nothing was changed.",
                code="merge_across_people",
            )
        if drop.person is not None and drop.person != keep.person and text != keep.content:
            raise InputError(
                "The memory kept is the household's and the other is one person's: the "
                "household's keeps its own words (or keep the person's instead), so that a "
                "person's private wording never reaches everyone. Nothing was changed.",
                code="merge_private",
            )
        return self._memory_store.merge(
            keep_id, drop_id, text, actor=actor or self.actor, expected=expected
        )

    def move_to_household(
        self,
        memory_ids: Sequence[str],
        *,
        expected: Mapping[str, str],
        actor: str | None = None,
    ) -> Memory:
        """A fact several people each keep becomes the household's, once: the first copy is moved
        to the household, the others deleted (restorable) — only while every copy is still at the
        version the person saw (``expected``; ConflictError otherwise, ``version_missing`` when
        one is not given; nothing changed), and only for what Needs attention offers: two or more
        different memories, each a different person's, all saying the same fact (the same
        ``same_fact_key``), else ``household_not_one_fact``."""
        actor = actor or self.actor
        if len(memory_ids) < 2:
            raise InputError("Choose at least two memories.", code="merge_same")
        _distinct(memory_ids)
        self.require_versions(memory_ids, expected=expected)
        found = [self._memory_store.get(memory_id) for memory_id in memory_ids]
        found = [memory if in_view(memory, self.view) else None for memory in found]
        for memory_id, memory in zip(memory_ids, found, strict=True):
            if memory is None:
                raise _gone(memory_id)
            if memory.version != expected[memory_id]:
                raise ConflictError(memory)
        kept = [memory for memory in found if memory is not None]
        _one_fact_per_person(kept)
        first = kept[0]
        moved = self._memory_store.update(
            first.id, first.content, expected_updated_at=first.version, actor=actor, person=None
        )
        if moved is None:
            raise _gone(first.id)
        self._memory_store.delete_many([memory.id for memory in kept[1:]], actor=actor)
        return moved

    def undo_merge(
        self, dropped_id: str, *, update_hid: str | None = None, actor: str | None = None
    ) -> list[Memory]:
        """Bring back the memory a merge deleted and the kept one's earlier text (KeyError when
        there is nothing to undo, or it is outside this curator's view)."""
        for ref in (dropped_id, update_hid):
            if ref and not ref_in_view(self, ref):
                raise KeyError(f"Nothing to restore for {ref!r}.")
        return self._memory_store.undo_merge(dropped_id, update_hid, actor=actor or self.actor)
