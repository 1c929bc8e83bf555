"""The user's sentences in a conversation: what the regex rules and the change finder read."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from ..sensitive.dialogue import find_secrets_in_reply
from ..sensitive.secrets import find_secrets
from .llm import message_content, message_role

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``, splitting at . ! ? ; and at Chinese 。！？； and line breaks."""
    return [part.strip() for part in _SENTENCE_END.split(text or "") if part and part.strip()]


def user_sentences(messages: Iterable[Any]) -> Iterator[tuple[str, str]]:
    """Each sentence of each user message, in order, with the whole message's text (the
    evidence a fact found in the sentence keeps)."""
    for message in messages:
        if message_role(message) != "user":
            continue
        text = message_content(message)
        for sentence in split_sentences(text):
            yield text, sentence


def secret_replies(messages: Iterable[Any]) -> set[str]:
    """The user messages that are secrets only by the question before them ("Biscuit1987"
    after "What's the new Wi-Fi password?", ``webapp.sensitive.dialogue``)."""
    found: set[str] = set()
    before: list[tuple[str, str]] = []
    for message in messages:
        role, text = message_role(message), message_content(message)
        reply = role == "user" and bool(before) and before[-1][0] == "assistant"
        if reply and not find_secrets(text) and find_secrets_in_reply(text, before):
            found.add(text)
        before.append((role, text))
    return found
