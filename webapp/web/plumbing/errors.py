"""Store errors become a clear banner (or message) with the right status, never a bare 500.

The library's exceptions keep their English messages (the CLI and the MCP server show them);
``describe_error`` gives the page the same message in the page's language, from the error's
code and values (``messages.describe``). Every view that shows a library error's message uses it.
"""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_wtf.csrf import CSRFError
from markupsafe import Markup, escape
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response

from ...curator.errors import DeletedForeverError
from ...stores import (
    ConflictError,
    MemoryFullError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreWriteError,
)
from ..blueprints.i18n import current_language
from .context import setting_named
from .htmx import render
from .messages import describe, os_reason

# flask-wtf's reasons for refusing a form (CSRFError.description).
CSRF_REASONS = {
    "The CSRF token is missing.": _l("The CSRF token is missing."),
    "The CSRF session token is missing.": _l("The CSRF session token is missing."),
    "The CSRF token has expired.": _l("The CSRF token has expired."),
    "The CSRF token is invalid.": _l("The CSRF token is invalid."),
    "The CSRF tokens do not match.": _l("The CSRF tokens do not match."),
    "The referrer header is missing.": _l("The referrer header is missing."),
    "The referrer does not match the host.": _l("The referrer does not match the host."),
}


def describe_error(exc: BaseException) -> str:
    """A library error's message for the page, in the page's language.

    In English it is the library's own message (``str(exc)``, what the CLI and MCP show);
    otherwise the message of its code (``messages.describe``). A CSRF refusal gives
    flask-wtf's reason, an operating system error its reason by errno; an error without a
    code keeps its (English) message.
    """
    if isinstance(exc, CSRFError):
        return _csrf_reason(exc)
    if isinstance(exc, OSError) and not isinstance(exc, StoreError):
        return str(exc) if current_language() == "en" else _os_message(exc)
    return describe(exc)


def _csrf_reason(exc: CSRFError) -> str:
    known = CSRF_REASONS.get(str(exc.description))
    return str(known) if known is not None else str(exc.description)


def _os_message(exc: OSError) -> str:
    where = f" ({exc.filename})" if exc.filename else ""
    return f"{os_reason(exc.errno, str(exc.strerror or exc))}{where}"


def banner_response(
    title: str, message: str, advice: str, status: int, level: str = "error"
) -> Response:
    """A page-wide banner: swapped into #banner for htmx, a full page otherwise."""
    context: dict[str, Any] = {
        "banner_title": title,
        "banner_message": message,
        "banner_advice": advice,
        "banner_level": level,
    }
    return render(
        "_banner.html",
        "error_page.html",
        status=status,
        retarget="#banner",
        reswap="innerHTML",
        **context,
    )


def _store_error(exc: StoreError) -> Response:
    message = describe_error(exc)
    if isinstance(exc, StoreCorruptError):
        return banner_response(
            _("A store file is damaged"),
            message,
            _(
                "Nothing was changed. Run `memory-curator repair` to set the file aside and "
                "start from the last good backup, then reload this page."
            ),
            503,
        )
    if isinstance(exc, StoreBusyError):
        return banner_response(
            _("The store is busy"),
            message,
            _(
                "Another program is writing to it. Your change was not saved; try again in a "
                "moment."
            ),
            503,
        )
    if isinstance(exc, MemoryFullError):
        return banner_response(
            _("Memory is full"),
            message,
            Markup(
                escape(
                    _(
                        "Delete or shorten memories you no longer need, or raise %(items)s / "
                        "%(chars)s."
                    )
                )
            )
            % {  # noqa: S704 (escaped, and the values are Markup built from escaped parts)
                "items": setting_named("MEMORY_MAX_ITEMS"),
                "chars": setting_named("MEMORY_MAX_CHARS"),
            },
            409,
            "warning",
        )
    if isinstance(exc, StoreWriteError):
        return banner_response(
            _("The data folder could not be written"),
            message,
            _(
                "Check the free disk space and the permissions of the data folder, then try "
                "again; what you typed is still on the page."
            ),
            507,
        )
    if isinstance(exc, DeletedForeverError):
        return banner_response(
            _("Deleted forever"), message, _("Nothing was changed."), 409, "warning"
        )
    if isinstance(exc, ConflictError):
        return banner_response(
            _("Changed elsewhere"),
            message,
            _("Reload to see the current version."),
            409,
            "warning",
        )
    return banner_response(
        _("Something went wrong with a store"), message, _("Nothing was changed. Try again."), 500
    )


def _os_error(exc: OSError) -> Response:
    return banner_response(
        _("The data folder could not be used"),
        _os_message(exc),
        _("Nothing was changed. Check the permissions and free disk space of the data folder."),
        507,
    )


def _csrf_error(exc: CSRFError) -> Response:
    return banner_response(
        _("This form has expired"),
        _csrf_reason(exc),
        _("Reload the page and try again; nothing was changed."),
        400,
    )


def init_app(app: Flask) -> None:
    """Register the handlers."""
    app.register_error_handler(StoreError, _store_error)
    app.register_error_handler(OSError, _os_error)
    app.register_error_handler(CSRFError, _csrf_error)

    @app.errorhandler(404)
    def _not_found(exc: HTTPException) -> Response:
        return banner_response(
            _("Not found"),
            _("There is nothing at this address, or the item no longer exists."),
            _("Go back to the list and reload it."),
            404,
        )

    @app.errorhandler(500)
    def _server_error(exc: HTTPException) -> Response:
        return banner_response(
            _("Something went wrong"),
            _("The server hit an unexpected error."),
            _("Nothing was changed. Try again; if it persists, check the logs."),
            500,
        )
