"""Remember a fact and revise one: caps, secrets, exact and meaning duplicates, people, versions."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from ..attention.most_similar import near_duplicate_of
from ..extraction.forgotten import deleted_match
from ..language.validity import stated_end
from ..problems import CodedError, InputError
from ..stores import ConflictError, Memory, MemoryTooLongError, NotFoundError, check_secret
from ..stores.memories import KEEP, Keep, check_category, check_length, clean_content
from .base import CuratorBase
from .errors import ForgottenFactError, SimilarMemoryError
from .people import EVERYONE, View, check_person, in_view, narrowed, visible_memory
from .results import Revision


def checked_text(curator: CuratorBase, content: Any, *, confirm_secret: bool) -> str:
    """``content`` as a memory keeps it; refused when empty, longer than one memory may be, or
    holding a secret the caller did not confirm (SecretInputError: the way to confirm is the
    door's own: a box on the page, ``confirm_secret`` in a tool or a flag)."""
    text = clean_content(content)
    check_length(text, curator._memory_store.max_chars)
    check_secret(text, confirmed=confirm_secret)
    return text


def checked_fields(
    curator: CuratorBase, content: Any, category: Any, *, confirm_secret: bool
) -> tuple[str, str]:
    """``content`` (``checked_text``) and ``category`` as a memory keeps them, both checked
    before either is refused: the first refusal (content, then category) is raised with its
    ``field`` named and the other's in its ``also``, so a form words each next to its field
    and the other doors show the first."""
    refused: list[CodedError] = []
    text, chosen = "", ""
    try:
        text = checked_text(curator, content, confirm_secret=confirm_secret)
    except (InputError, MemoryTooLongError) as exc:
        exc.field = "content"
        refused.append(exc)
    try:
        chosen = check_category(category)
    except InputError as exc:
        exc.field = "category"
        refused.append(exc)
    if refused:
        refused[0].also = tuple(refused[1:])
        raise refused[0]
    return text, chosen


class Said:
    """``expires_at`` left to the fact's own words: "Is in Tokyo until Friday" ends with Friday
    in the household's timezone, "Prefers tea" never (``language.validity.expires_at``)."""

    def __repr__(self) -> str:
        return "SAID"


SAID: Final = Said()


def said_end(curator: CuratorBase, text: str, now: datetime | None = None) -> datetime | None:
    """When ``text`` says its fact stops being true, read now in the household's timezone
    (only a bounded end: ``language.validity.stated_end``)."""
    try:
        return stated_end(text, now or datetime.now(UTC), curator.settings.timezone)
    except ValueError:  # a timezone the settings check let through cannot be read: UTC
        return stated_end(text, now or datetime.now(UTC), "UTC")


def similar_in_view(curator: CuratorBase, text: str, person: str | None) -> Memory | None:
    """A memory within the view of ``person`` that says ``text`` in other words, or None:
    another person's private memory is never named (nor compared)."""
    return near_duplicate_of(
        curator._memory_store,
        curator.semantic,
        text,
        visible=lambda memory: in_view(memory, person),
    )


def check_not_forgotten(curator: CuratorBase, text: str, person: str | None) -> None:
    """Refuse (ForgottenFactError, ``deleted_forever``) ``text`` when it states again a fact
    ``person`` (or the household, None) had deleted forever: by its words or its fingerprint,
    never by another person's deletion (``extraction.forgotten.deleted_match``)."""
    forever = [t for t in curator._tombstone_store.all() if t.forever]
    if not forever:
        return
    match = deleted_match(
        text, forever, fingerprint=curator._tombstone_store.fingerprint, owner=person
    )
    if match is not None:
        raise ForgottenFactError(match.memory_id)


class Remembering(CuratorBase):
    """Keeping a fact, changing one, and when it stops being true."""

    def remember(
        self,
        content: str,
        *,
        category: str | None = None,
        person: str | None = None,
        expires_at: datetime | None | Said = SAID,
        source: str | None = None,
        origin: dict[str, Any] | None = None,
        confirm_secret: bool = False,
        allow_similar: bool = False,
        actor: str | None = None,
    ) -> Memory:
        """Keep a new fact as ``person``'s (a person's id) or the household's (None).

        Refused, with nothing written: a secret not confirmed (SecretInputError), the same fact
        already kept in that view (DuplicateMemoryError, checked under the lock), the same fact in
        other words unless ``allow_similar`` (SimilarMemoryError), a fact a person deleted forever
        (ForgottenFactError, ``deleted_forever``), the caps (MemoryFullError), an
        unknown category or person (InputError); an empty, too long or secret text and an unknown
        category are refused together (``checked_fields``: each error names its ``field``).
        ``expires_at``: when it stops being true (None:
        never); left out, the end its words state ("until Friday", 這週), as the dashboard's Add form
        shows before saving, so a fact told through any door ends when it says it does. Within a
        person's view (``Curator.view``) a fact is kept as theirs or the household's only; as
        anyone else's it is refused as for no such person (``person_unknown``)."""
        check_person(person, self.view)
        text, chosen = checked_fields(self, content, category, confirm_secret=confirm_secret)
        ends = said_end(self, text) if isinstance(expires_at, Said) else expires_at
        check_not_forgotten(self, text, person)
        if not allow_similar:
            similar = similar_in_view(self, text, person)
            if similar is not None:
                raise SimilarMemoryError(similar)
        return self._memory_store.add(
            text,
            category=chosen,
            source=source or self.via,
            actor=actor,
            allow_duplicate=False,
            origin=origin,
            person=person,
            expires_at=ends,
        )

    def revise(
        self,
        memory_id: str,
        *,
        content: str,
        category: str | None = None,
        expected: str | None = None,
        person: str | None | Keep = KEEP,
        expires_at: datetime | None | Keep | Said = SAID,
        confirm_secret: bool = False,
        view: View = EVERYONE,
        actor: str | None = None,
    ) -> Revision:
        """Change a memory's words (and category, and whose it is) while it is still at version
        ``expected`` — the one the caller showed; without it, the version read now, so a change
        landing between the read and the write is never overwritten (ConflictError, with the
        memory as it is now). A secret is refused as in ``remember``. ``expires_at`` sets when it
        stops being true in the same change (None: never; KEEP: as it was); left out, the end the
        new words state, read now ("Is in Tokyo until Sunday"), or as it was when they state none,
        as the dashboard's Edit form does. Another person's memory, outside ``view`` (else the
        curator's), is as unknown as one that does not exist (``memory_gone``), and a memory is
        never moved to a person outside it."""
        text, chosen = checked_fields(
            self, content, category or "general", confirm_secret=confirm_secret
        )
        if isinstance(expires_at, Said):
            expires_at = said_end(self, text) or KEEP
        view = narrowed(self, view)
        before = visible_memory(self, memory_id, view)
        if not isinstance(person, Keep):
            check_person(person, view)
        version = expected or before.version
        after = self._memory_store.update(
            memory_id,
            text,
            expected_updated_at=version,
            category=chosen if category else None,
            actor=actor,
            person=person,
            expires_at=expires_at,
        )
        if after is None:
            current = self._memory_store.get(memory_id)
            if current is not None:
                raise ConflictError(current)
            raise NotFoundError(
                f"No memory with id {memory_id!r}.", code="memory_gone", id=repr(memory_id)
            )
        return Revision(before, after)

    def set_expiry(
        self,
        memory_id: str,
        *,
        expires: datetime | None,
        expected: str | None = None,
        actor: str | None = None,
    ) -> Memory | None:
        """When a memory stops being true (None: never), while it is at version ``expected``
        (ConflictError otherwise); None when it is gone."""
        return self._memory_store.set_expiry(
            memory_id, expires, expected_updated_at=expected, actor=actor or self.actor
        )
