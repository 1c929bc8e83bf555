"""What long-term memory held at a past moment, rebuilt from the history log ("as of").

The memories as they are now, with every history entry newer than the moment taken back, last
first: an ``add`` removes its memory, an ``update`` or ``restore`` puts back the text before it,
a ``delete`` brings the memory back. A memory with no history newer than the moment is as it is
now, if it was created by then (one written by a program that keeps no history counts from its
``createdAt``). Entries purged by Delete forever are gone, and so is what they said. Read-only:
going back to an earlier state is the history page's Restore, memory by memory.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .memories import Memory, record_problem
from .readers import MemoryReader
from .timefmt import read_time


def memories_as_of(store: MemoryReader, moment: datetime) -> list[Memory]:
    """The memories ``store`` held at ``moment`` (an aware datetime), oldest first."""
    records: dict[str, dict[str, Any]] = {m.id: m.to_dict() for m in store.get_all()}
    for entry in reversed(store.history()):
        at = read_time(entry.get("ts"))
        record_id = entry.get("id")
        if at is None or at <= moment or not isinstance(record_id, str):
            continue
        before = entry.get("before")
        if isinstance(before, dict) and record_problem(before) is None:
            records[record_id] = {**before, "id": record_id}
        else:
            records.pop(record_id, None)
    memories = [Memory.from_dict(r) for r in records.values()]
    kept = [m for m in memories if m.created_at <= moment]
    return sorted(kept, key=lambda m: m.created_at)
