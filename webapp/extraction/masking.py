"""Secrets stay on this machine: masked in what is sent to an LLM, put back in what it answers.

A conversation may hold a password, a door code, a key or a card number, and the memories
listed for a change of mind may hold one a person chose to keep. None of them is sent: each
is replaced by a marker, ``[secret 1]``, ``[secret 2]``, … (the same value, the same marker),
which the prompt asks the LLM to copy as it is. In the facts it answers, each marker is put
back, so what follows runs as on the words that were said: the fact is stored without the
secret ("Has a garage door code (not kept in memory).", ``webapp.extraction.candidates``),
its evidence masked, and the quote still names who said it.

A reply is read with the turns before it (``webapp.sensitive.dialogue``): "Biscuit1987" after
"What's the new Wi-Fi password?" is masked too. Such a value is a secret only by its question,
so a fact that holds it is kept without it ("Has a password (not kept in memory).") and its
evidence shows ••••, where the words alone would not tell.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..sensitive.dialogue import find_secrets_in_reply
from ..sensitive.secrets import MASK, find_secrets, secret_fact
from ..text import language_of

if TYPE_CHECKING:
    from .llm import StructuredFact

_MARKER = re.compile(r"\[secret (\d+)\]")


class SecretMask:
    """The markers given to the secrets of one prompt, to put back in its answer."""

    def __init__(self) -> None:
        self._markers: dict[str, str] = {}  # a secret's words → its marker
        self._values: dict[str, str] = {}  # a marker's number → the words
        # a marker's number → (kind, label, language) of a secret known only by the question
        # before it
        self._by_question: dict[str, tuple[str, str, str]] = {}

    def hide(self, text: str, before: Sequence[tuple[str, str]] = ()) -> str:
        """``text`` with each secret replaced by its marker; ``before``: the turns before it
        (``(role, text)``), when ``text`` is a reply whose question says it is a secret."""
        finding = find_secrets(text)
        by_question = finding is None
        if finding is None and before:
            finding = find_secrets_in_reply(text, before)
        if finding is None:
            return text
        out, last = [], 0
        for span in finding.spans:
            marker = self._marker(text[span.start : span.end])
            if by_question:
                language = language_of(" ".join(said for _, said in before[-2:]) + text)
                self._by_question[marker[len("[secret ") : -1]] = (span.kind, span.label, language)
            out += [text[last : span.start], marker]
            last = span.end
        out.append(text[last:])
        return "".join(out)

    def _marker(self, value: str) -> str:
        if value not in self._markers:
            number = str(len(self._markers) + 1)
            self._markers[value] = f"[secret {number}]"
            self._values[number] = value
        return self._markers[value]

    def reveal(self, text: str) -> str:
        """``text`` with each marker of this prompt put back (another stays as written)."""
        if not self._values or "[secret " not in text:
            return text
        return _MARKER.sub(lambda m: self._values.get(m.group(1), m.group(0)), text)

    def _kept_out(self, text: str) -> str:
        """``text`` with the markers of secrets known only by their question as ••••."""
        return _MARKER.sub(lambda m: MASK if m.group(1) in self._by_question else m.group(0), text)

    def revealed(self, fact: StructuredFact) -> StructuredFact:
        """``fact`` with the markers in its content and evidence put back; a fact holding a
        secret known only by its question is the fact without it, marked ``withheld``."""
        asked = [
            self._by_question[n] for n in _MARKER.findall(fact.content) if n in self._by_question
        ]
        if asked:
            kind, label, language = asked[0]
            evidence = None if fact.evidence is None else self._kept_out(fact.evidence)
            content = secret_fact(label, language)
            evidence = None if evidence is None else self.reveal(evidence)
            return dataclasses.replace(fact, content=content, evidence=evidence, withheld=kind)
        evidence = None if fact.evidence is None else self.reveal(self._kept_out(fact.evidence))
        content = self.reveal(fact.content)
        if content == fact.content and evidence == fact.evidence:
            return fact
        return dataclasses.replace(fact, content=content, evidence=evidence)
