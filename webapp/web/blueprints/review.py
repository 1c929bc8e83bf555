"""Review: approve, edit-then-approve or reject the facts the extractor proposes, and undo."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import Blueprint, abort, render_template, request, session, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel import ngettext
from flask_babel.speaklater import LazyString
from werkzeug.wrappers import Response

from ...attention.most_similar import Similar, most_similar_memories
from ...attention.pairs import drops_information
from ...attention.semantic import semantic_index
from ...curator.errors import DeletedForeverError, OwnerUndecidedError
from ...curator.people import EVERYONE, in_view
from ...extraction.approval import extraction_quality
from ...stores import (
    CATEGORIES,
    ConflictError,
    Memory,
    MemoryFullError,
    MemoryTooLongError,
    NotFoundError,
    SecretInputError,
)
from ...stores.memories import KEEP, Keep
from ...stores.review import ReviewItem
from ..plumbing.context import (
    actor,
    curator,
    note_secret_refusal,
    pending_count,
    quote,
    stores,
    wants_partial,
)
from ..plumbing.htmx import redirect_or, render, see_other
from ..plumbing.messages import describe
from ..plumbing.pagination import paginate
from .expiry_hint import chosen_expiry, proposal_last_day
from .i18n import format_number

bp = Blueprint("review", __name__, url_prefix="/review")

TABS = ("pending", "decided")
# Sent (HX-Trigger) with every answer that changed the review queue: the parts of a page that
# show the queue (the approval rates, what a thread left behind) reload themselves.
REVIEW_CHANGED = "review-changed"
# Chinese/Japanese/Korean characters compare one by one; other text word by word.
_DIFF_TOKEN = re.compile(
    r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]"
    r"|\w+|\s+|[^\w\s]",
    re.UNICODE,
)


@dataclass
class ReviewPage:
    """Everything the review templates show, built in one place."""

    tab: str  # "pending" or "decided"
    items: list[ReviewItem]  # the items of that tab, newest first
    pending_count: int  # for the tab label and the nav badge
    notice: str | None = None  # a message above the list (e.g. memory is full)
    notice_level: str = "warning"
    undo_ids: list[str] = field(default_factory=list)  # the decisions the notice's Undo reverts
    editing: dict[str, str] = field(default_factory=dict)  # item id -> text in its open edit form
    errors: dict[str, str] = field(default_factory=dict)  # item id -> validation message
    focus: str | None = None  # element id that gets focus after the swap
    selected: set[str] = field(default_factory=set)  # item ids whose checkbox stays ticked
    page: int = 1  # which page of PAGE_SIZE items is shown
    pages: int = 1  # how many pages the tab has
    total: int = 0  # items in the tab, all pages
    similar: dict[str, list[Similar]] = field(default_factory=dict)  # item id -> top 3 memories
    drops: dict[str, list[str]] = field(default_factory=dict)  # update item id -> what it loses
    # update item id -> the memory it would replace as it is now (its text and version shown)
    replaces: dict[str, Memory] = field(default_factory=dict)
    categories: tuple[str, ...] = CATEGORIES  # choices when editing a proposal


def diff_segments(before: str, after: str) -> list[tuple[str, str]]:
    """Word-level (character-level for Chinese) diff as (op, text) with op 'same', 'del' or 'ins'."""
    old, new = _DIFF_TOKEN.findall(before or ""), _DIFF_TOKEN.findall(after or "")
    segments: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            segments.append(("same", "".join(old[i1:i2])))
            continue
        if i2 > i1:
            segments.append(("del", "".join(old[i1:i2])))
        if j2 > j1:
            segments.append(("ins", "".join(new[j1:j2])))
    return segments


@bp.app_template_global()
def review_diff(before: str, after: str) -> list[tuple[str, str]]:
    """Template access to ``diff_segments``."""
    return diff_segments(before, after)


def _tab() -> str:
    tab = request.values.get("tab", "pending")
    return tab if tab in TABS else "pending"


def _kept_from_page() -> tuple[dict[str, str], set[str]]:
    """Open edits and ticks of other items that review.js sends along, so a swap keeps them."""
    if request.method != "POST":
        return {}, set()
    drafts = {
        key[len("draft-") :]: value
        for key, value in request.form.items(multi=True)
        if key.startswith("draft-")
    }
    return drafts, set(request.form.getlist("keep_selected"))


def _build(tab: str, **extra: Any) -> ReviewPage:
    drafts, selected = _kept_from_page()
    extra["editing"] = {**drafts, **extra.get("editing", {})}
    extra.setdefault("selected", selected)
    queue = stores().review
    items = queue.pending() if tab == "pending" else queue.decided()
    sees = curator().sees_item
    shown = paginate([item for item in items if sees(item)], request.values.get("page", "1"))
    return _annotated(
        ReviewPage(
            tab=tab,
            items=shown.items,
            pending_count=pending_count(),
            page=shown.number,
            pages=shown.pages,
            total=shown.total,
            **extra,
        )
    )


def _annotated(view: ReviewPage, items: list[ReviewItem] | None = None) -> ReviewPage:
    """Add, for each pending item shown, the memories most like it, and for an update the
    memory it would replace as it is now (approving replaces that version) and what it loses."""
    shown = [
        item
        for item in (items if items is not None else view.items)
        if item.status == "pending" and item.action != "delete"  # a deletion's own memory
    ]  # would top its list
    memories = stores().memories
    viewer = curator()
    # Each proposal is compared within its owner's view, and within the viewer's: another
    # person's memory is never shown beside it.
    similar = most_similar_memories(
        memories,
        semantic_index(memories.path),
        [item.content for item in shown],
        limit=3,
        within=[_seen_with(item, viewer.visible) for item in shown],
    )
    for item, found in zip(shown, similar, strict=True):
        view.similar[item.id] = found
        if item.action != "update":
            continue
        now = memories.get(item.memory_id) if item.memory_id else None
        if now is not None:
            view.replaces[item.id] = now
        current = now.content if now is not None else item.current_content
        if current:
            view.drops[item.id] = drops_information(current, item.content)
    return view


def _seen_with(item: ReviewItem, viewer_sees: Callable[[Memory], bool]) -> Callable[[Memory], bool]:
    """What a proposal may be compared with: memories its owner's view holds (the
    household's only when nobody could tell whose it is) that the viewer may see too."""
    owner = None if item.owner_undecided else item.person
    return lambda memory: in_view(memory, owner) and viewer_sees(memory)


def _panel(
    view: ReviewPage, status: int = 200, announce: str | None = None, changed: bool = False
) -> Response:
    """The tab panel for htmx (with the nav badge out of band), the whole page otherwise;
    ``changed``: a decision was made or undone, so the approval rates reload too."""
    return render(
        "review/_panel.html",
        "review/page.html",
        view=view,
        status=status,
        announce=announce,
        trigger=REVIEW_CHANGED if changed else None,
        title=_("Review"),
        partial_context={"oob_badge": True},
        page_context=lambda: {"quality": extraction_quality(stores().review)},
    )


def _decided(
    tab: str, message: str, undo_ids: list[str] | None = None, focus: str = "review-heading"
) -> Response:
    """After a change: the refreshed panel with what happened (and Undo) for htmx, a redirect
    back that shows the same for a plain form (kept in the session until that page shows it)."""
    if wants_partial():
        view = _build(tab, notice=message, notice_level="ok", undo_ids=undo_ids or [], focus=focus)
        if focus.startswith("approve-") and focus[8:] not in {i.id for i in view.items}:
            view.focus = "review-heading"  # that fact is not on the page shown
        return _panel(view, announce=message, changed=True)
    session[_DONE_KEY] = {"message": message[:500], "undo": (undo_ids or [])[:MAX_UNDO_IDS]}
    return see_other(url_for("review.index", tab=tab))


MAX_UNDO_IDS = 100  # a bulk decision's Undo in the session cookie stays small
_DONE_KEY = "review_done"  # what a plain (no-JavaScript) decision did, shown after its redirect


# Each message in two forms: for a fact that already ends a sentence (“…。”), which adds no
# full stop of its own, and for one that does not (each language writes its own stop).
_APPROVED = (
    _l("Approved %(fact)s Long-term memory updated."),
    _l("Approved %(fact)s. Long-term memory updated."),
)
_APPROVED_DELETE = (  # approving a proposed deletion deletes the memory: say so
    _l("Deleted %(fact)s Long-term memory no longer holds it."),
    _l("Deleted %(fact)s. Long-term memory no longer holds it."),
)
_REJECTED = (
    _l("Rejected %(fact)s It will not be proposed again."),
    _l("Rejected %(fact)s. It will not be proposed again."),
)
_UNDONE = (_l("Undone, pending again: %(fact)s"), _l("Undone, pending again: %(fact)s."))


def _about(item: ReviewItem, message: tuple[LazyString, LazyString]) -> str:
    """``message`` about the item's fact, in quotes, in the form its last character needs."""
    fact, ends = quote(item.applied_content or item.content)
    return str(message[0] if ends else message[1]) % {"fact": fact}


def next_focus(item_id: str) -> str:
    """Where focus goes once ``item_id`` is decided: the next card's Approve (else the one
    before it), so a person deciding by keyboard never has to tab back into the list."""
    ids = [item.id for item in curator().pending()]
    if item_id not in ids:
        return "review-heading"
    index = ids.index(item_id)
    following = ids[index + 1 : index + 2] or ids[max(0, index - 1) : index]
    return f"approve-{following[0]}" if following else "review-heading"


def get_item_or_404(item_id: str) -> ReviewItem:
    """The review item or a 404 (DeletedForeverError, answered 409 with its reason, when
    Delete forever took it out)."""
    item = stores().review.get(item_id)
    if item is None:
        took = stores().tombstones.took_out(item_id)
        view = curator().view
        if took is not None and (view is EVERYONE or took.person in (None, view)):
            raise DeletedForeverError(took.memory_id)
    if item is None or not curator().sees_item(item):
        abort(404)  # another person's too: nothing says it exists
    return item


def _full_notice(exc: MemoryFullError, count: int = 1) -> str:
    """Why approving failed, what is used, and that nothing was lost."""
    figures = {
        "items": exc.items,
        "max_items": exc.max_items,
        "chars": exc.chars,
        "max_chars": exc.max_chars,
    }
    return ngettext(
        "Memory is full: %(items)s of %(max_items)s memories and %(chars)s of %(max_chars)s "
        "characters are used. Nothing was lost: this fact is still pending. Delete or shorten "
        "memories you no longer need on the Memories page, then approve again.",
        "Memory is full: %(items)s of %(max_items)s memories and %(chars)s of %(max_chars)s "
        "characters are used. Nothing was lost: these %(num)s facts are still pending. Delete "
        "or shorten memories you no longer need on the Memories page, then approve again.",
        count,
        **figures,
    )


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


def _undecided_notice(count: int) -> str:
    """What a bulk approval says of the facts left pending until a person says whose."""
    if not count:
        return ""
    return " " + ngettext(
        "%(num)s left pending: choose whose it is, then approve it on its own.",
        "%(num)s left pending: choose whose each is, then approve each on its own.",
        count,
    )


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
