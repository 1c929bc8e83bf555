"""Per-app access to the stores, and the template data every page shares."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from flask import current_app, g, request
from flask_babel import lazy_gettext as _l

from ..extraction.attention import AttentionScanner
from ..settings import Settings
from ..stores import ConversationStore, MemoryStore, StoreError
from ..stores.dismissals import DismissalStore
from ..stores.review import ReviewQueue
from ..stores.skills import SkillDocumentStore
from .extensions import htmx


@dataclass
class Stores:
    """The stores of one app, built once and shared by its threads (each file is cached)."""

    settings: Settings

    @cached_property
    def memories(self) -> MemoryStore:
        return MemoryStore.from_settings(self.settings, actor="dashboard")

    @cached_property
    def conversations(self) -> ConversationStore:
        return ConversationStore.from_settings(self.settings)

    @cached_property
    def review(self) -> ReviewQueue:
        return ReviewQueue.from_settings(self.settings, self.memories)

    @cached_property
    def dismissals(self) -> DismissalStore:
        return DismissalStore.from_settings(self.settings)

    @cached_property
    def attention(self) -> AttentionScanner:
        """Scans for the Needs attention page in the background, once per file version."""
        return AttentionScanner(self.memories, self.settings.memory_stale_days)

    @cached_property
    def skills(self) -> SkillDocumentStore:
        return SkillDocumentStore.from_settings(self.settings)

    def health(self) -> dict[str, str]:
        """Status of each store file: ok, missing, corrupt or unreadable."""
        return {
            "memories": self.memories.file.status(),
            "conversations": self.conversations.file.status(),
            "review": self.review.file.status(),
            "skills": "ok" if self.settings.skills_dir.is_dir() else "missing",
        }

    def pending_count(self) -> int:
        """How many extracted facts wait for review (cached per file version; 0 if unreadable)."""
        try:
            return self.review.pending_count()
        except StoreError:
            return 0  # the banner for the damaged file says what to do; the nav must still render


def stores() -> Stores:
    """The stores of the current app."""
    return current_app.extensions["memory_curator"]


def settings() -> Settings:
    """The settings of the current app."""
    return current_app.config["MEMORY_SETTINGS"]


SENTENCE_ENDS = ("。", "．", "！", "？", "!", "?", ".")


def quoted_sentence(text: str, limit: int = 80) -> str:
    """“text” closing a sentence: the full stop is left out when the text already ends one, so
    “我喝咖啡不加糖。” never becomes “…不加糖。”. (long text is cut at ``limit``)."""
    short = text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
    stop = "" if short.rstrip().endswith(SENTENCE_ENDS) else "."
    return f"“{short}”{stop}"


def actor() -> str:
    """Who is making this request, for the history log (Home Assistant's user when known)."""
    return getattr(g, "actor", None) or "dashboard"


def secret_key_for(settings: Settings) -> str:
    """A secret key kept in the data folder, so every worker process and restart shares it."""
    key_file = Path(settings.data_dir) / ".secret_key"
    try:
        return key_file.read_text(encoding="ascii").strip()
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    key_file.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(48)
    tmp = key_file.with_name(f".secret_key.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(key)
    try:
        os.link(tmp, key_file)  # first writer wins; the others read its key
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    return key_file.read_text(encoding="ascii").strip()


def wants_partial() -> bool:
    """True for an htmx request that is not a boosted full-page navigation."""
    return bool(htmx) and not htmx.boosted and not request.headers.get("HX-History-Restore-Request")


NAV_ITEMS = (
    ("memories.index", _l("Memories")),
    ("conversations.index", _l("Conversations")),
    ("prompt.index", _l("Prompt")),
    ("review.index", _l("Review")),
    ("attention.index", _l("Needs attention")),
    ("skills.index", _l("Skills")),
)


def template_globals() -> dict[str, Any]:
    """Data every page's base template uses: navigation, theme, store health, the user."""
    app = current_app
    return {
        "nav_items": [(e, label) for e, label in NAV_ITEMS if e in app.view_functions],
        "active_area": request.blueprint,
        "nav_pending": stores().pending_count(),
        "theme": settings().theme,
        "store_health": stores().health(),
        "current_user_name": getattr(g, "user_name", None),
    }


def init_app(app: Any) -> None:
    """Register the shared template data."""
    app.context_processor(template_globals)
