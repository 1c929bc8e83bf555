"""The official MCP memory server's knowledge graph (``memory.jsonl``).

One JSON object per line: ``{"type": "entity", "name", "entityType", "observations": [...]}``
or ``{"type": "relation", "from", "to", "relationType"}``. Each observation becomes a fact
about its entity ("John Smith: Speaks fluent Spanish"; an observation of the household, or
one that names its entity already, as it is), each relation a sentence ("John Smith works at
Anthropic"). The user's own entity (``default_user``, "user", "me") names nobody: its facts and
relations are the user's ("Prefers answers in English", "Owns Mochi"). Every other entity's
name stays in its facts whoever imports them, unless the entity is the person they are kept
for (``plan_import``: "Is a beagle" alone would be a fact about the owner).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .base import Parsed, Refusal, names_the_user, read_json, shown, wrong_format

FORMAT = "mcp-jsonl"
# Entities whose observations are about the household or the user themself: kept as they are.
SELF_TYPES = {"household", "user", "self", "me"}


def is_self(name: str, kind: Any = None) -> bool:
    """Whether an entity (by its name, ``base.SELF_NAMES``, or its type) stands for the user
    themself: their observations are the user's own facts ("Prefers answers in English"),
    their relations said of the user ("Owns Mochi")."""
    if isinstance(kind, str) and kind.lower() in SELF_TYPES - {"household"}:
        return True
    return names_the_user(name)


def is_record(item: Any) -> bool:
    """Whether a JSON value has the shape of one line of a memory file."""
    return isinstance(item, Mapping) and item.get("type") in ("entity", "relation")


def records(text: str) -> list[tuple[int, Any]] | None:
    """(line number, parsed object) of each non-blank line, or None when a line is no JSON
    object with a ``type`` of entity or relation (then this is no MCP memory file). A file of
    one record is one too, on one line or spread over several (then it is line 1)."""
    found: list[tuple[int, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = read_json(line)
        except ValueError:
            return _one_record(text)
        if not is_record(item):
            return None
        found.append((number, item))
    return found or None


def _one_record(text: str) -> list[tuple[int, Any]] | None:
    try:
        item = read_json(text)
    except ValueError:
        return None
    return [(1, item)] if is_record(item) else None


def spoken(name: str) -> str:
    """An entity or relation name as words: ``John_Smith`` → ``John Smith``."""
    return " ".join(name.replace("_", " ").split())


def parse(text: str) -> Parsed:
    """Observations and relations of a memory.jsonl as candidates."""
    found = records(text)
    if found is None:
        raise wrong_format(FORMAT, None, 'a line is not an {"type": "entity"|"relation"} object')
    parsed = Parsed(FORMAT)
    for number, item in found:
        if item["type"] == "entity":
            _entity(parsed, number, item)
        else:
            _relation(parsed, number, item)
    return parsed


def _entity(parsed: Parsed, number: int, item: Mapping[str, Any]) -> None:
    name, kind, observations = item.get("name"), item.get("entityType"), item.get("observations")
    if not isinstance(name, str) or not isinstance(observations, list):
        parsed.refused.append(Refusal(number, "not_text", shown(dict(item))))
        return
    evidence = f"{name} ({kind})" if isinstance(kind, str) and kind else name
    user = is_self(name, kind)
    self_entity = user or (isinstance(kind, str) and kind.lower() in SELF_TYPES)
    who = spoken(name)
    owner = who if isinstance(kind, str) and kind.lower() == "person" and not user else None
    for observation in observations:
        plain = None
        if (
            isinstance(observation, str)
            and observation.strip()
            and not self_entity
            and who.casefold() not in observation.casefold()
        ):
            plain = observation.strip()
            observation = f"{who}: {plain}"
        parsed.take(number, observation, evidence=evidence, owner=owner, plain=plain, subject=who)


def _relation(parsed: Parsed, number: int, item: Mapping[str, Any]) -> None:
    parts = [item.get("from"), item.get("relationType"), item.get("to")]
    if not all(isinstance(part, str) and part.strip() for part in parts):
        parsed.refused.append(Refusal(number, "not_text", shown(dict(item))))
        return
    subject, relation, target = (spoken(str(part)) for part in parts)
    said = f"{relation[:1].upper()}{relation[1:]} {target}"  # "Owns Mochi"
    evidence = json.dumps(dict(item), ensure_ascii=False)
    if is_self(subject):  # "default_user owns Mochi": a fact about the user
        parsed.take(number, said, evidence=evidence)
    elif is_self(target):
        parsed.take(number, f"{subject} {relation} the user", evidence=evidence)
    else:  # "John Smith works at Anthropic"; "Works at Anthropic" when John imports it
        sentence = f"{subject} {relation} {target}"
        parsed.take(number, sentence, evidence=evidence, plain=said, subject=subject)
