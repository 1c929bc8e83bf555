"""The exchanges Home Assistant's Assist sent, by idempotency key (``assist-exchanges.json``).

The integration posts each exchange (what the person said and the reply) with a key of its
own and may send it again (a retry after a timeout, a restart): the key says it is stored
already. Written through the same locked, atomic JSON file layer as every store, so two
processes or threads sending one key store it once::

    {"<key>": {"at": ISO time stored, "conversation": "<thread id>", "agent": "<agent id>",
               "device": "<device id>"}}

``agent`` and ``device`` are kept here because the conversation store has no place for a
thread's metadata (its file format is read by other programs). Bounded: a key older than
``MAX_AGE`` or beyond the ``MAX_KEYS`` newest is forgotten.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..problems import InputError
from ..settings import DEFAULTS
from .changes import Changed
from .document import FileBacked
from .jsonfile import JsonFile
from .timefmt import now_iso, to_iso, unreadable_entry_times

if TYPE_CHECKING:
    from ..settings import Settings

FILE_NAME = "assist-exchanges.json"
MAX_KEYS = 20_000
MAX_AGE = timedelta(days=30)
MAX_KEY_CHARS = 200


def _validate(data: Any) -> str | None:
    if not isinstance(data, dict):
        return f"expected a JSON object of exchange keys, found a JSON {type(data).__name__}"
    for key, value in data.items():
        if not isinstance(value, dict):
            return f"the exchange {key!r} is not a JSON object"
    return None


def _unreadable_times(data: Any) -> list[tuple[str, str]]:
    return unreadable_entry_times(data, ("at",))


def check_key(key: Any) -> str:
    """An idempotency key as it is kept (1 to MAX_KEY_CHARS characters), or InputError."""
    if not isinstance(key, str) or not key.strip() or len(key) > MAX_KEY_CHARS or "\x00" in key:
        raise InputError(
            f"An exchange key is 1 to {MAX_KEY_CHARS} characters of text.",
            code="exchange_key",
            most=MAX_KEY_CHARS,
        )
    return key


def _prune(data: dict[str, Any], now: datetime) -> None:
    """Drop the keys older than MAX_AGE, then the oldest beyond MAX_KEYS."""
    oldest = to_iso(now - MAX_AGE)
    for key in [k for k, v in data.items() if str(v.get("at", "")) < oldest]:
        del data[key]
    if len(data) > MAX_KEYS:
        for key in sorted(data, key=lambda k: str(data[k].get("at", "")))[: len(data) - MAX_KEYS]:
            del data[key]


class ExchangeKeyStore(FileBacked):
    """Which exchanges were stored, by key; shared by every process."""

    def __init__(
        self, path: str | os.PathLike[str], *, lock_timeout: float = DEFAULTS["lock_timeout"]
    ) -> None:
        self.path = Path(path)
        self._file = JsonFile(
            self.path,
            store="assist_exchanges",
            default=dict,
            validate=_validate,
            lock_timeout=lock_timeout,
            unreadable_times=_unreadable_times,
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> ExchangeKeyStore:
        """The exchange keys next to the memory file ``settings`` name."""
        return cls(settings.memory_file.with_name(FILE_NAME), lock_timeout=settings.lock_timeout)

    def once(self, key: str, record: dict[str, str], store: Callable[[], bool]) -> bool:
        """Run ``store`` (the exchange's write) unless ``key`` is recorded, then record it with
        ``record`` unless ``store`` says there is nothing to record (False); False, running
        nothing, when it was recorded. Under this file's lock from the look to the record, so
        two processes or threads sending one key store it once; ``store`` raising records
        nothing. A process killed between ``store`` and the record leaves the key unrecorded:
        ``store`` finds it in what it wrote itself (the conversation's turns carry it)."""
        key = check_key(key)
        with self._file.locked():
            if key in self._file.read():
                return False
            keep = store()
            reached("stored")
            if not keep:
                return True
            now = datetime.now(UTC)

            def mutate(data: dict[str, Any]) -> Changed[None]:
                data[key] = {"at": now_iso(), **record}
                _prune(data, now)
                return Changed(None)

            self._file.update(mutate)
        return True


def reached(step: str) -> None:
    """A point between two writes of ``once`` (``"stored"``: the exchange written, its key not
    yet); nothing here. The crash tests replace it to kill the process there."""
