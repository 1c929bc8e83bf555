"""Prompt: the exact text ``compose_prompt`` sends for a conversation and a next message."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from flask import Blueprint, render_template, request

from ..prompts import ComposedPrompt, compose_prompt_sections
from ..stores import ConversationSummary
from .context import stores, wants_partial

bp = Blueprint("prompt", __name__, url_prefix="/prompt")

# Far above any real message, low enough that every keystroke's preview stays quick.
MAX_MESSAGE_CHARS = 100_000

SECTION_LABELS = {
    "history": "Conversation history",
    "memory": "Long-term memory",
    "prompt": "Your message",
}
EMPTY_SECTION_NOTES = {
    "history": "none — no conversation picked, or it has no turns",
    "memory": "none — no memories yet",
    "prompt": "empty — type a message",
}


@dataclass
class PromptForm:
    """What the person picked and typed, and what is wrong with it (field → message)."""

    conversation: str = ""
    message: str = ""
    errors: dict[str, str] = field(default_factory=dict)


def normalise_newlines(text: str) -> str:
    """The textarea's own value: browsers submit its line breaks as CRLF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_form(values: Mapping[str, str], threads: list[ConversationSummary]) -> PromptForm:
    """Parse and check the conversation and message from a query string or a form body."""
    form = PromptForm(
        conversation=values.get("conversation", "").strip(),
        message=normalise_newlines(values.get("message", "")),
    )
    if len(form.message) > MAX_MESSAGE_CHARS:
        form.errors["message"] = (
            f"The message is too long to preview: {len(form.message):,} "
            f"characters; the preview takes up to {MAX_MESSAGE_CHARS:,}."
        )
    if form.conversation and form.conversation not in {t.id for t in threads}:
        form.errors["conversation"] = (
            f"There is no conversation {form.conversation[:200]!r}; "
            "it may have been cleared or expired. Pick another one."
        )
    return form


def compose_for(form: PromptForm) -> ComposedPrompt | None:
    """The composed prompt for a valid form, from the very functions every interface calls."""
    if form.errors:
        return None
    history = stores().conversations.get_history(form.conversation) if form.conversation else []
    return compose_prompt_sections(stores().memories.get_all(), history, form.message)


def _render(values: Mapping[str, str]):
    threads = stores().conversations.list_conversations()
    form = read_form(values, threads)
    context = {
        "form": form,
        "composed": compose_for(form),
        "threads": threads,
        "labels": SECTION_LABELS,
        "empty_notes": EMPTY_SECTION_NOTES,
        "max_message_chars": MAX_MESSAGE_CHARS,
        "context_window": stores().settings.context_window,
        "page_title": "Prompt preview",
    }
    status = 422 if form.errors else 200
    if wants_partial():
        return render_template("prompt/_preview.html", oob=True, **context), status
    return render_template("prompt/page.html", oob=False, **context), status


@bp.get("/")
def index():
    """The preview page; ``?conversation=ID&message=TEXT`` pre-fill it (Preview prompt links)."""
    return _render(request.args)


@bp.post("/preview")
def preview():
    """The preview for the form as typed (a POST: a long message does not fit in a URL)."""
    return _render(request.form)
