"""The Review page's view helpers: the page as one object (``ReviewPage``) built from the
queue and annotated with the memories most like each proposal, answered as a panel or a
redirect, and the words a decision shows (the routes are ``web.blueprints.review``)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import abort, request, session, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel import ngettext
from flask_babel.speaklater import LazyString
from werkzeug.wrappers import Response

from ...attention.most_similar import Similar, most_similar_memories
from ...attention.pairs import drops_information
from ...attention.semantic import semantic_index
from ...curator.errors import DeletedForeverError
from ...curator.people import EVERYONE, in_view
from ...extraction.approval import extraction_quality
from ...stores import CATEGORIES, Memory, MemoryFullError
from ...stores.review import ReviewItem
from .context import curator, pending_count, quote, stores, wants_partial
from .htmx import render, see_other
from .pagination import paginate

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


def current_tab() -> str:
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


def build_page(tab: str, **extra: Any) -> ReviewPage:
    drafts, selected = _kept_from_page()
    extra["editing"] = {**drafts, **extra.get("editing", {})}
    extra.setdefault("selected", selected)
    queue = stores().review
    items = queue.pending() if tab == "pending" else queue.decided()
    sees = curator().sees_item
    shown = paginate([item for item in items if sees(item)], request.values.get("page", "1"))
    return annotated(
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


def annotated(view: ReviewPage, items: list[ReviewItem] | None = None) -> ReviewPage:
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


def panel(
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


def decided(
    tab: str, message: str, undo_ids: list[str] | None = None, focus: str = "review-heading"
) -> Response:
    """After a change: the refreshed panel with what happened (and Undo) for htmx, a redirect
    back that shows the same for a plain form (kept in the session until that page shows it)."""
    if wants_partial():
        view = build_page(
            tab, notice=message, notice_level="ok", undo_ids=undo_ids or [], focus=focus
        )
        if focus.startswith("approve-") and focus[8:] not in {i.id for i in view.items}:
            view.focus = "review-heading"  # that fact is not on the page shown
        return panel(view, announce=message, changed=True)
    session[DONE_KEY] = {"message": message[:500], "undo": (undo_ids or [])[:MAX_UNDO_IDS]}
    return see_other(url_for("review.index", tab=tab))


MAX_UNDO_IDS = 100  # a bulk decision's Undo in the session cookie stays small
DONE_KEY = "review_done"  # what a plain (no-JavaScript) decision did, shown after its redirect


# Each message in two forms: for a fact that already ends a sentence (“…。”), which adds no
# full stop of its own, and for one that does not (each language writes its own stop).
APPROVED = (
    _l("Approved %(fact)s Long-term memory updated."),
    _l("Approved %(fact)s. Long-term memory updated."),
)
APPROVED_DELETE = (  # approving a proposed deletion deletes the memory: say so
    _l("Deleted %(fact)s Long-term memory no longer holds it."),
    _l("Deleted %(fact)s. Long-term memory no longer holds it."),
)
REJECTED = (
    _l("Rejected %(fact)s It will not be proposed again."),
    _l("Rejected %(fact)s. It will not be proposed again."),
)
UNDONE = (_l("Undone, pending again: %(fact)s"), _l("Undone, pending again: %(fact)s."))


def about(item: ReviewItem, message: tuple[LazyString, LazyString]) -> str:
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


def full_notice(exc: MemoryFullError, count: int = 1) -> str:
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


def undecided_notice(count: int) -> str:
    """What a bulk approval says of the facts left pending until a person says whose."""
    if not count:
        return ""
    return " " + ngettext(
        "%(num)s left pending: choose whose it is, then approve it on its own.",
        "%(num)s left pending: choose whose each is, then approve each on its own.",
        count,
    )
