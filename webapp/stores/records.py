"""What several stores share about the records they keep: the memory record (``Memory``, the
form every store and caller reads a memory in) and the checks of a field's value (content,
length, category, person id, secrets). No store: it owns no file, and a store that refers to
another's records (review, tombstones, conversations) imports this, never that store.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from types import MappingProxyType
from typing import Any

from ..problems import InputError
from ..sensitive.secrets import find_secrets
from ..text import strip_ends
from .errors import MemoryTooLongError, SecretInputError
from .origin import read_origin
from .timefmt import EPOCH, read_time, to_iso

CATEGORIES = ("preference", "project", "workflow", "tool", "convention", "general")
_KNOWN_KEYS = {"id", "content", "createdAt", "updatedAt", "category", "source"}
_NONE_UNREAD: Mapping[str, Any] = MappingProxyType({})
PERSON_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")  # like a memory's id: URL-safe


@dataclass(frozen=True)
class Memory:
    """One remembered fact. ``extra`` holds fields this version does not know; they are kept."""

    id: str
    content: str
    created_at: datetime
    updated_at: datetime
    category: str = "general"
    source: str | None = None
    # Where it came from (see origin.py); None when not recorded or not understood.
    origin: dict[str, Any] | None = field(default=None, compare=False)
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    # The values of "createdAt" / "updatedAt" the file holds that are no usable time (read as
    # the epoch, unknown); ``to_dict`` writes them back as they were, never as 1970.
    unread_times: Mapping[str, Any] = field(
        default_factory=lambda: _NONE_UNREAD, compare=False, repr=False
    )

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> Memory:
        """Read the on-disk camelCase form (ISO or Unix-ms timestamps)."""
        origin = read_origin(record.get("origin"))
        known = _KNOWN_KEYS | {"origin"} if origin is not None else _KNOWN_KEYS
        raw_created = record.get("createdAt")
        raw_updated = record.get("updatedAt", raw_created)
        created, updated = read_time(raw_created), read_time(raw_updated)
        unread: Mapping[str, Any] = _NONE_UNREAD
        if (created is None and raw_created is not None) or (
            updated is None and raw_updated is not None
        ):
            unread = {
                name: value
                for name, value, moment in (
                    ("createdAt", raw_created, created),
                    ("updatedAt", raw_updated, updated),
                )
                if moment is None and value is not None
            }
        return cls(
            id=str(record.get("id", "")),
            content=str(record.get("content", "")),
            created_at=EPOCH if created is None else created,
            updated_at=EPOCH if updated is None else updated,
            category=str(record.get("category") or "general"),
            source=record.get("source"),
            origin=origin,
            extra={k: v for k, v in record.items() if k not in known},
            unread_times=unread,
        )

    def to_dict(self) -> dict[str, Any]:
        """The on-disk camelCase form."""
        record: dict[str, Any] = dict(self.extra)
        record.update(
            id=self.id,
            content=self.content,
            createdAt=to_iso(self.created_at),
            updatedAt=to_iso(self.updated_at),
            category=self.category,
        )
        record.update(self.unread_times)  # as the file held them: an unknown time is no 1970
        if self.source is not None:
            record["source"] = self.source
        if self.origin is not None:
            record["origin"] = dict(self.origin)
        return record

    @property
    def version(self) -> str:
        """A token for optimistic concurrency: the stored ``updatedAt`` in ISO form."""
        return to_iso(self.updated_at)

    @property
    def person(self) -> str | None:
        """Whose memory this is (the record's optional "person"); None: the household's."""
        value = self.extra.get("person")
        return value if isinstance(value, str) and value else None

    @property
    def expires_at(self) -> datetime | None:
        """When the fact stops being true (the record's optional "expiresAt"); None: never.
        A value that is no readable time counts as never, so no memory drops out of the
        prompt over a field another program wrote (``repair`` reports it)."""
        return read_time(self.extra.get("expiresAt"))

    def expired(self, now: datetime | None = None) -> bool:
        """Whether ``expires_at`` has passed at ``now`` (default: the current time)."""
        expires = self.expires_at
        return expires is not None and expires <= (now or datetime.now(UTC))


class Keep(Enum):
    """``update``'s default for ``person``: the memory stays whose it is."""

    KEEP = "keep"


KEEP = Keep.KEEP


def _blank(char: str) -> bool:
    return char.isspace() or unicodedata.category(char) == "Cf"


def trim_invisible(raw: str) -> str:
    """The text without whitespace or invisible format characters (zero-width space, BOM) at
    either end, so a memory cannot look empty; joiners inside an emoji stay."""
    return strip_ends(raw, _blank)


def clean_content(content: Any) -> str:
    """Trim the content and refuse empty, invisible-only or non-text input with a clear message."""
    if not isinstance(content, str):
        raise InputError("Memory content must be text.", code="content_not_text")
    cleaned = trim_invisible(content)
    if not cleaned:
        raise InputError("Memory content cannot be empty.", code="content_empty")
    if "\x00" in cleaned:
        raise InputError("Memory content cannot contain NUL characters.", code="content_nul")
    if not is_valid_unicode(cleaned):
        raise InputError(
            "Memory content is not valid Unicode text (it has a lone surrogate).",
            code="content_surrogate",
        )
    return cleaned


def check_length(content: str, max_chars: int) -> None:
    """Raise MemoryTooLongError when one fact is longer than the whole store may hold."""
    if len(content) > max_chars:
        raise MemoryTooLongError(len(content), max_chars)


def is_valid_unicode(text: str) -> bool:
    """False for text with lone surrogates, which cannot be written as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_secret(content: str, *, confirmed: bool = False) -> None:
    """Raise SecretInputError when ``content`` holds a secret (a password, a door code, a key,
    a card or account number, a one-time code) and the person has not ``confirmed`` keeping it.

    ``add`` and ``update`` do not check it themselves: every interface asks first (the
    curator's ``remember`` and ``revise``, imports through ``plan_import``), and each has its
    own way to confirm.
    """
    if confirmed:
        return
    finding = find_secrets(content)
    if finding is not None:
        raise SecretInputError(finding.kind, finding.masked, finding.fact)


def check_category(category: Any) -> str:
    """Return the category or raise ValueError naming the allowed ones."""
    if category is None or category == "":
        return "general"
    if category not in CATEGORIES:
        raise InputError(
            f"Unknown category {category!r}; use one of: {', '.join(CATEGORIES)}.",
            code="unknown_category",
            category=category,
            categories=CATEGORIES,
        )
    return str(category)


def check_person_id(person: Any) -> str:
    """A person id as a memory record holds it, or InputError."""
    if not isinstance(person, str) or not PERSON_ID.fullmatch(person):
        raise InputError(
            "A person id is 1 to 100 letters, digits, '-' or '_'.", code="person_id_bad"
        )
    return person
