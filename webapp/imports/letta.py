"""Letta agent files (``.af``): the text of the agent's memory blocks.

The current layout keeps the blocks at the top, ``{"agents": [...], "blocks": [{"label",
"value", "limit", "description", ...}], ...}``; the first published one (Letta 0.6) as
``{"core_memory": [{"label", "value", ...}], ...}``; agents may also list ``memory_blocks``.
Each statement of a block (a line, or a sentence of a line) becomes one proposal; the
``persona`` block describes the agent, not the person, and is refused. Tools, their source
code and the messages are never read.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from ..extraction.sentences import split_sentences
from ..text import shows_something
from .base import Parsed, Refusal, shown, wrong_format
from .text import parse as parse_text

FORMAT = "letta"
AGENT_BLOCKS = {"persona"}


def blocks_of(data: Any) -> list[Mapping[str, Any]] | None:
    """The memory blocks of an agent file, or None when ``data`` is not one."""
    if not isinstance(data, Mapping):
        return None
    found: list[Any] = []
    for key in ("blocks", "core_memory"):
        if isinstance(data.get(key), list):
            found.extend(data[key])
    agents = data.get("agents")
    if isinstance(agents, list):
        for agent in agents:
            if isinstance(agent, Mapping) and isinstance(agent.get("memory_blocks"), list):
                found.extend(agent["memory_blocks"])
    blocks = [b for b in found if isinstance(b, Mapping) and "label" in b and "value" in b]
    if not blocks and not (isinstance(agents, list) or "core_memory" in data):
        return None
    return blocks


def parse(data: Any) -> Parsed:
    """Each statement of each memory block as a candidate."""
    blocks = blocks_of(data)
    if blocks is None:
        raise wrong_format(FORMAT, None, 'no "blocks" or "core_memory" with label and value')
    parsed = Parsed(FORMAT)
    number = 0
    for block in blocks:
        label = block.get("label")
        value = block.get("value")
        evidence = f"Letta block {label}" if isinstance(label, str) else "Letta block"
        if not isinstance(value, str):
            number += 1
            parsed.refused.append(Refusal(number, "not_text", shown(value)))
            continue
        lines = parse_text(value)
        for refusal in lines.refused:
            parsed.refused.append(Refusal(number + refusal.line, refusal.reason, refusal.text))
        for candidate in lines.candidates:
            at = number + candidate.line
            if isinstance(label, str) and label_key(label) in AGENT_BLOCKS:
                parsed.refused.append(Refusal(at, "persona", shown(candidate.text)))
                continue
            for sentence in split_sentences(candidate.text):
                if _unknown_value(sentence):
                    parsed.refused.append(Refusal(at, "empty", shown(sentence)))
                    continue
                parsed.take(at, sentence, evidence=evidence)
        number += max(1, len(value.splitlines()))
    return parsed


def label_key(label: str) -> str:
    """A block's label as compared: "persona " (a trailing space), "Persona", "ＰＥＲＳＯＮＡ"
    (full width) and "per\u200bsona" (a zero-width space) are all the persona block."""
    text = unicodedata.normalize("NFKC", label)
    return "".join(c for c in text if shows_something(c) or c.isspace()).strip().casefold()


def _unknown_value(sentence: str) -> bool:
    """ "Last name: ?": a field the agent has no value for yet."""
    head, colon, tail = sentence.partition(":")
    return bool(colon) and tail.strip() in ("", "?", "-", "unknown", "N/A", "n/a")
