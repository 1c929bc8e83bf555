"""Needs attention: near-duplicates, contradictions, stale and hard-to-use memories, each with
a one-click fix (merge, keep one, rewrite, delete) and Dismiss."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, abort, request, url_for
from flask_babel import get_locale
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from markupsafe import Markup, escape
from werkzeug.wrappers import Response

from ...attention.findings import Finding
from ...attention.one_memory import expired_findings
from ...attention.pairs import Reason, ReasonValue
from ...attention.scanner import KINDS, MODEL_KINDS, AttentionReport, still_true
from ...stores import ConflictError, MemoryFullError, NotFoundError
from ...stores.memories import KEEP
from ..plumbing.context import actor, curator, quote, settings, stores
from ..plumbing.errors import describe_error
from ..plumbing.formatting import day_text, page_translations
from ..plumbing.htmx import redirect_or, render
from ..plumbing.messages import secret_kind
from ..plumbing.pagination import paginate
from .expiry import last_true_day, read_expiry, zone
from .i18n import format_number

bp = Blueprint("attention", __name__, url_prefix="/attention")

PAGE_SIZE = 30
FIRST_WAIT = 0.5  # seconds the first page waits for a scan before showing its progress
NEXT_WAIT = 0.15  # ... and a later page, before showing the last results meanwhile
AFTER_CHANGE_WAIT = 2.0  # after a fix, the scan of a small store is back well within this

KIND_LABELS = {
    "duplicate": _l("Near-duplicates"),
    "contradiction": _l("Contradictions"),
    "related": _l("Possibly related"),
    "stale": _l("Stale"),
    "hard": _l("Hard to use"),
    "secret": _l("Secrets"),
    "expired": _l("Expired"),
}

# The library's reasons (``REASON_TEXTS``, English) as the page's language says them; each
# value is put in by name, and what comes from the memories is marked translate="no".
REASONS = {
    "same_text": _l("Same text once case, width and 繁/简 are ignored."),
    "different_values": _l("Both about %(subject)s, with different values: %(left)s vs %(right)s."),
    "different_values_same_thing": _l(
        "Both about the same thing, with different values: %(left)s vs %(right)s."
    ),
    "yes_and_no": _l("One says yes and the other says no about the same thing."),
    "same_terms": _l("The same terms (%(terms)s) and values in other words."),
    "same_values": _l("The same values in other words."),
    "same_meaning": _l("The same fact in other words (alike in meaning)."),
    "model_same": _l("%(model)s reads these as the same fact."),
    "model_contradiction": _l("%(model)s reads these as contradicting each other."),
    "model_related": _l("%(model)s reads these as possibly related, but is not sure."),
    "different_days": _l("The same thing on other days."),
    "past_date": _l("Mentions %(date)s, which is past."),
    "expired_word": _l("Says “%(word)s” and was written on %(written)s."),
    "expired_at": _l("Stopped being true on %(date)s; it is left out of prompts."),
    "first_person": _l("Reads as the user's own sentence, not as a fact about the user."),
    "held_by_everyone": _l("Every person keeps this same fact: it could be the household's, once."),
    "too_long": _l(
        "%(chars)s characters long: a memory works best as one short fact (at most %(max)s)."
    ),
    "mostly_link": _l("Mostly a link: say what it is for, or keep it in a skill document."),
    "looks_like_code": _l(
        "Looks like code: describe the fact in words, or keep it in a skill document."
    ),
    "holds_secret": _l(
        "Holds a %(secret)s: “%(masked)s”. It goes into every prompt; keep only that there is "
        "one, or delete it."
    ),
}
# Values said in the interface's own words (numbers, dates); the rest comes from the memories.
_INTERFACE_VALUES = {"date", "written", "days", "threshold", "chars", "max"}


def _value(name: str, value: ReasonValue) -> Markup:
    if name == "secret":  # the kind of secret, in the page's words
        return escape(secret_kind(str(value)))
    if isinstance(value, int):
        text = format_number(value)
    elif isinstance(value, tuple):
        text = _list(value)
    elif isinstance(value, str):
        text = value
    else:
        text = day_text(value)
    if name in _INTERFACE_VALUES:
        return escape(text)
    return Markup('<span translate="no">{}</span>').format(text)


def _list(values: tuple[str, ...]) -> str:
    separator = "、" if str(get_locale()).startswith("zh") else ", "
    return separator.join(values)


def reason_html(reason: Reason) -> Markup:
    """Why a finding was flagged, in the page's language (the memories' words kept as they are).

    Every code of the library's ``REASON_TEXTS`` has its sentence here (a test checks it)."""
    values = {name: _value(name, value) for name, value in reason.values}
    if reason.code == "untouched":
        days = int(reason.value("days"))  # type: ignore[arg-type]
        message = page_translations().ngettext(
            "Nothing has changed it in %(num)s day (the threshold is %(threshold)s).",
            "Nothing has changed it in %(num)s days (the threshold is %(threshold)s).",
            days,
        )
        values["num"] = values.pop("days")
    else:
        message = str(REASONS[reason.code])
    return Markup(escape(message)) % values  # noqa: S704 (the message is escaped, values too)


@dataclass
class AttentionPage:
    """Everything the attention templates show, built in one place."""

    kind: str  # the tab shown: one of KINDS
    counts: dict[str, int]  # findings per kind, dismissed ones left out
    findings: list[Finding]  # this page of the tab's findings
    report: AttentionReport | None  # None while the first scan runs
    current: bool  # False while a newer version of the file is being scanned
    page: int = 1
    pages: int = 1
    total: int = 0
    notice: str | None = None
    notice_level: str = "ok"
    undo: dict[str, str] = field(default_factory=dict)  # hidden fields of the notice's Undo
    undo_action: str | None = None  # endpoint the Undo posts to
    focus: str | None = None
    stale_days: int = 180  # MEMORY_STALE_DAYS, said in the empty Stale tab
    checker: str | None = None  # the LLM that checks the pairs, when one is configured

    @property
    def labels(self) -> dict[str, str]:
        """The tabs: every kind, but the LLM's own without an LLM configured."""
        return {
            kind: str(label)
            for kind, label in KIND_LABELS.items()
            if self.checker is not None or kind not in MODEL_KINDS
        }

    @property
    def poll_url(self) -> str:
        """Where the panel asks again while a scan runs: the same tab and page, and the notice
        with its Undo, so the refresh does not take them away (a merge's Undo stayed on screen
        for about a second when the rescan was slower than that)."""
        args: dict[str, Any] = {"kind": self.kind, "page": self.page}
        if self.notice and self.notice_level == "ok":
            args.update(_notice_args(self.notice, self.undo, self.undo_action))
        return url_for("attention.index", **args)


_CHANGED_SINCE = _l(
    "Nothing was changed: one of these memories was changed elsewhere since the page showed "
    "it. Here they are as they are now."
)


def _kind(counts: dict[str, int]) -> str:
    asked = request.values.get("kind", "")
    if asked in KINDS:
        return asked
    return next((kind for kind in KINDS if counts.get(kind)), KINDS[0])


def build(wait: float | None = None, **extra: Any) -> AttentionPage:
    """The page for the request's tab, from the freshest scan ready within ``wait`` seconds
    (by default half a second for the first scan, less when there are results to show)."""
    scanner = stores().attention
    if wait is None:
        wait = NEXT_WAIT if scanner.has_results() else FIRST_WAIT
    report, current = scanner.report(wait=wait)
    groups: dict[str, list[Finding]] = {kind: [] for kind in KINDS}
    if report is not None:
        dismissed = stores().dismissals.keys()
        groups = (
            report.visible(dismissed) if current else still_true(scanner.store, report, dismissed)
        )
    # Expired memories are judged now, not by the background scan: an expiry passes at its
    # own instant. They are never dismissed; a person deletes or extends them.
    expired = expired_findings(scanner.store.get_all(), datetime.now(UTC), zone())
    groups = curator().findings_in_view({**groups, "expired": expired})
    counts = {kind: len(found) for kind, found in groups.items()}
    kind = _kind(counts)
    if kind in MODEL_KINDS and scanner.checker is None:  # (a link kept from when one was)
        kind = KINDS[0]
    shown = paginate(groups[kind], request.values.get("page", "1"), PAGE_SIZE)
    return AttentionPage(
        kind=kind,
        counts=counts,
        findings=shown.items,
        report=report,
        current=current,
        page=shown.number,
        pages=shown.pages,
        total=shown.total,
        stale_days=settings().memory_stale_days,
        checker=scanner.checker.name if scanner.checker is not None else None,
        **extra,
    )


def _after_change_wait() -> float:
    """How long the answer to a fix waits for the rescan: long enough for a small store."""
    report, _ = stores().attention.report(wait=0)
    quick = report is not None and report.seconds < AFTER_CHANGE_WAIT / 2
    return AFTER_CHANGE_WAIT if quick else NEXT_WAIT


def _panel(view: AttentionPage, status: int = 200, announce: str | None = None) -> Response:
    """The tab panel for htmx, the whole page otherwise."""
    return render(
        "attention/_panel.html",
        "attention/page.html",
        view=view,
        status=status,
        announce=announce,
        title=_("Needs attention"),
        # the navigation's count follows the findings a fix or a rescan leaves
        partial_context={"oob_badge": True},
    )


def _notice_args(
    message: str, undo: dict[str, str] | None, undo_action: str | None
) -> dict[str, str]:
    """A notice and its Undo as the query arguments ``index`` reads them back from."""
    args = {"notice": message}
    if undo_action and undo:
        args.update(undo_action=undo_action, **{f"u_{k}": v for k, v in undo.items()})
    return args


def _fixed(
    message: str, *, undo: dict[str, str] | None = None, undo_action: str | None = None
) -> Response:
    """After a fix: the refreshed panel with the message (and its Undo), or a redirect back
    that shows the same (a plain form post)."""
    args: dict[str, Any] = {"kind": request.values.get("kind", "")}
    args.update(_notice_args(message, undo, undo_action))
    return redirect_or(
        url_for("attention.index", **args),
        lambda: _panel(
            build(
                _after_change_wait(),
                notice=message,
                undo=undo or {},
                undo_action=undo_action,
                focus="attention-notice",
            ),
            announce=message,
        ),
    )


def _refused(message: str, status: int) -> Response:
    return _panel(
        build(_after_change_wait(), notice=message, notice_level="error", focus="attention-notice"),
        status,
        announce=message,
    )


UNDO_ACTIONS = (
    "attention.undo_merge",
    "attention.undo_rewrite",
    "attention.undismiss",
    "attention.undelete",
    "attention.undo_extend",
)


@bp.get("/")
def index() -> Response:
    """The findings of one kind (a tab per kind), newest scan first."""
    extra: dict[str, Any] = {}
    if request.args.get("notice"):
        extra["notice"] = request.args["notice"][:500]
        action = request.args.get("undo_action")
        if action in UNDO_ACTIONS:
            extra["undo_action"] = action
            extra["undo"] = {
                k[2:]: v[:200] for k, v in request.args.items() if k.startswith("u_") and v
            }
    return _panel(build(**extra))


@bp.post("/merge")
def merge() -> Response:
    """Keep one memory (with the chosen or edited text) and delete the other."""
    keep, drop = request.form.get("keep", ""), request.form.get("drop", "")
    content = request.form.get("content", "")
    if not keep or not drop:
        abort(400)
    try:
        merged = curator().merge(
            keep,
            drop,
            content=content,
            expected=_versions([keep, drop]),
            confirm_secret=bool(request.form.get("confirm_secret")),
            actor=actor(),
        )
    except NotFoundError:
        return _refused(_("Nothing was changed: one of the memories was deleted elsewhere."), 409)
    except ConflictError:
        return _refused(str(_CHANGED_SINCE), 409)
    except MemoryFullError as exc:
        return _refused(_("Nothing was changed: %(reason)s", reason=describe_error(exc)), 409)
    except ValueError as exc:
        return _refused(_("Nothing was changed: %(reason)s", reason=describe_error(exc)), 422)
    undo = {"dropped": merged.dropped_id, "hid": merged.update_hid or "", "kept": keep}
    return _fixed(
        _("Kept “%(text)s”; the other memory was deleted.", text=merged.kept.content[:80]),
        undo=undo,
        undo_action="attention.undo_merge",
    )


@bp.post("/undo-merge")
def undo_merge() -> Response:
    """Bring back the deleted memory and the kept one's earlier text."""
    dropped = request.form.get("dropped", "")
    if not dropped:
        abort(400)
    return _undone(
        lambda: curator().undo_merge(
            dropped, update_hid=request.form.get("hid") or None, actor=actor()
        ),
        _("There is nothing to undo: the memories were restored already."),
        _("Undone: both memories are back as they were."),
    )


def _undone(undo: Callable[[], object], gone: str, done: str) -> Response:
    """Run an Undo: ``gone`` when there is nothing left to undo, ``done`` once it is undone."""
    try:
        undo()
    except KeyError:
        return _refused(gone, 409)
    except MemoryFullError as exc:
        return _refused(_("Could not undo: %(reason)s", reason=describe_error(exc)), 409)
    return _fixed(done)


@bp.post("/rewrite")
def rewrite() -> Response:
    """Replace a memory's text with the suggested one (or an edit), if nobody changed it."""
    memory_id, content = request.form.get("id", ""), request.form.get("content", "")
    memory = stores().memories.get(memory_id)
    if memory is None:
        return _refused(_("Nothing was changed: that memory was deleted elsewhere."), 409)
    version = _version(memory_id)
    if isinstance(version, Response):
        return version
    try:
        curator().revise(
            memory_id,
            content=content,
            expected=version,
            expires_at=KEEP,  # a rewrite of its wording: the words were said before, not now
            actor=actor(),
        )
    except ConflictError:
        return _refused(_("Nothing was changed: someone else edited that memory meanwhile."), 409)
    except (MemoryFullError, ValueError) as exc:
        return _refused(_("Nothing was changed: %(reason)s", reason=describe_error(exc)), 422)
    rewritten = stores().memories.get(memory_id)
    text, ends = quote(rewritten.content if rewritten else content.strip())
    message = (
        _("Rewritten as %(text)s", text=text) if ends else _("Rewritten as %(text)s.", text=text)
    )
    change = curator().undoable_edit(memory_id)  # (none for a rewrite that took a secret out)
    return _fixed(
        message,
        undo={"hid": change} if change else None,
        undo_action="attention.undo_rewrite" if change else None,
    )


@bp.post("/undo-rewrite")
def undo_rewrite() -> Response:
    """Put back what a memory said before a Rewrite, unless it was edited again since."""
    try:
        undone = curator().undo_rewrite(request.form.get("hid", ""), actor=actor())
    except ConflictError:
        return _refused(
            _("Could not undo: the memory was edited again since; edit it on the Memories page."),
            409,
        )
    except NotFoundError:
        return _refused(_("Could not undo: that memory was deleted elsewhere."), 409)
    except KeyError:  # the form names no edit
        abort(400)
    except MemoryFullError as exc:
        return _refused(_("Could not undo: %(reason)s", reason=describe_error(exc)), 409)
    if undone is None:
        return _refused(_("There is nothing to undo: the memory reads as before already."), 409)
    return _fixed(_("Undone: the memory reads as before."))


@bp.post("/household")
def household() -> Response:
    """Move a fact every person keeps to the household: the first copy becomes the
    household's, the others are deleted (each restorable from Recently deleted)."""
    ids = request.form.getlist("id")
    if len(ids) < 2:
        return _refused(_("Nothing was changed: one of the memories was deleted elsewhere."), 409)
    try:
        moved = curator().move_to_household(ids, expected=_versions(ids), actor=actor())
    except NotFoundError:
        return _refused(_("Nothing was changed: one of the memories was deleted elsewhere."), 409)
    except ConflictError:
        return _refused(str(_CHANGED_SINCE), 409)
    except ValueError as exc:
        return _refused(_("Nothing was changed: %(reason)s", reason=describe_error(exc)), 422)
    return _fixed(_("“%(text)s” is the household's now, once.", text=moved.content[:80]))


def _version(memory_id: str) -> str | Response:
    """The version of the memory as the page showed it (the ``version`` field), or the
    refusal when the form did not send it (a check skipped is a change nobody saw)."""
    version = request.form.get("version", "")
    try:
        curator().require_versions([memory_id], expected={memory_id: version})
    except ValueError as exc:
        return _refused(describe_error(exc), 422)
    return version


def _versions(ids: list[str]) -> dict[str, str]:
    """The version of each memory as the page showed it (``version-<id>`` fields)."""
    return {
        i: request.form.get(f"version-{i}", "") for i in ids if request.form.get(f"version-{i}")
    }


@bp.post("/delete")
def delete() -> Response:
    """Forget one memory (a stale one, say); the answer offers Undo."""
    memory_id = request.form.get("id", "")
    if stores().memories.get(memory_id) is None:
        return _refused(_("Nothing was changed: that memory was deleted elsewhere."), 409)
    version = _version(memory_id)
    if isinstance(version, Response):
        return version
    try:
        memory = curator().forget(memory_id, expected=version, actor=actor()).memory
    except NotFoundError:
        memory = None
    except ConflictError:
        return _refused(_("Nothing was changed: someone else edited that memory meanwhile."), 409)
    if memory is None:
        return _refused(_("Nothing was changed: that memory was deleted elsewhere."), 409)
    text, ends = quote(memory.content)
    return _fixed(
        _("Deleted %(text)s", text=text) if ends else _("Deleted %(text)s.", text=text),
        undo={"id": memory_id},
        undo_action="attention.undelete",
    )


@bp.post("/undelete")
def undelete() -> Response:
    """Undo a delete made here."""
    return _undone(
        lambda: curator().restore(request.form.get("id", ""), actor=actor()),
        _("There is nothing to undo: the memory is back already."),
        _("Undone: the memory is back."),
    )


@bp.post("/extend")
def extend() -> Response:
    """Give an expired memory a new expiry (the end of the picked day) or none (Never)."""
    memory_id = request.form.get("id", "")
    store = stores().memories
    memory = store.get(memory_id)
    if memory is None:
        return _refused(_("Nothing was changed: that memory was deleted elsewhere."), 409)
    expires, problem = read_expiry(request.form)
    if problem:
        return _refused(problem, 422)
    version = _version(memory_id)
    if isinstance(version, Response):
        return version
    try:
        saved = curator().set_expiry(
            memory_id,
            expires=expires,
            expected=version,
            actor=actor(),
        )
    except ConflictError:
        return _refused(_("Nothing was changed: someone else edited that memory meanwhile."), 409)
    if saved is None:
        return _refused(_("Nothing was changed: that memory was deleted elsewhere."), 409)
    text, _ends = quote(saved.content)
    day = last_true_day(saved)
    if day is None:
        message = _("%(text)s never expires now.", text=text)
    else:
        message = _("%(text)s is true until %(day)s.", text=text, day=day_text(day))
    change = curator().undoable_edit(memory_id)
    return _fixed(
        message,
        undo={"hid": change} if change else None,
        undo_action="attention.undo_extend" if change else None,
    )


@bp.post("/undo-extend")
def undo_extend() -> Response:
    """Put back the expiry a memory had before Extend (so it is expired again)."""
    try:
        curator().undo_extend(request.form.get("hid", ""), actor=actor())
    except NotFoundError:
        return _refused(_("Could not undo: that memory was deleted elsewhere."), 409)
    except KeyError:  # the form names no edit
        abort(400)
    except ConflictError:
        return _refused(
            _("Could not undo: the memory was edited again since; edit it on the Memories page."),
            409,
        )
    return _fixed(_("Undone: the memory has its earlier expiry again."))


@bp.post("/dismiss")
def dismiss() -> Response:
    """Hide a finding for good (until the memories it names change)."""
    key = request.form.get("key", "")
    try:
        curator().dismiss_finding(key, actor=actor())
    except ValueError as exc:
        return _refused(describe_error(exc), 422)
    return _fixed(
        _("Dismissed: it will not be flagged again."),
        undo={"key": key},
        undo_action="attention.undismiss",
    )


@bp.post("/undismiss")
def undismiss() -> Response:
    """Undo a Dismiss."""
    try:
        curator().restore_finding(request.form.get("key", ""))
    except ValueError as exc:
        return _refused(describe_error(exc), 422)
    return _fixed(_("Undone: the finding is back."))


bp.add_app_template_filter(reason_html, "reason")
