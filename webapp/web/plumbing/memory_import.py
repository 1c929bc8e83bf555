"""Reading the memory export a person uploads to the Memories page: its size, encoding and
JSON checked, with a message saying what is wrong for each refusal (``ImportProblem``)."""

from __future__ import annotations

import json
from typing import Any

from flask import request
from flask_babel import gettext as _

from ...stores import loads_bounded
from .messages import describe

MAX_IMPORT_BYTES = 5 * 1024 * 1024


class ImportProblem(ValueError):
    """An import file that cannot be used; the message says why."""


def cannot_import(exc: ValueError) -> str:
    """The import's refusal of a file the library finds unusable."""
    return _("The file cannot be imported: %(problem)s", problem=describe(exc))


def read_import_file() -> tuple[list[dict[str, Any]], str]:
    """The records of the uploaded (or confirmed) file and its text; ImportProblem if unusable."""
    upload = request.files.get("file")
    if upload is not None and upload.filename:
        raw = upload.stream.read(MAX_IMPORT_BYTES + 1)
        if not raw.strip():
            raise ImportProblem(
                _(
                    "“%(name)s” is empty; choose a JSON file exported from this page.",
                    name=upload.filename[:200],
                )
            )
    else:
        raw = (request.form.get("payload") or "").encode("utf-8")
    if not raw.strip():
        raise ImportProblem(_("No file was chosen: choose a JSON file exported from this page."))
    if len(raw) > MAX_IMPORT_BYTES:
        raise ImportProblem(
            _(
                "The file is larger than %(size)s MB; that is not a memory export.",
                size=MAX_IMPORT_BYTES // (1024 * 1024),
            )
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportProblem(
            _(
                "The file is not valid UTF-8 text (bad byte at position %(position)s); "
                "export it again as JSON.",
                position=exc.start,
            )
        ) from None
    try:
        records = loads_bounded(text)
    except json.JSONDecodeError as exc:
        raise ImportProblem(
            _(
                "The file is not valid JSON: %(problem)s at line %(line)s, column %(column)s.",
                problem=exc.msg,
                line=exc.lineno,
                column=exc.colno,
            )
        ) from None
    except ValueError as exc:
        raise ImportProblem(
            _("The file cannot be imported: %(reason)s.", reason=str(exc))
        ) from None
    return records, text


def import_file_name() -> str | None:
    """The uploaded file's name (or the one the preview carried), as imported memories record it."""
    upload = request.files.get("file")
    raw = (
        upload.filename if upload is not None and upload.filename else request.form.get("filename")
    )
    name = (raw or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
    return name[:200] or None
