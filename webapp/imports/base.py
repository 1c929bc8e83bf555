"""What every importer gives: the statements it read (``Candidate``), the lines it refused and
why (``Refusal``), and the limits all imports share.

Importers only read text: nothing in a file is run, no link in it is followed, and a hostile
line stays a line of text (the pages escape it like any memory).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..problems import CodedError
from ..stores import loads_bounded

FORMATS = ("text", "mem0", "mcp-jsonl", "letta", "json")
FORMAT_NAMES = {
    "text": "pasted text",
    "mem0": "mem0",
    "mcp-jsonl": "MCP memory JSONL",
    "letta": "Letta agent file",
    "json": "Memory Curator export",
}
# As for today's JSON import (the dashboard's MAX_IMPORT_BYTES): a file larger than this is
# no memory list.
MAX_IMPORT_BYTES = 5 * 1024 * 1024
MAX_STATEMENTS = 10_000  # statements one file may give; the rest are refused, counted
MAX_FACT_CHARS = 1000  # a memory is one short statement; a longer line is refused
SHOWN_CHARS = 200  # of a refused line, shown in the preview

# Why a line was not proposed (the preview shows the reason beside the line).
REASONS = {
    "empty": "empty",
    "too_long": "too long",
    "not_text": "not text",
    "heading": "a heading, not a memory",
    "persona": "about the agent (Letta persona block), not about you",
    "over_limit": "beyond the limit of statements per file",
}


# The names by which a memory file calls the user themself (the MCP memory server's examples
# and its usual prompt call them ``default_user``; mem0's default user is "user"): what they
# say is the user's own ("Prefers answers in English"), kept without the name.
SELF_NAMES = {"default user", "user", "me", "myself", "self", "the user", "current user"}


def names_the_user(name: str) -> bool:
    """Whether a file's name for someone (``default_user``, "Me") is the user themself."""
    return " ".join(name.replace("_", " ").split()).casefold() in SELF_NAMES


@dataclass(frozen=True)
class Candidate:
    """One statement read from a file, as a fact to propose."""

    line: int  # the line (text, JSONL) or the item (JSON) it came from, from 1
    text: str
    category: str = "general"
    evidence: str | None = None  # what the file said around it (an entity, a block label)
    # Whose it is, as the file names them (a mem0 user_id, an MCP person entity).
    owner: str | None = None
    # What it is about, as the file names it (an MCP entity, a relation's subject, a mem0
    # user), and the statement without that name in front: the plain statement is kept only
    # as the fact of the person that name is ("Is allergic to cats" for Maya's entity, as
    # Maya's); whoever else owns it keeps the name in the text ("Biscuit: Is a beagle").
    plain: str | None = None
    subject: str | None = None


@dataclass(frozen=True)
class Refusal:
    """A line that gives no proposal, and why (a key of REASONS)."""

    line: int
    reason: str
    text: str

    @property
    def why(self) -> str:
        return REASONS.get(self.reason, self.reason)


@dataclass
class Parsed:
    """What one importer read from a file."""

    format: str
    candidates: list[Candidate] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)

    def take(
        self,
        line: int,
        raw: Any,
        *,
        category: str = "general",
        evidence: str | None = None,
        owner: str | None = None,
        plain: str | None = None,
        subject: str | None = None,
    ) -> None:
        """Keep ``raw`` as a candidate, or refuse it (not text, empty, too long, over the limit)."""
        if not isinstance(raw, str):
            self.refused.append(Refusal(line, "not_text", shown(raw)))
            return
        text = clean_line(raw)
        if not text:
            self.refused.append(Refusal(line, "empty", ""))
        elif len(text) > MAX_FACT_CHARS:
            self.refused.append(Refusal(line, "too_long", shown(text)))
        elif len(self.candidates) >= MAX_STATEMENTS:
            self.refused.append(Refusal(line, "over_limit", shown(text)))
        else:
            plain = clean_line(plain) if plain and subject else None
            self.candidates.append(
                Candidate(line, text, category, evidence, owner, plain, subject if plain else None)
            )


class ImportFormatError(CodedError, ValueError):
    """The file cannot be imported as asked: it is in another format (``import_looks_like``),
    in none this program reads for that format (``import_wrong_format``), too large
    (``import_too_large``), nested too deep (``import_too_deep``) or not UTF-8 text (``import_not_utf8``)."""

    code = "import_wrong_format"
    codes = (
        "import_wrong_format",
        "import_looks_like",
        "import_unknown_json",
        "import_bad_json",
        "import_too_deep",
        "import_unknown_format",
        "import_too_large",
        "import_not_utf8",
    )


# Characters no memory holds: C0 controls but tab, DEL, lone surrogates.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
_SPACES = re.compile(r"\s+")


def clean_line(text: str) -> str:
    """``text`` without control characters, its spaces collapsed and its ends trimmed."""
    return _SPACES.sub(" ", _CONTROL.sub("", text)).strip()


def shown(value: Any) -> str:
    """A refused value as the preview shows it: text, cut short."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)[:SHOWN_CHARS]
    text = clean_line(text)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def read_json(text: str) -> Any:
    """The JSON value of ``text`` within the stores' bounds (depth, number length), or
    ValueError."""
    return loads_bounded(text)


def wrong_format(
    wanted: str, found: str | None, detail: str = "no such content"
) -> ImportFormatError:
    """The error for a file read as ``wanted`` that looks like ``found`` (None: nothing known)."""
    asked = FORMAT_NAMES.get(wanted, wanted)
    if found is not None and found != wanted:
        return ImportFormatError(
            f"This file is not {asked}: it looks like {FORMAT_NAMES[found]} "
            f"(format {found}, or auto).",
            code="import_looks_like",
            asked=asked,
            looks_like=FORMAT_NAMES[found],
            format=found,
        )
    return ImportFormatError(f"This file is not {asked}: {detail}.", asked=asked, detail=detail)


def decode(raw: bytes) -> str:
    """The text of an uploaded or named file: at most MAX_IMPORT_BYTES of UTF-8 (a BOM is
    dropped); ImportFormatError otherwise."""
    if len(raw) > MAX_IMPORT_BYTES:
        mb = MAX_IMPORT_BYTES // (1024 * 1024)
        raise ImportFormatError(
            f"The file is larger than {mb} MB; no memory list is that large.",
            code="import_too_large",
            size=mb,
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFormatError(
            f"The file is not UTF-8 text (bad byte at position {exc.start}).",
            code="import_not_utf8",
            position=exc.start,
        ) from None
