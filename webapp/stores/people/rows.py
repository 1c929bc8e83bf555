"""``people.json`` as data: its shape check, the people and devices read from it, and the
edits a change makes to its rows (an identity's owner, unlinked identities, the caps)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...problems import InputError
from ...text import fold
from ..errors import NotFoundError
from .model import (
    DEVICE_CHOICES,
    KINDS,
    MAX_UNLINKED,
    REAL_KINDS,
    Device,
    Identity,
    Person,
    _identity_key,
)


def _validate(data: Any) -> str | None:
    if not isinstance(data, dict):
        return f"expected a JSON object of people, found a JSON {type(data).__name__}"
    people, unlinked = data.get("people", {}), data.get("unlinked", [])
    if not isinstance(people, dict):
        return '"people" is not a JSON object'
    if not isinstance(unlinked, list):
        return '"unlinked" is not a JSON array'
    for person_id, record in people.items():
        if not isinstance(record, dict) or not isinstance(record.get("name"), str):
            return f"the person {person_id!r} has no name"
        if not isinstance(record.get("identities", []), list):
            return f"the identities of {person_id!r} are not a JSON array"
    if not isinstance(data.get("devices", {}), dict):
        return '"devices" is not a JSON object'
    return None


def _devices(data: Any) -> tuple[Device, ...]:
    raw = data.get("devices", {}) if isinstance(data, dict) else {}
    found = []
    for device_id, record in raw.items() if isinstance(raw, dict) else ():
        if not isinstance(record, dict):
            continue
        choice = record.get("choice")
        person = record.get("person")
        if choice == "person" and not (isinstance(person, str) and person):
            choice = "household"  # a choice of nobody readable: the safest reading
        elif choice not in DEVICE_CHOICES:
            choice = "speaker"
        found.append(
            Device(
                str(device_id),
                str(record.get("label") or ""),
                str(choice),
                str(person) if choice == "person" else None,
            )
        )
    return tuple(sorted(found, key=lambda d: (fold(d.label or d.id), d.id)))


@dataclass(frozen=True, slots=True)
class _PersonChange:
    """A change to one person, as the history log records it: their id, before and after."""

    person_id: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None


def _default() -> dict[str, Any]:
    return {"people": {}, "unlinked": []}


def _identities(raw: Any) -> tuple[Identity, ...]:
    found = []
    for item in raw if isinstance(raw, list) else []:
        if (
            isinstance(item, dict)
            and item.get("kind") in KINDS
            and isinstance(item.get("value"), str)
        ):
            found.append(Identity(item["kind"], item["value"], str(item.get("label") or "")))
    return tuple(found)


def _people(data: Any) -> tuple[Person, ...]:
    people = data.get("people", {}) if isinstance(data, dict) else {}
    return tuple(
        Person(str(pid), str(record.get("name", "")), _identities(record.get("identities")))
        for pid, record in people.items()
        if isinstance(record, dict)
    )


def _unknown(person_id: str) -> NotFoundError:
    return NotFoundError(
        f"No person has the id {person_id!r}.", code="person_unknown", id=repr(person_id)
    )


def _record(data: dict[str, Any], person_id: str) -> dict[str, Any]:
    record = data.get("people", {}).get(person_id)
    if not isinstance(record, dict):
        raise _unknown(person_id)
    return record


def _row_key(row: dict[str, Any]) -> tuple[str, str]:
    return _identity_key(str(row.get("kind")), str(row.get("value", "")))


def _owner(data: dict[str, Any], key: tuple[str, str]) -> str | None:
    for person_id, record in data.get("people", {}).items():
        rows = record.get("identities", []) if isinstance(record, dict) else []
        if any(isinstance(r, dict) and _row_key(r) == key for r in rows):
            return str(person_id)
    return None


def _refuse_taken(data: dict[str, Any], key: tuple[str, str], person_id: str | None) -> None:
    owner = _owner(data, key)
    if owner is not None and owner != person_id:
        name = str(data["people"][owner].get("name", owner))
        raise InputError(
            f"That identity belongs to {name} already; unlink it there first.",
            code="identity_taken",
            name=name,
        )


def _identity_row(data: dict[str, Any], kind: str, value: str) -> dict[str, str]:
    """The identity as a person's record holds it, with the label it was seen with."""
    key = _identity_key(kind, value)
    seen = next(
        (r for r in data.get("unlinked", []) if isinstance(r, dict) and _row_key(r) == key), None
    )
    row = {"kind": kind, "value": value}
    if seen is not None and seen.get("label"):
        row["label"] = str(seen["label"])
    return row


def _drop_unlinked(data: dict[str, Any], keys: set[tuple[str, str]]) -> None:
    rows = data.get("unlinked", [])
    data["unlinked"] = [r for r in rows if not (isinstance(r, dict) and _row_key(r) in keys)]


def _drop_unchosen_device(devices: dict[str, Any]) -> None:
    """Forget the least recently seen device still answering for whoever speaks (a choice a
    person made is never dropped)."""
    unchosen = [
        (str(r.get("lastSeen", "")), d)
        for d, r in devices.items()
        if isinstance(r, dict) and r.get("choice", "speaker") == "speaker"
    ]
    if unchosen:
        del devices[min(unchosen)[1]]


def _within_cap(rows: list[Any]) -> list[Any]:
    """The unlinked identities kept when there are more than MAX_UNLINKED: the names a tool
    call or a command line passed (anyone may type one) go first, least recently seen first,
    so that calls naming strangers never push a real Home Assistant or Slack user off the
    People page; only past the cap with no name left does the least recently seen go."""

    def keep_first(row: Any) -> tuple[bool, str]:
        name = not isinstance(row, dict) or row.get("kind") not in REAL_KINDS
        return (not name, str(row.get("lastSeen", "")) if isinstance(row, dict) else "")

    return sorted(rows, key=keep_first)[len(rows) - MAX_UNLINKED :]
