"""Fact extraction: durable facts from conversations → reconcile with memory → review queue.

Everything public is importable from here; the modules behind it are internal. The LLM
callers live in ``webapp.llm`` and are exported here too, as host programs import them.
"""

from ..language.word_likeness import is_variant, near_identical, similarity
from ..llm import (
    AnthropicCaller,
    ClaudeCliCaller,
    ExplainingLlmCaller,
    LlmCallError,
    LlmConfigError,
    MemoryLlmCaller,
    OpenAiCaller,
    caller_from_settings,
)
from ..stores.review import Proposal, ReviewItem, ReviewQueue
from ..text import normalize
from .actions import Extracted, ManualModeError, ReconcileAction, Submitted
from .batch import BatchProgress, ExtractionBatch
from .changes import ChangeOfMind, find_changes
from .llm import (
    EXTRACTION_PROMPT,
    FactExtractor,
    LlmAnswer,
    LlmMemoryExtractor,
    StructuredFact,
    build_extraction_prompt,
    facts_from,
    parse_facts,
)
from .reconcile import MemoryExtractor
from .rules import rule_facts
from .run import ExtractionResult, build_extractor, extract_conversation, extract_due
from .sentences import split_sentences
from .state import ExtractionState

__all__ = [
    "AnthropicCaller",
    "BatchProgress",
    "ChangeOfMind",
    "ClaudeCliCaller",
    "EXTRACTION_PROMPT",
    "ExplainingLlmCaller",
    "Extracted",
    "ExtractionBatch",
    "ExtractionResult",
    "ExtractionState",
    "FactExtractor",
    "LlmAnswer",
    "LlmCallError",
    "LlmConfigError",
    "LlmMemoryExtractor",
    "ManualModeError",
    "MemoryExtractor",
    "MemoryLlmCaller",
    "OpenAiCaller",
    "Proposal",
    "ReconcileAction",
    "ReviewItem",
    "ReviewQueue",
    "StructuredFact",
    "Submitted",
    "build_extraction_prompt",
    "build_extractor",
    "caller_from_settings",
    "extract_conversation",
    "extract_due",
    "facts_from",
    "find_changes",
    "is_variant",
    "near_identical",
    "normalize",
    "parse_facts",
    "rule_facts",
    "similarity",
    "split_sentences",
]
