"""Memories: browse, search, add, edit, delete (with undo), history, export and import.

The list's rows and links are ``web.plumbing.memory_rows``, the page's shared helpers
(listing, page context, the forms' fields) ``web.plumbing.memory_page``, reading an
uploaded export ``web.plumbing.memory_import``."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from flask import (
    Blueprint,
    Response,
    abort,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _
from flask_babel import ngettext
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wrappers import Response as BaseResponse

from ...curator import SimilarMemoryError
from ...curator.errors import ForgottenFactError
from ...problems import InputError
from ...sensitive.secrets import mask_secrets
from ...stores import (
    CATEGORIES,
    ConflictError,
    DuplicateMemoryError,
    MemoryFullError,
    MemoryTooLongError,
    NotFoundError,
)
from ...stores.memories import KEEP
from ..plumbing.context import actor, curator, quoted_sentence, stores
from ..plumbing.errors import banner_response
from ..plumbing.formatting import category_label
from ..plumbing.htmx import redirect_or, render
from ..plumbing.memory_import import (
    ImportProblem,
    cannot_import,
    import_file_name,
    read_import_file,
)
from ..plumbing.memory_listing import highlight
from ..plumbing.memory_page import (
    DELETED_ELSEWHERE,
    chosen_person,
    conflict_answer,
    current_listing,
    deleted_in_view,
    edit_error,
    field_errors,
    form_input,
    get_memory_or_404,
    page_context,
    secret_of,
    secret_refused,
    secret_rewrite,
)
from ..plumbing.memory_rows import memory_links, memory_rows, memory_url, row_date_column
from ..plumbing.messages import describe, secret_kind
from .expiry import last_true_day
from .expiry_hint import EXPIRY_FIELDS, chosen_expiry
from .people import visible_owners, visible_people

bp = Blueprint("memories", __name__, url_prefix="/memories")

MEMORIES_CHANGED = "memories-changed"  # the list and the meter reload themselves
USAGE_CHANGED = "memories-usage-changed"  # only the meter reloads (a row changed in place)


def full_message(exc: MemoryFullError) -> str:
    """What the page says when the store's caps refuse a change (``messages.describe``)."""
    return describe(exc)


# For the templates: the list's rows and the links of a row, search words marked, a fact in
# quotes, and what a form says of a secret it refused.
bp.add_app_template_global(memory_rows, "memory_rows")
bp.add_app_template_global(memory_url, "memory_url")
bp.add_app_template_global(memory_links, "memory_links")
bp.add_app_template_global(row_date_column, "row_date_column")
bp.add_app_template_global(secret_rewrite, "secret_rewrite")
bp.add_app_template_global(secret_refused, "secret_refused")
bp.add_app_template_global(secret_of, "secret_of")
bp.add_app_template_filter(highlight, "highlight")
bp.add_app_template_filter(quoted_sentence, "quoted")
bp.add_app_template_filter(secret_kind, "secret_kind")
bp.add_app_template_filter(mask_secrets, "masked")


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


@bp.post("/")
def add() -> BaseResponse:
    """Remember a new fact; errors are shown next to the field."""
    store = stores().memories
    content, category = form_input()
    form = {"content": content, "category": category}
    errors: dict[str, str] = {}
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
        except (InputError, MemoryTooLongError) as exc:
            if exc.field is None:
                raise
            errors = field_errors(exc)
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
    content, category = form_input()
    version = request.form.get("expected_updated_at") or ""
    form = {"content": content, "category": category}
    # The expiry the form showed goes with "Replace it with my version" after a conflict.
    form.update({key: request.form[key] for key in EXPIRY_FIELDS if request.form.get(key)})
    if gone is not None:
        return edit_error(gone, form, {"content": str(DELETED_ELSEWHERE)}, version, 409)
    if not version:
        no_token = _("This form has no version token; reload the page and edit again.")
        return edit_error(memory, form, {"content": no_token}, version, 422)
    try:
        saved = (
            curator()
            .revise(
                memory_id,
                content=content,
                category=category,
                expected=version,
                expires_at=chosen_expiry(request.form, current=last_true_day(memory), unsaid=KEEP),
                confirm_secret=bool(request.form.get("confirm_secret")),
                actor=actor(),
            )
            .after
        )
    except (InputError, MemoryTooLongError) as exc:
        if exc.field is None:
            raise
        return edit_error(memory, form, field_errors(exc), version, 422)
    except ConflictError as exc:
        return conflict_answer(exc.current, form)
    except MemoryFullError as exc:
        return edit_error(memory, form, {"content": full_message(exc)}, version, 409)
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
