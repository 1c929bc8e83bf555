"""Store errors become a clear banner (or message) with the right status, never a bare 500."""

from __future__ import annotations

from flask import Flask, render_template
from flask_htmx import make_response
from flask_wtf.csrf import CSRFError

from ..stores import (
    ConflictError,
    MemoryFullError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreWriteError,
)
from .context import wants_partial


def banner_response(title: str, message: str, advice: str, status: int, level: str = "error"):
    """A page-wide banner: swapped into #banner for htmx, a full page otherwise."""
    context = {
        "banner_title": title,
        "banner_message": message,
        "banner_advice": advice,
        "banner_level": level,
    }
    if wants_partial():
        html = render_template("_banner.html", **context)
        return make_response(html, status, retarget="#banner", reswap="innerHTML")
    return render_template("error_page.html", **context), status


def _store_error(exc: StoreError):
    if isinstance(exc, StoreCorruptError):
        return banner_response(
            "A store file is damaged",
            str(exc),
            "Nothing was changed. Run `memory-curator repair` to set the file aside and start "
            "from the last good backup, then reload this page.",
            503,
        )
    if isinstance(exc, StoreBusyError):
        return banner_response(
            "The store is busy",
            str(exc),
            "Another program is writing to it. Your change was not saved; try again in a moment.",
            503,
        )
    if isinstance(exc, MemoryFullError):
        return banner_response(
            "Memory is full",
            str(exc),
            "Delete or shorten memories you no longer need, or raise MEMORY_MAX_ITEMS / "
            "MEMORY_MAX_CHARS.",
            409,
            "warning",
        )
    if isinstance(exc, StoreWriteError):
        return banner_response(
            "The data folder could not be written",
            str(exc),
            "Check the free disk space and the permissions of the data folder, then try again; "
            "what you typed is still on the page.",
            507,
        )
    if isinstance(exc, ConflictError):
        return banner_response(
            "Changed elsewhere", str(exc), "Reload to see the current version.", 409, "warning"
        )
    return banner_response(
        "Something went wrong with a store", str(exc), "Nothing was changed. Try again.", 500
    )


def _os_error(exc: OSError):
    where = f" ({exc.filename})" if exc.filename else ""
    return banner_response(
        "The data folder could not be used",
        f"{exc.strerror or exc}{where}",
        "Nothing was changed. Check the permissions and free disk space of the data folder.",
        507,
    )


def _csrf_error(exc: CSRFError):
    return banner_response(
        "This form has expired",
        exc.description,
        "Reload the page and try again; nothing was changed.",
        400,
    )


def init_app(app: Flask) -> None:
    """Register the handlers."""
    app.register_error_handler(StoreError, _store_error)
    app.register_error_handler(OSError, _os_error)
    app.register_error_handler(CSRFError, _csrf_error)

    @app.errorhandler(404)
    def _not_found(exc):
        return banner_response(
            "Not found",
            "There is nothing at this address, or the item no longer exists.",
            "Go back to the list and reload it.",
            404,
        )

    @app.errorhandler(500)
    def _server_error(exc):
        return banner_response(
            "Something went wrong",
            "The server hit an unexpected error.",
            "Nothing was changed. Try again; if it persists, check the logs.",
            500,
        )
