"""When each conversation was last mined for facts, in a file shared by every process that extracts.

On disk (``extraction-state.json`` next to the review queue): a JSON object keyed by
conversation id, each ``{"extractedAt": ISO time, "lastTurnAt": ISO time of the newest
message read}`` (and ``"behind": true`` while the last run left newer messages unread: the
thread is due again at once), and ``"claim": {"token", "at"}`` while a process extracts the
thread in the background (``claim``; a claim older than its time limit belongs to a process
that is gone).
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..settings import DEFAULTS, Settings
from ..stores import Changed, JsonDocument, Unchanged
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
        """At least 4 new messages and 60 s since the conversation was last extracted; any
        new message at once when the last run left messages unread (``behind``)."""
        if new_message_count > 0 and self._entry(conversation_id).get("behind") is True:
            return True
        if new_message_count < MIN_NEW_MESSAGES:
            return False
        last = self.last_extracted(conversation_id)
        return last is None or self._clock() - last.timestamp() >= MIN_INTERVAL_SECONDS

    def mark_extracted(
        self,
        conversation_id: str,
        *,
        last_turn_at: datetime | None = None,
        behind: bool = False,
    ) -> None:
        """Record that extraction ran now and read every message up to ``last_turn_at``;
        ``behind``: it left newer messages unread, so the thread is due again at once."""
        stamp = to_iso(datetime.fromtimestamp(self._clock(), tz=EPOCH.tzinfo))

        def mutate(data: dict[str, Any]) -> Changed[None]:
            found = data.get(conversation_id)
            entry: dict[str, Any] = found if isinstance(found, dict) else {}
            entry["extractedAt"] = stamp
            entry["lastTurnAt"] = to_iso(last_turn_at) if last_turn_at is not None else stamp
            if behind:
                entry["behind"] = True
            else:
                entry.pop("behind", None)
            data[conversation_id] = entry
            return Changed(None)

        self.update(mutate)

    def last_run(self) -> datetime | None:
        """When extraction last ran on any conversation, or None if never."""
        stamps = [
            parse_ts(entry.get("extractedAt"))
            for entry in self.read().values()
            if isinstance(entry, dict) and entry.get("extractedAt")
        ]
        known = [stamp for stamp in stamps if stamp != EPOCH]
        return max(known) if known else None

    def claim(self, conversation_id: str, *, stale_after: float) -> str | None:
        """Take the conversation for one extraction, under the file's lock: a token for
        ``release``, or None while another claim younger than ``stale_after`` seconds holds it
        (two processes never extract one thread at once; a dead one's claim is taken over)."""
        now = self._clock()
        token = secrets.token_hex(6)

        def mutate(data: dict[str, Any]) -> Changed[str] | Unchanged[None]:
            found = data.get(conversation_id)
            entry: dict[str, Any] = dict(found) if isinstance(found, dict) else {}
            held = entry.get("claim")
            if isinstance(held, dict):
                at = parse_ts(held.get("at"))
                if at != EPOCH and now - at.timestamp() < stale_after:
                    return Unchanged(None)
            entry["claim"] = {
                "token": token,
                "at": to_iso(datetime.fromtimestamp(now, tz=EPOCH.tzinfo)),
            }
            data[conversation_id] = entry
            return Changed(token)

        return self.update(mutate)

    def release(self, conversation_id: str, token: str) -> None:
        """Let go of a claim ``claim`` gave (a claim taken over since is left alone)."""

        def mutate(data: dict[str, Any]) -> Changed[None] | Unchanged[None]:
            found = data.get(conversation_id)
            held = found.get("claim") if isinstance(found, dict) else None
            if not isinstance(found, dict) or not isinstance(held, dict):
                return Unchanged(None)
            if held.get("token") != token:
                return Unchanged(None)
            entry = dict(found)
            del entry["claim"]
            if entry:
                data[conversation_id] = entry
            else:
                del data[conversation_id]  # a thread never extracted leaves nothing behind
            return Changed(None)

        self.update(mutate)
