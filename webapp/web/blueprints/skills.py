"""Skills: browse, view, edit, create, deprecate / restore and import skill documents."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import nh3
from flask import Blueprint, abort, render_template, request, url_for
from flask_babel import gettext as _
from markdown_it import MarkdownIt
from markupsafe import Markup
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wrappers import Response

from ...stores.skills import (
    ImportPlan,
    InvalidSkillDocumentError,
    SkillDocument,
    SkillDocumentConflictError,
    SkillDocumentProblem,
    SkillImportError,
    StagedImportGoneError,
    UnsafeNameError,
    description_of,
    edited_record,
    name_problems,
    new_record,
    text_problems,
)
from ..plumbing.context import actor, curator, stores
from ..plumbing.htmx import redirect_or, render, see_other
from ..plumbing.messages import describe

bp = Blueprint("skills", __name__, url_prefix="/skills")

TABS = ("live", "deprecated")
# What sanitised Markdown may keep: text structure and http(s) links; no images, no raw HTML.
ALLOWED_TAGS = {
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "ul",
    "ol",
    "li",
    "strong",
    "em",
    "code",
    "pre",
    "blockquote",
    "a",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "hr",
    "br",
    "del",
    "s",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"align"}, "td": {"align"}}


# ----------------------------------------------------------------- rendering helpers
def _markdown() -> MarkdownIt:
    # html=False: raw HTML in a skill is shown as text; images become their alt text.
    return MarkdownIt("commonmark", {"html": False}).enable("table").disable("image")


def _only_web_links(tag: str, attr: str, value: str) -> str | None:
    if tag == "a" and attr == "href" and not value.lower().startswith(("http://", "https://")):
        return None
    return value


def render_markdown(text: str) -> str:
    """Markdown → HTML that is safe to show: markdown-it without HTML, then nh3's allow-list."""
    html = _markdown().render(text or "")
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        attribute_filter=_only_web_links,
        url_schemes={"http", "https"},
        link_rel="noopener noreferrer nofollow",
    )


@bp.app_template_filter("skill_markdown")
def skill_markdown(text: str) -> Markup:
    """Template filter: sanitised Markdown (the only place this blueprint marks HTML safe)."""
    return Markup(render_markdown(text))  # noqa: S704 - nh3 allow-list output


# ----------------------------------------------------------------- page data
@dataclass
class SkillGroup:
    """One skill with its documents: the skill document first, then its references."""

    key: str  # kebab skill name
    documents: list[SkillDocument]

    @property
    def skill_document(self) -> SkillDocument | None:
        return next((d for d in self.documents if d.type == "skill"), None)

    @property
    def title(self) -> str:
        doc = self.skill_document
        return doc.title if doc else self.documents[0].skill

    @property
    def description(self) -> str:
        return next((d.skill_description for d in self.documents if d.skill_description), "")


@dataclass
class SkillsPage:
    """Everything the skills list shows, built in one place."""

    tab: str  # "live" or "deprecated"
    groups: list[SkillGroup]  # documents of that tab grouped by skill
    problems: list[SkillDocumentProblem]  # invalid files and what is wrong
    live_count: int  # live documents (skills and references)
    deprecated_count: int
    notice: str | None = None  # outcome message above the list
    notice_level: str = "ok"
    import_error: str | None = None  # shown next to the file field
    focus: str | None = None  # element id focused after the swap
    skill_count: int = 0  # distinct live skills (what the Skills tab counts)
    plan: ImportPlan | None = None  # an import that would overwrite, waiting for confirmation
    plan_token: str = ""  # names the staged upload the confirmation applies
    plan_file: str = ""  # the uploaded file's name, as shown


def _group(documents: list[SkillDocument]) -> list[SkillGroup]:
    groups: dict[str, SkillGroup] = {}
    for doc in documents:
        groups.setdefault(doc.key[0], SkillGroup(doc.key[0], [])).documents.append(doc)
    return list(groups.values())


def _tab() -> str:
    tab = request.values.get("tab", "live")
    return tab if tab in TABS else "live"


def _build(tab: str, **extra: Any) -> SkillsPage:
    store = stores().skills
    everything = store.list(include_deprecated=True)
    live = [d for d in everything if not d.deprecated]
    dead = [d for d in everything if d.deprecated]
    return SkillsPage(
        tab=tab,
        groups=_group(dead if tab == "deprecated" else live),
        problems=store.problems(),
        live_count=len(live),
        skill_count=len({d.key[0] for d in live}),
        deprecated_count=len(dead),
        **extra,
    )


def _panel(view: SkillsPage, status: int = 200, announce: str | None = None) -> Response:
    """The list panel for htmx, the whole page otherwise."""
    return render(
        "skills/_panel.html",
        "skills/page.html",
        view=view,
        status=status,
        announce=announce,
        title=_("Skills"),
    )


def get_document_or_404(doc_id: str) -> SkillDocument:
    """The live or deprecated document with that id, or a 404."""
    doc = stores().skills.get(doc_id)
    if doc is None:
        abort(404)
    return doc


# ----------------------------------------------------------------- list, deprecate, restore
@bp.get("/")
def index() -> Response:
    """Skill documents grouped by skill (or the Deprecated tab) and the invalid files."""
    return _panel(_build(_tab()))


@bp.post("/<doc_id>/deprecate")
def deprecate(doc_id: str) -> Response:
    """Move the document to ``.deprecated/``; it stops reaching the assistant."""
    doc = get_document_or_404(doc_id)
    curator().deprecate_skill(doc.id, actor=actor())
    message = _("Deprecated “%(title)s”. Restore it from the Deprecated tab.", title=doc.title)
    return _after_move(doc, "live", message)


@bp.post("/<doc_id>/restore")
def restore(doc_id: str) -> Response:
    """Move a deprecated document back; refused when a live one has the same skill/reference."""
    doc = get_document_or_404(doc_id)
    try:
        curator().restore_skill(doc.id, actor=actor())
    except SkillDocumentConflictError as exc:
        return _panel(
            _build(
                "deprecated",
                notice=describe(exc),
                notice_level="warning",
                focus="skills-notice",
            ),
            409,
        )
    return _after_move(doc, "deprecated", _("Restored “%(title)s”.", title=doc.title))


def _after_move(doc: SkillDocument, tab: str, message: str) -> Response:
    if request.form.get("next") == "document":
        target = url_for("skills.document", doc_id=doc.id)
    else:
        target = url_for("skills.index", tab=tab)
    return redirect_or(
        target,
        lambda: _panel(_build(tab, notice=message, focus="skills-notice"), announce=message),
    )


# ----------------------------------------------------------------- import
@bp.post("/import")
def import_zip() -> Response:
    """Import an uploaded .zip of an Agent Skills folder (SKILL.md + references/)."""
    try:
        upload = request.files.get("archive")
    except RequestEntityTooLarge:
        return _import_failed(_("The upload is too large (at most 16 MB)."), 413)
    if upload is None or not upload.filename:
        return _import_failed(_("Choose a .zip file of a skill folder to import."))
    if not upload.filename.lower().endswith(".zip"):
        return _import_failed(
            _(
                "“%(name)s” is not a .zip file. Zip the skill folder "
                "(the one holding SKILL.md) and upload that.",
                name=upload.filename,
            )
        )
    try:
        staged = stores().skills.preview_import_zip(upload.stream.read())
    except _IMPORT_ERRORS as exc:
        return _import_failed(_nothing_imported(exc))
    if not staged.plan.overwrites:  # only new documents (or none changed): nothing to lose
        return _apply_import(staged.token)
    view = _build("live", plan=staged.plan, plan_token=staged.token, plan_file=upload.filename)
    view.focus = "import-preview-heading"
    return _panel(view, announce=_("Preview of the import: nothing is saved yet."))


@bp.post("/import/confirm")
def import_confirm() -> Response:
    """Apply an import after its preview (the skills store kept the upload under a token)."""
    return _apply_import(request.form.get("token", ""))


_IMPORT_ERRORS = (
    SkillImportError,
    UnsafeNameError,
    InvalidSkillDocumentError,
    SkillDocumentConflictError,
)


def _apply_import(token: str) -> Response:
    try:
        report = curator().import_staged_skills(token, actor=actor())
    except StagedImportGoneError:
        return _import_failed(
            _("That import preview has expired or was already applied; choose the file again.")
        )
    except _IMPORT_ERRORS as exc:
        return _import_failed(_nothing_imported(exc))
    docs = report.added + report.updated + report.unchanged
    name = docs[0].skill if docs else _("the skill")
    message = _(
        "Imported %(name)s: %(added)s added, %(updated)s updated, %(unchanged)s unchanged",
        name=name,
        added=len(report.added),
        updated=len(report.updated),
        unchanged=len(report.unchanged),
    )
    if report.not_in_source:
        message += _("; %(num)s stored but no longer in the source", num=len(report.not_in_source))
    message += "."
    if report.updated:
        message += " " + _("The replaced versions are kept in each document's history.")
    return _panel(_build("live", notice=message, focus="skills-notice"), announce=message)


def _nothing_imported(exc: Exception) -> str:
    """The import failure: "Nothing was imported: …" with the library's reason."""
    return _("Nothing was imported: %(reason)s", reason=describe(exc))


def _import_failed(message: str, status: int = 422) -> Response:
    return _panel(_build("live", import_error=message, focus="skill-zip"), status)


@bp.errorhandler(RequestEntityTooLarge)
def _too_large(exc: RequestEntityTooLarge) -> Response:
    return _import_failed(_("The upload is too large (at most 16 MB)."), 413)


# ----------------------------------------------------------------- one document
@bp.get("/<doc_id>")
def document(doc_id: str) -> str:
    """One document: its details and its content, Markdown rendered through the sanitiser."""
    doc = get_document_or_404(doc_id)
    return render_template("skills/document_page.html", doc=doc, page_title=doc.title)


@dataclass
class DocumentForm:
    """The create / edit form: the values typed and the message per field."""

    values: dict[str, str]
    errors: dict[str, str] = field(default_factory=dict)
    doc: SkillDocument | None = None  # the document being edited (None when creating)
    current: SkillDocument | None = None  # what is stored now, after a "changed elsewhere"


def _form_response(form: DocumentForm, status: int = 200) -> Response:
    """The form (its partial for htmx) with values and messages kept."""
    title = _("Edit %(title)s", title=form.doc.title) if form.doc else _("New skill document")
    return render(
        "skills/_form.html", "skills/form_page.html", form=form, status=status, title=title
    )


def _saved(doc: SkillDocument, message: str) -> Response:
    """After a save: to the document's page (HX-Redirect for htmx, 303 otherwise)."""
    return redirect_or(url_for("skills.document", doc_id=doc.id, saved=1), announce=message)


def _form_values(*names: str) -> dict[str, str]:
    return {name: request.form.get(name, "").replace("\r\n", "\n") for name in names}


@bp.get("/new")
def new() -> Response:
    """The form for a new skill or reference document."""
    kind = request.args.get("type", "skill")
    values = {
        "type": kind if kind in ("skill", "reference") else "skill",
        "skill": request.args.get("skill", ""),
        "reference": "",
        "description": "",
        "content": "",
    }
    return _form_response(DocumentForm(values))


@bp.post("/new")
def create() -> Response:
    """Create a skill or reference document."""
    values = _form_values("type", "skill", "reference", "description", "content")
    kind, skill, reference = values["type"], values["skill"], values["reference"]
    form = DocumentForm(values)
    form.errors.update(_translated_name_problems(kind, skill, reference))
    form.errors.update(_translated_text_problems(values["content"], values["description"], kind))
    if form.errors:
        return _form_response(form, 422)
    record = new_record(kind, skill, reference, values["description"], values["content"])
    return _save_or_explain(record, form, _("Created."))


def _save_or_explain(record: dict[str, Any], form: DocumentForm, message: str) -> Response:
    try:
        doc = curator().save_skill(record, actor=actor())
    except SkillDocumentConflictError as exc:
        form.errors["form"] = describe(exc)
        return _form_response(form, 409)
    except UnsafeNameError as exc:
        form.errors["skill"] = describe(exc)
        return _form_response(form, 422)
    except InvalidSkillDocumentError as exc:
        form.errors["form"] = describe(exc)
        return _form_response(form, 422)
    return _saved(doc, message)


@bp.get("/<doc_id>/edit")
def edit(doc_id: str) -> Response:
    """The edit form of a document: its content and description."""
    doc = get_document_or_404(doc_id)
    values = {
        "content": doc.content,
        "description": description_of(doc),
        "version": str(doc.updated_at),
    }
    return _form_response(DocumentForm(values, doc=doc))


@bp.post("/<doc_id>/edit")
def update(doc_id: str) -> Response:
    """Save an edited document; refused with both versions when it changed elsewhere (409)."""
    doc = get_document_or_404(doc_id)
    values = _form_values("content", "description", "version")
    form = DocumentForm(values, doc=doc)
    form.errors.update(
        _translated_text_problems(values["content"], values["description"], doc.type)
    )
    if form.errors:
        return _form_response(form, 422)
    if values["version"] and values["version"] != str(doc.updated_at):
        form.errors["form"] = _(
            "This document was changed elsewhere since you opened it; nothing "
            "was overwritten. Its current text is shown below: copy what you "
            "need, then save again."
        )
        form.current = doc
        form.values["version"] = str(doc.updated_at)
        return _form_response(form, 409)
    record = edited_record(doc, values["content"], values["description"])
    return _save_or_explain(record, form, _("Saved."))


# ----------------------------------------------------------------- history
@bp.get("/<doc_id>/history")
def history(doc_id: str) -> str:
    """Every change of a document, newest first; each replaced version can be restored."""
    doc = get_document_or_404(doc_id)
    entries = list(reversed(stores().skills.history(doc.id)))
    restored = request.args.get("restored", "")
    return render_template(
        "skills/history_page.html",
        doc=doc,
        entries=entries,
        restored=restored,
        page_title=_("History of %(title)s", title=doc.title),
    )


@bp.post("/<doc_id>/history/<hid>/restore")
def restore_version(doc_id: str, hid: str) -> Response:
    """Bring back the version a change replaced; it becomes the current one (itself undoable)."""
    doc = get_document_or_404(doc_id)
    entry = next((e for e in stores().skills.history(doc.id) if e.get("hid") == hid), None)
    if entry is None:
        abort(404)
    try:
        curator().restore_skill_version(hid, actor=actor())
    except KeyError:
        abort(404)
    return see_other(url_for("skills.history", doc_id=doc.id, restored=hid))


# ----------------------------------------------------------------- form messages
# The library's drafts check the fields and give a Problem per refused field (its English
# words, for the CLI and the MCP server, with a code); the page says it in its language.
def _translated_text_problems(content: str, description: str, kind: str) -> dict[str, str]:
    problems = text_problems(content, description, kind=kind)
    return {field: describe(problem) for field, problem in problems.items()}


def _translated_name_problems(kind: str, skill: str, reference: str) -> dict[str, str]:
    problems = name_problems(kind, skill, reference)
    return {field: describe(problem) for field, problem in problems.items()}
