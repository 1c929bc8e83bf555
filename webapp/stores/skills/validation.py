"""Checking a record against the shipped JSON Schema and the naming rules, with readable reasons."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import TYPE_CHECKING, Any, cast

from .errors import InvalidSkillDocumentError
from .naming import document_key

if TYPE_CHECKING:
    import jsonschema


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    """The schema shipped in the package, compiled once (on first use, not at import)."""
    import jsonschema  # deferred: slow to import, and most commands never validate

    text = (
        resources.files("webapp").joinpath("schemas/skill-document.schema.json").read_text("utf-8")
    )
    schema = json.loads(text)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def schema() -> dict[str, Any]:
    """The JSON Schema every skill document file must satisfy."""
    schema = _validator().schema
    assert isinstance(schema, Mapping)  # a bool schema is never shipped
    return dict(schema)


def _schema_reasons(record: Any) -> list[str]:
    """Readable schema errors: missing fields in one line, then each wrong value with its path."""
    if _validator().is_valid(record):
        return []
    missing: list[str] = []
    reasons: list[str] = []
    for error in sorted(_validator().iter_errors(record), key=lambda e: list(map(str, e.path))):
        where = "/".join(str(p) for p in error.path)
        if error.validator == "required" and not where:
            missing.extend(
                str(f) for f in cast(list[Any], error.validator_value) if f not in record
            )
        elif error.validator == "not" and not where:
            reasons.append("a skill document must not have a 'reference'")
        else:
            reasons.append(f"{where}: {error.message}" if where else error.message)
    if missing:
        reasons.insert(0, "missing " + ", ".join(dict.fromkeys(missing)))
    return reasons


def _text_reasons(record: Mapping[str, Any]) -> list[str]:
    """Strings that cannot be written as UTF-8 (lone surrogates) or hold NUL."""
    reasons = []
    for key, value in record.items():
        for text in _strings(value):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                reasons.append(f"{key}: contains text that is not valid Unicode")
                break
            if "\x00" in text:
                reasons.append(f"{key}: contains a NUL character")
                break
    return reasons


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def validate_record(record: Any, what: str | None = None) -> dict[str, Any]:
    """Check ``record`` against the schema and the naming rules; InvalidSkillDocumentError or UnsafeNameError."""
    if not isinstance(record, Mapping):
        raise InvalidSkillDocumentError(
            [f"expected a JSON object, found {type(record).__name__}"], what
        )
    checked: dict[str, Any] = dict(record)
    reasons = _schema_reasons(checked)
    if reasons:
        raise InvalidSkillDocumentError(reasons, what)
    document_key(checked)
    reasons = _text_reasons(checked)
    if reasons:
        raise InvalidSkillDocumentError(reasons, what)
    return checked
