"""Demo content: sample memories, conversation threads and skills, freshly dated, in a data folder.

The samples ship as package data in ``webapp/demo_data/``. Everything is written through the
curator's operations, as any door writes: the demo's people with ``add_person``, its memories
with ``import_export`` (the import of this program's own export: they keep their spacing but
move so the newest was updated a few minutes ago), its threads with ``clear_conversation`` and
``keep_exchange`` (so their timestamps are now), its skill folders with ``import_skills``, and a
few proposed facts and a change of mind (``proposals.json``) with ``propose``, so a new user
sees Review at work. The sample memories include a few of every kind Needs attention finds
(near-duplicates, contradictions, stale and hard-to-use memories), so every feature can be
tried at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..curator import Curator
from ..stores import NotFoundError
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
    skills: tuple[str, ...]  # "name: summary" per skill
    proposals: int = 0  # facts newly waiting in Review

    def lines(self) -> list[str]:
        """A readable summary, one line per store."""
        m = self.memories
        lines = [
            f"Memories: {m['added']} added, {m['updated']} updated, {m['unchanged']} unchanged",
            f"Conversations: {self.threads} threads, {self.exchanges} exchanges (dated now)",
        ]
        lines.extend(f"Skill {line}" for line in self.skills)
        lines.append(f"Review: {self.proposals} proposed facts newly waiting for a decision")
        return lines


def existing_content(curator: Curator) -> list[str]:
    """What the data folder already holds, e.g. ['3 memories', '1 conversation']; [] when empty."""
    found = []
    counts = (
        ("memory", "memories", len(curator.memories.get_all())),
        ("conversation", "conversations", len(curator.conversations.list_conversations())),
        ("skill document", "skill documents", len(curator.skills.list(True))),
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


def load_threads(curator: Curator, threads: dict[str, list[list[str]]]) -> int:
    """Replace each sample thread with its exchanges, dated now; return how many exchanges."""
    exchanges = 0
    for conversation_id, pairs in threads.items():
        curator.clear_conversation(conversation_id)
        for said, reply in pairs:
            curator.keep_exchange(conversation_id=conversation_id, said=said, reply=reply)
            exchanges += 1
    return exchanges


def load_proposals(curator: Curator, records: list[dict[str, Any]]) -> int:
    """Queue the sample proposals as extraction would; an update or a delete (a change of mind)
    shows the memory it changes."""
    count = 0
    for record in records:
        try:
            queued = curator.propose(
                action=record["action"],
                content=record["content"],
                category=record.get("category", "general"),
                memory_id=record.get("memoryId"),
                conversation_id=record.get("conversationId"),
                evidence=record.get("evidence"),
                confidence=record.get("confidence"),
                extractor=record.get("extractor", "regex"),
            )
        except NotFoundError:
            continue  # the memory it would change is gone: nothing sensible to propose
        count += queued is not None
    return count


def load_skills(curator: Curator, folder: Path) -> tuple[str, ...]:
    """Import every skill folder under ``folder`` (the demo's own replaced, edits and all);
    one summary line per skill."""
    lines = []
    for skill_dir in sorted(p for p in folder.iterdir() if (p / "SKILL.md").is_file()):
        report = curator.import_skills(skill_dir, replace_edits=True)
        lines.append(f"{skill_dir.name}: {report.summary()}")
    return tuple(lines)


def with_people(
    curator: Curator, records: list[dict[str, Any]], source: Path
) -> list[dict[str, Any]]:
    """The sample memories with their ``person`` pointing at the demo's people (two of them,
    made once, found by name the next time); the others stay the household's."""
    ids: dict[str, str] = {}
    for sample in json.loads((source / "people.json").read_text(encoding="utf-8")):
        found = curator.people.matching(sample["name"])
        person = found[0] if len(found) == 1 else None
        if person is None:
            wanted = tuple((i["kind"], i["value"]) for i in sample.get("identities", []))
            free = tuple(pair for pair in wanted if curator.people.resolve(*pair) is None)
            person = curator.add_person(sample["name"], identities=free)
        ids[sample["key"]] = person.id
    return [
        {**record, "person": ids[record["person"]]} if record.get("person") in ids else record
        for record in records
    ]


def fill_demo(
    curator: Curator,
    *,
    force: bool = False,
    source: Path = DEMO_DATA,
    now: datetime | None = None,
) -> DemoReport:
    """Load the demo into the curator's data folder; refuse (DemoRefusedError) when it holds
    data, unless ``force``.

    With ``force`` the demo's own memories (by id), threads (by key) and skills (by name) are
    replaced and everything else is kept, so loading twice gives the same result; a sample
    proposal already pending is not queued twice.
    """
    curator.init_files()
    found = existing_content(curator)
    if found and not force:
        raise DemoRefusedError(
            f"The data folder already holds {', '.join(found)}; nothing was changed. "
            "Use --force to load the demo anyway (its own items are replaced, the rest is kept)."
        )
    now = now or datetime.now(UTC)
    records = json.loads((source / "memories.json").read_text(encoding="utf-8"))
    threads = json.loads((source / "threads.json").read_text(encoding="utf-8"))
    if (source / "people.json").exists():
        records = with_people(curator, records, source)
    counts = curator.import_export(
        shifted_memories(records, now),
        source="the demo data",
        confirm_secrets=True,  # one holds a Wi-Fi password, for Needs attention's Secrets tab
    )
    exchanges = load_threads(curator, threads)
    skill_lines = load_skills(curator, source / "skills")
    proposals = load_proposals(
        curator, json.loads((source / "proposals.json").read_text(encoding="utf-8"))
    )
    return DemoReport(
        memories=counts,
        threads=len(threads),
        exchanges=exchanges,
        skills=skill_lines,
        proposals=proposals,
    )
