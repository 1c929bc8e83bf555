"""What waits for extraction: the threads the pacing says are due, the messages not yet read,
and when extraction last ran (the Conversations page, ``stats``, the background extractor)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..settings import Settings
from ..stores.conversations import ConversationStore
from ..stores.readers import ConversationReader
from .run import whole_ms
from .state import ExtractionState


@dataclass(frozen=True)
class ThreadWaiting:
    """One thread with messages extraction has not read."""

    id: str
    unread: int  # messages newer than the last extraction's (kept aside ones included)
    kept_aside: int  # of those, trimmed from the window and kept until read
    due: bool  # the pacing says to read it now (4 new messages and 60 s since the last run)


@dataclass(frozen=True)
class Waiting:
    """Where extraction stands over every thread."""

    last_run: datetime | None  # when extraction last ran on any thread (None: never)
    threads: tuple[ThreadWaiting, ...]  # the threads with unread messages, most recent first

    @property
    def due(self) -> tuple[str, ...]:
        """The ids of the threads extraction reads next."""
        return tuple(t.id for t in self.threads if t.due)

    @property
    def unread_turns(self) -> int:
        """Messages of every thread that extraction has not read yet."""
        return sum(t.unread for t in self.threads)

    @property
    def kept_aside(self) -> int:
        """Of those, the ones trimming took out of a thread's window (kept until read)."""
        return sum(t.kept_aside for t in self.threads)


def waiting(
    settings: Settings,
    conversations: ConversationReader | None = None,
    state: ExtractionState | None = None,
) -> Waiting:
    """What waits for extraction in the data folder ``settings`` describe (``conversations``
    and ``state``: a caller's own stores on those files)."""
    conversations = conversations or ConversationStore.from_settings(settings)
    state = state or ExtractionState.from_settings(settings)
    threads = []
    for summary in conversations.list_conversations():
        seen = state.last_turn_at(summary.id)
        if whole_ms(summary.last_activity) <= seen:
            continue  # its newest message is read, and every older one (kept aside or not)
        turns = conversations.turns_to_read(summary.id)
        unread = [t for t in turns if whole_ms(t.timestamp) > seen]
        if not unread:
            continue
        aside = sum(1 for t in turns[: summary.kept_aside] if whole_ms(t.timestamp) > seen)
        due = state.should_extract(summary.id, len(unread))
        threads.append(ThreadWaiting(summary.id, len(unread), aside, due))
    return Waiting(state.last_run(), tuple(threads))


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def describe_waiting(found: Waiting, *, auto: bool) -> list[str]:
    """What ``stats`` prints of extraction: when it last ran, whether the dashboard's server
    runs it by itself (``auto``: MEMORY_AUTO_EXTRACT), what waits."""
    last = found.last_run.strftime("%Y-%m-%d %H:%M:%S UTC") if found.last_run else "never"
    how = "the server extracts due threads by itself" if auto else "MEMORY_AUTO_EXTRACT is off"
    lines = [f"Extraction:    last ran {last} ({how})"]
    if not found.threads:
        lines.append("  nothing waits: every message has been read")
        return lines
    lines.append(
        f"  {_plural(found.unread_turns, 'unread message', 'unread messages')} in "
        f"{_plural(len(found.threads), 'thread', 'threads')}, "
        f"{_plural(len(found.due), 'thread', 'threads')} due now"
    )
    if found.kept_aside:
        lines.append(
            f"  {_plural(found.kept_aside, 'message', 'messages')} trimmed from "
            "the threads, kept until extraction reads them"
        )
    return lines
