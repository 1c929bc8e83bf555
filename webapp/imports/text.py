"""Pasted text: ChatGPT's "Manage memories" list, Claude's memory text, any list of facts.

One memory per line: bullets (``-``, ``*``, ``•``, ``·``), numbers (``1.``, ``2)``, ``３、``)
and Markdown emphasis are taken off; Markdown headings and bold-only lines are headings, not
memories. Works the same for English, 繁體 and 简体 (the lines are only trimmed).
"""

from __future__ import annotations

import re

from .base import Parsed, Refusal, clean_line, shown

FORMAT = "text"

_BULLET = re.compile(
    r"^\s*(?:[-*+•·●▪‣–—]|\d{1,4}\s*[.)、．]|[０-９]{1,4}\s*[.)、．]|\(\d{1,4}\)|[a-zA-Z][.)](?=\s))\s*"
)
_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s|\*\*[^*]+\*\*\s*:?\s*$|__[^_]+__\s*:?\s*$|[^\s].{0,40}[:：]\s*$)"
)
_ESCAPED = re.compile(r"^\\([#>*+|-])")  # a Markdown character escaped at the start
_EMPHASIS = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")


def parse(text: str) -> Parsed:
    """Each line of ``text`` as a candidate, or refused (empty, a heading, too long)."""
    parsed = Parsed(FORMAT)
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue  # blank lines separate, they say nothing
        if _HEADING.match(raw):
            parsed.refused.append(Refusal(number, "heading", shown(raw)))
            continue
        stripped = _ESCAPED.sub(r"\1", _BULLET.sub("", raw, count=1), count=1)
        line = _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), stripped)
        parsed.take(number, clean_line(line))
    return parsed
