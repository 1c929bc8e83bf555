"""The people of a household and the identities that map to them (``people.json``).

A person has an id, a display name and identities: a Home Assistant user id (``ha``), a
Slack user id (``slack``) or a name an MCP host or the command line passes (``name``). An
identity seen for the first time that maps to nobody is kept as *unlinked*, so the People
page can offer it as a new person or link it to an existing one. Written through the same
locked, atomic JSON file layer as every store, with its own history log
(``people.history.jsonl``)::

    {"people": {"<id>": {"name": "Maya", "identities": [{"kind": "ha", "value": "…"}],
                         "createdAt": ISO time}},
     "unlinked": [{"kind": "slack", "value": "U123", "label": "maya", "firstSeen": ISO time,
                   "lastSeen": ISO time}],
     "devices": {"<HA device id>": {"label": "Kitchen satellite", "choice": "speaker",
                                   "firstSeen": ISO time, "lastSeen": ISO time}}}

``devices`` (an added key: older readers ignore it, older writers keep it) are the Home
Assistant voice devices Assist was heard through, each with whose memory it answers with:
``"speaker"`` (whoever is speaking, the default), ``"household"`` (the household's only) or
``"person"`` with ``"person": "<id>"`` (that person's).

Memories name a person by id (the record's optional ``person``); a memory without one is the
household's, shared by everyone.

Its parts: ``model`` (a person, an identity, a device and the checks of what a door passes in),
``rows`` (the file's document: its shape, what is read from it, the edits to its rows) and
``store`` (``PeopleStore``: the file, its reads, its writes and their history log).
"""

from ..records import PERSON_ID as PERSON_ID  # where they were first: still importable here
from ..records import check_person_id as check_person_id
from .model import (
    DEVICE_CHOICES,
    FILE_NAME,
    KINDS,
    MAX_DEVICES,
    MAX_NAME_CHARS,
    MAX_UNLINKED,
    MAX_VALUE_CHARS,
    REAL_KINDS,
    Device,
    Identity,
    Person,
    check_device,
    check_identity,
    check_name,
    name_key,
)
from .store import PeopleStore, slack_person

__all__ = [
    "DEVICE_CHOICES",
    "FILE_NAME",
    "KINDS",
    "MAX_DEVICES",
    "MAX_NAME_CHARS",
    "MAX_UNLINKED",
    "MAX_VALUE_CHARS",
    "PERSON_ID",
    "REAL_KINDS",
    "Device",
    "Identity",
    "PeopleStore",
    "Person",
    "check_device",
    "check_identity",
    "check_name",
    "check_person_id",
    "name_key",
    "slack_person",
]
