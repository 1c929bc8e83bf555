"""The shared stores: long-term memory, conversation history (and, as they land, skills and review).

Everything public is importable from here; the modules behind it are internal.
"""

from .conversations import (
    ConversationStore,
    ConversationSummary,
    ConversationTurn,
    cli_session_key,
    interface_of,
    schedule_key,
    slack_key,
    trim_turns,
)
from .errors import (
    ConflictError,
    DuplicateMemoryError,
    MemoryFullError,
    NotFoundError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreSymlinkError,
    StoreWriteError,
)
from .memories import CATEGORIES, ImportPreview, Memory, MemoryStore
from .review import Proposal, ReviewItem, ReviewQueue
from .skills import (
    ImportReport,
    InvalidSkillDocumentError,
    MergedMemory,
    SearchHit,
    SkillDocument,
    SkillDocumentConflictError,
    SkillDocumentError,
    SkillDocumentProblem,
    SkillDocumentStore,
    SkillImportError,
    UnsafeNameError,
    merge_memories,
)

__all__ = [
    "CATEGORIES",
    "ConflictError",
    "DuplicateMemoryError",
    "ConversationStore",
    "ConversationSummary",
    "ConversationTurn",
    "ImportReport",
    "InvalidSkillDocumentError",
    "ImportPreview",
    "Memory",
    "MemoryFullError",
    "MemoryStore",
    "MergedMemory",
    "NotFoundError",
    "Proposal",
    "ReviewItem",
    "ReviewQueue",
    "SearchHit",
    "SkillDocument",
    "SkillDocumentConflictError",
    "SkillDocumentError",
    "SkillDocumentProblem",
    "SkillDocumentStore",
    "SkillImportError",
    "StoreBusyError",
    "StoreCorruptError",
    "StoreError",
    "StoreSymlinkError",
    "StoreWriteError",
    "UnsafeNameError",
    "cli_session_key",
    "interface_of",
    "merge_memories",
    "schedule_key",
    "slack_key",
    "trim_turns",
]
