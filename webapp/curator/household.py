"""The household's people, its skill documents and the findings a person dismissed: the writes
the doors make besides memory, each once.

People have one rule across doors: two people are never given names a person cannot tell
apart ("alex" beside "Alex", full-width "Ａｌｅｘ", 張偉 beside 张伟), since a name typed to an
assistant or read from an import must map to one of them. The store itself still takes any
name (a host program's own choices are its own); the curator refuses the clash with
``person_name_taken``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..attention.findings import finding_key
from ..problems import InputError
from ..stores import Device, ImportReport, Person, SkillDocument
from ..stores.people import name_key
from .base import CuratorBase
from .people import EVERYONE, check_person, in_view, person_in_view, unknown_person


def _refuse_taken(curator: CuratorBase, name: str, person_id: str | None = None) -> None:
    key = name_key(name)
    for person in curator._people_store.people():
        if person.id != person_id and name_key(person.name) == key:
            raise InputError(
                f"{person.name!r} is already a person of the household; give another name, "
                "or link the identity to them.",
                code="person_name_taken",
                name=person.name,
            )


def owns_nothing(curator: CuratorBase, person_id: str) -> bool:
    """No private memory, proposal or conversation of ``person_id`` exists."""
    threads = curator._conversation_store.list_conversations()
    return owned_by(curator, person_id) == (0, 0) and not any(
        person_id in s.speakers for s in threads
    )


def check_own(curator: CuratorBase, person_id: str) -> None:
    """Within a view narrower than everyone's, a person is changed by themselves only: any
    other is as unknown as no such person (``person_unknown``). A viewer linked to nobody (the
    household's view) may claim a person who owns nothing yet, so they see nobody's data."""
    view = curator.view
    if view is EVERYONE or person_id == view:
        return
    if (
        view is None
        and curator._people_store.get(person_id) is not None
        and owns_nothing(curator, person_id)
    ):
        return
    raise unknown_person(person_id)


def owned_by(curator: CuratorBase, person_id: str) -> tuple[int, int]:
    """What a person owns: their private memories and the proposals waiting as theirs."""
    memories = sum(1 for m in curator._memory_store.get_all() if m.person == person_id)
    memories += sum(
        1 for s in curator._conversation_store.list_conversations() if person_id in s.speakers
    )
    waiting = sum(1 for item in curator._review_queue.pending() if item.person == person_id)
    return memories, waiting


def _check_finding_in_view(curator: CuratorBase, key: str) -> None:
    if curator.view is EVERYONE:
        return
    kind, _, rest = key.partition(":")
    ids = rest.rpartition(":")[0]
    memories = [curator._memory_store.get(i) for i in ids.split("+")] if ids else []
    named = [m for m in memories if m is not None and in_view(m, curator.view)]
    if not named or len(named) != len(memories) or finding_key(kind, named) != key:
        raise InputError("That is not a finding of the Needs attention view.", code="not_a_finding")


class Household(CuratorBase):
    """The household's people and devices, its skill documents, and the findings a person dismissed."""

    def add_person(self, name: str, *, identities: tuple[tuple[str, str], ...] = ()) -> Person:
        """A new person with ``name`` (and identities of theirs); ``person_name_taken`` when the
        household has a person of that name already, however it is cased or written."""
        _refuse_taken(self, name)
        return self._people_store.add(name, identities=identities)

    def person_from(self, kind: str, value: str, *, name: str | None = None) -> Person:
        """A new person from an identity seen (``PeopleStore.person_from``), its name checked as
        ``add_person`` does."""
        _refuse_taken(self, self._people_store.name_from(kind, value, name))
        return self._people_store.person_from(kind, value, name=name)

    def rename_person(self, person_id: str, *, name: str) -> Person:
        """Give a person another name, unless another person has it (``check_own``)."""
        check_own(self, person_id)
        _refuse_taken(self, name, person_id)
        return self._people_store.rename(person_id, name)

    def link_identity(self, person_id: str, *, kind: str, value: str) -> Person:
        """Map an identity to a person (``check_own``)."""
        check_own(self, person_id)
        return self._people_store.link(person_id, kind, value)

    def unlink_identity(self, person_id: str, *, kind: str, value: str) -> Person:
        """Take an identity from a person (offered again as unlinked; ``check_own``)."""
        check_own(self, person_id)
        return self._people_store.unlink(person_id, kind, value)

    def note_identity(self, kind: str, value: str, *, label: str = "") -> Person | None:
        """The person an identity maps to; one nobody has is recorded as unlinked (to be offered
        on the People page) and None is returned."""
        return self._people_store.seen(kind, value, label=label)

    def choose_device(self, device_id: str, *, choice: str, person: str | None = None) -> Device:
        """Set whose memory a Home Assistant device answers with (``PeopleStore.choose_device``:
        "speaker", "household", or "person" and ``person``). Within a person's view (a person
        who is not an administrator, on the People page) only whoever speaks, the household's or
        their own: a device is never made to answer with another person's memory
        (``person_unknown``), nor one that does taken from them (``device_not_yours``)."""
        if choice == "person":
            check_person(person, self.view)
        current = self._people_store.device(device_id)
        if current is not None and not person_in_view(current.person, self.view):
            raise InputError(
                "That device answers with another person's memory; only they or an "
                "administrator can change it.",
                code="device_not_yours",
            )
        return self._people_store.choose_device(
            device_id, choice, person if choice == "person" else None
        )

    def remove_person(self, person_id: str) -> Person:
        """Take a person off the household (their identities are offered again as unlinked; the
        people history log keeps them, ``restore_person`` undoes it). Refused with
        ``person_owns_memories`` while they own a memory or a proposal waits as theirs: a
        person's private memories never become the household's (everyone's) by their owner
        going, nor are they left owned by nobody; a person moves or forgets them first."""
        check_own(self, person_id)
        person = self._people_store.get(person_id)
        if person is None:
            return self._people_store.remove(person_id)  # person_unknown
        memories, waiting = owned_by(self, person_id)
        if memories or waiting:
            raise InputError(
                f"{person.name} still owns {memories} private memories and {waiting} proposals "
                "waiting in Review; move them to the household or forget them first.",
                code="person_owns_memories",
                name=person.name,
                memories=memories,
                waiting=waiting,
            )
        return self._people_store.remove(person_id)

    def restore_person(self, person_id: str) -> Person:
        """Bring back a person ``remove_person`` took off, unless another person has their name
        now (``person_name_taken``) or one of their identities (``identity_taken``)."""
        if self.view is not EVERYONE and self.view != person_id:
            raise unknown_person(person_id)
        gone = self._people_store.removed(person_id)
        if gone is not None and self._people_store.get(person_id) is None:
            _refuse_taken(self, gone.name, person_id)
        return self._people_store.restore(person_id)

    def save_skill(
        self,
        document: SkillDocument | Mapping[str, Any],
        *,
        actor: str | None = None,
    ) -> SkillDocument:
        """Validate and write a skill document (``SkillDocumentStore.save``)."""
        return self._skill_store.save(document, actor=actor or self.actor)

    def deprecate_skill(self, doc_id: str, *, actor: str | None = None) -> bool:
        """Deprecate a live skill document; False when none has that id."""
        return self._skill_store.deprecate(doc_id, actor=actor or self.actor)

    def restore_skill(self, doc_id: str, *, actor: str | None = None) -> bool:
        """Bring a deprecated skill document back; False when none has that id."""
        return self._skill_store.restore(doc_id, actor=actor or self.actor)

    def restore_skill_version(self, hid: str, *, actor: str | None = None) -> SkillDocument:
        """Bring back the version of a skill document the change ``hid`` replaced."""
        return self._skill_store.restore_version(hid, actor=actor or self.actor)

    def import_staged_skills(
        self, token: str, *, actor: str | None = None, replace_edits: bool = True
    ) -> ImportReport:
        """Import the skills upload kept under ``token`` (``SkillDocumentStore.import_staged``)."""
        return self._skill_store.import_staged(
            token, actor=actor or self.actor, replace_edits=replace_edits
        )

    def import_skills(
        self, source: Path, *, actor: str = "import", replace_edits: bool = False
    ) -> ImportReport:
        """Import one Agent Skills folder or .zip (``SkillDocumentStore.import_skill`` /
        ``import_skill_zip``)."""
        if source.is_file():
            return self._skill_store.import_skill_zip(
                source, actor=actor, replace_edits=replace_edits
            )
        return self._skill_store.import_skill(source, actor=actor, replace_edits=replace_edits)

    def dismiss_finding(self, key: str, *, actor: str | None = None) -> bool:
        """Dismiss a Needs-attention finding; False when it already was. Within a person's view,
        only a finding over memories that view may see, as they are now (``not_a_finding``
        otherwise: another person's findings are neither hidden nor shown by a crafted key)."""
        _check_finding_in_view(self, key)
        return self._dismissal_store.dismiss(key, actor=actor or self.actor)

    def restore_finding(self, key: str) -> bool:
        """Bring a dismissed finding back; False when it was not dismissed (within a person's
        view, only one of theirs or the household's, as ``dismiss_finding``)."""
        _check_finding_in_view(self, key)
        return self._dismissal_store.restore(key)
