"""What the curator's operations return: values a door presents in its own words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..stores import Memory

if TYPE_CHECKING:
    from ..extraction.forgotten import ForgottenForever
    from ..stores.tombstones import Tombstone


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
