"""Needs attention's LLM tier: with an LLM configured, pairs of memories are sent to it, a
batch at a time, to say whether the two state the same fact, contradict each other, are
different facts, or may be related without it being sure ("unsure").

The pairs are the ones the similarity layer flagged and each memory's nearest neighbours by
meaning (``webapp.attention.llm_tier``), so the LLM reaches what the words cannot. Bounded:
at most ``BATCH`` pairs a request, and per scan at most ``ScanLimits.pairs`` pairs, about
``ScanLimits.tokens`` tokens of prompt and ``ScanLimits.seconds`` seconds
(``MEMORY_LLM_PAIRS_PER_SCAN``, ``MEMORY_LLM_TOKENS_PER_SCAN``, ``MEMORY_LLM_SECONDS_PER_SCAN``;
the rest are asked on a later scan); each memory cut to ``MAX_TEXT`` characters, each request
under the LLM's own timeout and reply cap. A request holds the pairs of one owner only (the
household's, or one person's with the household's), so the LLM never reads two people's
private memories together. Verdicts are kept per pair of texts (a memory's version), in this
process and in ``memories.pair-verdicts.json`` (``webapp.attention.pair_verdicts``), so a pair
is asked about once while neither side changes; after a failed request nothing is asked for
``BACKOFF`` seconds.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..llm import LlmConfigError, MemoryLlmCaller, ReplyShape, caller_from_settings, describe
from ..problems import CodedError
from ..sensitive.secrets import mask_secrets
from ..settings import DEFAULTS, Settings

log = logging.getLogger(__name__)

VERDICTS = ("same", "contradiction", "different", "unsure")
BATCH = 20  # pairs in one request
MAX_TEXT = 300  # characters of each memory sent
KEPT = 10_000  # verdicts kept (the oldest are let go)
BACKOFF = 300.0  # seconds without asking after a request failed

PROMPT = """You curate the long-term memory of a personal assistant. Each numbered pair below \
holds two remembered facts about the same household. For each pair, say whether the two state \
the same fact (perhaps in other words), contradict each other (the same thing with values that \
cannot both be true, or that one makes the other unlikely), or are different facts that can both be kept. When the two may be related (one may repeat, limit or \
conflict with the other) but you are not sure, say "unsure".

Answer with JSON only, a list with one object per pair:
[{{"pair": 1, "verdict": "same"}}, {{"pair": 2, "verdict": "contradiction"}}, \
{{"pair": 3, "verdict": "different"}}, {{"pair": 4, "verdict": "unsure"}}]

{pairs}"""

Pair = tuple[str, str]

# The list PROMPT asks for, as a structure for a provider that takes one (``homeassistant``).
VERDICTS_REPLY = ReplyShape(
    task_name="memory curator: pairs of memories",
    field="verdicts",
    description="One verdict for each numbered pair.",
    items={
        "pair": {"selector": {"number": {"min": 1, "mode": "box"}}, "required": True},
        "verdict": {"selector": {"select": {"options": list(VERDICTS)}}, "required": True},
    },
)


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
        if isinstance(number, float) and number.is_integer():
            number = int(number)  # a structured answer's "number" may come as 2.0
        if (
            isinstance(number, int)
            and not isinstance(number, bool)
            and 1 <= number <= count
            and isinstance(verdict, str)
            and verdict.strip().lower() in VERDICTS
        ):
            found[number - 1] = verdict.strip().lower()
    return found


@dataclass(frozen=True)
class ScanLimits:
    """What one scan may send: pairs, prompt tokens (estimated) and seconds."""

    pairs: int = DEFAULTS["llm_pairs_per_scan"]
    tokens: int = DEFAULTS["llm_tokens_per_scan"]
    seconds: float = DEFAULTS["llm_seconds_per_scan"]

    @classmethod
    def from_settings(cls, settings: Settings) -> ScanLimits:
        return cls(
            settings.llm_pairs_per_scan,
            settings.llm_tokens_per_scan,
            float(settings.llm_seconds_per_scan),
        )


def estimate_tokens(text: str) -> int:
    """A generous estimate of a prompt's tokens: a token per four ASCII characters and one per
    other character (a Chinese character is about one)."""
    ascii_chars = sum(ch.isascii() for ch in text)
    return ascii_chars // 4 + (len(text) - ascii_chars) + 1


class VerdictMemory(Protocol):
    """Where verdicts outlive the process (``webapp.attention.pair_verdicts.PairVerdicts``)."""

    def get(self, model: str, pairs: Sequence[Pair]) -> dict[Pair, str]: ...

    def put(self, model: str, verdicts: Mapping[Pair, str]) -> None: ...


class LlmPairChecker:
    """Asks an LLM about pairs of memories; the verdicts it gave are kept per pair of texts
    (in this process, and in ``memory`` when given)."""

    def __init__(
        self,
        caller: MemoryLlmCaller,
        name: str,
        *,
        limits: ScanLimits | None = None,
        memory: VerdictMemory | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.caller = caller
        self.name = name  # shown as "checked by <name>"
        self.limits = limits or ScanLimits()
        self.memory = memory
        self._clock = clock
        self._verdicts: OrderedDict[Pair, str] = OrderedDict()
        self._lock = threading.Lock()
        self._quiet_until = 0.0
        self.asked = 0  # requests sent (for the log and the tests)

    def known(self, pairs: Sequence[Pair]) -> dict[Pair, str]:
        """The verdicts already given about ``pairs`` (keyed as given)."""
        with self._lock:
            missing = [p for p in dict.fromkeys(map(_key, pairs)) if p not in self._verdicts]
        if missing and self.memory is not None:
            try:
                self._keep(self.memory.get(self.name, missing))
            except (OSError, CodedError) as error:
                log.warning("Needs attention: the kept verdicts could not be read (%s)", error)
        with self._lock:
            return {
                pair: self._verdicts[_key(pair)] for pair in pairs if _key(pair) in self._verdicts
            }

    def _keep(self, verdicts: Mapping[Pair, str]) -> None:
        with self._lock:
            for pair, verdict in verdicts.items():
                self._verdicts[pair] = verdict
                self._verdicts.move_to_end(pair)
            while len(self._verdicts) > KEPT:
                self._verdicts.popitem(last=False)

    def waiting(self, pairs: Sequence[Pair]) -> bool:
        """True when some of ``pairs`` have no verdict and the LLM may be asked now."""
        if self._clock() < self._quiet_until:
            return False
        return len(self.known(pairs)) < len(set(pairs))

    def check(
        self, pairs: Sequence[Pair], owners: Sequence[Hashable] | None = None
    ) -> dict[Pair, str]:
        """Verdicts for ``pairs``: those given before, then the LLM asked about new ones in the
        order given, ``BATCH`` at a time and within ``limits`` (pairs, tokens, seconds). With
        ``owners`` (one per pair), a request holds the pairs of one owner only. A failed or
        unreadable reply leaves its pairs without a verdict (asked again on a later scan, after
        ``BACKOFF`` seconds)."""
        known = self.known(pairs)
        owner_of: dict[Pair, Hashable] = {}
        for index, pair in enumerate(pairs):
            if pair not in known:
                owner_of.setdefault(_key(pair), owners[index] if owners is not None else None)
        started = self._clock()
        budget = self.limits.tokens
        sent = 0
        for batch in self._batches(owner_of):
            if self._clock() < self._quiet_until or sent >= self.limits.pairs:
                break
            if self._clock() - started >= self.limits.seconds:
                break
            batch = batch[: self.limits.pairs - sent]
            while batch and estimate_tokens(batch_prompt(batch)) > budget:
                batch = batch[: len(batch) // 2] if len(batch) > 1 else []
            if not batch:
                break
            prompt = batch_prompt(batch)
            budget -= estimate_tokens(prompt)
            sent += len(batch)
            self.asked += 1
            reply = self.caller.call(prompt)
            verdicts = parse_verdicts(reply, len(batch)) if reply is not None else {}
            if not verdicts:
                log.warning("Needs attention: %s gave no usable verdicts", self.name)
                self._quiet_until = self._clock() + BACKOFF
                break
            given = {batch[index]: verdict for index, verdict in verdicts.items()}
            self._keep(given)
            if self.memory is not None:
                try:
                    self.memory.put(self.name, given)
                except (OSError, CodedError) as error:
                    log.warning("Needs attention: the verdicts could not be kept (%s)", error)
        return self.known(pairs)

    @staticmethod
    def _batches(owner_of: Mapping[Pair, Hashable]) -> list[list[Pair]]:
        """The pairs in batches of ``BATCH``, each of one owner, in the order given."""
        open_batches: dict[Hashable, list[Pair]] = {}
        batches: list[list[Pair]] = []
        for pair, owner in owner_of.items():
            batch = open_batches.get(owner)
            if batch is None or len(batch) >= BATCH:
                batch = open_batches[owner] = []
                batches.append(batch)
            batch.append(pair)
        return batches


def _model_name(settings: Settings) -> str:
    """The model the verdicts are kept under: the model's name, or the AI Task entity."""
    if settings.llm_provider == "homeassistant":
        return settings.ha_ai_task_entity.strip()
    return settings.llm_model


def pair_checker_from_settings(
    settings: Settings, memory: VerdictMemory | None = None
) -> LlmPairChecker | None:
    """The checker for the configured LLM (its verdicts kept in ``memory`` too), or None
    without one (or with an unusable setting: extraction says why; Needs attention then goes
    on with the rules and the model)."""
    try:
        caller = caller_from_settings(settings, shape=VERDICTS_REPLY)
    except LlmConfigError:
        return None
    if caller is None:
        return None
    return LlmPairChecker(
        caller,
        _model_name(settings) or describe(caller),
        limits=ScanLimits.from_settings(settings),
        memory=memory,
    )
