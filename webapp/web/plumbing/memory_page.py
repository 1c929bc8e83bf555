"""The Memories pages' shared view helpers: the list the request's filters ask for and the
page around it, the memory a request names (404 when it may not see it), what the add and
edit forms hold (their checked fields, whose a new memory is, a secret they refused) and the
edit form's answers when a save is refused or the memory changed elsewhere."""

from __future__ import annotations

from typing import Any

from flask import abort, g, request
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from werkzeug.wrappers import Response as BaseResponse

from ...curator.people import query_person
from ...problems import CodedError, Problem
from ...sensitive.secrets import SecretFinding, find_secrets
from ...stores import CATEGORIES, Memory
from ..blueprints.people import visible_owners, visible_people, visible_person, you
from .context import curator, note_secret_refusal, stores
from .htmx import render
from .memory_listing import EXPIRY_FILTERS, PAGE_SIZE, SORTS, Listing, build_listing
from .messages import describe


def get_memory_or_404(memory_id: str) -> Memory:
    """The memory with that id, or a 404 (another person's too: nothing says it exists)."""
    memory = stores().memories.get(memory_id)
    if memory is None or not curator().visible(memory):
        abort(404)
    return memory


def deleted_in_view(memory_id: str) -> Memory | None:
    """The last state of a deleted memory this request may see, else None."""
    gone = stores().memories.deleted(memory_id)
    return gone if gone is not None and curator().visible(gone) else None


DELETED_ELSEWHERE = _l(
    "This memory was deleted elsewhere after you opened it, so nothing was "
    "saved. Your text is still here: copy it into a new memory, or press "
    "Cancel to get an Undo for the deletion."
)


def current_listing() -> Listing:
    """The list as the request's filters ask for (query string or form fields)."""
    args = request.values
    return build_listing(
        stores().memories,
        query=args.get("q", ""),
        category=args.get("category", ""),
        sort=args.get("sort", ""),
        page=args.get("page", "1"),
        whose=args.get("whose", ""),
        expiry=args.get("expiry", ""),
        person=query_person(curator().view),
    )


def page_context(**extra: Any) -> dict[str, Any]:
    """Everything the full page renders; views add their own bits."""
    store = stores().memories
    context = {
        "listing": current_listing(),
        "usage": store.usage(),
        "categories": CATEGORIES,
        "sorts": SORTS,
        "expiry_filters": EXPIRY_FILTERS,
        "page_size": PAGE_SIZE,
        "page_title": _("Memories"),
        "form": {},
        "errors": {},
        "undo_refs": _undo_refs(),
        "owners": visible_owners(),
        "people": visible_people(),
    }
    context.update(extra)
    return context


def _undo_refs() -> list[str]:
    """Ids deleted by a plain (no-JS) form post, offered for undo after the redirect."""
    return [ref for ref in request.args.get("undo", "").split(",") if ref][:500]


def form_input() -> tuple[str, str]:
    """The content and category the form sent, as typed: the curator checks them."""
    return request.form.get("content", ""), request.form.get("category") or "general"


def field_errors(refused: CodedError) -> dict[str, str]:
    """The curator's refusal of the form's fields, one message per field it names
    (``CodedError.field``, the other fields' in ``also``); a text refused for its secret tells
    the templates to offer "Keep it anyway" (``g.secret_refused``)."""
    errors = {}
    for error in (refused, *refused.also):
        problem = Problem(error)
        if error.field == "content":
            note_secret_refusal(problem)
        errors[error.field or "content"] = describe(problem)
    return errors


def secret_rewrite() -> str | None:
    """The text without its secret that the refusal suggests (None when none was refused)."""
    rewrite = g.get("secret_rewrite")
    return rewrite if isinstance(rewrite, str) else None


def secret_refused() -> bool:
    """True when the form was refused because its text holds a secret (offer "Keep it anyway")."""
    return bool(g.get("secret_refused"))


def secret_of(text: str) -> SecretFinding | None:
    """The secrets ``text`` holds (``webapp.sensitive.secrets``), or None."""
    return find_secrets(text)


def chosen_person() -> tuple[str | None, str | None]:
    """Whose a memory added from the form is: the person it names (their id), the
    household ("household"), or by default the Home Assistant user's own person; and the
    message when the form names nobody known."""
    value = request.form.get("person")
    if value is None:
        mine = you()
        return (mine.id if mine is not None else None), None
    if value in ("", "household"):
        return None, None
    if stores().people.get(value) is None or not visible_person(value):
        return None, _("Choose the household or a person of the list.")
    return value, None


def edit_error(
    memory: Memory, form: dict[str, str], errors: dict[str, str], version: str, status: int
) -> BaseResponse:
    """The edit form again with what is wrong, at ``status``; the text typed is kept."""
    context: dict[str, Any] = {
        "memory": memory,
        "form": form,
        "errors": errors,
        "version": version or memory.version,
        "categories": CATEGORIES,
        "usage": stores().memories.usage(),
    }
    return render(
        "memories/_edit_row.html",
        "memories/edit_page.html",
        status=status,
        title=_("Edit memory"),
        **context,
    )


def conflict_answer(current: Memory, form: dict[str, str]) -> BaseResponse:
    """The 'changed elsewhere' answer: both versions, nothing overwritten."""
    changes = stores().memories.history(current.id)
    last = changes[-1] if changes else None
    context: dict[str, Any] = {
        "memory": current,
        "mine": form,
        "changed_by": last.get("actor") if last else None,
        "categories": CATEGORIES,
    }
    return render(
        "memories/_conflict_row.html",
        "memories/conflict_page.html",
        status=409,
        title=_("Changed elsewhere"),
        **context,
    )
