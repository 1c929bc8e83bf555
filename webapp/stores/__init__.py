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
    MemoryFullError,
    NotFoundError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
)
from .memories import CATEGORIES, Memory, MemoryStore
from .review import Proposal, ReviewItem, ReviewQueue

__all__ = [
    "CATEGORIES",
    "ConflictError",
    "ConversationStore",
    "ConversationSummary",
    "ConversationTurn",
    "Memory",
    "MemoryFullError",
    "MemoryStore",
    "NotFoundError",
    "Proposal",
    "ReviewItem",
    "ReviewQueue",
    "StoreBusyError",
    "StoreCorruptError",
    "StoreError",
    "cli_session_key",
    "interface_of",
    "schedule_key",
    "slack_key",
    "trim_turns",
]
