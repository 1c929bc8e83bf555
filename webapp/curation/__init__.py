"""Curation: what a person should look at in what is remembered, and how good the extractor is.

- ``pairs``: two memories compared by rules (near-duplicates, contradictions, what an update
  would drop, whether a fact restates a memory), with the reason as a code and its values;
- ``attention``: Needs attention (``scan``, the background ``AttentionScanner``, the
  ``SimilarityIndex`` behind Review's "most similar memories");
- ``approval``: the review queue's decisions as approval rates per extractor, category and
  language.

It reads the stores and never writes them; extraction and the interfaces sit above it.
"""

from .approval import extraction_quality, format_quality
from .attention import KINDS, AttentionReport, AttentionScanner, scan
from .findings import Finding
from .pairs import PairVerdict, Reason, compare, drops_information, restates

__all__ = [
    "KINDS",
    "AttentionReport",
    "AttentionScanner",
    "Finding",
    "PairVerdict",
    "Reason",
    "compare",
    "drops_information",
    "extraction_quality",
    "format_quality",
    "restates",
    "scan",
]
