"""Demo content: sample memories, conversation threads and skills, freshly dated, in a data folder.

The samples ship as package data in ``webapp/demo_data/``. Threads go through
``ConversationStore.add_exchange`` (so their timestamps are now), memories keep their spacing
but move so the newest was updated a few minutes ago, and skill folders are imported with
``SkillDocumentStore.import_skill`` when this installation has it. A few proposed facts and a
change of mind (``proposals.json``) wait in the review queue, so a new user sees Review at work,
and the sample memories include a few of every kind Needs attention finds (near-duplicates,
contradictions, stale and hard-to-use memories), so every feature can be tried at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..settings import DEFAULTS
from ..stores import ConversationStore, MemoryStore, PeopleStore, Proposal, ReviewQueue
from ..stores.timefmt import parse_ts, to_iso
from ..text import count_noun

DEMO_DATA = Path(__file__).resolve().parents[1] / "demo_data"
# The newest sample memory is shown as updated this long ago.
NEWEST_MEMORY_AGE = timedelta(minutes=10)


class DemoRefusedError(Exception):
    """The data folder already holds data, and replacing it was not asked for."""


@dataclass(frozen=True)
class DemoReport:
    """What loading the demo did."""

    memories: dict[str, int]  # added / updated / unchanged, as MemoryStore.import_records says
    threads: int
    exchanges: int
    skills: tuple[str, ...] | None  # "name: summary" per skill; None when skills are unavailable
    proposals: int = 0  # facts newly waiting in Review

    def lines(self) -> list[str]:
        """A readable summary, one line per store."""
        m = self.memories
        lines = [
            f"Memories: {m['added']} added, {m['updated']} updated, {m['unchanged']} unchanged",
            f"Conversations: {self.threads} threads, {self.exchanges} exchanges (dated now)",
        ]
        if self.skills is None:
            lines.append("Skills: skipped — this installation has no skill document store.")
        else:
            lines.extend(f"Skill {line}" for line in self.skills)
        lines.append(f"Review: {self.proposals} proposed facts newly waiting for a decision")
        return lines


def skill_store_class() -> Any | None:
    """``SkillDocumentStore`` when this installation has it, else None."""
    from .. import stores

    return getattr(stores, "SkillDocumentStore", None)


def existing_content(
    memories: MemoryStore, conversations: ConversationStore, skills: Any | None
) -> list[str]:
    """What the stores already hold, e.g. ['3 memories', '1 conversation']; [] when empty."""
    found = []
    counts = (
        ("memory", "memories", len(memories.get_all())),
        ("conversation", "conversations", len(conversations.list_conversations())),
        ("skill document", "skill documents", len(skills.list(True)) if skills else 0),
    )
    for one, many, count in counts:
        if count:
            found.append(count_noun(count, one, many))
    return found


def shifted_memories(records: list[dict[str, Any]], now: datetime) -> list[dict[str, Any]]:
    """The sample memories moved in time so the newest was updated ``NEWEST_MEMORY_AGE`` ago."""
    newest = max(parse_ts(r.get("updatedAt") or r.get("createdAt")) for r in records)
    delta = (now - NEWEST_MEMORY_AGE) - newest
    shifted = []
    for record in records:
        created = parse_ts(record.get("createdAt"))
        updated = parse_ts(record.get("updatedAt") or record.get("createdAt"))
        moved = {
            **record,
            "createdAt": to_iso(created + delta),
            "updatedAt": to_iso(updated + delta),
        }
        if record.get("expiresAt"):  # a fact that ends keeps ending as long after it was said
            moved["expiresAt"] = to_iso(parse_ts(record["expiresAt"]) + delta)
        shifted.append(moved)
    return shifted


def load_threads(conversations: ConversationStore, threads: dict[str, list[list[str]]]) -> int:
    """Replace each sample thread with its exchanges, dated now; return how many exchanges."""
    exchanges = 0
    for conversation_id, pairs in threads.items():
        conversations.clear(conversation_id)
        for user_message, assistant_response in pairs:
            conversations.add_exchange(conversation_id, user_message, assistant_response)
            exchanges += 1
    return exchanges


def load_proposals(queue: ReviewQueue, memories: MemoryStore, records: list[dict[str, Any]]) -> int:
    """Queue the sample proposals as extraction would; an update or a delete (a change of mind)
    shows the memory it changes."""
    count = 0
    for record in records:
        current = memories.get(record["memoryId"]) if record.get("memoryId") else None
        if record.get("memoryId") and current is None:
            continue  # the memory it would change is gone: nothing sensible to propose
        proposal = Proposal(
            action=record["action"],
            content=record["content"],
            category=record.get("category", "general"),
            memory_id=record.get("memoryId"),
            current_content=current.content if current else None,
            confidence=record.get("confidence"),
            extractor=record.get("extractor", "regex"),
            evidence=record.get("evidence"),
        )
        count += len(queue.submit([proposal], conversation_id=record.get("conversationId")))
    return count


def load_skills(skills: Any, folder: Path) -> tuple[str, ...]:
    """Import every skill folder under ``folder``; one summary line per skill."""
    lines = []
    for skill_dir in sorted(p for p in folder.iterdir() if (p / "SKILL.md").is_file()):
        report = skills.import_skill(skill_dir)
        lines.append(f"{skill_dir.name}: {report.summary()}")
    return tuple(lines)


def with_people(
    records: list[dict[str, Any]], people: PeopleStore, source: Path
) -> list[dict[str, Any]]:
    """The sample memories with their ``person`` pointing at the demo's people (two of them,
    made once, found by name the next time); the others stay the household's."""
    ids: dict[str, str] = {}
    for sample in json.loads((source / "people.json").read_text(encoding="utf-8")):
        person = people.find(sample["name"])
        if person is None:
            wanted = tuple((i["kind"], i["value"]) for i in sample.get("identities", []))
            free = tuple(pair for pair in wanted if people.resolve(*pair) is None)
            person = people.add(sample["name"], identities=free)
        ids[sample["key"]] = person.id
    return [
        {**record, "person": ids[record["person"]]} if record.get("person") in ids else record
        for record in records
    ]


def fill_demo(
    memories: MemoryStore,
    conversations: ConversationStore,
    skills_dir: Path,
    *,
    force: bool = False,
    lock_timeout: float = DEFAULTS["lock_timeout"],
    source: Path = DEMO_DATA,
    now: datetime | None = None,
    review_file: Path | None = None,
) -> DemoReport:
    """Load the demo into the stores; refuse (DemoRefusedError) when they hold data, unless ``force``.

    With ``force`` the demo's own memories (by id), threads (by key) and skills (by name) are
    replaced and everything else is kept, so loading twice gives the same result. With
    ``review_file`` the sample proposals are queued there (a pending one is not queued twice).
    """
    memories.init()
    conversations.init()
    store_class = skill_store_class()
    skills = store_class(skills_dir, lock_timeout=lock_timeout) if store_class else None
    found = existing_content(memories, conversations, skills)
    if found and not force:
        raise DemoRefusedError(
            f"The data folder already holds {', '.join(found)}; nothing was changed. "
            "Use --force to load the demo anyway (its own items are replaced, the rest is kept)."
        )
    now = now or datetime.now(UTC)
    records = json.loads((source / "memories.json").read_text(encoding="utf-8"))
    threads = json.loads((source / "threads.json").read_text(encoding="utf-8"))
    if (source / "people.json").exists():
        records = with_people(records, PeopleStore.beside(memories.path, actor="demo"), source)
    counts = memories.import_records(
        shifted_memories(records, now),
        actor="demo",
        source="the demo data",
        allow_secrets=True,  # one holds a Wi-Fi password, for Needs attention's Secrets tab
    )
    exchanges = load_threads(conversations, threads)
    skill_lines = load_skills(skills, source / "skills") if skills else None
    proposals = 0
    if review_file is not None:
        queue = ReviewQueue(review_file, memories, lock_timeout=lock_timeout)
        records = json.loads((source / "proposals.json").read_text(encoding="utf-8"))
        proposals = load_proposals(queue, memories, records)
    return DemoReport(
        memories=counts,
        threads=len(threads),
        exchanges=exchanges,
        skills=skill_lines,
        proposals=proposals,
    )
