"""Needs attention's second opinion: with an LLM configured, the pairs the similarity layer
flagged are sent to it, a batch at a time, to say whether the two memories state the same fact,
contradict each other or are different facts.

Bounded: at most ``BATCH`` pairs a request and ``MOST_PAIRS`` a scan (the rest are asked on a
later scan), each memory cut to ``MAX_TEXT`` characters, each request under the LLM's own
timeout and reply cap (``MEMORY_LLM_TIMEOUT``, ``MEMORY_LLM_MAX_REPLY_BYTES``). Verdicts are
kept per pair of texts (a memory's version), so a pair is asked about once while neither side
changes; after a failed request nothing is asked for ``BACKOFF`` seconds.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from ..sensitive import mask_secrets
from ..settings import Settings
from .backends import LlmConfigError, caller_from_settings, describe
from .llm import MemoryLlmCaller

log = logging.getLogger(__name__)

VERDICTS = ("same", "contradiction", "different")
BATCH = 20  # pairs in one request
MOST_PAIRS = 60  # pairs asked about in one scan
MAX_TEXT = 300  # characters of each memory sent
KEPT = 10_000  # verdicts kept (the oldest are let go)
BACKOFF = 300.0  # seconds without asking after a request failed

PROMPT = """You curate the long-term memory of a personal assistant. Each numbered pair below \
holds two remembered facts about the same household. For each pair, say whether the two state \
the same fact (perhaps in other words), contradict each other (the same thing with values that \
cannot both be true), or are different facts that can both be kept.

Answer with JSON only, a list with one object per pair:
[{{"pair": 1, "verdict": "same"}}, {{"pair": 2, "verdict": "contradiction"}}, \
{{"pair": 3, "verdict": "different"}}]

{pairs}"""

Pair = tuple[str, str]


def _key(pair: Pair) -> Pair:
    first, second = pair
    return (first, second) if first <= second else (second, first)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def batch_prompt(pairs: Sequence[Pair]) -> str:
    """The request for one batch: the pairs numbered from 1, each text as a JSON string (so a
    memory holding quotes or instructions stays one value), its secrets masked."""
    lines = [
        f"{number}. A: {json.dumps(_cut(mask_secrets(a)), ensure_ascii=False)}\n"
        f"   B: {json.dumps(_cut(mask_secrets(b)), ensure_ascii=False)}"
        for number, (a, b) in enumerate(pairs, start=1)
    ]
    return PROMPT.format(pairs="\n".join(lines))


def parse_verdicts(reply: str, count: int) -> dict[int, str]:
    """Pair number (0-based) → verdict from a reply; anything unreadable is left out."""
    text = reply.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        return {}
    try:
        data: Any = json.loads(text[start : end + 1])
    except ValueError:
        return {}
    found: dict[int, str] = {}
    for item in data if isinstance(data, list) else []:
        if not isinstance(item, dict):
            continue
        number, verdict = item.get("pair"), item.get("verdict")
        if (
            isinstance(number, int)
            and not isinstance(number, bool)
            and 1 <= number <= count
            and isinstance(verdict, str)
            and verdict.strip().lower() in VERDICTS
        ):
            found[number - 1] = verdict.strip().lower()
    return found


class LlmPairChecker:
    """Asks an LLM about pairs of memories; the verdicts it gave are kept per pair of texts."""

    def __init__(
        self,
        caller: MemoryLlmCaller,
        name: str,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.caller = caller
        self.name = name  # shown as "checked by <name>"
        self._clock = clock
        self._verdicts: OrderedDict[Pair, str] = OrderedDict()
        self._lock = threading.Lock()
        self._quiet_until = 0.0
        self.asked = 0  # requests sent (for the log and the tests)

    def known(self, pairs: Sequence[Pair]) -> dict[Pair, str]:
        """The verdicts already given about ``pairs`` (keyed as given)."""
        with self._lock:
            return {
                pair: self._verdicts[_key(pair)] for pair in pairs if _key(pair) in self._verdicts
            }

    def waiting(self, pairs: Sequence[Pair]) -> bool:
        """True when some of ``pairs`` have no verdict and the LLM may be asked now."""
        if self._clock() < self._quiet_until:
            return False
        return len(self.known(pairs)) < len(set(pairs))

    def check(self, pairs: Sequence[Pair]) -> dict[Pair, str]:
        """Verdicts for ``pairs``: those given before, then the LLM asked about up to
        ``MOST_PAIRS`` new ones, ``BATCH`` at a time. A failed or unreadable reply leaves its
        pairs without a verdict (asked again on a later scan, after ``BACKOFF`` seconds)."""
        known = self.known(pairs)
        new = list(dict.fromkeys(_key(p) for p in pairs if p not in known))[:MOST_PAIRS]
        for start in range(0, len(new), BATCH):
            if self._clock() < self._quiet_until:
                break
            batch = new[start : start + BATCH]
            self.asked += 1
            reply = self.caller.call(batch_prompt(batch))
            verdicts = parse_verdicts(reply, len(batch)) if reply is not None else {}
            if not verdicts:
                log.warning("Needs attention: %s gave no usable verdicts", self.name)
                self._quiet_until = self._clock() + BACKOFF
                break
            with self._lock:
                for index, verdict in verdicts.items():
                    self._verdicts[batch[index]] = verdict
                    self._verdicts.move_to_end(batch[index])
                while len(self._verdicts) > KEPT:
                    self._verdicts.popitem(last=False)
        return self.known(pairs)


def pair_checker_from_settings(settings: Settings) -> LlmPairChecker | None:
    """The checker for the configured LLM, or None without one (or with an unusable setting:
    extraction says why; Needs attention then goes on with the rules and the model)."""
    try:
        caller = caller_from_settings(settings)
    except LlmConfigError:
        return None
    if caller is None:
        return None
    return LlmPairChecker(caller, settings.llm_model or describe(caller))
