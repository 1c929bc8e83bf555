"""Memories: browse, search, add, edit, delete (with undo), history, export and import."""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, NamedTuple
from urllib.parse import quote

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import get_locale, ngettext
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from markupsafe import Markup, escape
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wrappers import Response as BaseResponse

from ...curator import SimilarMemoryError
from ...curator.errors import ForgottenFactError
from ...curator.people import query_person
from ...sensitive.secrets import SecretFinding, find_secrets, mask_secrets
from ...stores import (
    CATEGORIES,
    ConflictError,
    DuplicateMemoryError,
    Memory,
    MemoryFullError,
    NotFoundError,
    loads_bounded,
)
from ...stores.memories import KEEP
from ..plumbing.context import actor, curator, note_secret_refusal, quoted_sentence, stores
from ..plumbing.errors import banner_response
from ..plumbing.formatting import category_label
from ..plumbing.htmx import redirect_or, render
from ..plumbing.memory_listing import (
    EXPIRY_FILTERS,
    PAGE_SIZE,
    SORTS,
    Listing,
    build_listing,
    date_column,
    highlight,
)
from ..plumbing.messages import describe, secret_kind
from .expiry import last_true_day
from .expiry_hint import EXPIRY_FIELDS, chosen_expiry
from .people import visible_owners, visible_people, visible_person, you

bp = Blueprint("memories", __name__, url_prefix="/memories")

MAX_IMPORT_BYTES = 5 * 1024 * 1024
MEMORIES_CHANGED = "memories-changed"  # the list and the meter reload themselves
USAGE_CHANGED = "memories-usage-changed"  # only the meter reloads (a row changed in place)


class ImportProblem(ValueError):
    """An import file that cannot be used; the message says why."""


def full_message(exc: MemoryFullError) -> str:
    """What the page says when the store's caps refuse a change (``messages.describe``)."""
    return describe(exc)


def cannot_import(exc: ValueError) -> str:
    """The import's refusal of a file the library finds unusable."""
    return _("The file cannot be imported: %(problem)s", problem=describe(exc))


@bp.app_template_filter("highlight")
def _highlight_filter(text: str, query: str) -> Markup:
    return highlight(text, query)


_ID_SLOT = "__memory_id__"
_PATH_SAFE = "!$&'()*+,/:;=@"  # what Werkzeug's URL converters leave unquoted


class RowLinks(NamedTuple):
    edit: str
    history: str
    delete: str


@bp.app_template_global("memory_links")
def memory_links(memory_id: str) -> RowLinks:
    """The URLs a row of the list links to."""
    return RowLinks(
        memory_url("memories.edit", memory_id),
        memory_url("provenance.history", memory_id),
        memory_url("memories.delete", memory_id),
    )


CSRF_SLOT = f"csrf-{secrets.token_hex(16)}"  # stands for the page's token in cached rows
MAX_CACHED_ROWS = 5000  # per file version


@bp.app_template_global("row_date_column")
def row_date_column() -> str:
    """The date a row drawn on its own shows: the one the list it sits in is sorted by (the
    row's requests carry the list's filters)."""
    return date_column(request.values.get("sort"))


@bp.app_template_global("memory_rows")
def memory_rows(memories: list[Memory], query: str, csrf: str, dated: str) -> Markup:
    """The rows of the list, each rendered once per version of the memory and conversation
    files, search text, date shown (``dated``), ingress prefix and language (a row shows
    nothing else); the CSRF token goes in per page."""
    cache: dict[tuple[str, str, str, str, str, Any, Any, bool], str] = stores().memories.cached(
        "web.row_html", dict
    )
    mine = you()
    # A row says whose it is ("You" for the viewer's own): per viewer and people file version.
    viewer = (mine.id if mine is not None else None, stores().people.signature())
    module = current_app.jinja_env.get_template("memories/_row_macro.html").module
    macro = module.memory_row  # type: ignore[attr-defined]  # a macro of the template
    prefix, language = request.script_root, str(get_locale())
    # A row links to its conversation only while that thread exists: rows rendered for one
    # version of the conversations file (None while there is none) are not reused for the next.
    threads = stores().conversations.signature()
    out = []
    now = datetime.now(UTC)
    for memory in memories:
        # whether it has expired is part of the row (it changes with time, not with the file)
        key = (memory.id, query, dated, prefix, language, threads, viewer, memory.expired(now))
        html = cache.get(key)
        if html is None:
            if len(cache) >= MAX_CACHED_ROWS:
                cache.clear()
            html = cache[key] = str(macro(memory, query, False, CSRF_SLOT, dated))
        out.append(html)
    return Markup("".join(out).replace(CSRF_SLOT, str(escape(csrf))))


@bp.app_template_global("memory_url")
def memory_url(endpoint: str, memory_id: str) -> str:
    """``url_for(endpoint, memory_id=memory_id)``, with the URL around the id built once per
    request and endpoint (a page of 50 rows links each row six times)."""
    cache: dict[str, tuple[str, str]] = g.setdefault("memory_urls", {})
    parts = cache.get(endpoint)
    if parts is None:
        head, _slot, tail = url_for(endpoint, memory_id=_ID_SLOT).partition(_ID_SLOT)
        parts = cache[endpoint] = (head, tail)
    return parts[0] + quote(str(memory_id), safe=_PATH_SAFE) + parts[1]


@bp.app_template_filter("quoted")
def _quoted_filter(text: str) -> str:
    return quoted_sentence(text)


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


# ------------------------------------------------------------------ the list
@bp.get("/")
def index() -> BaseResponse:
    """The list (or, for htmx, only its rows partial) with the capacity meter."""
    return render(
        "memories/_rows.html",
        "memories/page.html",
        partial_context=lambda: {"listing": current_listing()},
        page_context=page_context,
    )


@bp.get("/summary")
def summary() -> str:
    """The "Showing a–b of n" line alone (it reloads itself when a row is deleted or restored)."""
    return render_template("memories/_summary.html", listing=current_listing())


@bp.get("/meter")
def meter() -> str:
    """The capacity meter alone (it reloads itself after changes)."""
    return render_template("memories/_meter.html", usage=stores().memories.usage())


@bp.get("/whose-options")
def whose_options() -> str:
    """The Whose filter's choices with their counts alone (they reload after every change)."""
    store = stores().memories
    chosen = SimpleNamespace(whose=(request.args.get("whose") or "").strip()[:100])
    return render_template(
        "memories/_whose_options.html",
        listing=chosen,
        usage=store.usage(),
        owners=visible_owners(),
        people=visible_people(),
    )


# ------------------------------------------------------------------ add
def checked_form() -> tuple[str, str, dict[str, str]]:
    """Content and category from the form, with the library's message per refused field; a
    text holding a secret is refused unless the form's "Keep it anyway" box is ticked, and
    ``g.secret_refused`` tells the templates to offer that box."""
    form = request.form
    content, category, errors = stores().memories.check_input(
        form.get("content", ""),
        form.get("category") or "general",
        confirm_secret=bool(form.get("confirm_secret")),
    )
    problem = errors.get("content")
    note_secret_refusal(problem)
    return content, category, {field: describe(problem) for field, problem in errors.items()}


@bp.app_template_global("secret_rewrite")
def secret_rewrite() -> str | None:
    """The text without its secret that the refusal suggests (None when none was refused)."""
    rewrite = g.get("secret_rewrite")
    return rewrite if isinstance(rewrite, str) else None


@bp.app_template_global("secret_refused")
def secret_refused() -> bool:
    """True when the form was refused because its text holds a secret (offer "Keep it anyway")."""
    return bool(g.get("secret_refused"))


@bp.app_template_filter("secret_kind")
def _secret_kind_filter(kind: str) -> str:
    return secret_kind(kind)


@bp.app_template_filter("masked")
def _masked_filter(text: str) -> str:
    return mask_secrets(text)


@bp.app_template_global("secret_of")
def secret_of(text: str) -> SecretFinding | None:
    """The secrets ``text`` holds (``webapp.sensitive.secrets``), or None."""
    return find_secrets(text)


@bp.post("/")
def add() -> BaseResponse:
    """Remember a new fact; errors are shown next to the field."""
    store = stores().memories
    content, category, errors = checked_form()
    form = {"content": request.form.get("content", ""), "category": category}
    status = 422
    duplicate = None  # the memory that already says it (the message links to it)
    similar = False  # it says it in other words: "Add anyway" is offered
    person, person_error = chosen_person()
    form["person"] = person or ""
    if person_error:
        errors["person"] = person_error
    if not errors:
        try:
            expires = chosen_expiry(request.form)
            memory = curator().remember(
                content,
                category=category,
                person=person,
                expires_at=expires if isinstance(expires, datetime) else None,
                confirm_secret=bool(request.form.get("confirm_secret")),
                allow_similar=bool(request.form.get("similar_ok")),
                actor=actor(),
            )
        except SimilarMemoryError as exc:
            duplicate, similar = exc.existing, True
            errors["content"] = _(
                "Looks like a memory already kept: “%(content)s” (%(category)s).",
                content=duplicate.content,
                category=category_label(duplicate.category),
            )
            status = 409
        except MemoryFullError as exc:
            errors["content"] = full_message(exc)
            status = 409
        except ForgottenFactError:
            errors["content"] = _(
                "A person deleted this fact forever: it is not kept again. Nothing was added."
            )
            status = 409
        except DuplicateMemoryError as exc:
            duplicate = exc.existing
            errors["content"] = _(
                "Already remembered: “%(content)s” (%(category)s).",
                content=duplicate.content,
                category=category_label(duplicate.category),
            )
            status = 409
        else:
            return redirect_or(
                url_for("memories.index", added=memory.id),
                lambda: render(
                    "memories/_add_form.html",
                    form={},
                    errors={},
                    categories=CATEGORIES,
                    people=visible_people(),
                    added=memory,
                    usage=store.usage(),
                    trigger=MEMORIES_CHANGED,
                    announce=_("Memory added."),
                ),
            )
    return render(
        "memories/_add_form.html",
        "memories/page.html",
        status=status,
        partial_context=lambda: {
            "form": form,
            "errors": errors,
            "duplicate": duplicate,
            "similar": similar,
            "categories": CATEGORIES,
            "people": visible_people(),
            "usage": store.usage(),
        },
        page_context=lambda: page_context(
            form=form, errors=errors, duplicate=duplicate, similar=similar
        ),
    )


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


# ------------------------------------------------------------------ one row
@bp.get("/<memory_id>/row")
def row(memory_id: str) -> BaseResponse:
    """One memory's row (used by Cancel); focus goes back to its Edit button.

    A memory deleted elsewhere meanwhile comes back as its "Deleted … Undo" row.
    """
    gone = deleted_in_view(memory_id)
    memory = gone or get_memory_or_404(memory_id)
    if gone is not None:
        return redirect_or(
            url_for("memories.index"), lambda: render("memories/_deleted_row.html", memory=gone)
        )
    return redirect_or(
        url_for("memories.index"),
        lambda: render("memories/_row.html", memory=memory, query="", focus_edit=True),
    )


@bp.get("/<memory_id>/edit")
def edit(memory_id: str) -> BaseResponse:
    """The row as an edit form (a page of its own without JavaScript)."""
    memory = get_memory_or_404(memory_id)
    context: dict[str, Any] = {
        "memory": memory,
        "form": {"content": memory.content, "category": memory.category},
        "errors": {},
        "version": memory.version,
        "categories": CATEGORIES,
        "usage": stores().memories.usage(),
    }
    return render(
        "memories/_edit_row.html", "memories/edit_page.html", title=_("Edit memory"), **context
    )


@bp.post("/<memory_id>")
def update(memory_id: str) -> BaseResponse:
    """Save an edit, refusing (409) when the memory changed since the form was loaded."""
    if request.form.get("cancel"):  # the Cancel button of the form without JavaScript
        return redirect(url_for("memories.index"), 303)
    gone = deleted_in_view(memory_id)
    memory = gone or get_memory_or_404(memory_id)
    content, category, errors = checked_form()
    version = request.form.get("expected_updated_at") or ""
    form = {"content": request.form.get("content", ""), "category": category}
    # The expiry the form showed goes with "Replace it with my version" after a conflict.
    form.update({key: request.form[key] for key in EXPIRY_FIELDS if request.form.get(key)})
    if gone is not None:
        return _edit_error(gone, form, {"content": str(DELETED_ELSEWHERE)}, version, 409)
    if not version:
        errors["content"] = _("This form has no version token; reload the page and edit again.")
    if errors:
        return _edit_error(memory, form, errors, version, 422)
    try:
        saved = (
            curator()
            .revise(
                memory_id,
                content,
                category=category,
                expected=version,
                expires_at=chosen_expiry(request.form, current=last_true_day(memory), unsaid=KEEP),
                confirm_secret=bool(request.form.get("confirm_secret")),
                actor=actor(),
            )
            .after
        )
    except ConflictError as exc:
        return _conflict(exc.current, form)
    except MemoryFullError as exc:
        return _edit_error(memory, form, {"content": full_message(exc)}, version, 409)
    except NotFoundError:
        abort(404)
    return redirect_or(
        url_for("memories.index"),
        lambda: render(
            "memories/_row.html",
            memory=saved,
            query="",
            focus_edit=True,
            trigger=USAGE_CHANGED,
            announce=_("Memory saved."),
        ),
    )


def _edit_error(
    memory: Memory, form: dict[str, str], errors: dict[str, str], version: str, status: int
) -> BaseResponse:
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


def _conflict(current: Memory, form: dict[str, str]) -> BaseResponse:
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


# ------------------------------------------------------------------ delete / undo
@bp.post("/<memory_id>/delete")
def delete(memory_id: str) -> BaseResponse:
    """Forget one memory; the answer offers Undo."""
    memory = get_memory_or_404(memory_id)
    # Remembered as deleted (by whom, when): a later proposal of the fact is marked in Review.
    try:
        curator().forget(memory_id, actor=actor())
    except NotFoundError:
        pass  # deleted elsewhere meanwhile: the row says it is gone either way
    return redirect_or(
        url_for("memories.index", undo=memory_id),
        lambda: render(
            "memories/_deleted_row.html",
            memory=memory,
            trigger=USAGE_CHANGED,
            announce=_("Memory deleted. Undo is available."),
        ),
    )


@bp.post("/delete-many")
def delete_many() -> BaseResponse:
    """Forget every selected memory in one write; the answer offers Undo of all."""
    ids = [i for i in request.form.getlist("ids") if i]
    if not ids:
        notice: dict[str, Any] = {
            "kind": "error",
            "text": _("Select at least one memory to delete."),
        }
        return render(
            "memories/_rows.html",
            "memories/page.html",
            status=422,
            partial_context=lambda: {"listing": current_listing(), "notice": notice},
            page_context=lambda: page_context(notice=notice),
        )
    removed = len(curator().forget_many(ids, actor=actor()))
    text = ngettext("Deleted %(num)s memory.", "Deleted %(num)s memories.", removed)
    notice = {"kind": "deleted", "text": text, "refs": ids}
    announce = ngettext(
        "Deleted %(num)s memory. Undo is available.",
        "Deleted %(num)s memories. Undo is available.",
        removed,
    )
    return redirect_or(
        url_for("memories.index", undo=",".join(ids)), lambda: list_answer(notice, announce)
    )


def list_answer(notice: dict[str, Any], announce: str) -> BaseResponse:
    """The list with what a change did above it; the meter reloads itself."""
    return render(
        "memories/_rows.html",
        listing=current_listing(),
        notice=notice,
        trigger=USAGE_CHANGED,
        announce=announce,
    )


# ------------------------------------------------------------------ export / import
@bp.get("/export")
def export() -> BaseResponse:
    """Every memory this request may see as a JSON file download (the on-disk form, extra
    fields kept)."""
    body = curator().export("json")
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return Response(
        body,
        mimetype="application/json",
        headers={"Content-Disposition": f'attachment; filename="memories-{stamp}.json"'},
    )


def read_import_file() -> tuple[list[dict[str, Any]], str]:
    """The records of the uploaded (or confirmed) file and its text; ImportProblem if unusable."""
    upload = request.files.get("file")
    if upload is not None and upload.filename:
        raw = upload.stream.read(MAX_IMPORT_BYTES + 1)
        if not raw.strip():
            raise ImportProblem(
                _(
                    "“%(name)s” is empty; choose a JSON file exported from this page.",
                    name=upload.filename[:200],
                )
            )
    else:
        raw = (request.form.get("payload") or "").encode("utf-8")
    if not raw.strip():
        raise ImportProblem(_("No file was chosen: choose a JSON file exported from this page."))
    if len(raw) > MAX_IMPORT_BYTES:
        raise ImportProblem(
            _(
                "The file is larger than %(size)s MB; that is not a memory export.",
                size=MAX_IMPORT_BYTES // (1024 * 1024),
            )
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportProblem(
            _(
                "The file is not valid UTF-8 text (bad byte at position %(position)s); "
                "export it again as JSON.",
                position=exc.start,
            )
        ) from None
    try:
        records = loads_bounded(text)
    except json.JSONDecodeError as exc:
        raise ImportProblem(
            _(
                "The file is not valid JSON: %(problem)s at line %(line)s, column %(column)s.",
                problem=exc.msg,
                line=exc.lineno,
                column=exc.colno,
            )
        ) from None
    except ValueError as exc:
        raise ImportProblem(
            _("The file cannot be imported: %(reason)s.", reason=str(exc))
        ) from None
    return records, text


def import_file_name() -> str | None:
    """The uploaded file's name (or the one the preview carried), as imported memories record it."""
    upload = request.files.get("file")
    raw = (
        upload.filename if upload is not None and upload.filename else request.form.get("filename")
    )
    name = (raw or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
    return name[:200] or None


@bp.get("/import")
def import_form() -> BaseResponse:
    """The upload form (Cancel of a preview comes back here)."""
    return _import_answer()


@bp.post("/import")
def import_preview() -> BaseResponse:
    """Show what importing the uploaded file would change; nothing is written yet."""
    store = stores().memories
    try:
        records, text = read_import_file()
        curator().check_import(records)
        preview = store.preview_import(records)
    except ImportProblem as exc:
        return _import_answer(error=str(exc), status=422)
    except NotFoundError as exc:
        return _import_answer(error=describe(exc), status=422)
    except ValueError as exc:
        return _import_answer(error=cannot_import(exc), status=422)
    return _import_answer(
        filename=import_file_name(),
        plan=preview.changes[:200],
        more=max(0, len(preview.changes) - 200),
        counts=preview.counts,
        payload=text,
        too_big=not preview.fits,
        usage=store.usage(),
        added_chars=preview.added_chars,
    )


@bp.post("/import/confirm")
def import_confirm() -> BaseResponse:
    """Apply a previewed import in one write."""
    try:
        records, _text = read_import_file()
        # A fact a person deleted is not imported back: it waits in Review, marked so.
        counts = curator().import_export(
            records,
            actor=actor(),
            source=import_file_name() or "an uploaded file",
            confirm_secrets=bool(request.form.get("confirm_secrets")),
        )
    except ImportProblem as exc:
        return _import_answer(error=str(exc), status=422)
    except NotFoundError as exc:
        return _import_answer(error=describe(exc), status=422)
    except MemoryFullError as exc:
        return _import_answer(error=full_message(exc), status=409)
    except ValueError as exc:
        return _import_answer(error=cannot_import(exc), status=422)
    text = _(
        "Imported: %(added)s added, %(updated)s updated, %(unchanged)s already the same.",
        added=counts["added"],
        updated=counts["updated"],
        unchanged=counts["unchanged"],
    )
    if counts.get("forgotten"):
        text += " " + ngettext(
            "%(num)s not imported: you deleted it before.",
            "%(num)s not imported: you deleted them before.",
            counts["forgotten"],
        )
    if counts["refused"]:
        text += " " + ngettext(
            "%(num)s refused: it holds a secret.",
            "%(num)s refused: they hold secrets.",
            counts["refused"],
        )
    return redirect_or(
        url_for("memories.index"),
        lambda: render("memories/_import.html", done=text, trigger=MEMORIES_CHANGED, announce=text),
    )


def _import_answer(status: int = 200, **context: Any) -> BaseResponse:
    return render(
        "memories/_import.html",
        "memories/import_page.html",
        status=status,
        title=_("Import memories"),
        **context,
    )


@bp.errorhandler(RequestEntityTooLarge)
def _too_large(exc: RequestEntityTooLarge) -> BaseResponse:
    if request.endpoint in ("memories.import_preview", "memories.import_confirm"):
        return _import_answer(
            error=_(
                "The upload is too large; a memory export is a few megabytes at most. "
                "Nothing was changed."
            ),
            status=413,
        )
    return banner_response(
        _("Too much text"),
        _(
            "The form sent more than 16 MB. A memory is one short sentence, and the whole "
            "store holds far less than that."
        ),
        _("Nothing was saved. Shorten the text and send it again."),
        413,
    )
