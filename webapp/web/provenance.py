"""Where memories came from, as the pages show it, and the Recently deleted view.

The views here are routes of the memories blueprint (``/memories/deleted``…), so the
navigation marks Memories as the current area.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_htmx import make_response
from markupsafe import Markup, escape

from ..stores import Memory, MemoryFullError
from ..stores.origin import extractor_label
from ..stores.timefmt import EPOCH, parse_ts
from .context import actor, stores, wants_partial
from .formatting import actor_label, import_source_label
from .memories import bp, full_message
from .threads import thread_name

HOW_LABELS = {
    "dashboard": _l("Typed in the dashboard"),
    "mcp": _l("Told through manage_memory"),
    "extracted": _l("Extracted"),
    "imported": _l("Imported"),
    "restored": _l("Restored"),
    "library": _l("Added by a program"),
    "cli": _l("Added on the command line"),
}
# The phrase of each simple origin, as ``describe_origin`` says it (the MCP tool keeps English).
HOW_PHRASES = {
    "dashboard": _l("typed in the dashboard"),
    "mcp": _l("told through manage_memory"),
    "restored": _l("restored from history"),
    "library": _l("added by a program"),
    "cli": _l("added on the command line"),
}


def extractor_text(extractor: str | None, model: str | None = None) -> str:
    """``extractor_label`` in the page's language: 'rules', 'LLM openai/gpt-4o' or 'LLM'."""
    label = extractor_label(extractor, model)
    if label == "rules":
        return _("rules")
    return _("LLM %(model)s", model=model) if model else _("LLM")


def _filled(message: str, **values: Any) -> Markup:
    """A translated ``message`` (taken as text) with ``values`` put in: text escaped, Markup
    (a name marked translate="no") kept as it is."""
    return Markup(escape(message)) % values


def origin_phrase(origin: Any) -> Markup:
    """``describe_origin`` in the page's language: one short phrase on where it came from."""
    phrase = _how_phrase(origin)
    if origin is not None and origin.get("editedBy"):
        return _filled(
            _("%(origin)s, then edited by %(editor)s"),
            origin=phrase,
            editor=actor_label(origin["editedBy"]),
        )
    return phrase


def _how_phrase(origin: Any) -> Markup:
    if origin is None:
        return escape(_("origin not recorded"))
    how = origin.get("how")
    if how == "extracted":
        fields = {
            "extractor": extractor_text(origin.get("extractor"), origin.get("model")),
            "conversation": thread_name(origin.get("conversationId")).in_sentence,
            "approver": actor_label(origin.get("approvedBy")),
        }
        if "conversationId" in origin and "approvedBy" in origin:
            return _filled(
                _("extracted by %(extractor)s from %(conversation)s, approved by %(approver)s"),
                **fields,
            )
        if "conversationId" in origin:
            return _filled(
                _("extracted by %(extractor)s from %(conversation)s (auto mode)"), **fields
            )
        if "approvedBy" in origin:
            return _filled(_("extracted by %(extractor)s, approved by %(approver)s"), **fields)
        return _filled(_("extracted by %(extractor)s (auto mode)"), **fields)
    if how == "imported":
        source = origin.get("importedFrom")
        if not source:
            return escape(_("imported"))
        return _filled(_("imported from %(source)s"), source=import_source_label(source))
    phrase = HOW_PHRASES.get(str(how))
    return escape(phrase if phrase is not None else _("origin not recorded"))


@dataclass(frozen=True)
class OriginView:
    """A memory's origin as the templates show it."""

    label: Markup  # a few words: "Extracted", "Typed in the dashboard", or the bare source
    phrase: Markup  # the one-line description (the MCP tool says the same)
    conversation_id: str | None  # the thread it was extracted from
    thread_url: str | None  # its page, only when the thread still exists
    evidence: str | None  # the message excerpt
    evidence_at: datetime | None  # when that message was written
    extractor: str | None  # "rules" or "LLM provider/model"
    approved_by: str | None
    approved_at: datetime | None
    imported_from: str | None
    edited_by: str | None  # who changed the words since (None: as it came)
    edited_at: datetime | None
    known: bool  # False for records that do not say where they came from


def _moment(value: Any) -> datetime | None:
    moment = parse_ts(value) if value else EPOCH
    return None if moment == EPOCH else moment


def origin_view(memory: Memory) -> OriginView:
    """What the pages say about where ``memory`` came from."""
    origin = memory.origin or {}
    conversation_id = origin.get("conversationId")
    thread_url = None
    if conversation_id and thread_name(conversation_id).kept:
        thread_url = url_for("conversations.thread", conversation_id=conversation_id)
    how = origin.get("how")
    return OriginView(
        label=escape(HOW_LABELS[str(how)])
        if str(how) in HOW_LABELS
        else memory_source(memory.source),
        phrase=origin_phrase(memory.origin),
        conversation_id=conversation_id,
        thread_url=thread_url,
        evidence=origin.get("evidence"),
        evidence_at=_moment(origin.get("evidenceAt")),
        extractor=extractor_text(origin.get("extractor"), origin.get("model"))
        if how == "extracted"
        else None,
        approved_by=origin.get("approvedBy"),
        approved_at=_moment(origin.get("approvedAt")),
        imported_from=origin.get("importedFrom"),
        edited_by=origin.get("editedBy"),
        edited_at=_moment(origin.get("editedAt")),
        known=memory.origin is not None,
    )


@bp.app_template_global()
def memory_source(source: Any) -> Markup:
    """The ``source`` of a memory that does not record its origin: a known one (``dashboard``,
    ``mcp``…) in the page's language, anything else as written."""
    if isinstance(source, str) and source in HOW_LABELS:
        return escape(HOW_LABELS[source])
    return import_source_label(source)


@bp.app_template_global()
def memory_origin(memory: Memory) -> OriginView:
    """Template access to ``origin_view``."""
    return origin_view(memory)


# ------------------------------------------------------------------ recently deleted
GONE_ELSEWHERE = _l(
    "That memory is no longer in Recently deleted: it was restored or deleted forever "
    "meanwhile. The list below is up to date."
)


@bp.get("/deleted")
def deleted():
    """Every deleted memory the history log can still bring back, newest deletion first."""
    return _deleted_page()


DELETED_PAGE_SIZE = 50


def _page_number(pages: int) -> int:
    raw = request.values.get("page", "1")
    number = int(raw) if raw.isdigit() and len(raw) < 10 else 1
    return min(max(1, number), pages)


def _deleted_page(notice: str | None = None, status: int = 200, error: bool = False):
    gone = stores().memories.recently_deleted()
    pages = max(1, -(-len(gone) // DELETED_PAGE_SIZE))
    page = _page_number(pages)
    start = (page - 1) * DELETED_PAGE_SIZE
    context = {
        "gone": gone[start : start + DELETED_PAGE_SIZE],
        "total": len(gone),
        "page": page,
        "pages": pages,
        "notice": notice if notice is not None else _notice_from_args(),
        "error": error,
        "page_title": _("Recently deleted"),
    }
    if wants_partial():
        html = render_template("memories/_deleted_list.html", **context)
        return make_response(
            html, status, trigger={"announce": context["notice"]} if notice else None
        )
    return render_template("memories/deleted_page.html", **context), status


def _notice_from_args() -> str | None:
    done = request.args.get("done", "")
    if done == "restored":
        return _("Restored. The memory is back in the list.")
    if done == "purged":
        return _("Deleted forever.")
    return None


@bp.post("/deleted/restore")
def restore_deleted():
    """Bring a deleted memory back (by its id)."""
    memory_id = request.form.get("id", "")
    try:
        stores().memories.restore(memory_id, actor=actor())
    except KeyError:
        return _deleted_page(notice=str(GONE_ELSEWHERE), status=404, error=True)
    except MemoryFullError as exc:
        return _deleted_page(notice=full_message(exc), status=409, error=True)
    if not wants_partial():
        return redirect(url_for("memories.deleted", done="restored"), 303)
    return _deleted_page(notice=_("Restored. The memory is back in the list."))


@bp.post("/deleted/purge")
def purge_deleted():
    """Delete a memory forever: it and its whole history are removed; there is no undo."""
    memory_id = request.form.get("id", "")
    store = stores().memories
    if not memory_id or not any(d.memory.id == memory_id for d in store.recently_deleted()):
        return _deleted_page(notice=str(GONE_ELSEWHERE), status=404, error=True)
    store.purge(memory_id, actor=actor())
    if not wants_partial():
        return redirect(url_for("memories.deleted", done="purged"), 303)
    return _deleted_page(notice=_("Deleted forever."))
