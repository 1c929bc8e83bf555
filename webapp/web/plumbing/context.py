"""Per-app access to the stores, and the template data every page shares."""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from flask import current_app, g, request
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from markupsafe import Markup, escape

from ...attention.llm_check import pair_checker_from_settings
from ...attention.pair_verdicts import pair_verdicts
from ...attention.scanner import AttentionScanner
from ...attention.semantic import semantic_index
from ...curator import Curator
from ...curator.people import EVERYONE, View
from ...settings import Settings
from ...stores import (
    SetAside,
    StoreError,
)
from ...stores.readers import (
    ConversationReader,
    DismissalReader,
    MemoryReader,
    PeopleReader,
    ReviewReader,
    SkillReader,
    TombstoneReader,
)
from .extensions import htmx
from .ha_admins import Administrators

# At most this many request threads may wait for a store's lock at once; later writes fail at
# once with the busy message, so reads, pages and /healthz always have threads (waitress has 8).
MAX_WAITING_WRITES = 4
# At most this many extractions run at once (each may wait MEMORY_LLM_TIMEOUT for the LLM); one
# more is refused at once with a message, so pages keep the other threads.
MAX_EXTRACTIONS = 2


@dataclass
class Stores:
    """The stores of one app, built once and shared by its threads (each file is cached)."""

    settings: Settings
    waiting_writes: threading.Semaphore = field(
        default_factory=lambda: threading.BoundedSemaphore(MAX_WAITING_WRITES)
    )
    extractions: threading.Semaphore = field(
        default_factory=lambda: threading.BoundedSemaphore(MAX_EXTRACTIONS)
    )

    @cached_property
    def curator(self) -> Curator:
        """Every operation on this app's data folder (the dashboard writes only through it)."""
        made = Curator(
            self.settings, actor="dashboard", via="dashboard", wait_gate=self.waiting_writes
        )
        made.finish_interrupted()  # a Delete forever a killed process left half-way
        return made

    @property
    def memories(self) -> MemoryReader:
        return self.curator.memories

    @property
    def conversations(self) -> ConversationReader:
        return self.curator.conversations

    @property
    def review(self) -> ReviewReader:
        return self.curator.review

    @property
    def people(self) -> PeopleReader:
        return self.curator.people

    @property
    def dismissals(self) -> DismissalReader:
        return self.curator.dismissals

    @property
    def tombstones(self) -> TombstoneReader:
        """The facts a person deleted (stores.tombstones), beside the memories."""
        return self.curator.tombstones

    @cached_property
    def admins(self) -> Administrators:
        """Which Home Assistant users are administrators (asked of the Supervisor, cached)."""
        return Administrators(self.settings.supervisor_url)

    @cached_property
    def attention(self) -> AttentionScanner:
        """Scans for the Needs attention page in the background, once per file version."""
        return AttentionScanner(
            self.memories,
            self.settings.memory_stale_days,
            semantic=semantic_index(self.memories.path),
            checker=pair_checker_from_settings(
                self.settings, memory=pair_verdicts(self.memories.path)
            ),
        )

    @property
    def skills(self) -> SkillReader:
        return self.curator.skills

    def health(self) -> dict[str, str]:
        """Status of each store file: ok, missing, corrupt or unreadable."""
        return {
            "memories": self.memories.status(),
            "conversations": self.conversations.status(),
            "review": self.review.status(),
            "skills": "ok" if self.settings.skills_dir.is_dir() else "missing",
        }

    def set_aside(self) -> dict[str, list[SetAside]]:
        """Per store file, the files of unusable records set aside beside it (usually none)."""
        files = {
            "memories": self.memories,
            "conversations": self.conversations,
            "review": self.review,
        }
        found = {name: store.set_aside() for name, store in files.items()}
        return {name: found_files for name, found_files in found.items() if found_files}

    def attention_count(self, view: View = EVERYONE) -> int:
        """How many findings Needs attention shows ``view``, by the last scan this process
        finished (0 before one): a page never starts a scan or waits for one to show the
        number."""
        if "attention" not in self.__dict__:
            return 0  # no page has asked for a scan yet (cached_property: not built)
        report = self.attention.latest()
        if report is None:
            return 0
        try:
            dismissed = self.dismissals.keys()
        except StoreError:
            return 0
        if view is not EVERYONE:
            viewer = self.curator.within(view)
            kept = viewer.findings_in_view(report.visible(dismissed))
            expired = sum(1 for m in self.memories.expired() if viewer.visible(m))
            return sum(len(group) for group in kept.values()) + expired
        found = sum(len(group) for group in report.visible(dismissed).values())
        return found + self.expired_count()

    def expired_count(self) -> int:
        """How many memories have expired by now (their expiry instants sorted once per
        version of the file: a bisection per page)."""
        instants: list[datetime] = self.memories.cached(
            "expiry-instants",
            lambda: sorted(m.expires_at for m in self.memories.get_all() if m.expires_at),
        )
        return bisect.bisect_right(instants, datetime.now(UTC))

    def pending_count(self) -> int:
        """How many extracted facts wait for review (cached per file version; 0 if unreadable)."""
        try:
            return self.review.pending_count()
        except StoreError:
            return 0  # the banner for the damaged file says what to do; the nav must still render


def stores() -> Stores:
    """The stores of the current app."""
    found: Stores = current_app.extensions["memory_curator"]
    return found


def curator() -> Curator:
    """The curator of the current app kept to this request's view (``people.viewer``: whose
    data the person who opened the page may see): every read of private data and every write
    goes through it."""
    return stores().curator.within(g.get("view", EVERYONE))


def settings() -> Settings:
    """The settings of the current app."""
    configured: Settings = current_app.config["MEMORY_SETTINGS"]
    return configured


def pending_count() -> int:
    """How many proposals wait in Review for this request's view (the nav badge): another
    person's are not counted."""
    viewer = curator()
    if viewer.view is EVERYONE:
        return stores().pending_count()
    try:
        return len(viewer.pending())
    except StoreError:
        return 0


SENTENCE_ENDS = ("。", "．", "！", "？", "!", "?", ".")


def quote(text: str, limit: int = 80) -> tuple[str, bool]:
    """``text`` in the page's quotation marks (“…” in English and 简体, 「…」 in 繁體; long text
    cut at ``limit``), and whether it ends a sentence itself: a message then adds no full stop
    after it (“Prefers tea.”, never “Prefers tea.”.), so each message has both forms."""
    short = text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
    return _("“%(text)s”", text=short), short.rstrip().endswith(SENTENCE_ENDS)


def quoted_sentence(text: str, limit: int = 80) -> str:
    """“text” closing a sentence: the page's full stop follows unless the text ends a sentence
    itself (“我喝咖啡不加糖。” takes no second stop)."""
    quoted, ends = quote(text, limit)
    return quoted if ends else _("%(quoted)s.", quoted=quoted)


def actor() -> str:
    """Who is making this request, for the history log (Home Assistant's user when known)."""
    return getattr(g, "actor", None) or "dashboard"


def note_secret_refusal(problem: object) -> None:
    """When ``problem`` (a field's error) refuses a secret, tell the templates to offer
    "Keep it anyway" and the button that puts the suggested rewrite in the field."""
    refused = getattr(problem, "code", None) == "memory_secret"
    g.setdefault("secret_refused", refused)
    if refused:
        g.setdefault("secret_rewrite", getattr(problem, "values", {}).get("fact"))


def wants_partial() -> bool:
    """True for an htmx request that is not a boosted full-page navigation."""
    return bool(htmx) and not htmx.boosted and not request.headers.get("HX-History-Restore-Request")


NAV_ITEMS = (
    ("memories.index", _l("Memories")),
    ("people.index", _l("People")),
    ("conversations.index", _l("Conversations")),
    ("prompt.index", _l("Prompt")),
    ("review.index", _l("Review")),
    ("attention.index", _l("Needs attention")),
    ("skills.index", _l("Skills")),
)


def setting_named(variable: str) -> Markup:
    """How a person sets ``variable`` here: in the add-on, the option of its Configuration tab
    (``memory_llm_provider``); elsewhere the environment variable (``MEMORY_LLM_PROVIDER``)."""
    if settings().is_addon:
        code = Markup('<code translate="no">%s</code>') % variable.lower()
        message = _("the %(option)s option on the add-on's Configuration tab")
        return Markup(escape(message)) % {"option": code}  # noqa: S704 (escaped, values too)
    return Markup('<code translate="no">%s</code>') % variable


def template_globals() -> dict[str, Any]:
    """Data every page's base template uses: navigation, theme, store health, the user."""
    app = current_app
    return {
        "nav_items": [(e, label) for e, label in NAV_ITEMS if e in app.view_functions],
        "active_area": request.blueprint,
        "nav_pending": pending_count(),
        "nav_attention": stores().attention_count(g.get("view", EVERYONE)),
        "theme": settings().theme,
        "store_health": stores().health(),
        "set_aside": stores().set_aside(),
        "current_user_name": getattr(g, "user_name", None),
        "setting_named": setting_named,
    }


def init_app(app: Any) -> None:
    """Register the shared template data."""
    app.context_processor(template_globals)
