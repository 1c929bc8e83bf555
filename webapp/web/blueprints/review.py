"""Review: approve, edit-then-approve or reject the facts the extractor proposes, and undo.

The page, its panel and the words a decision shows are ``web.plumbing.review_page``; the
routes call them by the short names they had here."""

from __future__ import annotations

from flask import Blueprint, abort, render_template, request, session, url_for
from flask_babel import gettext as _
from flask_babel import ngettext
from werkzeug.wrappers import Response

from ...curator.errors import DeletedForeverError, OwnerUndecidedError
from ...extraction.approval import extraction_quality
from ...stores import (
    ConflictError,
    MemoryFullError,
    MemoryTooLongError,
    NotFoundError,
    SecretInputError,
)
from ...stores.memories import KEEP, Keep
from ..plumbing.context import (
    actor,
    curator,
    note_secret_refusal,
    stores,
    wants_partial,
)
from ..plumbing.htmx import redirect_or, render, see_other
from ..plumbing.messages import describe
from ..plumbing.review_page import APPROVED as _APPROVED
from ..plumbing.review_page import APPROVED_DELETE as _APPROVED_DELETE
from ..plumbing.review_page import DONE_KEY as _DONE_KEY
from ..plumbing.review_page import REJECTED as _REJECTED
from ..plumbing.review_page import UNDONE as _UNDONE
from ..plumbing.review_page import (
    ReviewPage,
    diff_segments,
    get_item_or_404,
    next_focus,
)
from ..plumbing.review_page import about as _about
from ..plumbing.review_page import annotated as _annotated
from ..plumbing.review_page import build_page as _build
from ..plumbing.review_page import current_tab as _tab
from ..plumbing.review_page import decided as _decided
from ..plumbing.review_page import full_notice as _full_notice
from ..plumbing.review_page import panel as _panel
from ..plumbing.review_page import undecided_notice as _undecided_notice
from .expiry_hint import chosen_expiry, proposal_last_day
from .i18n import format_number

bp = Blueprint("review", __name__, url_prefix="/review")


@bp.app_template_global()
def review_diff(before: str, after: str) -> list[tuple[str, str]]:
    """Template access to ``diff_segments``."""
    return diff_segments(before, after)


@bp.get("/")
def index() -> Response:
    """Pending facts (newest first) or the Decided tab (with what a plain form just did)."""
    done = session.pop(_DONE_KEY, None) if not wants_partial() else None
    if not isinstance(done, dict) or not done.get("message"):
        return _panel(_build(_tab()))
    undo_ids = [str(i) for i in done.get("undo") or []]
    return _panel(_build(_tab(), notice=str(done["message"]), notice_level="ok", undo_ids=undo_ids))


@bp.get("/quality")
def quality() -> str:
    """The approval rates alone (they reload themselves after a decision)."""
    return render_template("review/_quality.html", quality=extraction_quality(stores().review))


@bp.get("/<item_id>/edit")
def edit(item_id: str) -> Response:
    """The item turned into a form to edit its content before approving."""
    item = get_item_or_404(item_id)
    if item.action == "delete":
        return show(item.id)  # a deletion has no text to edit: the card as it is
    editing = {item.id: item.content}
    if wants_partial():
        view = ReviewPage("pending", [], 0, editing=editing, focus=f"edit-{item.id}")
        return render("review/_item.html", item=item, view=_annotated(view, [item]))
    return _panel(_build("pending", editing=editing, focus=f"edit-{item.id}"))


@bp.get("/<item_id>")
def show(item_id: str) -> Response:
    """One pending item as a card (Cancel of the edit form)."""
    item = get_item_or_404(item_id)
    view = ReviewPage("pending", [], 0, focus=f"approve-{item.id}")
    return redirect_or(
        url_for("review.index", _anchor=f"item-{item.id}"),
        lambda: render("review/_item.html", item=item, view=_annotated(view, [item])),
    )


@bp.post("/<item_id>/approve")
def approve(item_id: str) -> Response:
    """Apply the fact to long-term memory, with the edited content when given."""
    if request.form.get("cancel"):  # the edit form's Cancel button without JavaScript
        return see_other(url_for("review.index", _anchor=f"item-{item_id}"))
    item = get_item_or_404(item_id)
    content = request.form.get("content")
    focus = next_focus(item.id)
    whose = request.form.get("person")
    person: str | None | Keep = KEEP  # left out or not chosen: whose the item proposes
    if whose:
        person = None if whose == "household" else whose
    try:
        approved = curator().approve(
            item.id,
            content=content,
            actor=actor(),
            category=request.form.get("category") or None,
            as_new=request.form.get("as_new") == "1",
            expected=request.form.get("expected") or None,
            person=person,
            expires_at=chosen_expiry(request.form, current=proposal_last_day(item), unsaid=KEEP)
            if content is not None
            else KEEP,
            confirm_secret=bool(request.form.get("confirm_secret")),
        )
    except ConflictError:  # the memory was changed after the page showed it: show it as it is
        changed = _(
            "That memory was changed after this page showed it; nothing was overwritten. "
            "Look at its new text and decide again."
        )
        return _panel(
            _build(
                "pending",
                notice=changed,
                editing={item.id: content} if content is not None else {},
                focus="review-notice",
            ),
            409,
            announce=changed,
        )
    except MemoryTooLongError as exc:  # this fact alone is over the limit: say so at the field
        return _panel(
            _build(
                "pending",
                editing={item.id: content if content is not None else item.content},
                errors={item.id: describe(exc)},
                focus=f"edit-{item.id}",
            ),
            422,
        )
    except MemoryFullError as exc:
        editing = {item.id: content} if content is not None else {}
        return _panel(
            _build("pending", notice=_full_notice(exc), editing=editing, focus="review-notice"),
            409,
            announce=_("Memory is full; nothing lost."),
        )
    except NotFoundError as exc:
        if exc.code != "person_unknown":  # (the curator's: nobody, or outside this view)
            raise
        return _panel(
            _build(
                "pending",
                errors={item.id: _("Choose the household or a person of the list.")},
                focus=f"item-{item.id}-heading",
            ),
            422,
        )
    except ValueError as exc:  # the library's message: empty, NUL, a secret…
        # A secret is kept only when the person confirms it: the form then offers the box.
        note_secret_refusal(exc)
        return _panel(
            _build(
                "pending",
                editing={item.id: item.content if content is None else content},
                errors={item.id: describe(exc)},
                focus=f"edit-{item.id}",
            ),
            422,
        )
    said = _APPROVED_DELETE if approved.action == "delete" else _APPROVED
    return _decided("pending", _about(approved, said), [approved.id], focus)


@bp.post("/<item_id>/reject")
def reject(item_id: str) -> Response:
    """Reject the fact; it will not be proposed again."""
    item = get_item_or_404(item_id)
    focus = next_focus(item.id)
    curator().reject(item.id, actor=actor())
    return _decided("pending", _about(item, _REJECTED), [item.id], focus)


@bp.post("/<item_id>/undo")
def undo(item_id: str) -> Response:
    """Take a decision back: the item is pending again and an approved change is reverted.
    Refused, with the reason, when the fact was deleted forever since (its item may be gone)."""
    before = stores().review.get(item_id)
    try:
        item = curator().undo_decision(item_id, actor=actor())
    except DeletedForeverError as exc:
        return _panel(_build("decided", notice=describe(exc), focus="review-notice"), 409)
    except NotFoundError:
        abort(404)
    except ConflictError:
        return _panel(
            _build(
                "decided",
                notice=_(
                    "That memory was changed after the approval, so the decision was not "
                    "undone. Edit the memory on the Memories page instead."
                ),
                focus="review-notice",
            ),
            409,
        )
    return _decided("decided", _about(before or item, _UNDONE))


@bp.post("/undo")
def undo_many() -> Response:
    """Undo the decisions a notice reported (one or a bulk); the person stays on their tab."""
    ids = [i for i in request.form.getlist("ids") if i]
    tab = _tab()
    if not ids:
        abort(404)
    undone, refused, forever = 0, 0, 0
    for item_id in ids:
        try:
            curator().undo_decision(item_id, actor=actor())
        except DeletedForeverError:
            forever += 1
            continue
        except NotFoundError:
            continue
        except ConflictError:
            refused += 1
            continue
        undone += 1
    # One fact back in the list: focus its Approve, so the person decides it again from there.
    back = ids[0] if len(ids) == 1 and undone == 1 and tab == "pending" else None
    message = ngettext(
        "Undone: %(count)s fact pending again.",
        "Undone: %(count)s facts pending again.",
        undone,
        count=format_number(undone),
    )
    if refused:
        message += " " + _(
            "%(num)s could not be undone: the memory was changed after the approval; "
            "edit it on the Memories page instead.",
            num=format_number(refused),
        )
    if forever:
        message += " " + _(
            "%(num)s could not be undone: the fact was deleted forever since.",
            num=format_number(forever),
        )
    return _decided(tab, message, focus=f"approve-{back}" if back else "review-heading")


@bp.post("/bulk")
def bulk() -> Response:
    """Approve or reject every selected pending item."""
    decision = request.form.get("decision")
    ids = [i for i in request.form.getlist("ids") if i]
    if decision not in ("approve", "reject"):
        return _panel(
            _build(
                "pending",
                notice=_("Choose Approve selected or Reject selected."),
                focus="review-notice",
            ),
            422,
        )
    if not ids:
        return _panel(
            _build("pending", notice=_("Select at least one fact first."), focus="review-notice"),
            422,
        )
    done, changed, secrets, undecided = 0, 0, 0, 0
    decided: list[str] = []
    for item_id in ids:
        try:
            if decision == "approve":
                # The version of the memory an update replaces, as the page showed it.
                seen = request.form.get(f"expected-{item_id}") or None
                curator().approve(item_id, actor=actor(), expected=seen)
            else:
                curator().reject(item_id, actor=actor())
        except SecretInputError:
            secrets += 1  # a secret is kept only when a person confirms it, one by one
            continue
        except OwnerUndecidedError:
            undecided += 1  # whose it is is chosen on its own, never the household's by default
            continue
        except NotFoundError:
            continue  # decided and pruned elsewhere meanwhile; nothing to do for it
        except ConflictError:
            changed += 1  # its memory was changed after the page showed it: left pending
            continue
        except MemoryFullError as exc:
            left = len(ids) - done
            notice = _full_notice(exc, left)
            if done:
                approved_part = _("Approved %(done)s of %(total)s.", done=done, total=len(ids))
                notice = f"{approved_part} {notice}"
            return _panel(
                _build("pending", notice=notice, focus="review-notice", undo_ids=decided),
                409,
                announce=_("Memory is full; nothing lost."),
                changed=bool(decided),
            )
        done += 1
        decided.append(item_id)
    if decision == "approve":
        message = ngettext(
            "Approved %(count)s fact.", "Approved %(count)s facts.", done, count=format_number(done)
        )
    else:
        message = ngettext(
            "Rejected %(count)s fact.", "Rejected %(count)s facts.", done, count=format_number(done)
        )
    if changed:
        message += " " + ngettext(
            "%(num)s left pending: its memory was changed after this page showed it; "
            "look at its new text and decide again.",
            "%(num)s left pending: their memories were changed after this page showed them; "
            "look at their new text and decide again.",
            changed,
        )
    if secrets:
        message += " " + ngettext(
            "%(num)s left pending: it holds a secret; approve it on its own to keep it anyway.",
            "%(num)s left pending: they hold secrets; approve each on its own to keep it anyway.",
            secrets,
        )
    return _decided("pending", message + _undecided_notice(undecided), decided)


# ------------------------------------------------------------------ bulk by source
@bp.app_template_global("review_sources")
def review_sources() -> list[tuple[str, int]]:
    """The files imported proposals wait from, and how many from each (Review's source bar)."""
    return stores().review.pending_sources()


@bp.post("/source")
def decide_source() -> Response:
    """Approve (until memory is full) or reject every pending proposal from one imported file."""
    source = request.form.get("source") or ""
    decision = request.form.get("decision")
    if decision not in ("approve", "reject") or not source:
        return _panel(
            _build(
                "pending",
                notice=_("Choose a source and Approve all or Reject all."),
                focus="review-notice",
            ),
            422,
        )
    if decision == "reject":
        done = curator().reject_source(source, actor=actor())
        message = ngettext(
            "Rejected %(count)s fact from %(source)s.",
            "Rejected %(count)s facts from %(source)s.",
            done,
            count=format_number(done),
            source=source,
        )
        return _decided("pending", message)
    result = curator().approve_source(source, actor=actor())
    message = ngettext(
        "Approved %(count)s fact from %(source)s.",
        "Approved %(count)s facts from %(source)s.",
        result.approved,
        count=format_number(result.approved),
        source=source,
    )
    if result.full is not None:
        left = len(stores().review.pending_from(source))
        message += " " + _full_notice(result.full, max(1, left))
    if result.changed:
        message += " " + ngettext(
            "%(num)s left pending: its memory was changed meanwhile.",
            "%(num)s left pending: their memories were changed meanwhile.",
            result.changed,
        )
    return _decided("pending", message + _undecided_notice(result.undecided))
