"""What a new proposal repeats: a pending or approved item saying the same, or a fact a person
rejected (``is_known`` for a few items, ``KnownIndex`` for a whole batch in one pass)."""

from __future__ import annotations

from typing import Any

from ...language.word_likeness import near_identical
from ...text import normalize
from .items import Proposal, _str_or_none


def is_known(records: list[dict[str, Any]], proposal: Proposal) -> bool:
    """True when the proposal repeats a pending item, an approved one or a rejected one.

    An update or delete repeats another only on the same memory. A rejected delete (a
    "forget" the person turned down) is not proposed again for the same memory and
    evidence; a rejected add or update not for a near-identical text.
    """
    key = normalize(proposal.content)
    for record in records:
        if record.get("action") != proposal.action:
            continue
        if proposal.action != "add" and record.get("memoryId") != proposal.memory_id:
            continue
        if proposal.action == "add" and _str_or_none(record.get("person")) != proposal.person:
            continue  # two people may each say the same thing
        status = record.get("status")
        if status in ("pending", "approved") and normalize(record.get("content", "")) == key:
            return True
        if status != "rejected":
            continue
        if proposal.action == "delete":
            if normalize(record.get("evidence") or "") == normalize(proposal.evidence or ""):
                return True
        elif near_identical(record.get("content", ""), proposal.content):
            return True
    return False


class KnownIndex:
    """``is_known`` over a whole batch in one pass: pending and approved items by
    (action, memory, normalised text), rejected ones by (action, memory), so queuing ten
    thousand imported facts does not compare each with every item before it."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.exact: set[tuple[Any, Any, str]] = set()
        self.rejected: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
        for record in records:
            self.add(record)

    @staticmethod
    def _where(action: Any, memory_id: Any) -> tuple[Any, Any]:
        return action, (None if action == "add" else memory_id)

    def add(self, record: dict[str, Any]) -> None:
        where = self._where(record.get("action"), record.get("memoryId"))
        status = record.get("status")
        if status in ("pending", "approved"):
            self.exact.add((*where, normalize(record.get("content", ""))))
        elif status == "rejected":
            self.rejected.setdefault(where, []).append(record)

    def holds(self, proposal: Proposal) -> bool:
        where = self._where(proposal.action, proposal.memory_id)
        if (*where, normalize(proposal.content)) in self.exact:
            return True
        return is_known(self.rejected.get(where, []), proposal)
