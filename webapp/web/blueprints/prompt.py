"""Prompt: the exact text ``compose_prompt`` sends for a conversation and a next message."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from flask import Blueprint, request
from flask_babel import format_decimal
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from werkzeug.wrappers import Response

from ...curator.people import EVERYONE
from ...prompts import ComposedPrompt, compose_prompt_sections
from ...stores import ConversationSummary
from ...stores.asof import memories_as_of
from ..plumbing.context import curator, stores
from ..plumbing.formatting import household_zone_name
from ..plumbing.htmx import render
from .as_of import read_moment
from .people import visible_people, visible_person, you

bp = Blueprint("prompt", __name__, url_prefix="/prompt")

# Far above any real message, low enough that every keystroke's preview stays quick.
MAX_MESSAGE_CHARS = 100_000

SECTION_LABELS = {
    "history": _l("Conversation history"),
    "memory": _l("Long-term memory"),
    "prompt": _l("Your message"),
}
EMPTY_SECTION_NOTES = {
    "history": _l("none — no conversation picked, or it has no turns"),
    "memory": _l("none — no memories yet"),
    "prompt": _l("empty — type a message"),
}


@dataclass
class PromptForm:
    """What the person picked and typed, and what is wrong with it (field → message)."""

    conversation: str = ""
    message: str = ""
    person: str = ""  # "" every memory, "household" an unknown speaker's, else a person's id
    errors: dict[str, str] = field(default_factory=dict)
    as_of: str = ""  # a past moment (household time) to compose the prompt as of; "" for now
    moment: datetime | None = None  # ``as_of`` read


def normalise_newlines(text: str) -> str:
    """The textarea's own value: browsers submit its line breaks as CRLF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def chosen_person(value: str) -> str:
    """Whose prompt to show: the one picked ("everyone" for every memory), else the person
    signed in through Home Assistant, else the household's (an unknown speaker): never, by
    default, a prompt that mixes every person's private memories, which no speaker gets."""
    value = value.strip()
    if value == "everyone" and curator().view is EVERYONE:
        return ""
    if value and value != "everyone":
        return value
    me = you()
    return me.id if me is not None else "household"


def read_form(values: Mapping[str, str], threads: list[ConversationSummary]) -> PromptForm:
    """Parse and check the conversation and message from a query string or a form body."""
    form = PromptForm(
        conversation=values.get("conversation", "").strip(),
        message=normalise_newlines(values.get("message", "")),
        person=chosen_person(values.get("person", "")),
    )
    if form.person not in ("", "household") and (
        stores().people.get(form.person) is None or not visible_person(form.person)
    ):
        form.errors["person"] = _("Choose the household or a person of the list.")
    if len(form.message) > MAX_MESSAGE_CHARS:
        form.errors["message"] = _(
            "The message is too long to preview: %(chars)s characters; the preview takes up "
            "to %(max)s.",
            chars=format_decimal(len(form.message)),
            max=format_decimal(MAX_MESSAGE_CHARS),
        )
    form.as_of = values.get("as_of", "").strip()
    if form.as_of:
        form.moment = read_moment(form.as_of)
        if form.moment is None:
            form.errors["as_of"] = _(
                "%(value)s is not a date and time; use the picker, or write it as "
                "2026-11-20T08:30 (%(zone)s).",
                value=repr(form.as_of[:40]),
                zone=household_zone_name(),
            )
    if form.conversation and form.conversation not in {
        t.id for t in threads if curator().sees_thread(t.speakers)
    }:
        form.errors["conversation"] = _(
            "There is no conversation %(id)s; it may have been cleared or expired. "
            "Pick another one.",
            id=repr(form.conversation[:200]),
        )
    return form


def compose_for(form: PromptForm) -> ComposedPrompt | None:
    """The composed prompt for a valid form, from the very functions every interface calls."""
    if form.errors:
        return None
    history = stores().conversations.get_history(form.conversation) if form.conversation else []
    memories = stores().memories
    now = None
    if form.moment is not None:  # what the assistant knew then, and the turns said by then
        history = [turn for turn in history if turn.timestamp <= form.moment]
        kept = memories_as_of(memories, form.moment)
        now = form.moment
    else:
        kept = memories.get_all()
    if form.person == "household":  # an unknown speaker: the household's only
        household = [memory for memory in kept if memory.person is None]
        return compose_prompt_sections(household, history, form.message, now=now)
    return compose_prompt_sections(kept, history, form.message, person=form.person or None, now=now)


def _preview(values: Mapping[str, str]) -> Response:
    """The preview for ``values``: the preview partial (its field messages out of band) for
    htmx, the whole page otherwise; 422 while a field is refused."""
    threads = stores().conversations.list_conversations()
    threads = [t for t in threads if curator().sees_thread(t.speakers)]
    form = read_form(values, threads)
    context: dict[str, Any] = {
        "form": form,
        "composed": compose_for(form),
        "threads": threads,
        "people": visible_people(),
        "labels": SECTION_LABELS,
        "empty_notes": EMPTY_SECTION_NOTES,
        "max_message_chars": MAX_MESSAGE_CHARS,
        "context_window": stores().settings.context_window,
        "expired_count": len(stores().memories.expired()),
    }
    return render(
        "prompt/_preview.html",
        "prompt/page.html",
        status=422 if form.errors else 200,
        title=_("Prompt preview"),
        partial_context={"oob": True},
        page_context={"oob": False},
        **context,
    )


@bp.get("/")
def index() -> Response:
    """The preview page; ``?conversation=ID&message=TEXT`` pre-fill it (Preview prompt links)."""
    return _preview(request.args)


@bp.post("/preview")
def preview() -> Response:
    """The preview for the form as typed (a POST: a long message does not fit in a URL)."""
    return _preview(request.form)
