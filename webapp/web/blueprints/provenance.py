"""Provenance: where a memory came from and what happened to it since.

A memory's origin (the phrase in its row, the card on its history page), its history with
Restore (and the Undo of a deletion, which restores from the same log), and Recently deleted.
The URLs sit under ``/memories/`` and the navigation marks Memories as the current area.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import Blueprint, abort, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel import ngettext
from markupsafe import Markup, escape
from werkzeug.wrappers import Response

from ...stores import Memory, MemoryFullError
from ...stores.origin import extractor_label
from ...stores.secret_history import shown_entries
from ...stores.timefmt import EPOCH, parse_ts
from ..plumbing.context import actor, curator, stores
from ..plumbing.formatting import actor_label, import_source_label
from ..plumbing.htmx import redirect_or, render
from ..plumbing.pagination import paginate
from ..plumbing.threads import thread_name
from .memories import MEMORIES_CHANGED, USAGE_CHANGED, full_message, list_answer

bp = Blueprint("provenance", __name__, url_prefix="/memories")


@bp.context_processor
def _in_memories() -> dict[str, Any]:
    """These pages are part of the Memories area: its navigation link is the current one."""
    return {"active_area": "memories"}


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
def deleted() -> Response:
    """Every deleted memory the history log can still bring back, newest deletion first."""
    return _deleted_page()


def _deleted_page(notice: str | None = None, status: int = 200, error: bool = False) -> Response:
    mine = [d for d in stores().memories.recently_deleted() if curator().visible(d.memory)]
    shown = paginate(mine, request.values.get("page", "1"))
    return render(
        "provenance/_deleted_list.html",
        "provenance/deleted_page.html",
        status=status,
        announce=notice,
        title=_("Recently deleted"),
        shown=shown,
        # how each was deleted: which conversation's change of mind, approved by whom
        forgotten={t.memory_id: t for t in stores().tombstones.all()},
        notice=notice if notice is not None else _notice_from_args(),
        error=error,
    )


def _notice_from_args() -> str | None:
    done = request.args.get("done", "")
    if done == "restored":
        return _("Restored. The memory is back in the list.")
    if done == "purged":
        return _("Deleted forever.")
    return None


@bp.post("/deleted/restore")
def restore_deleted() -> Response:
    """Bring a deleted memory back (by its id)."""
    memory_id = request.form.get("id", "")
    try:
        curator().restore(memory_id, actor=actor())  # (no longer forgotten)
    except KeyError:
        return _deleted_page(notice=str(GONE_ELSEWHERE), status=404, error=True)
    except MemoryFullError as exc:
        return _deleted_page(notice=full_message(exc), status=409, error=True)
    return redirect_or(
        url_for("provenance.deleted", done="restored"),
        lambda: _deleted_page(notice=_("Restored. The memory is back in the list.")),
    )


@bp.post("/deleted/purge")
def purge_deleted() -> Response:
    """Delete a memory forever: it and its whole history are removed; there is no undo."""
    memory_id = request.form.get("id", "")
    store = stores().memories
    if not memory_id or not any(
        d.memory.id == memory_id and curator().visible(d.memory) for d in store.recently_deleted()
    ):
        return _deleted_page(notice=str(GONE_ELSEWHERE), status=404, error=True)
    # Its words go from every file; a fingerprint stays, so it is not proposed again.
    curator().forget(memory_id, dont_propose_again=True, forever=True, actor=actor())
    return redirect_or(
        url_for("provenance.deleted", done="purged"),
        lambda: _deleted_page(notice=_("Deleted forever.")),
    )


# ------------------------------------------------------------------ history and restore
@bp.get("/<memory_id>/history")
def history(memory_id: str) -> Response:
    """Who changed this memory, when, before and after; each earlier state can be restored."""
    if not stores().memories.history(memory_id) and stores().memories.get(memory_id) is None:
        abort(404)
    if not curator().sees_ref(memory_id):
        abort(404)  # another person's: nothing says it exists
    return render(
        "provenance/_history.html",
        "provenance/history_page.html",
        title=_("Memory history"),
        **_history_context(memory_id),
    )


def _history_context(memory_id: str, restored_now: bool = False) -> dict[str, Any]:
    memory = stores().memories.get(memory_id)
    current = memory.to_dict() if memory else None
    # Within a person's view, a change whose either state was another person's is left out: a
    # memory that became the household's never shows the words it had as someone's own.
    seen = curator()
    changes = [
        entry
        for entry in stores().memories.history(memory_id)
        if seen.sees_ref(str(entry.get("hid", "")))
    ]
    entries = shown_entries(reversed(changes), current)
    return {
        "memory_id": memory_id,
        "memory": memory,
        "entries": entries,
        "restored_now": restored_now,
    }


@bp.post("/restore")
def restore() -> Response:
    """Undo a delete (ref = memory id) or go back before a change (ref = history id)."""
    refs = [r for r in request.form.getlist("ref") if r]
    back_to = request.form.get("return", "results")
    if not refs:
        abort(404)
    restored = []
    for ref in refs:
        try:
            restored.append(curator().restore(ref, actor=actor()))
        except KeyError:
            if len(refs) == 1:
                abort(404)
    if back_to == "history" and restored:
        return redirect_or(
            url_for("provenance.history", memory_id=restored[0].id),
            lambda: render(
                "provenance/_history.html",
                trigger=MEMORIES_CHANGED,
                announce=_("Earlier version restored."),
                **_history_context(restored[0].id, restored_now=True),
            ),
        )
    if back_to == "row" and restored:
        return redirect_or(
            url_for("memories.index"),
            lambda: render(
                "memories/_row.html",
                memory=restored[0],
                query="",
                focus_edit=True,
                trigger=USAGE_CHANGED,
                announce=_("Memory restored."),
            ),
        )
    notice = {
        "kind": "restored",
        "text": ngettext(
            "Restored %(num)s memory.",
            "Restored %(num)s memories.",
            len(restored),
        ),
    }
    return redirect_or(url_for("memories.index"), lambda: list_answer(notice, notice["text"]))
