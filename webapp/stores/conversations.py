"""Per-thread conversation history, trimmed by turns, characters and age.

On disk: a JSON object keyed by conversation id. Each value is
``{"turns": [{"role", "content", "timestamp"}...], "createdAt", "trimmed"}``;
a bare array of turns (the older shape) is read as well. Trimming never loses a message
extraction has not read: such turns move to ``"keptAside"`` (same shape, oldest first) instead
of going, and ``"readUntil"`` (the newest message time extraction has read) says which those
are; ``mark_read`` discards them once extraction has read them (``turns_to_read``). A user's
turn delivered with an idempotency key (Home Assistant's Assist) carries it as ``"exchange"``
(an added field: other readers ignore it), so the turns and their key are one write.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from ..settings import Settings
from ..text import fold, matches_all, search_terms
from .changes import Changed, Unchanged
from .document import FileBacked
from .jsonfile import JsonFile
from .records import check_person_id, is_valid_unicode
from .timefmt import EPOCH, LATEST_PLUS, now_iso, parse_ts, to_iso, unreadable_times


@dataclass(frozen=True)
class ConversationTurn:
    """One message of a thread."""

    role: str
    content: str
    timestamp: datetime
    person: str | None = None  # who said it (a person's id), when known

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> ConversationTurn:
        person = record.get("person")
        return cls(
            role=str(record.get("role", "user")),
            content=str(record.get("content", "")),
            timestamp=parse_ts(record.get("timestamp")),
            person=person if isinstance(person, str) and person else None,
        )


@dataclass(frozen=True)
class ConversationSummary:
    """What the dashboard lists for a thread."""

    id: str
    interface: str
    turn_count: int
    chars: int
    created_at: datetime
    last_activity: datetime
    trimmed: int
    expires_at: datetime
    title: str = ""  # the thread's first kept user message, on one line and shortened
    kept_aside: int = 0  # trimmed turns kept until extraction reads them (``turns_to_read``)
    speakers: tuple[str, ...] = ()  # the people's ids its messages name, sorted


TITLE_CHARS = 80


def thread_title(turns: list[dict[str, Any]]) -> str:
    """The first user message of a thread, whitespace collapsed, cut at ``TITLE_CHARS``."""
    first = next(
        (t for t in turns if t.get("role") == "user" and str(t.get("content", "")).strip()), None
    )
    if first is None:
        return ""
    text = " ".join(str(first.get("content", "")).split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1].rstrip() + "…"


def _speakers(turns: list[dict[str, Any]]) -> tuple[str, ...]:
    """The people's ids a thread's messages name (their ``person``), sorted, each once."""
    found = {t.get("person") for t in turns if isinstance(t, dict)}
    return tuple(sorted(p for p in found if isinstance(p, str) and p))


def slack_key(thread_ts: str | None, message_ts: str) -> str:
    """The key of a Slack thread: ``slack:{thread_ts or message_ts}``."""
    return f"slack:{thread_ts or message_ts}"


def cli_session_key(timestamp: int | None = None) -> str:
    """The key of a CLI session: ``cli:session-{ms timestamp}``."""
    if timestamp is None:
        timestamp = time.time_ns() // 1_000_000
    return f"cli:session-{timestamp}"


def schedule_key(schedule_id: str) -> str:
    """The key of a scheduled job's thread: ``schedule:{schedule_id}``."""
    return f"schedule:{schedule_id}"


def interface_of(conversation_id: str) -> str:
    """'slack', 'cli', 'schedule' or 'other', from the key's prefix."""
    prefix = conversation_id.split(":", 1)[0] if ":" in conversation_id else ""
    return prefix if prefix in ("slack", "cli", "schedule") else "other"


def _validate(data: Any) -> str | None:
    if not isinstance(data, dict):
        return (
            f"expected a JSON object keyed by conversation id, found a JSON {type(data).__name__}"
        )
    for key, value in data.items():
        problem = _thread_problem(value)
        if problem:
            return f"conversation {key!r} {problem}"
    return None


def _thread_problem(value: Any) -> str | None:
    """What makes ``value`` no conversation (``None`` when it is one)."""
    turns = value.get("turns") if isinstance(value, dict) else value
    if not isinstance(turns, list):
        return "has no list of turns"
    aside = value.get(KEPT_ASIDE, []) if isinstance(value, dict) else []
    if not isinstance(aside, list):
        return "has kept-aside turns that are not a list"
    for turn in [*turns, *aside]:
        if not isinstance(turn, dict) or not isinstance(turn.get("content"), str):
            return "has a turn that is not a message object"
    return None


def _unreadable_times(data: Any) -> list[tuple[str, str]]:
    """Each time of a thread or message that cannot be read (kept; the time is unknown)."""
    found: list[tuple[str, str]] = []
    if not isinstance(data, dict):
        return found
    for key, value in data.items():
        found += [(repr(key), problem) for problem in unreadable_times(value, ("createdAt",))]
        turns = value.get("turns") if isinstance(value, dict) else value
        for number, turn in enumerate(turns if isinstance(turns, list) else [], 1):
            found += [
                (f"{key!r} message {number}", problem)
                for problem in unreadable_times(turn, ("timestamp",))
            ]
    return found


def _check_new_thread(value: Any) -> str | None:
    problem = _thread_problem(value)
    return f"a conversation {problem}" if problem else None


KEPT_ASIDE = "keptAside"  # trimmed turns extraction has not read yet
EXCHANGE_KEY = "exchange"  # on a user's turn: the idempotency key it was delivered with
Stored = Literal["stored", "duplicate", "expired"]  # what ``add_exchange`` did
READ_UNTIL = "readUntil"  # the time of the newest message extraction has read


def _copy_thread(value: Any) -> Any:
    """A thread that can be changed without touching the cached one (its turns are shared)."""
    if isinstance(value, dict):
        copied = {**value, "turns": list(value.get("turns") or [])}
        if isinstance(value.get(KEPT_ASIDE), list):
            copied[KEPT_ASIDE] = list(value[KEPT_ASIDE])
        return copied
    return list(value) if isinstance(value, list) else value


def _entry(value: Any) -> dict[str, Any]:
    """The conversation in its object form (converting the bare-array shape)."""
    if isinstance(value, dict):
        value.setdefault("turns", [])
        value.setdefault("trimmed", 0)
        return value
    turns = value if isinstance(value, list) else []
    return {
        "turns": turns,
        "createdAt": turns[0].get("timestamp") if turns else now_iso(),
        "trimmed": 0,
    }


def _folded_threads(data: dict[str, Any]) -> dict[str, str]:
    """Each thread's id and messages folded into one text, for ``search``."""
    result = {}
    for key, value in data.items():
        turns = _entry(dict(value) if isinstance(value, dict) else value)["turns"]
        text = "\n".join([key, *(str(t.get("content", "")) for t in turns)])
        result[key] = fold(text)
    return result


def _last_activity(entry: dict[str, Any]) -> datetime:
    """The newest time the thread records: its last readable turn timestamp, else createdAt.

    A hand-edited turn without a (readable) timestamp must not make a live thread look
    decades old, or cleanup() would drop it.
    """
    for turn in reversed(entry.get("turns") or []):
        moment = parse_ts(turn.get("timestamp"))
        if moment != EPOCH:
            return moment
    return parse_ts(entry.get("createdAt"))


def _expired(entry: dict[str, Any], cutoff: datetime) -> bool:
    """Whether the thread was last active before ``cutoff``. A thread none of whose times can be
    read has an unknown age and never expires here (``repair`` reports those times)."""
    last = _last_activity(entry)
    return last != EPOCH and last < cutoff


def _shifted(moment: datetime, days: int) -> datetime:
    """``moment`` moved by ``days``, stopping at the ends of the calendar instead of overflowing."""
    try:
        return moment + timedelta(days=days)
    except OverflowError:
        edge = datetime.max if days > 0 else datetime.min
        return edge.replace(tzinfo=UTC)


def _trimmed_count(entry: dict[str, Any]) -> int:
    """The thread's count of trimmed turns; a hand-edited value that is not a count reads as 0."""
    value = entry.get("trimmed")
    if value is None or isinstance(value, bool):
        return 0
    try:
        return max(0, int(value))
    except (TypeError, ValueError, OverflowError):
        return 0


def _kept_aside(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The thread's trimmed turns that extraction has not read yet, oldest first."""
    aside = entry.get(KEPT_ASIDE)
    return [t for t in aside if isinstance(t, dict)] if isinstance(aside, list) else []


def _read_until(entry: dict[str, Any]) -> datetime:
    """The newest message time extraction has read in the thread (the epoch: none yet)."""
    stamp = entry.get(READ_UNTIL)
    return parse_ts(stamp) if stamp else EPOCH


def _keep_unread(entry: dict[str, Any], dropped: list[dict[str, Any]]) -> None:
    """Keep aside the turns trimming ``dropped`` that extraction has not read yet."""
    seen = _read_until(entry)
    unread = [t for t in dropped if seen == EPOCH or parse_ts(t.get("timestamp")) > seen]
    if unread:
        entry[KEPT_ASIDE] = [*_kept_aside(entry), *unread]


def _holds_key(value: Any, key: str) -> bool:
    """Whether a turn of the thread ``value`` (or one kept aside) carries the exchange key."""
    entry = value if isinstance(value, dict) else {"turns": value}
    turns = entry.get("turns")
    every = [*(turns if isinstance(turns, list) else []), *_kept_aside(entry)]
    return any(isinstance(t, dict) and t.get(EXCHANGE_KEY) == key for t in every)


def _said_at(entry: dict[str, Any], at: datetime) -> datetime:
    """The time to stamp a message said at ``at`` with: never later than now, and after the
    thread's newest message and the newest extraction has read (whole milliseconds, as stored
    and compared), so extraction, which reads what is newer than what it read, reads it."""
    said = min(at.astimezone(UTC), datetime.now(UTC))
    said = said.replace(microsecond=said.microsecond // 1000 * 1000)
    floor = max(_last_activity(entry) if entry["turns"] else EPOCH, _read_until(entry))
    floor = floor.replace(microsecond=floor.microsecond // 1000 * 1000)
    return floor + timedelta(milliseconds=1) if floor != EPOCH and said <= floor else said


def trim_turns(turns: list[dict[str, Any]], max_turns: int, max_chars: int) -> int:
    """Keep the newest ``max_turns`` turns, then drop the oldest while over ``max_chars``.

    Trims the list in place and returns how many turns were dropped.
    """
    dropped = max(0, len(turns) - max_turns)
    del turns[:dropped]
    total = sum(len(t.get("content", "")) for t in turns)
    while turns and total > max_chars:
        total -= len(turns.pop(0).get("content", ""))
        dropped += 1
    return dropped


class ConversationStore(FileBacked):
    """The conversations file, safe for several processes at once.

    Build it with ``ConversationStore.from_settings(settings)``. The constructor reads the
    environment only when it is given no ``path`` (then everything comes from
    ``Settings.from_env()``); with a path it uses what it is given and the defaults for the rest.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        max_turns: int | None = None,
        max_chars: int | None = None,
        max_age_days: int | None = None,
        lock_timeout: float | None = None,
    ) -> None:
        settings = Settings.from_env() if path is None else Settings()
        self.path = Path(path) if path is not None else settings.conversation_file
        self.max_turns = max_turns if max_turns is not None else settings.conversation_max_turns
        self.max_chars = max_chars if max_chars is not None else settings.conversation_max_chars
        self.max_age_days = (
            max_age_days if max_age_days is not None else settings.conversation_max_age_days
        )
        timeout = lock_timeout if lock_timeout is not None else settings.lock_timeout
        # Mutations replace a thread they change (copy on write), so a write re-encodes only
        # that thread and splices it between the encoded bytes of the others.
        self._file = JsonFile(
            self.path,
            store="conversations",
            default=dict,
            validate=_validate,
            lock_timeout=timeout,
            copy=dict,
            validate_item=_check_new_thread,
            unreadable_times=_unreadable_times,
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> ConversationStore:
        """The conversation store ``settings`` describe: its file, trimming and lock timeout."""
        return cls(
            settings.conversation_file,
            max_turns=settings.conversation_max_turns,
            max_chars=settings.conversation_max_chars,
            max_age_days=settings.conversation_max_age_days,
            lock_timeout=settings.lock_timeout,
        )

    def init(self) -> ConversationStore:
        """Create the folder and file if missing, then drop expired conversations."""
        self._file.ensure()
        self.cleanup()
        return self

    def _cutoff(self) -> datetime:
        """Threads last active before this have expired (none, for an age beyond the calendar)."""
        return _shifted(datetime.now(UTC), -self.max_age_days)

    def add_exchange(
        self,
        conversation_id: str,
        user_message: str,
        assistant_response: str,
        *,
        person: str | None = None,
        at: datetime | None = None,
        key: str | None = None,
    ) -> Stored:
        """Append the user's message and the assistant's reply, trim the thread, save.

        ``person`` (a person's id, see people.py) records who sent the message, when known;
        extraction gives their first-person facts to them. ``at`` (an aware time) is when it
        was said, for a message delivered late (the turns are stamped now without it): one
        later than now is stamped now, and one not after the thread's newest message (or the
        newest extraction has read) just after it, as is one stamped now in the millisecond of
        the thread's newest message, so a thread stays in time order and
        extraction reads it ("expired", nothing written, for one said before the thread's
        max age: age trimming would drop it at once, unread). ``key`` (an exchange's
        idempotency key) is written on the user's turn, in the same write: "duplicate",
        nothing written, when a turn of the thread (or one kept aside) carries it already."""
        if person is not None:
            person = check_person_id(person)
        if not isinstance(conversation_id, str) or not conversation_id.strip():
            raise ValueError("A conversation id must be non-empty text.")
        if not isinstance(user_message, str) or not isinstance(assistant_response, str):
            raise ValueError("Messages must be text.")
        if not all(map(is_valid_unicode, (conversation_id, user_message, assistant_response))):
            raise ValueError("Messages must be valid Unicode text (no lone surrogates).")

        if at is not None and at.tzinfo is None:
            raise ValueError("The time a message was said needs its time zone.")

        def mutate(data: dict[str, Any]) -> Changed[Stored] | Unchanged[Stored]:
            found = data.get(conversation_id)
            if key is not None and found is not None and _holds_key(found, key):
                return Unchanged("duplicate")
            entry = _entry(_copy_thread(found))
            # Stamped when said (now, without ``at``), and always after the thread's newest
            # message at the milliseconds stored: two exchanges within one millisecond would
            # otherwise share a stamp, and extraction, which reads what is newer than the
            # stamp it read up to, would skip the second when a run stopped between them.
            said = _said_at(entry, parse_ts(now_iso()) if at is None else at)
            if at is not None and said < self._cutoff():
                return Unchanged("expired")
            stamp = to_iso(said)
            turn = {"role": "user", "content": user_message, "timestamp": stamp}
            if person is not None:
                turn["person"] = person
            if key is not None:
                turn[EXCHANGE_KEY] = key
            entry["turns"].append(turn)
            entry["turns"].append(
                {"role": "assistant", "content": assistant_response, "timestamp": stamp}
            )
            before = list(entry["turns"])
            dropped = trim_turns(entry["turns"], self.max_turns, self.max_chars)
            entry["trimmed"] = _trimmed_count(entry) + dropped
            _keep_unread(entry, before[:dropped])
            data[conversation_id] = entry
            return Changed("stored")

        return self._file.update(mutate)

    def rewrite_messages(self, rewrite: Callable[[str], str]) -> int:
        """Delete forever in the threads: every message's text replaced by ``rewrite(text)``
        (words masked), the backup refreshed so they do not live on in it; how many messages
        changed."""

        def mutate(data: dict[str, Any]) -> Changed[int] | Unchanged[int]:
            changed = 0
            for key, value in list(data.items()):
                if not isinstance(value, dict):
                    continue
                for part in ("turns", KEPT_ASIDE):  # the turns kept aside are words said too
                    turns = value.get(part)
                    if not isinstance(turns, list):
                        continue
                    new_turns = []
                    for turn in turns:
                        text = turn.get("content") if isinstance(turn, dict) else None
                        masked = rewrite(text) if isinstance(text, str) else text
                        if masked != text:
                            turn = {**turn, "content": masked}
                            changed += 1
                        new_turns.append(turn)
                    if new_turns != turns:  # (copy on write: the thread is replaced)
                        value = data[key] = {**value, part: new_turns}
            return Changed(changed) if changed else Unchanged(0)

        return self.wipe(mutate)

    def get_history(self, conversation_id: str) -> list[ConversationTurn]:
        """The thread's turns after trimming, oldest first; [] if unknown or expired."""
        value = self._file.read().get(conversation_id)
        if value is None:
            return []
        entry = _entry(dict(value) if isinstance(value, dict) else value)
        if _expired(entry, self._cutoff()):
            return []
        return [ConversationTurn.from_dict(t) for t in entry["turns"]]

    def turns_to_read(self, conversation_id: str) -> list[ConversationTurn]:
        """What extraction reads of the thread: the turns trimming kept aside because
        extraction had not read them yet, then ``get_history``'s; [] if unknown or expired."""
        value = self._file.read().get(conversation_id)
        if value is None:
            return []
        entry = _entry(dict(value) if isinstance(value, dict) else value)
        if _expired(entry, self._cutoff()):
            return []
        return [ConversationTurn.from_dict(t) for t in [*_kept_aside(entry), *entry["turns"]]]

    def mark_read(self, conversation_id: str, until: datetime) -> int:
        """Extraction has read the thread's messages up to ``until``: later trimming drops
        them, and the turns kept aside up to then go now; how many went."""
        value = self._file.read().get(conversation_id)
        if not isinstance(value, dict) or (_read_until(value) >= until and not _kept_aside(value)):
            return 0

        def mutate(data: dict[str, Any]) -> Changed[int] | Unchanged[int]:
            found = data.get(conversation_id)
            if found is None:
                return Unchanged(0)  # cleared meanwhile
            entry = _entry(_copy_thread(found))
            aside = _kept_aside(entry)
            kept = [t for t in aside if parse_ts(t.get("timestamp")) > until]
            newer = max(_read_until(entry), until)
            if len(kept) == len(aside) and newer == _read_until(entry):
                return Unchanged(0)
            entry[READ_UNTIL] = to_iso(newer)
            if kept:
                entry[KEPT_ASIDE] = kept
            else:
                entry.pop(KEPT_ASIDE, None)
            data[conversation_id] = entry
            return Changed(len(aside) - len(kept))

        return self._file.update(mutate)

    def clear(self, conversation_id: str) -> bool:
        """Forget every turn of a thread; False if it did not exist."""
        return self._file.remove_key(conversation_id)

    def cleanup(self) -> int:
        """Remove threads whose last activity is older than ``max_age_days``; return how many."""
        cutoff = self._cutoff()
        if not any(
            _expired(_entry(dict(v) if isinstance(v, dict) else v), cutoff)
            for v in self._file.read().values()
        ):
            return 0

        def mutate(data: dict[str, Any]) -> Changed[int] | Unchanged[int]:
            for key, value in list(data.items()):
                if isinstance(value, dict) and ("turns" not in value or "trimmed" not in value):
                    data[key] = _entry(dict(value))  # written in its full form, as before
            expired = [k for k, v in data.items() if _expired(_entry(v), cutoff)]
            if not expired:
                return Unchanged(0)
            for key in expired:
                del data[key]
            return Changed(len(expired))

        return self._file.update(mutate)

    def list_conversations(self) -> list[ConversationSummary]:
        """Every live thread with its size and activity, most recent first."""
        return list(self._file.view("summaries", self._summaries))

    def search(self, query: str) -> list[ConversationSummary]:
        """Live threads whose id or messages hold every word of ``query`` (``search_terms``)."""
        terms = search_terms(query)
        if not terms:
            return self.list_conversations()
        folded = self._file.view("folded", _folded_threads)
        return [s for s in self.list_conversations() if matches_all(folded.get(s.id, ""), terms)]

    def _summaries(self, data: dict[str, Any]) -> list[ConversationSummary]:
        result = []
        for key, value in data.items():
            entry = _entry(dict(value) if isinstance(value, dict) else value)
            turns = entry["turns"]
            last = _last_activity(entry)
            created = parse_ts(entry.get("createdAt")) if entry.get("createdAt") else last
            if created == EPOCH and turns:
                created = parse_ts(turns[0].get("timestamp"))
            result.append(
                ConversationSummary(
                    id=key,
                    interface=interface_of(key),
                    turn_count=len(turns),
                    chars=sum(len(t.get("content", "")) for t in turns),
                    created_at=created,
                    last_activity=last,
                    trimmed=_trimmed_count(entry),
                    # Unknown age (no readable time): never expires, so it is not shown as expired.
                    expires_at=_shifted(last, self.max_age_days) if last != EPOCH else LATEST_PLUS,
                    title=thread_title(turns),
                    kept_aside=len(_kept_aside(entry)),
                    speakers=_speakers(turns),
                )
            )
        result.sort(key=lambda s: s.last_activity, reverse=True)
        return result
