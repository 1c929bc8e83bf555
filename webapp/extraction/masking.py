"""Secrets stay on this machine: masked in what is sent to an LLM, put back in what it answers.

A conversation may hold a password, a door code, a key or a card number, and the memories
listed for a change of mind may hold one a person chose to keep. None of them is sent: each
is replaced by a marker, ``[secret 1]``, ``[secret 2]``, … (the same value, the same marker),
which the prompt asks the LLM to copy as it is. In the facts it answers, each marker is put
back, so what follows runs as on the words that were said: the fact is stored without the
secret ("Has a garage door code (not kept in memory).", ``webapp.extraction.reconcile``),
its evidence masked, and the quote still names who said it.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

from ..sensitive import find_secrets

if TYPE_CHECKING:
    from .llm import StructuredFact

_MARKER = re.compile(r"\[secret (\d+)\]")


class SecretMask:
    """The markers given to the secrets of one prompt, to put back in its answer."""

    def __init__(self) -> None:
        self._markers: dict[str, str] = {}  # a secret's words → its marker
        self._values: dict[str, str] = {}  # a marker's number → the words

    def hide(self, text: str) -> str:
        """``text`` with each secret replaced by its marker."""
        finding = find_secrets(text)
        if finding is None:
            return text
        out, last = [], 0
        for span in finding.spans:
            out += [text[last : span.start], self._marker(text[span.start : span.end])]
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

    def revealed(self, fact: StructuredFact) -> StructuredFact:
        """``fact`` with the markers in its content and evidence put back."""
        evidence = None if fact.evidence is None else self.reveal(fact.evidence)
        content = self.reveal(fact.content)
        if content == fact.content and evidence == fact.evidence:
            return fact
        return dataclasses.replace(fact, content=content, evidence=evidence)
