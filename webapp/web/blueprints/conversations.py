"""Conversations: every thread the assistant keeps, one thread's turns, clear and extract."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from flask import (
    Blueprint,
    abort,
    current_app,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _
from flask_babel import ngettext
from werkzeug.wrappers import Response

from ...extraction import ExtractionBatch, LlmConfigError
from ...stores import (
    ConversationSummary,
    ConversationTurn,
    MemoryFullError,
    NotFoundError,
)
from ...text import match_spans, search_terms
from ..plumbing.background import waiting_context
from ..plumbing.context import MAX_EXTRACTIONS, actor, curator, settings, stores, wants_partial
from ..plumbing.errors import banner_response
from ..plumbing.formatting import interface_label
from ..plumbing.htmx import redirect_or, render, see_other
from ..plumbing.messages import describe
from ..plumbing.review_page import REVIEW_CHANGED
from ..plumbing.threads import thread_name
from .memories import MEMORIES_CHANGED

bp = Blueprint("conversations", __name__, url_prefix="/conversations")


@dataclass(frozen=True)
class ThreadRow:
    """One thread in the list (and the head of the thread page)."""

    summary: ConversationSummary
    interface_label: str  # Slack / CLI / Schedule / Other (in the page's language), from the key
    last_activity: datetime
    expires: datetime
    expired: bool  # the assistant no longer sees it; the next cleanup removes it
    match: str = ""  # with a search: the first message holding a search word, shortened


def thread_row(summary: ConversationSummary, now: datetime) -> ThreadRow:
    """The template data of one thread."""
    return ThreadRow(
        summary=summary,
        interface_label=interface_label(summary.interface),
        last_activity=summary.last_activity,
        expires=summary.expires_at,
        expired=summary.expires_at <= now,
    )


def _now() -> datetime:
    return datetime.now(UTC)


def _limits() -> dict[str, int]:
    s = settings()
    return {
        "max_turns": s.conversation_max_turns,
        "max_chars": s.conversation_max_chars,
        "max_age_days": s.conversation_max_age_days,
    }


def get_thread_or_404(conversation_id: str) -> ThreadRow:
    """The thread with this id, or a 404 when there is none (or it is another person's:
    nothing says it exists)."""
    for summary in stores().conversations.list_conversations():
        if summary.id == conversation_id and curator().sees_thread(summary.speakers):
            return thread_row(summary, _now())
    abort(404)


SNIPPET_CHARS = 140


def matching_message(conversation_id: str, query: str) -> str:
    """The first message of the thread with a search word in it, cut around that word."""
    terms = search_terms(query)
    for turn in stores().conversations.get_history(conversation_id):
        text = " ".join(turn.content.split())
        spans = match_spans(text, terms)
        if spans:
            start = max(0, spans[0][0] - SNIPPET_CHARS // 3)
            end = start + SNIPPET_CHARS
            return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
    return ""


@bp.get("/")
def index() -> Response:
    """Every thread, most recent activity first; with ``q``, those whose messages match."""
    now, limits = _now(), _limits()
    query = request.args.get("q", "").strip()[:500]
    store = stores().conversations
    sees = curator().sees_thread
    threads = [s for s in store.list_conversations() if sees(s.speakers)]
    rows = [thread_row(s, now) for s in (store.search(query) if query else threads)]
    rows = [row for row in rows if sees(row.summary.speakers)]
    if query:
        rows = [replace(row, match=matching_message(row.summary.id, query)) for row in rows]
    return render(
        "conversations/_list.html",
        "conversations/page.html",
        extraction=extraction_batch().progress(),
        llm=settings().llm_provider != "none",
        rows=rows,
        query=query,
        thread_count=len(threads) if query else len(rows),
        limits=limits,
        now=now,
        cleared=request.args.get("cleared", "")[:300],
        title=_("Conversations"),
        page_context=waiting_context,
    )


def _thread_context(conversation_id: str) -> dict[str, Any]:
    row = get_thread_or_404(conversation_id)
    turns: list[ConversationTurn] = stores().conversations.get_history(conversation_id)
    now = _now()
    return {
        "row": row,
        "turns": turns,
        "limits": _limits(),
        "now": now,
        # The tab names the thread by its first message (stored text), so a person with
        # several threads open tells them apart; an expired thread shows none of its words.
        "page_title": thread_name(conversation_id, now).label,
        **_derived_context(conversation_id),
    }


# ------------------------------------------------------------------ what a thread left behind
MAX_UNDO_IDS = 500


def _ids(name: str) -> list[str]:
    """Ids from a comma-separated query argument or repeated form fields."""
    values = request.values.getlist(name)
    found = [part for value in values for part in value.split(",") if part]
    return found[:MAX_UNDO_IDS]


def _derived_context(conversation_id: str) -> dict[str, Any]:
    """The memories and pending proposals that came from the thread, and a forget/undo notice
    (with the address the section reloads itself from, notice included)."""
    forgot, rejected, reverted = _ids("forgot"), _ids("rejected"), _ids("reverted")
    left, undeleted = _ids("left"), _ids("undeleted")
    undone = request.args.get("undone", "")
    undone = undone if re.fullmatch(r"\d{1,4}-\d{1,4}", undone) else ""
    # What forgetting left alone because it changed after the person looked, as it is now.
    left_alone = [m for m in map(stores().memories.get, left) if m is not None]
    return {
        "derived": stores().curator.conversation_yield(conversation_id),
        "forgotten": {
            "memory_ids": forgot,
            "rejected_ids": rejected,
            "reverted_hids": reverted,
            "left_alone": left_alone,
            "undeleted_ids": undeleted,
        }
        if (forgot or rejected or reverted or left or undeleted)
        else None,
        "undone": undone or None,
        "derived_url": url_for(
            "conversations.derived",
            conversation_id=conversation_id,
            forgot=",".join(forgot) or None,
            rejected=",".join(rejected) or None,
            reverted=",".join(reverted) or None,
            left=",".join(left) or None,
            undeleted=",".join(undeleted) or None,
            undone=undone or None,
        ),
    }


@bp.get("/derived/<path:conversation_id>")
def derived(conversation_id: str) -> str:
    """What a thread left behind, alone: it reloads itself when the review queue or the
    memories change on the page (an extraction, a decision)."""
    _not_another_persons(conversation_id)
    return render_template(
        "conversations/_derived.html",
        conversation_id=conversation_id,
        **_derived_context(conversation_id),
    )


@bp.get("/forget/<path:conversation_id>")
def forget_preview(conversation_id: str) -> str:
    """What "Forget what came from this conversation" would delete and reject; nothing yet."""
    _not_another_persons(conversation_id)
    return render_template(
        "conversations/forget_page.html",
        conversation_id=conversation_id,
        thread_exists=_thread_exists(conversation_id),
        page_title=_("Forget what came from a conversation"),
        **_derived_context(conversation_id),
    )


def _thread_exists(conversation_id: str) -> bool:
    return any(s.id == conversation_id for s in stores().conversations.list_conversations())


def _not_another_persons(conversation_id: str) -> None:
    """404 for another person's thread (kept or not): nothing says it exists."""
    try:
        curator().check_thread(conversation_id)
    except NotFoundError:
        abort(404)


def _back_to(conversation_id: str, **args: Any) -> Response:
    """The thread page (or, for a thread no longer kept, the forget page) with a notice."""
    endpoint = (
        "conversations.thread"
        if _thread_exists(conversation_id)
        else "conversations.forget_preview"
    )
    return see_other(url_for(endpoint, conversation_id=conversation_id, **args))


@bp.post("/forget/<path:conversation_id>")
def forget(conversation_id: str) -> Response:
    """Delete the memories the thread added, put back what the ones it changed said before,
    and reject its pending proposals — only those the preview showed, as it showed them (its
    form carries each one's id and version): what changed since is left alone, and named."""
    ids, versions = request.form.getlist("seen_id"), request.form.getlist("seen_version")
    seen = dict(zip(ids, versions, strict=False)) if ids else None
    try:
        done = curator().forget_conversation(conversation_id, actor=actor(), seen=seen)
    except NotFoundError:
        abort(404)
    return _back_to(
        conversation_id,
        forgot=",".join(done.memory_ids) or None,
        rejected=",".join(done.rejected_ids) or None,
        reverted=",".join(done.reverted_hids) or None,
        left=",".join(m.id for m in done.left_alone[:MAX_UNDO_IDS]) or None,
        undeleted=",".join(done.undeleted_ids) or None,
        _anchor="derived",
    )


@bp.post("/unforget/<path:conversation_id>")
def unforget(conversation_id: str) -> Response | tuple[str, int]:
    """Undo a forget: the memories come back and the proposals are pending again."""
    try:
        restored, reopened = curator().undo_forget_conversation(
            memory_ids=_ids("memory_id"),
            rejected_ids=_ids("item_id"),
            reverted_hids=_ids("reverted_hid"),
            actor=actor(),
            undeleted_ids=_ids("undeleted_id"),
        )
    except MemoryFullError as exc:
        return render_template(
            "conversations/forget_page.html",
            conversation_id=conversation_id,
            thread_exists=_thread_exists(conversation_id),
            error=describe(exc),
            page_title=_("Forget what came from a conversation"),
            **_derived_context(conversation_id),
        ), 409
    return _back_to(conversation_id, undone=f"{restored}-{reopened}", _anchor="derived")


@bp.get("/thread/<path:conversation_id>")
def thread(conversation_id: str) -> Response:
    """One thread's turns as the assistant sees them after trimming."""
    return render(
        "conversations/_thread.html",
        "conversations/thread_page.html",
        **_thread_context(conversation_id),
    )


@bp.post("/clear/<path:conversation_id>")
def clear(conversation_id: str) -> Response:
    """Forget every turn of a thread, then go back to the list."""
    try:
        cleared = curator().clear_conversation(conversation_id)
    except NotFoundError:
        cleared = False
    if not cleared:
        abort(404)
    return redirect_or(url_for("conversations.index", cleared=conversation_id))


class ExtractionBusy(Exception):
    """Every place for an extraction is taken (``MAX_EXTRACTIONS`` run already)."""


@contextmanager
def extraction_slot() -> Iterator[None]:
    """One of the ``MAX_EXTRACTIONS`` places an extraction runs in, or ExtractionBusy at once:
    an extraction may wait MEMORY_LLM_TIMEOUT for the LLM, and the request threads it does
    not take stay free for the pages and /healthz."""
    gate = stores().extractions
    if not gate.acquire(blocking=False):
        raise ExtractionBusy
    try:
        yield
    finally:
        gate.release()


def _busy() -> Response:
    return banner_response(
        _("Extraction is busy"),
        ngettext(
            "%(num)s extraction is already running, the most this dashboard runs at once.",
            "%(num)s extractions are already running, the most this dashboard runs at once.",
            MAX_EXTRACTIONS,
        ),
        _("Nothing was changed. Try again when one has finished."),
        503,
        "warning",
    )


@bp.post("/extract/<path:conversation_id>")
def extract(conversation_id: str) -> Response:
    """Run the configured extractor on a thread; the facts it finds land in Review."""
    get_thread_or_404(conversation_id)
    try:
        with extraction_slot():
            outcome = run_extraction(conversation_id)
    except ExtractionBusy:
        return _busy()
    review_url = url_for("review.index") if "review.index" in current_app.view_functions else None
    changed = [REVIEW_CHANGED] if outcome.queued else []
    if outcome.applied:
        changed.append(MEMORIES_CHANGED)
    return render(
        "conversations/_extract_result.html",
        "conversations/thread_page.html",
        outcome=outcome,
        review_url=review_url,
        announce=outcome.message,
        trigger=changed,
        partial_context={"oob_badge": True},
        page_context=lambda: _thread_context(conversation_id),
    )


@bp.app_template_filter("problem")
def problem_filter(error: Any) -> str:
    """A library error in the page's language (``messages.describe``)."""
    return describe(error)


@bp.app_template_global()
def max_facts_per_thread() -> int:
    """The most facts one conversation gives (MEMORY_MAX_FACTS_PER_THREAD)."""
    return settings().max_facts_per_thread


def extraction_batch() -> ExtractionBatch:
    """The run of extraction over every conversation, as the settings describe it."""
    return ExtractionBatch(settings(), actor=actor())


def _extract_all_html(
    progress: Any, finished_now: bool = False, announce: str | None = None, waiting: bool = False
) -> Response:
    return render(
        "conversations/_extract_all.html",
        extraction=progress,
        finished_now=finished_now,
        llm=settings().llm_provider != "none",
        oob_badge=True,
        announce=announce,
        waiting=waiting,
    )


@bp.post("/extract-all")
def extract_all() -> Response:
    """Start extraction over every conversation; the progress partial then steps through it.

    Without JavaScript the request itself reads every thread, then shows the result.
    """
    batch = extraction_batch()
    progress = batch.start()
    if wants_partial():
        return _extract_all_html(progress, finished_now=not progress.running)
    try:
        with extraction_slot():
            batch.run_to_end()
    except ExtractionBusy:
        return _busy()
    return see_other(url_for("conversations.index", _anchor="extract-all"))


@bp.post("/extract-all/step")
def extract_all_step() -> Response:
    """Read the next thread of the running extraction and show the progress (polled by htmx).

    When every place for an extraction is taken, nothing is read: the progress asks again a
    little later."""
    batch = extraction_batch()
    before = batch.progress()
    try:
        with extraction_slot():
            progress = batch.step()
    except ExtractionBusy:
        return _extract_all_html(before, waiting=True)
    finished_now = bool(before and before.running and progress and not progress.running)
    message = None
    if finished_now and progress is not None:
        message = _("Extraction finished: %(num)s facts landed in Review.", num=progress.queued)
    return _extract_all_html(progress, finished_now=finished_now, announce=message)


@dataclass(frozen=True)
class ExtractOutcome:
    """What an extraction run did, in words a person reads."""

    ok: bool
    queued: int  # facts now waiting in Review
    message: str
    applied: int = 0  # facts that went straight into memory (auto mode)


def run_extraction(conversation_id: str) -> ExtractOutcome:
    """Run the configured extractor over the whole thread."""
    try:
        (result,) = curator().extract(conversation_id, actor=actor())
    except LlmConfigError as exc:
        return ExtractOutcome(
            False, 0, _("The LLM extractor is not set up correctly: %(error)s", error=describe(exc))
        )
    except NotFoundError:
        return ExtractOutcome(False, 0, _("This conversation has no messages to read."))
    return ExtractOutcome(
        True, len(result.queued), describe_extraction(result), applied=len(result.applied)
    )


def describe_extraction(result: Any) -> str:
    """What an ExtractionResult did, for the person who pressed the button: why the LLM gave
    nothing (when it failed), what was found, how many facts were left out, and how many
    messages wait for the next run."""
    message = _describe_found(result)
    problem = result.llm_problem
    if problem is not None and problem.call_failed:  # an unusable reply: "found by the rules"
        message = _("%(problem)s %(result)s", problem=describe(problem), result=message)
    if result.cut:
        left_out = ngettext(
            "%(num)s more fact was left out: one conversation gives at most %(most)s "
            "(MEMORY_MAX_FACTS_PER_THREAD).",
            "%(num)s more facts were left out: one conversation gives at most %(most)s "
            "(MEMORY_MAX_FACTS_PER_THREAD).",
            result.cut,
            most=result.max_facts,
        )
        message = _("%(result)s %(cut)s", result=message, cut=left_out)
    if result.left_unread:
        unread = ngettext(
            "%(num)s newer message is left unread: more than the LLM reads in one run. The "
            "next run reads it.",
            "%(num)s newer messages are left unread: more than the LLM reads in one run. The "
            "next run reads them.",
            result.left_unread,
        )
        message = _("%(result)s %(cut)s", result=message, cut=unread)
    return message


def _describe_found(result: Any) -> str:
    """One sentence on what an ExtractionResult found and did."""
    llm = result.extractor == "llm"
    parts = []
    if result.queued:
        n = len(result.queued)
        parts.append(ngettext("%(num)s fact landed in Review", "%(num)s facts landed in Review", n))
    if result.applied:
        n = len(result.applied)
        parts.append(
            ngettext(
                "%(num)s fact went straight into memory (auto mode)",
                "%(num)s facts went straight into memory (auto mode)",
                n,
            )
        )
    if result.skipped:
        parts.append(
            ngettext(
                "%(num)s fact had already been proposed or rejected",
                "%(num)s facts had already been proposed or rejected",
                result.skipped,
            )
        )
    if not parts:
        if llm:
            return _("No new facts: the LLM found nothing durable in this conversation.")
        return _("No new facts: the regex rules found nothing durable in this conversation.")
    # Each part is a whole clause; the list of them is joined the language's way.
    joined = parts[0]
    for part in parts[1:]:
        joined = _("%(first)s; %(next)s", first=joined, next=part)
    if llm:
        return _("%(facts)s (found by the LLM).", facts=joined)
    return _("%(facts)s (found by the regex rules).", facts=joined)
