"""The review queue: facts the extractor proposes, waiting for a person to approve, edit or reject.

On disk (``data/review.json``, add-on ``/data/memories/review.json``): a JSON array of items
``{"id", "action", "content", "category", "confidence", "extractor", "conversationId",
"evidence", "memoryId", "currentContent", "status", "createdAt", "decidedAt", "decidedBy"}``
(and, when known, ``evidenceAt``: the message's timestamp, ``extractorModel``: the LLM's
provider/model); approved items also record what was applied so the decision can be undone,
and the memory they wrote records its ``origin``. Rejected items stay in the file: a rejected
fact is not proposed again.

Its parts: ``items`` (a review item, a proposal, the record a proposal is queued as and the
file's record checks), ``queue`` (the file and its decisions), ``repeats`` (what a new proposal
repeats: a pending, approved or rejected item), ``applying`` (what an approval does in memory,
and reverting it), ``yields`` (what a conversation left in memory, and forgetting it) and
``memory`` (the memory store as the queue uses it: a Protocol, never the memory store itself).
"""

from .items import (
    ACTIONS,
    APPLIED_ACTIONS,
    EXTRACTORS,
    MAX_DECIDED,
    STATUSES,
    TEXT_FIELDS,
    TIME_FIELDS,
    Proposal,
    ReviewItem,
    review_origin,
)
from .memory import MemoryBook
from .queue import Claim, ReviewQueue
from .yields import (
    ConversationYield,
    DeletedByIt,
    Forgotten,
    Reverted,
    derived_from,
    forget_conversation,
    undo_forget,
)

__all__ = [
    "ACTIONS",
    "APPLIED_ACTIONS",
    "EXTRACTORS",
    "MAX_DECIDED",
    "STATUSES",
    "TEXT_FIELDS",
    "TIME_FIELDS",
    "Claim",
    "ConversationYield",
    "DeletedByIt",
    "Forgotten",
    "MemoryBook",
    "Proposal",
    "ReviewItem",
    "ReviewQueue",
    "Reverted",
    "derived_from",
    "forget_conversation",
    "review_origin",
    "undo_forget",
]
