"""Bring memories from other systems: read a file, reconcile it with what is kept, queue the
result in Review (never straight into memory), and write memories in those systems' formats.

One small module per format (``text``, ``mem0``, ``mcp_jsonl``, ``letta``); ``detect`` says
which one a file is; ``plan_import`` reads a file and reconciles it (the preview);
``queue_import`` puts the proposals in Review, each saying where it came from ("mem0,
memories.json, 2026-11-25"); ``exporters`` writes the other way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..attention.semantic import semantic_index
from ..extraction.actions import ReconcileAction, undecided
from ..extraction.llm import StructuredFact
from ..extraction.reconcile import MemoryExtractor
from ..stores import MemoryStore, ReviewItem, ReviewQueue
from ..stores.errors import MemoryFullError
from ..stores.people import PeopleStore
from ..stores.review import Proposal
from ..text import fold
from . import letta, mcp_jsonl, mem0, text
from .base import (
    FORMAT_NAMES,
    FORMATS,
    MAX_FACT_CHARS,
    MAX_IMPORT_BYTES,
    MAX_STATEMENTS,
    REASONS,
    Candidate,
    ImportFormatError,
    Parsed,
    Refusal,
    decode,
    wrong_format,
)
from .detect import as_json, detect, is_own_export, too_deep, unknown

__all__ = [
    "FORMATS",
    "FORMAT_NAMES",
    "MAX_FACT_CHARS",
    "MAX_IMPORT_BYTES",
    "MAX_STATEMENTS",
    "REASONS",
    "Candidate",
    "ImportFormatError",
    "ASK",
    "ImportPlan",
    "Parsed",
    "Refusal",
    "decode",
    "detect",
    "parse",
    "plan_import",
    "queue_import",
    "read_own_export",
    "resolve_format",
]

_PARSERS: dict[str, Callable[[Any], Parsed]] = {
    "mem0": mem0.parse,
    "letta": letta.parse,
}


def resolve_format(content: str, wanted: str = "auto") -> str:
    """The format to read ``content`` as: ``wanted``, or for ``auto`` the one it looks like.
    ImportFormatError when it looks like another (naming that one) or like none."""
    if wanted not in ("auto", *FORMATS):
        raise ImportFormatError(
            f"Unknown format {wanted!r}; use auto or one of: {', '.join(FORMATS)}.",
            code="import_unknown_format",
            format=repr(wanted),
            formats=", ".join(FORMATS),
        )
    found = detect(content)
    if wanted == "auto":
        if found is None:
            raise unknown(content)
        return found
    if found != wanted:
        deep = too_deep(content) if found is None else None
        if deep is not None:
            raise deep
        # JSON that is none of the formats asked as JSON-based one: say what is missing.
        raise wrong_format(wanted, found, "it is JSON of another shape")
    return wanted


def parse(content: str, fmt: str) -> Parsed:
    """The candidates of ``content`` read as ``fmt`` (not ``json``: see read_own_export)."""
    if fmt == "text":
        return text.parse(content)
    if fmt == "mcp-jsonl":
        return mcp_jsonl.parse(content)
    if fmt in _PARSERS:
        return _PARSERS[fmt](as_json(content))
    raise ValueError(f"no candidate parser for {fmt!r}")


def read_own_export(content: str) -> list[dict[str, Any]]:
    """The records of this program's export (imported as they are by ``MemoryStore``)."""
    data = as_json(content)
    if not is_own_export(data):
        raise wrong_format("json", detect(content), "not a JSON array of memories")
    records: list[dict[str, Any]] = data
    return records


def source_label(fmt: str, file_name: str | None, day: str | None = None) -> str:
    """ "mem0, memories.json, 2026-11-25": what an imported proposal's origin names."""
    when = day or datetime.now(UTC).strftime("%Y-%m-%d")
    name = (file_name or "pasted text").replace("\\", "/").rsplit("/", 1)[-1].strip()[:120]
    return f"{fmt}, {name or 'pasted text'}, {when}"


@dataclass
class ImportPlan:
    """What importing a file would queue: the preview, worked out before anything is saved."""

    format: str
    source: str  # "<format>, <file name>, <date>"
    parsed: Parsed
    actions: list[ReconcileAction] = field(default_factory=list)
    # Whose each line was planned as (its line → a person's id, None for the household, or
    # ASK: a person says whose in Review), and the line each statement came from.
    owners: dict[int, str | None] = field(default_factory=dict)
    statements: dict[str, int] = field(default_factory=dict)

    def line_of(self, action: ReconcileAction) -> int | None:
        """The line of the file an action comes from (None when reconcile reworded it)."""
        return self.statements.get(action.content)

    @property
    def counts(self) -> dict[str, int]:
        """How many would be added, updated, skipped as known, refused."""
        added = sum(1 for a in self.actions if a.action == "add")
        updated = sum(1 for a in self.actions if a.action == "update")
        return {
            "add": added,
            "update": updated,
            "known": len(self.parsed.candidates) - added - updated,
            "refused": len(self.parsed.refused),
        }

    def proposals(self) -> list[Proposal]:
        """The actions as Review proposals naming where they came from."""
        return [
            Proposal(
                action=a.action,
                content=a.content,
                category=a.category,
                memory_id=a.id,
                current_content=a.current_content,
                confidence=1.0,
                extractor="import",
                evidence=a.evidence,
                imported_from=self.source,
                withheld=a.withheld,
                person=a.person,
                owner_undecided=a.owner_undecided,
            )
            for a in self.actions
            if a.action in ("add", "update")
        ]


def plan_import(
    store: MemoryStore,
    queue: ReviewQueue,
    content: str,
    *,
    fmt: str = "auto",
    file_name: str | None = None,
    day: str | None = None,
    people: PeopleStore | None = None,
    owner: str | None = None,
    lines: Mapping[int, str | None] | None = None,
) -> ImportPlan:
    """Read ``content`` and reconcile its statements with memory and Review (the existing
    reconcile: known → skipped, close → update proposal, new → add). Nothing is saved.

    Each statement has an owner, and is reconciled within that owner's view only (their
    memories and the household's, never another person's): an import never proposes to
    change another person's private memory. ``lines`` names the owner of a line (its
    number → a person's id, or None for the household) as the person importing chose it.
    Otherwise a statement the file says is someone's (a mem0 ``user_id``, an MCP ``person``
    entity) whom ``people`` knows by that name or id is that person's; one of someone
    nobody here is keeps the name in its text ("Sam: Likes jazz"), is compared only with
    what is kept of that name (never merged with another's), and, when the People page
    names anyone, waits in Review for a person to say whose it is (never the household's by
    default). The rest are ``owner``'s: the person importing (None: the household's).

    What a statement is about stays in its text whoever owns it ("Biscuit: Is a beagle",
    "John Smith works at Anthropic", as Ben's): only a statement about its owner themself
    (the file's entity or user is that person, or the user as the file calls them) is kept
    without the name ("Is allergic to cats", as Maya's)."""
    chosen = resolve_format(content, fmt)
    if chosen == "json":
        raise wrong_format("text", "json")  # the own export has its own, lossless import
    parsed = parse(content, chosen)
    plan = ImportPlan(chosen, source_label(chosen, file_name, day), parsed)
    groups: dict[str | None, list[StructuredFact]] = {}
    strangers: dict[str, list[StructuredFact]] = {}  # named in the file, known to nobody here
    anyone = bool(people and people.people())
    for candidate in parsed.candidates:
        named_person = people.find(candidate.owner) if people and candidate.owner else None
        stranger = named_person is None and bool(candidate.owner)
        whose: str | None
        if lines is not None and candidate.line in lines:
            whose, stranger = lines[candidate.line], False
        elif named_person is not None:
            whose = named_person.id
        else:
            whose = owner
        said = candidate.text
        if whose is not None and candidate.plain and _names(people, candidate.subject, whose):
            said = candidate.plain  # about its owner: "Is allergic to cats", as Maya's
        fact = StructuredFact(
            said, candidate.category, 1.0, evidence=candidate.evidence, extractor="import"
        )
        plan.statements.setdefault(said, candidate.line)
        if stranger and candidate.owner:
            strangers.setdefault(candidate.owner, []).append(fact)
            plan.owners[candidate.line] = ASK if anyone else None
        else:
            groups.setdefault(whose, []).append(fact)
            plan.owners[candidate.line] = whose
    facts = [fact for group in [*groups.values(), *strangers.values()] for fact in group]
    if facts and (store.get_all() or queue.pending_count() or queue.decided()):
        _embed_in_batches([fact.content for fact in facts], store)
    extractor = MemoryExtractor(store, review_queue=queue, actor="import")
    for whose_group, group in groups.items():
        plan.actions += extractor.reconcile(group, person=whose_group)
    # With nobody on the People page everything is the household's; otherwise a stranger's
    # facts wait for a person to say whose they are.
    for name, group in strangers.items():
        actions = extractor.reconcile(group, person=None, within=named(name))
        plan.actions += undecided(actions) if anyone else actions
    return plan


def _names(people: PeopleStore | None, subject: str | None, person_id: str) -> bool:
    """Whether a file's name for what a statement is about (``Candidate.subject``) is the
    person ``person_id``: then, and only then, the statement is theirs without the name."""
    found = people.find(subject) if people is not None and subject else None
    return found is not None and found.id == person_id


ASK = "?"  # an owner of ``ImportPlan.owners``: nobody could tell; a person says in Review


def named(name: str) -> Callable[[str], bool]:
    """Whether a text is about ``name`` as an import words it ("Sam: Likes jazz")."""
    prefix = fold(f"{name}:")
    return lambda text: fold(text).startswith(prefix)


EMBED_BATCH = 64  # texts the similarity model embeds at a time before reconcile asks


def _embed_in_batches(texts: list[str], store: MemoryStore) -> None:
    """Give every statement its vector before reconcile compares them one by one: the model
    embeds a batch far faster than the same texts one at a time (reconcile would ask for
    each fact alone)."""
    judge = semantic_index(store.path).judge()
    for start in range(0, len(texts), EMBED_BATCH):
        judge.cache.vectors(texts[start : start + EMBED_BATCH])


def queue_import(queue: ReviewQueue, plan: ImportPlan) -> list[ReviewItem]:
    """Put the plan's proposals in Review (one write); what was queued."""
    proposals = plan.proposals()
    return queue.submit(proposals) if proposals else []


@dataclass
class SourceDecision:
    """What approving every proposal from one file did."""

    approved: int = 0
    changed: int = 0  # left pending: its memory changed meanwhile
    secrets: int = 0  # left pending: it holds a secret a person must confirm one by one
    undecided: int = 0  # left pending: whose it is waits for a person's choice
    full: MemoryFullError | None = None  # memory filled up: the rest stay pending
