"""Long-term memory: durable facts and preferences injected into every prompt, capped in size.

``MemoryStore`` (``store``) is put together from its parts: ``file`` (the file, its cached
views, caps and the one way to write), ``queries``, ``writing``, ``restoring`` (history,
restore, Delete forever) and ``imports``; ``model`` holds the values it answers with. The
memory record (``Memory``) and the field checks are shared with the other stores
(``webapp.stores.records``) and importable here as before.
"""

from ..records import (
    CATEGORIES,
    KEEP,
    Keep,
    Memory,
    check_category,
    check_length,
    check_secret,
    clean_content,
    is_valid_unicode,
    trim_invisible,
)
from .imports import MAX_RECORD_DEPTH
from .model import (
    DEFAULT_SORT,
    EXPIRY_FILTERS,
    HOUSEHOLD,
    MAX_CACHED_QUERIES,
    PER_PAGE,
    SORTS,
    TIME_FIELDS,
    WARN_RATIO,
    DeletedMemory,
    Deletion,
    ImportPreview,
    MemoryPage,
    MemoryUsage,
    MergeResult,
    record_problem,
    replay_history,
)
from .restoring import _deleted_from as _deleted_from  # (a test reads it)
from .store import MemoryStore

__all__ = [
    "CATEGORIES",
    "DEFAULT_SORT",
    "EXPIRY_FILTERS",
    "HOUSEHOLD",
    "KEEP",
    "MAX_CACHED_QUERIES",
    "MAX_RECORD_DEPTH",
    "PER_PAGE",
    "SORTS",
    "TIME_FIELDS",
    "WARN_RATIO",
    "DeletedMemory",
    "Deletion",
    "ImportPreview",
    "Keep",
    "Memory",
    "MemoryPage",
    "MemoryStore",
    "MemoryUsage",
    "MergeResult",
    "check_category",
    "check_length",
    "check_secret",
    "clean_content",
    "is_valid_unicode",
    "record_problem",
    "replay_history",
    "trim_invisible",
]
