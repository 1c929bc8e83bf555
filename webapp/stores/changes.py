"""What a change function says it did: ``Changed(result)`` or ``Unchanged(result)``.

``JsonFile.update`` and ``JsonDocument.update`` hand a change function the document under the
lock. It changes the document and returns ``Changed(result)`` (save it) or
``Unchanged(result)`` (write nothing); either way ``result`` goes back to the caller, and a
``Changed`` one first to the store's journal (its history log), which returns an undo for a
write that then fails. Anything else returned is a TypeError: a write is never guessed.

A result that carries several things is a small dataclass of the store's, never a tuple.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

R = TypeVar("R")

Undo = Callable[[], None]


@dataclass(frozen=True, slots=True)
class Changed(Generic[R]):
    """The change function changed the document: it is saved, then ``result`` handed back."""

    result: R


@dataclass(frozen=True, slots=True)
class Unchanged(Generic[R]):
    """The change function decided to change nothing: no write, ``result`` is handed back."""

    result: R


def not_an_outcome(value: object) -> TypeError:
    """The error for a change function that returned neither ``Changed`` nor ``Unchanged``."""
    return TypeError(
        "A change function returns Changed(result) to save the document or Unchanged(result) "
        f"to leave it, not {type(value).__name__}"
    )
