"""The exact text injected into every prompt. The dashboard's preview calls these very functions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .language.moments import read_time

MEMORY_OPEN, MEMORY_CLOSE = "<long_term_memory>", "</long_term_memory>"
HISTORY_OPEN, HISTORY_CLOSE = "<conversation_history>", "</conversation_history>"
_ROLE_LABELS = {"user": "User", "assistant": "Assistant"}

# A remembered fact or an old message must not close its block (or open another) and so
# speak outside it: such tags inside content are written with ‹ › instead of < >.
_BLOCK_TAG = re.compile(r"<\s*(/?)\s*(long_term_memory|conversation_history)\s*>", re.IGNORECASE)

# CJK ideographs, kana and hangul: roughly one token per character for Claude's tokenizer.
_WIDE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def _content(item: Any) -> str:
    if isinstance(item, str):
        text = item
    elif isinstance(item, Mapping):
        text = str(item.get("content", ""))
    else:
        text = str(getattr(item, "content", item))
    return _BLOCK_TAG.sub(lambda m: f"‹{m.group(1)}{m.group(2)}›", text)


def _role(item: Any) -> str:
    role = item.get("role") if isinstance(item, Mapping) else getattr(item, "role", "user")
    return _ROLE_LABELS.get(str(role), str(role).capitalize())


def _expires(item: Any) -> datetime | None:
    """When a memory (object, dict or string) stops being true; None: never, or no usable time."""
    if isinstance(item, str):
        return None
    if not isinstance(item, Mapping):
        value = getattr(item, "expires_at", None)
        return value if isinstance(value, datetime) else None
    # Read as the store reads it (``language.moments.read_time``): a time outside the calendar, or
    # none, is "never", for a dict exactly as for the Memory the store makes of it.
    return read_time(item.get("expiresAt"))


def is_expired(item: Any, now: datetime | None = None) -> bool:
    """Whether a memory's ``expiresAt`` has passed at ``now`` (default: the current time).
    Memories without one, or with one that is no time, never expire."""
    expires = _expires(item)
    return expires is not None and expires <= (now or datetime.now(UTC))


def memory_section(memories: Iterable[Any], *, now: datetime | None = None) -> str:
    """The ``<long_term_memory>`` block with its trailing blank line, or '' with no memories.
    Memories expired at ``now`` (default: the current time) are left out."""
    moment = now or datetime.now(UTC)
    lines = [f"- {_content(m)}" for m in memories if not is_expired(m, moment)]
    if not lines:
        return ""
    return MEMORY_OPEN + "\n" + "\n".join(lines) + "\n" + MEMORY_CLOSE + "\n\n"


def history_section(history: Iterable[Any]) -> str:
    """The ``<conversation_history>`` block with its trailing blank line, or '' with no turns."""
    lines = [f"[{_role(turn)}]: {_content(turn)}" for turn in history]
    if not lines:
        return ""
    return HISTORY_OPEN + "\n" + "\n".join(lines) + "\n" + HISTORY_CLOSE + "\n\n"


def build_prompt_with_memory(
    memories: Iterable[Any], prompt: str, *, now: datetime | None = None
) -> str:
    """Prefix ``prompt`` with the long-term memory block (Memory objects, dicts or strings);
    memories expired at ``now`` are left out."""
    return memory_section(memories, now=now) + prompt


def build_prompt_with_history(history: Iterable[Any], new_prompt: str) -> str:
    """Prefix ``new_prompt`` with the conversation history block."""
    return history_section(history) + new_prompt


def whose(item: Any) -> str | None:
    """The person a memory (a Memory, a dict in the on-disk form or a string) belongs to;
    None for the household's (no ``person``, or a string)."""
    if isinstance(item, str):
        return None
    value = item.get("person") if isinstance(item, Mapping) else getattr(item, "person", None)
    return value if isinstance(value, str) and value else None


def for_person(memories: Iterable[Any], person: str | None) -> list[Any]:
    """One person's view of ``memories``: the household's and their own, never another
    person's; None (an unknown speaker) keeps the household's only."""
    return [m for m in memories if whose(m) in (None, person)]


def compose_prompt(
    memories: Iterable[Any],
    history: Iterable[Any],
    message: str,
    person: str | None = None,
    *,
    now: datetime | None = None,
) -> str:
    """What every interface sends: history, then memory, then the message.

    With ``person`` (a person's id) only that person's view of ``memories`` goes in: the
    household's (no ``person``) and their own; without it every memory given. A memory whose
    ``expiresAt`` has passed at ``now`` (default: the current time) is left out."""
    shown = list(memories) if person is None else for_person(memories, person)
    return build_prompt_with_history(
        list(history), build_prompt_with_memory(shown, message, now=now)
    )


def approx_tokens(text: str) -> int:
    """A rough token count: one per CJK character, one per four other characters."""
    wide = len(_WIDE.findall(text))
    return wide + (len(text) - wide + 3) // 4


@dataclass(frozen=True)
class PromptSection:
    """One part of the composed prompt, for the dashboard's preview."""

    name: str
    text: str

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def tokens(self) -> int:
        return approx_tokens(self.text)


@dataclass(frozen=True)
class ComposedPrompt:
    """The composed text and its sections in order (history, memory, prompt)."""

    text: str
    sections: tuple[PromptSection, ...]

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def tokens(self) -> int:
        return sum(section.tokens for section in self.sections)


def compose_prompt_sections(
    memories: Iterable[Any],
    history: Iterable[Any],
    prompt: str,
    person: str | None = None,
    *,
    now: datetime | None = None,
) -> ComposedPrompt:
    """``compose_prompt`` plus the size of each section; the text is exactly compose_prompt's."""
    memories, history = list(memories), list(history)
    if person is not None:
        memories = for_person(memories, person)
    now = now or datetime.now(UTC)
    text = compose_prompt(memories, history, prompt, now=now)
    history_text = build_prompt_with_history(history, "")
    memory_text = build_prompt_with_memory(memories, "", now=now)
    sections = (
        PromptSection("history", history_text),
        PromptSection("memory", memory_text),
        PromptSection("prompt", prompt),
    )
    assert "".join(s.text for s in sections) == text
    return ComposedPrompt(text=text, sections=sections)
