"""When each conversation was last mined for facts, in a file shared by every process that extracts.

On disk (``extraction-state.json`` next to the review queue): a JSON object keyed by
conversation id, each ``{"extractedAt": ISO time, "lastTurnAt": ISO time of the newest
message read}``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..settings import DEFAULTS, Settings
from ..stores import Changed, JsonDocument
from ..stores.timefmt import EPOCH, parse_ts, to_iso, unreadable_entry_times

STATE_FILE_NAME = "extraction-state.json"
MIN_NEW_MESSAGES = 4
MIN_INTERVAL_SECONDS = 60.0


def _validate(data: Any) -> str | None:
    if not isinstance(data, dict):
        return (
            f"expected a JSON object keyed by conversation id, found a JSON {type(data).__name__}"
        )
    return None


def _unreadable_times(data: Any) -> list[tuple[str, str]]:
    """The times of the state that cannot be read (kept; they count as unknown, so the
    conversation is read again in full)."""
    return unreadable_entry_times(data, ("extractedAt", "lastTurnAt"))


class ExtractionState(JsonDocument):
    """Per-conversation bookkeeping: how recently extraction ran and which messages it has seen."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        lock_timeout: float = DEFAULTS["lock_timeout"],
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(
            path,
            default=dict,
            validate=_validate,
            lock_timeout=lock_timeout,
            unreadable_times=_unreadable_times,
        )
        self._clock = clock

    @classmethod
    def from_settings(cls, settings: Settings) -> ExtractionState:
        """The state file ``settings`` describe: next to the review queue, same lock timeout."""
        return cls(
            settings.review_file.with_name(STATE_FILE_NAME), lock_timeout=settings.lock_timeout
        )

    def _entry(self, conversation_id: str) -> dict[str, Any]:
        entry = self.read().get(conversation_id)
        return entry if isinstance(entry, dict) else {}

    def last_extracted(self, conversation_id: str) -> datetime | None:
        """When extraction last ran on the conversation, or None if never."""
        stamp = self._entry(conversation_id).get("extractedAt")
        return parse_ts(stamp) if stamp else None

    def last_turn_at(self, conversation_id: str) -> datetime:
        """The timestamp of the newest message already read (the epoch if none)."""
        stamp = self._entry(conversation_id).get("lastTurnAt")
        return parse_ts(stamp) if stamp else EPOCH

    def should_extract(self, conversation_id: str, new_message_count: int) -> bool:
        """At least 4 new messages and 60 s since the conversation was last extracted."""
        if new_message_count < MIN_NEW_MESSAGES:
            return False
        last = self.last_extracted(conversation_id)
        return last is None or self._clock() - last.timestamp() >= MIN_INTERVAL_SECONDS

    def mark_extracted(self, conversation_id: str, *, last_turn_at: datetime | None = None) -> None:
        """Record that extraction ran now and read every message up to ``last_turn_at``."""
        stamp = to_iso(datetime.fromtimestamp(self._clock(), tz=EPOCH.tzinfo))

        def mutate(data: dict[str, Any]) -> Changed[None]:
            found = data.get(conversation_id)
            entry: dict[str, Any] = found if isinstance(found, dict) else {}
            entry["extractedAt"] = stamp
            entry["lastTurnAt"] = to_iso(last_turn_at) if last_turn_at is not None else stamp
            data[conversation_id] = entry
            return Changed(None)

        self.update(mutate)
