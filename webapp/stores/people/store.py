"""``PeopleStore``: the people file shared by every process, its reads (who an identity or a
name is, the devices, the household as it was), its writes and their history log."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...problems import InputError
from ...settings import DEFAULTS
from ...text import fold
from ..changes import Changed, Unchanged, Undo
from ..document import FileBacked
from ..errors import NotFoundError
from ..history import HistoryLog
from ..jsonfile import JsonFile
from ..timefmt import now_iso, read_time
from .model import (
    DEVICE_CHOICES,
    FILE_NAME,
    KINDS,
    MAX_DEVICES,
    MAX_NAME_CHARS,
    MAX_UNLINKED,
    REAL_KINDS,
    Device,
    Identity,
    Person,
    _identity_key,
    _whole_names,
    check_device,
    check_identity,
    check_name,
    name_key,
)
from .rows import (
    _default,
    _devices,
    _drop_unchosen_device,
    _drop_unlinked,
    _identity_row,
    _owner,
    _people,
    _PersonChange,
    _record,
    _refuse_taken,
    _row_key,
    _unknown,
    _validate,
    _within_cap,
)

if TYPE_CHECKING:
    from ...settings import Settings


class PeopleStore(FileBacked):
    """The household's people and the identities seen; shared by every process."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        lock_timeout: float = DEFAULTS["lock_timeout"],
        actor: str = "library",
    ) -> None:
        self.path = Path(path)
        self.actor = actor
        self._history = HistoryLog(self.path)
        self._file = JsonFile(
            self.path,
            store="people",
            default=_default,
            validate=_validate,
            lock_timeout=lock_timeout,
        )

    @classmethod
    def from_settings(cls, settings: Settings, *, actor: str = "library") -> PeopleStore:
        """The people file next to the memory file ``settings`` name."""
        return cls(
            settings.memory_file.with_name(FILE_NAME),
            lock_timeout=settings.lock_timeout,
            actor=actor,
        )

    @classmethod
    def beside(cls, memory_file: str | os.PathLike[str], *, actor: str = "library") -> PeopleStore:
        """The people file next to a memory file (``MemoryStore.path``)."""
        return cls(Path(memory_file).with_name(FILE_NAME), actor=actor)

    @property
    def history_path(self) -> Path:
        return self._history.path

    # ----------------------------------------------------------------- reading
    def people(self) -> list[Person]:
        """Every person, in the order they were added."""
        return list(self._file.view("people", _people))

    def get(self, person_id: str | None) -> Person | None:
        """The person with that id, or None."""
        return next((p for p in self._file.view("people", _people) if p.id == person_id), None)

    def names(self) -> dict[str, str]:
        """Each person's id and display name."""
        return {p.id: p.name for p in self._file.view("people", _people)}

    def resolve(self, kind: str, value: str) -> Person | None:
        """The person an identity maps to, or None (nothing is written)."""
        wanted = _identity_key(kind, value.strip())
        for person in self._file.view("people", _people):
            if any(identity.key == wanted for identity in person.identities):
                return person
        return None

    def find(self, ref: str) -> Person | None:
        """The one person ``ref`` names (``matching``), or None: for nobody, and for a name two
        or more people answer to (a name alone then picks no one)."""
        found = self.matching(ref)
        return found[0] if len(found) == 1 else None

    def matching(self, ref: str) -> list[Person]:
        """Everyone ``ref`` names, as an MCP host, the command line or an imported file names a
        person, by the closest way it names anyone (names compared as ``name_key`` folds
        them: case, width, 繁/简, spaces):

        1. their id, or an identity of theirs (a ``name`` identity, a Home Assistant or Slack
           user id);
        2. else a whole name: their display name, or what Home Assistant or Slack calls them
           (an identity's label, "Ana Souza" or the HA user name);
        3. else a first name: the first word of any of those ("Ana" for "Ana Souza").

        Two or more people answering at the closest level all come back: the caller refuses
        the name as ambiguous rather than guessing."""
        ref = ref.strip()
        if not ref:
            return []
        everyone = self._file.view("people", _people)
        person = next((p for p in everyone if p.id == ref), None)
        if person is not None:
            return [person]
        keys = {(kind, ref) for kind in KINDS if kind != "name"} | {("name", fold(ref))}
        wanted = name_key(ref)
        levels: list[Callable[[Person], bool]] = [
            lambda p: any(i.key in keys for i in p.identities),
            lambda p: wanted in _whole_names(p),
            lambda p: wanted in {name.split(" ")[0] for name in _whole_names(p)},
        ]
        for level in levels:
            found = [p for p in everyone if level(p)]
            if found:
                return found
        return []

    def devices(self) -> list[Device]:
        """The Home Assistant devices seen, by label."""
        return list(self._file.view("devices", _devices))

    def device(self, device_id: str) -> Device | None:
        """The device with that id, or None."""
        return next((d for d in self._file.view("devices", _devices) if d.id == device_id), None)

    def as_of(self, moment: datetime) -> tuple[tuple[Person, ...], tuple[Device, ...]]:
        """The people and the devices' choices as they were at ``moment`` (an aware time):
        every change the history log holds after it taken back, last first. A device seen
        since answered for whoever spoke, as it does until someone chooses for it."""
        data = self._file.read()
        people, devices = dict(data.get("people", {})), dict(data.get("devices") or {})
        for entry in reversed(self._history.entries()):
            at, record_id = read_time(entry.get("ts")), entry.get("id")
            if at is None or at <= moment or not isinstance(record_id, str):
                continue
            kept, rid = people, record_id
            if record_id.startswith("device:"):
                kept, rid = devices, record_id[len("device:") :]
            before = entry.get("before")
            if isinstance(before, dict):
                kept[rid] = before
            else:
                kept.pop(rid, None)
        then = {"people": people, "devices": devices}
        return _people(then), _devices(then)

    def unlinked(self) -> list[Identity]:
        """Identities seen that map to nobody yet: Home Assistant and Slack users before the
        names typed to a door, each most recently seen first."""
        data = self._file.read()
        rows = [
            row
            for row in data.get("unlinked", [])
            if isinstance(row, dict)
            and row.get("kind") in KINDS
            and isinstance(row.get("value"), str)
        ]
        rows.sort(key=lambda row: str(row.get("lastSeen", "")), reverse=True)
        rows.sort(key=lambda row: row["kind"] not in REAL_KINDS)
        return [Identity(row["kind"], row["value"], str(row.get("label") or "")) for row in rows]

    # ----------------------------------------------------------------- writing
    def _journal(self, action: str) -> Callable[[_PersonChange], Undo]:
        def journal(change: _PersonChange) -> Undo:
            return self._history.append(
                [
                    HistoryLog.entry(
                        self.actor, action, change.person_id, change.before, change.after
                    )
                ]
            )

        return journal

    def seen(self, kind: str, value: str, *, label: str = "") -> Person | None:
        """The person an identity maps to; one that maps to nobody is recorded as unlinked
        (with ``label``, what that place calls them) and None is returned. Writes only the
        first time an identity is seen, or when its label changes."""
        kind, value = check_identity(kind, value)
        label = " ".join(label.split())[:MAX_NAME_CHARS] if isinstance(label, str) else ""
        person = self.resolve(kind, value)
        if person is not None:
            return person
        key = _identity_key(kind, value)
        known = next((i for i in self.unlinked() if i.key == key), None)
        if known is not None and (known.label == label or not label):
            return None

        def mutate(data: dict[str, Any]) -> Changed[None] | Unchanged[None]:
            if _owner(data, key) is not None:
                return Unchanged(None)
            rows = data.setdefault("unlinked", [])
            stamp = now_iso()
            for row in rows:
                if isinstance(row, dict) and _row_key(row) == key:
                    if row.get("label") == label or not label:
                        return Unchanged(None)
                    row.update(label=label, lastSeen=stamp)
                    return Changed(None)
            rows.append(
                {
                    "kind": kind,
                    "value": value,
                    "label": label,
                    "firstSeen": stamp,
                    "lastSeen": stamp,
                }
            )
            if len(rows) > MAX_UNLINKED:
                data["unlinked"] = _within_cap(rows)
            return Changed(None)

        self._file.update(mutate)
        return self.resolve(kind, value)

    def seen_device(self, device_id: str, *, label: str = "") -> Device:
        """The device, recorded the first time it is seen (answering for whoever speaks) or
        when its label changes; nothing is written otherwise."""
        device_id = check_device(device_id)
        label = " ".join(label.split())[:MAX_NAME_CHARS] if isinstance(label, str) else ""
        known = self.device(device_id)
        if known is not None and (known.label == label or not label):
            return known

        def mutate(data: dict[str, Any]) -> Changed[None] | Unchanged[None]:
            devices = data.get("devices")
            if not isinstance(devices, dict):
                devices = data["devices"] = {}
            stamp = now_iso()
            record = devices.get(device_id)
            if isinstance(record, dict):
                if record.get("label") == label or not label:
                    return Unchanged(None)
                devices[device_id] = {**record, "label": label, "lastSeen": stamp}
                return Changed(None)
            devices[device_id] = {
                "label": label,
                "choice": "speaker",
                "firstSeen": stamp,
                "lastSeen": stamp,
            }
            if len(devices) > MAX_DEVICES:
                _drop_unchosen_device(devices)
            return Changed(None)

        self._file.update(mutate)
        found = self.device(device_id)
        return found if found is not None else Device(device_id, label)

    def choose_device(self, device_id: str, choice: str, person: str | None = None) -> Device:
        """Set whose memory a device answers with: "speaker", "household", or "person" with
        ``person`` (a person's id). NotFoundError (``device_unknown``) for a device never
        seen, (``person_unknown``) for no such person; InputError for another choice."""
        device_id = check_device(device_id)
        if choice not in DEVICE_CHOICES:
            raise InputError(
                f"Unknown choice {choice!r}; use one of: {', '.join(DEVICE_CHOICES)}.",
                code="device_choice",
                choice=str(choice)[:40],
            )
        if choice == "person" and (person is None or self.get(person) is None):
            raise _unknown(str(person))
        chosen = {"choice": choice, **({"person": person} if choice == "person" else {})}

        def mutate(data: dict[str, Any]) -> Changed[_PersonChange] | Unchanged[None]:
            devices = data.get("devices")
            record = devices.get(device_id) if isinstance(devices, dict) else None
            if not isinstance(devices, dict) or not isinstance(record, dict):
                raise NotFoundError(
                    f"No device has the id {device_id!r}.",
                    code="device_unknown",
                    id=repr(device_id),
                )
            if choice == "person" and person not in data.get("people", {}):
                raise _unknown(str(person))
            after = {k: v for k, v in record.items() if k not in ("choice", "person")} | chosen
            if after == record:
                return Unchanged(None)
            devices[device_id] = after
            return Changed(_PersonChange(f"device:{device_id}", dict(record), dict(after)))

        self._file.update(mutate, self._journal("device"))
        found = self.device(device_id)
        assert found is not None
        return found

    def add(self, name: str, *, identities: tuple[tuple[str, str], ...] = ()) -> Person:
        """A new person with ``name`` and (optionally) identities; an identity given here is
        no longer unlinked. ConflictError-like InputError when one belongs to someone else."""
        name = check_name(name)
        wanted = [check_identity(kind, value) for kind, value in identities]

        def mutate(data: dict[str, Any]) -> Changed[_PersonChange]:
            people = data.setdefault("people", {})
            for kind, value in wanted:
                _refuse_taken(data, _identity_key(kind, value), None)
            person_id = secrets.token_hex(4)
            while person_id in people:
                person_id = secrets.token_hex(4)
            record = {
                "name": name,
                "identities": [_identity_row(data, kind, value) for kind, value in wanted],
                "createdAt": now_iso(),
            }
            people[person_id] = record
            _drop_unlinked(data, {_identity_key(k, v) for k, v in wanted})
            return Changed(_PersonChange(person_id, None, dict(record)))

        return self._require(self._file.update(mutate, self._journal("add")).person_id)

    def rename(self, person_id: str, name: str) -> Person:
        """Give a person another display name. NotFoundError for an unknown id."""
        name = check_name(name)

        def mutate(data: dict[str, Any]) -> Changed[_PersonChange] | Unchanged[None]:
            record = _record(data, person_id)
            if record.get("name") == name:
                return Unchanged(None)
            before = dict(record)
            record["name"] = name
            return Changed(_PersonChange(person_id, before, dict(record)))

        self._file.update(mutate, self._journal("rename"))
        return self._require(person_id)

    def link(self, person_id: str, kind: str, value: str) -> Person:
        """Map an identity to a person (it stops being unlinked). InputError when it is
        another person's already; NotFoundError for an unknown person."""
        kind, value = check_identity(kind, value)
        key = _identity_key(kind, value)

        def mutate(data: dict[str, Any]) -> Changed[_PersonChange] | Unchanged[None]:
            record = _record(data, person_id)
            _refuse_taken(data, key, person_id)
            rows = record.setdefault("identities", [])
            if any(isinstance(r, dict) and _row_key(r) == key for r in rows):
                return Unchanged(None)
            before = {**record, "identities": list(rows)}
            rows.append(_identity_row(data, kind, value))
            _drop_unlinked(data, {key})
            return Changed(_PersonChange(person_id, before, {**record, "identities": list(rows)}))

        self._file.update(mutate, self._journal("link"))
        return self._require(person_id)

    def unlink(self, person_id: str, kind: str, value: str) -> Person:
        """Take an identity from a person; it is offered again as unlinked."""
        kind, value = check_identity(kind, value)
        key = _identity_key(kind, value)

        def mutate(data: dict[str, Any]) -> Changed[_PersonChange] | Unchanged[None]:
            record = _record(data, person_id)
            rows = record.get("identities", [])
            kept = [r for r in rows if not (isinstance(r, dict) and _row_key(r) == key)]
            if len(kept) == len(rows):
                return Unchanged(None)
            gone = next(r for r in rows if isinstance(r, dict) and _row_key(r) == key)
            before = {**record, "identities": list(rows)}
            record["identities"] = kept
            stamp = now_iso()
            data.setdefault("unlinked", []).append(
                {
                    "kind": gone.get("kind"),
                    "value": gone.get("value"),
                    "label": str(gone.get("label") or ""),
                    "firstSeen": stamp,
                    "lastSeen": stamp,
                }
            )
            return Changed(_PersonChange(person_id, before, {**record, "identities": list(kept)}))

        self._file.update(mutate, self._journal("unlink"))
        return self._require(person_id)

    def remove(self, person_id: str) -> Person:
        """Take a person off the household: their identities are offered again as unlinked,
        and the history log keeps their record (``restore`` brings it back). What they own
        is not this store's to decide: the curator refuses while they own memories
        (``Curator.remove_person``). NotFoundError for an unknown id."""

        removed: list[Person] = []

        def mutate(data: dict[str, Any]) -> Changed[_PersonChange]:
            record = _record(data, person_id)
            removed[:] = [_people({"people": {person_id: record}})[0]]
            del data["people"][person_id]
            stamp = now_iso()
            rows = data.setdefault("unlinked", [])
            for row in record.get("identities", []):
                if isinstance(row, dict):
                    rows.append(
                        {
                            "kind": row.get("kind"),
                            "value": row.get("value"),
                            "label": str(row.get("label") or ""),
                            "firstSeen": stamp,
                            "lastSeen": stamp,
                        }
                    )
            return Changed(_PersonChange(person_id, dict(record), None))

        self._file.update(mutate, self._journal("remove"))
        return removed[0]

    def _removed_record(self, person_id: str) -> dict[str, Any] | None:
        entry = next(
            (
                e
                for e in reversed(self._history.read(person_id))
                if e.get("action") == "remove" and isinstance(e.get("before"), dict)
            ),
            None,
        )
        return dict(entry["before"]) if entry is not None else None

    def removed(self, person_id: str) -> Person | None:
        """The person ``remove`` last took off with that id, as the history log kept them
        (None when none was)."""
        record = self._removed_record(person_id)
        return _people({"people": {person_id: record}})[0] if record is not None else None

    def restore(self, person_id: str) -> Person:
        """Bring back a person ``remove`` took off, as the history log kept them (their id,
        name and identities). NotFoundError when the log has no removal of that id;
        InputError (``identity_taken``) when one of their identities is another person's
        now."""
        found = self._removed_record(person_id)
        if found is None:
            raise _unknown(person_id)
        record = found

        def mutate(data: dict[str, Any]) -> Changed[_PersonChange] | Unchanged[None]:
            people = data.setdefault("people", {})
            if person_id in people:
                return Unchanged(None)
            keys = {_row_key(r) for r in record.get("identities", []) if isinstance(r, dict)}
            for key in keys:
                _refuse_taken(data, key, person_id)
            people[person_id] = record
            _drop_unlinked(data, keys)
            return Changed(_PersonChange(person_id, None, dict(record)))

        self._file.update(mutate, self._journal("restore"))
        return self._require(person_id)

    def name_from(self, kind: str, value: str, name: str | None = None) -> str:
        """The name ``person_from`` gives: ``name``, else the unlinked identity's label, else
        its value."""
        kind, value = check_identity(kind, value)
        key = _identity_key(kind, value)
        label = next((i.label for i in self.unlinked() if i.key == key), "")
        return name or label or value

    def person_from(self, kind: str, value: str, *, name: str | None = None) -> Person:
        """A new person from an unlinked identity, named ``name`` or the identity's label
        (its value when it has none)."""
        kind, value = check_identity(kind, value)
        return self.add(self.name_from(kind, value, name), identities=((kind, value),))

    def _require(self, person_id: str) -> Person:
        person = self.get(person_id)
        if person is None:
            raise _unknown(person_id)
        return person


def slack_person(people: PeopleStore, user_id: str, *, label: str = "") -> str | None:
    """The person id for a Slack message's ``user`` (``event["user"]``), to pass as
    ``ConversationStore.add_exchange(..., person=...)``; a Slack user seen for the first time
    is recorded as unlinked (the People page offers it) and None is returned."""
    person = people.seen("slack", user_id, label=label)
    return person.id if person is not None else None
