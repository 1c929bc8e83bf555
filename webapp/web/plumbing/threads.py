"""How a person reads a conversation thread's name: its first message from the person (the
title the Conversations page lists), with the key (``slack:1732050000.777000``) only as a
secondary detail; a thread with no message from the person, expired or no longer kept gets a
readable label instead of the bare key."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from flask import Flask, g
from flask_babel import gettext as _
from markupsafe import Markup, escape

from ...stores import ConversationSummary, interface_of
from .context import quote, stores
from .formatting import interface_label


@dataclass(frozen=True)
class ThreadName:
    """A thread as the pages name it."""

    key: str
    title: str  # the first message from the person; "" when there is none or it expired
    kept: bool = False  # the conversation store still holds the thread
    expired: bool = False  # ... but the assistant no longer sees it (its words are not shown)

    @property
    def interface(self) -> str:
        return interface_label(interface_of(self.key))

    @property
    def label(self) -> str:
        """The title, else what kind of thread it is ("Slack thread no longer kept")."""
        if self.title:
            return self.title
        if self.expired:
            return _("Expired %(interface)s thread", interface=self.interface)
        if self.kept:
            return _(
                "%(interface)s thread with no message from the person", interface=self.interface
            )
        return _("%(interface)s thread no longer kept", interface=self.interface)

    @property
    def in_sentence(self) -> Markup:
        """The thread inside a sentence ("extracted from …"): the conversation “title” (marked
        translate="no"), or what kind of thread it is."""
        if self.title:
            title = Markup('<span translate="no">{}</span>').format(quote(self.title)[0])
            return Markup(escape(_("the conversation %(title)s"))) % {"title": title}
        if self.expired:
            text = _("an expired %(interface)s thread", interface=self.interface)
        elif self.kept:
            text = _(
                "a %(interface)s thread with no message from the person", interface=self.interface
            )
        else:
            text = _("a %(interface)s thread no longer kept", interface=self.interface)
        return escape(text)


def kept_threads() -> dict[str, ConversationSummary]:
    """The threads the conversation store holds, by key (read once per request)."""
    if "kept_threads" not in g:
        g.kept_threads = {s.id: s for s in stores().conversations.list_conversations()}
    found: dict[str, ConversationSummary] = g.kept_threads
    return found


def thread_name(key: Any, now: datetime | None = None) -> ThreadName:
    """The name of the thread ``key``, kept or not."""
    key = str(key or "")
    summary = kept_threads().get(key)
    if summary is None:
        return ThreadName(key, "")
    expired = summary.expires_at <= (now or datetime.now(UTC))
    return ThreadName(key, "" if expired else summary.title, kept=True, expired=expired)


def init_app(app: Flask) -> None:
    """``thread_name(key)`` in every template."""
    app.add_template_global(thread_name, "thread_name")
