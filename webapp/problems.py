"""Errors that say what happened by a code and its values, not only in English.

Every error of the library that a person can act on is a ``CodedError``: ``str(exc)`` is the
English message (what the CLI and the MCP server show), ``code`` a stable name of the
situation (``"memory_full"``) and ``values`` the facts its message is built from. An interface
that speaks another language words the message itself from the code and the values (the
dashboard does it in ``webapp/web/plumbing/messages.py``) and never reads the English text.
"""

from __future__ import annotations

from typing import Any


class CodedError(Exception):
    """An error with a stable ``code`` and the ``values`` its message needs.

    ``code`` is a class attribute; a class that covers several situations lists them all in
    ``codes`` and each instance carries the one it is.
    """

    code: str = "error"
    codes: tuple[str, ...] = ()  # every code an instance may carry; () means just ``code``
    values: dict[str, Any]
    # The field of a form it refuses ("content", "category"), when it concerns one; and the
    # refusals of the other fields checked with it, so a form words each next to its field.
    field: str | None = None
    also: tuple[CodedError, ...] = ()

    def __init__(self, message: str, *, code: str | None = None, **values: Any) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.values = values

    @classmethod
    def all_codes(cls) -> tuple[str, ...]:
        """Every code an instance of this class may carry."""
        return cls.codes or (cls.code,)


class InputError(CodedError, ValueError):
    """What a person typed or sent cannot be used (empty, unknown category, a bad import
    item); a ``ValueError``, so callers that catch that keep working."""

    code = "invalid_input"


class Problem(str):
    """A message for one field of a form, as the library words it (English), carrying the
    ``code`` and ``values`` of the error it comes from (a curator refusal naming its ``field``)."""

    code: str
    values: dict[str, Any]

    def __new__(cls, error: CodedError) -> Problem:
        problem = super().__new__(cls, str(error))
        problem.code = error.code
        problem.values = error.values
        return problem
