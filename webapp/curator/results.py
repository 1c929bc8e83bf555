"""What the curator's operations return: values a door presents in its own words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..stores import Memory
from .wiping import MARKER

__all__ = ["MARKER"]  # what Delete forever leaves where words were (a door says it)

if TYPE_CHECKING:
    from ..stores.tombstones import Tombstone
    from .forgetting import ForgottenForever


@dataclass(frozen=True)
class Revision:
    """A memory before and after a change (``before == after`` when nothing changed)."""

    before: Memory
    after: Memory

    @property
    def changed(self) -> bool:
        return (self.before.content, self.before.category, self.before.person) != (
            self.after.content,
            self.after.category,
            self.after.person,
        )


@dataclass(frozen=True)
class Forgetting:
    """What ``forget`` did: the memory deleted now (None when it was gone already), the
    tombstone that remembers it, and, for Delete forever, what was wiped."""

    memory: Memory | None
    tombstone: Tombstone | None
    forever: ForgottenForever | None = None
