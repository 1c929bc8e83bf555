"""Needs attention: what a person should look at in what is remembered.

- ``pairs``: two memories compared by rules (near-duplicates, contradictions, what an update
  would drop, whether a fact restates a memory), with the reason as a code and its values;
- ``scanner``: Needs attention (``scan``, the background ``AttentionScanner``, the findings
  still true while a rescan runs), over ``pair_findings`` (candidate pairs by rarer terms, pairs
  by the rules or by meaning, the same fact held by everyone) and ``one_memory`` (stale, hard to
  use, a secret, expired);
- ``most_similar``: the memories most like a text (Review's "most similar memories", the
  near-duplicate an add is refused for);
- ``findings``: what a scan finds and whose memories it may show;
- ``percent_alike``: how alike two memories are, as a page shows it ("82% alike");
- ``semantic``: the similarity layer for one memory file (judge, vectors, nearest pairs);
- ``llm_tier`` and ``pair_verdicts``: which pairs an LLM is asked about, and its verdicts kept.

It reads the stores and never writes them (the verdict file is its own); extraction, the
curator and the interfaces sit above it.
"""

from .findings import Finding
from .pairs import PairVerdict, Reason, compare, drops_information, restates
from .scanner import KINDS, AttentionReport, AttentionScanner, scan

__all__ = [
    "KINDS",
    "AttentionReport",
    "AttentionScanner",
    "Finding",
    "PairVerdict",
    "Reason",
    "compare",
    "drops_information",
    "restates",
    "scan",
]
