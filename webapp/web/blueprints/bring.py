"""Bring your memories: import a file from another system into Review (with a preview and a
confirm step), and export memories in another system's format."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel import ngettext
from werkzeug.wrappers import Response as BaseResponse

from ...imports import (
    ASK,
    FORMAT_NAMES,
    FORMATS,
    MAX_FACT_CHARS,
    MAX_IMPORT_BYTES,
    MAX_STATEMENTS,
    ImportFormatError,
    ImportPlan,
    decode,
    resolve_format,
)
from ...imports.exporters import EXPORT_FORMATS, EXTENSIONS, MIMETYPES
from ...stores.errors import NotFoundError
from ..plumbing.context import curator
from ..plumbing.htmx import render
from ..plumbing.messages import describe
from .i18n import format_number
from .people import visible_people, whose_label, you

bp = Blueprint("bring", __name__, url_prefix="/memories/bring")

SHOWN = 200  # proposals and refusals listed in the preview; the counts cover all
REVIEW_CHANGED = "review-changed"


class _Unusable(Exception):
    """The upload cannot be read; the message says why."""


def _content() -> tuple[str, str | None]:
    """The text to import (an uploaded file, pasted text, or the payload a preview carried)
    and the file's name."""
    upload = request.files.get("file")
    if upload is not None and upload.filename:
        raw = upload.stream.read(MAX_IMPORT_BYTES + 1)
        name: str | None = upload.filename
    else:
        raw = (request.form.get("payload") or request.form.get("pasted") or "").encode("utf-8")
        name = request.form.get("filename") or None
    if not raw.strip():
        raise _Unusable(_("Choose a file or paste your memories first."))
    name = (name or "").replace("\\", "/").rsplit("/", 1)[-1].strip()[:200] or None
    return decode(raw), name


_REASONS = {
    "empty": _l("empty"),
    "too_long": _l("too long (more than %(most)s characters)"),
    "not_text": _l("not text"),
    "heading": _l("a heading, not a memory"),
    "persona": _l("about the agent (Letta persona block), not about you"),
    "over_limit": _l("beyond %(most)s statements per file"),
}


# The formats as the page's language names them (the library's FORMAT_NAMES are English).
FORMAT_LABELS = {
    "text": _l("pasted text"),
    "mcp-jsonl": _l("MCP memory JSONL"),
    "letta": _l("Letta agent file"),
    "json": _l("Memory Curator export"),
}


@bp.app_template_global("refusal_reason")
def refusal_reason(reason: str) -> str:
    """Why a line of an import was refused, in the page's language."""
    most = MAX_STATEMENTS if reason == "over_limit" else MAX_FACT_CHARS
    text = _REASONS.get(reason)
    return str(text) % {"most": format_number(most)} if text is not None else reason


def _answer(status: int = 200, **context: Any) -> BaseResponse:
    return render(
        "bring/_panel.html",
        "bring/page.html",
        status=status,
        title=_("Bring your memories"),
        formats=FORMATS,
        format_names={f: str(FORMAT_LABELS.get(f, FORMAT_NAMES.get(f, f))) for f in FORMAT_NAMES},
        export_formats=EXPORT_FORMATS,
        owner_choices=_owner_choices(),
        owner=context.pop("owner", default_owner()),
        household=HOUSEHOLD,
        ask=ASK,
        **context,
    )


def _owner_choices() -> list[tuple[str, str]]:
    """The owners an import may give its facts: the household, then each person."""
    rows = [(HOUSEHOLD, whose_label(None))]
    return rows + [(p.id, whose_label(p.id)) for p in visible_people()]


@bp.get("/")
def form() -> BaseResponse:
    """The import form (file or pasted text, and its format) and the export choices."""
    return _answer()


def _plan() -> tuple[ImportPlan, str, str | None, str]:
    content, name = _content()
    wanted = request.form.get("format") or "auto"
    chosen = resolve_format(content, wanted)
    if chosen == "json":
        raise _Unusable(
            _(
                "This is a Memory Curator export: import it with Import memories on the "
                "Memories page, which keeps its ids, times and origins."
            )
        )
    day = request.form.get("day") or datetime.now(UTC).strftime("%Y-%m-%d")
    owner, lines = _owners()
    plan = curator().plan_import(
        content, fmt=chosen, file_name=name, day=day[:10], owner=owner, lines=lines
    )
    return plan, content, name, day[:10]


HOUSEHOLD = "household"  # the owner choice that is nobody's: the household's


def default_owner() -> str | None:
    """Whose an import is unless the person importing says otherwise: theirs, when they
    are a Home Assistant user linked to a person ("You"); the household's otherwise."""
    mine = you()
    return mine.id if mine is not None else None


def _owners() -> tuple[str | None, dict[int, str | None]]:
    """The owner chosen for every line, and the lines given an owner of their own (kept
    only while the choice for all is the one they were shown under)."""
    form = request.form
    chosen = form.get("owner")
    owner = default_owner() if chosen is None else (None if chosen == HOUSEHOLD else chosen)
    lines: dict[int, str | None] = {}
    if form.get("owner-was", chosen) == chosen:
        for key, value in form.items():
            number = key.removeprefix("owner-")
            if key.startswith("owner-") and number.isdigit() and value != ASK:
                lines[int(number)] = None if value == HOUSEHOLD else value
    return owner, lines


@bp.post("/preview")
def preview() -> BaseResponse:
    """What importing would queue: counts, the refused lines and why; nothing is saved."""
    try:
        plan, content, name, day = _plan()
    except _Unusable as exc:
        return _answer(error=str(exc), status=422)
    except (ImportFormatError, NotFoundError) as exc:
        return _answer(error=describe(exc), status=422)
    return _answer(
        plan=plan,
        counts=plan.counts,
        actions=plan.actions[:SHOWN],
        refused=plan.parsed.refused[:SHOWN],
        payload=content,
        filename=name,
        chosen=plan.format,
        day=day,
        owner=_owners()[0],
    )


@bp.post("/confirm")
def confirm() -> BaseResponse:
    """Queue the previewed proposals in Review (one write)."""
    try:
        plan, _content_text, _name, _day = _plan()
    except _Unusable as exc:
        return _answer(error=str(exc), status=422)
    except (ImportFormatError, NotFoundError) as exc:
        return _answer(error=describe(exc), status=422)
    queued = curator().queue_import(plan)
    done = ngettext(
        "Queued %(num)s fact for review from %(source)s.",
        "Queued %(num)s facts for review from %(source)s.",
        len(queued),
        source=plan.source,
    )
    return _answer(
        done=done, review_url=url_for("review.index"), trigger=REVIEW_CHANGED, announce=done
    )


@bp.get("/export")
def export() -> Response:
    """Every memory this request may see in the chosen format, as a download (json: the
    lossless own form)."""
    fmt = request.args.get("format", "json")
    if fmt not in EXPORT_FORMATS:
        fmt = "json"
    body = curator().export(fmt)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    name = f"memories-{stamp}.{EXTENSIONS[fmt]}" if fmt != "mem0" else f"memories-mem0-{stamp}.json"
    return Response(
        body,
        mimetype=MIMETYPES[fmt],
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
