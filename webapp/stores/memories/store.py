"""``MemoryStore``: the long-term memory file, put together from its parts."""

from __future__ import annotations

from .imports import MemoryImports
from .queries import MemoryQueries
from .restoring import MemoryHistory


class MemoryStore(MemoryQueries, MemoryHistory, MemoryImports):
    """The long-term memory file (a JSON array), safe for several processes at once.

    Build it with ``MemoryStore.from_settings(settings)``. The constructor reads the environment
    only when it is given no ``path`` (then everything comes from ``Settings.from_env()``); with a
    path it uses what it is given and the documented defaults for the rest.

    Its parts: ``file`` (the file, its cached views, caps and the one way to write),
    ``queries`` (reading, search, pages), ``writing`` (add, update, delete, merge),
    ``restoring`` (history, restore, Delete forever) and ``imports`` (export and import).
    """
