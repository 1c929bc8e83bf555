"""A person of the household, the identities that name them and the voice devices Assist
hears through: the values the people store answers with, and the checks of what a door passes
in (a display name, an identity, a device id)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

from ...problems import InputError
from ...text import fold, shows_something, trim_invisible

FILE_NAME = "people.json"
KINDS = ("ha", "slack", "name")
MAX_NAME_CHARS = 100
MAX_VALUE_CHARS = 200
MAX_UNLINKED = 500  # beyond this, names typed to a door go first, least recently seen first
REAL_KINDS = ("ha", "slack")  # identities a place vouches for, kept before names anyone types
DEVICE_CHOICES = ("speaker", "household", "person")
MAX_DEVICES = 200  # beyond this, the least recently seen device nobody chose for goes first


@dataclass(frozen=True)
class Identity:
    """How a person shows up somewhere: ``kind`` ("ha", "slack", "name") and its ``value``;
    ``label`` is what that place calls them (a Home Assistant display name), when known."""

    kind: str
    value: str
    label: str = ""

    @property
    def key(self) -> tuple[str, str]:
        """What two identities are compared by: names up to case, width and 繁/简."""
        return (self.kind, fold(self.value) if self.kind == "name" else self.value)


@dataclass(frozen=True)
class Person:
    """One person of the household."""

    id: str
    name: str
    identities: tuple[Identity, ...] = ()


def _identity_key(kind: str, value: str) -> tuple[str, str]:
    return Identity(kind, value).key


def name_key(name: str) -> str:
    """What two names share when a person cannot tell them apart: folded (case, width,
    繁/简) with spaces collapsed."""
    return " ".join(fold(name).split())


def _whole_names(person: Person) -> set[str]:
    """A person's names as ``name_key`` folds them: their display name, their ``name``
    identities and what other places call them (the labels of their identities)."""
    names = [person.name]
    for identity in person.identities:
        names += [identity.value] if identity.kind == "name" else []
        names += [identity.label] if identity.label else []
    return {key for key in map(name_key, names) if key}


def check_identity(kind: Any, value: Any) -> tuple[str, str]:
    """The identity as it is kept, or InputError naming what is wrong with it."""
    if kind not in KINDS:
        raise InputError(
            f"Unknown kind of identity {kind!r}; use one of: {', '.join(KINDS)}.",
            code="identity_kind",
            kind=str(kind),
            kinds=KINDS,
        )
    text = value.strip() if isinstance(value, str) else ""
    if not text or len(text) > MAX_VALUE_CHARS or "\x00" in text:
        raise InputError(
            f"An identity is 1 to {MAX_VALUE_CHARS} characters of text.",
            code="identity_value",
            most=MAX_VALUE_CHARS,
        )
    return str(kind), text


def check_name(name: Any) -> str:
    """A person's display name as it is kept, or InputError."""
    # Spaces collapsed, and nothing invisible at the ends ("\u200bMaya" would pass for Maya);
    # a name must show something (zero-width spaces alone do not) and hold no control.
    text = trim_invisible(" ".join(name.split())) if isinstance(name, str) else ""
    usable = shows_something(text) and not any(unicodedata.category(c) == "Cc" for c in text)
    if not usable or len(text) > MAX_NAME_CHARS:
        raise InputError(
            f"A person's name is 1 to {MAX_NAME_CHARS} characters.",
            code="person_name",
            most=MAX_NAME_CHARS,
        )
    return text


@dataclass(frozen=True)
class Device:
    """A Home Assistant device Assist was heard through, and whose memory it answers with:
    ``choice`` "speaker" (whoever is speaking), "household", or "person" (``person``'s)."""

    id: str
    label: str = ""
    choice: str = "speaker"
    person: str | None = None


def check_device(device_id: Any) -> str:
    """A device id as it is kept, or InputError."""
    text = device_id.strip() if isinstance(device_id, str) else ""
    if not text or len(text) > MAX_VALUE_CHARS or "\x00" in text:
        raise InputError(
            f"A device id is 1 to {MAX_VALUE_CHARS} characters of text.",
            code="device_id",
            most=MAX_VALUE_CHARS,
        )
    return text
