"""Store errors become a clear banner (or message) with the right status, never a bare 500.

The library's exceptions keep their English messages (the CLI and the MCP server show them);
``describe_error`` gives the page the same message in the page's language, built from the
exception's type and fields. Every view that shows a library error's message uses it.
"""

from __future__ import annotations

import errno as errnos
import re
from typing import Any

from babel.lists import format_list
from flask import Flask
from flask_babel import format_decimal, get_locale
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_wtf.csrf import CSRFError

from ..stores import (
    ConflictError,
    DuplicateMemoryError,
    MemoryFullError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreWriteError,
)
from ..stores.memories import CATEGORIES
from .formatting import category_label
from .htmx import render
from .i18n import current_language

# What the operating system said, by errno (its strerror stays English everywhere else).
OS_REASONS = {
    errnos.ENOSPC: _l("No space left on device"),
    errnos.EDQUOT: _l("Disk quota exceeded"),
    errnos.EACCES: _l("Permission denied"),
    errnos.EPERM: _l("Operation not permitted"),
    errnos.EROFS: _l("Read-only file system"),
    errnos.EIO: _l("Input/output error"),
    errnos.ENOENT: _l("No such file or directory"),
    errnos.EISDIR: _l("Is a directory"),
    errnos.ENOTDIR: _l("Not a directory"),
    errnos.EEXIST: _l("File exists"),
    errnos.EMFILE: _l("Too many open files"),
}

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

# The library's fixed messages (no values in them) a person may see in a form or notice.
LIBRARY_MESSAGES = {
    "Memory content must be text.": _l("Memory content must be text."),
    "Memory content cannot be empty.": _l("Memory content cannot be empty."),
    "Memory content cannot contain NUL characters.": _l(
        "Memory content cannot contain NUL characters."
    ),
    "Memory content is not valid Unicode text (it has a lone surrogate).": _l(
        "Memory content is not valid Unicode text (it has a lone surrogate)."
    ),
    "An import file must hold a JSON array of memories.": _l(
        "An import file must hold a JSON array of memories."
    ),
    "SKILL.md needs a `name` in its front matter.": _l(
        "SKILL.md needs a `name` in its front matter."
    ),
    "The `description` in SKILL.md's front matter must be text.": _l(
        "The `description` in SKILL.md's front matter must be text."
    ),
    "SKILL.md has no instructions after its front matter.": _l(
        "SKILL.md has no instructions after its front matter."
    ),
    "The zip holds several skills; upload one skill folder per zip.": _l(
        "The zip holds several skills; upload one skill folder per zip."
    ),
    "The zip has no SKILL.md at its top level or in its top folder.": _l(
        "The zip has no SKILL.md at its top level or in its top folder."
    ),
}
# Messages with values, as MemoryStore.check_input / check_category word them.
TOO_LONG = re.compile(
    r"This is ([\d,]+) characters; one memory can hold at most ([\d,]+) "
    r"\(the whole store's limit\)\. Shorten it\."
)
UNKNOWN_CATEGORY = re.compile(r"Unknown category (.*); use one of: [^;]*\.")


def describe_message(message: str) -> str:
    """A message the library gave as text (e.g. ``MemoryStore.check_input``'s per field) in
    the page's language; one it does not know stays as it is (English)."""
    if current_language() == "en":
        return message
    known = LIBRARY_MESSAGES.get(message)
    if known is not None:
        return str(known)
    if match := TOO_LONG.fullmatch(message):
        return _(
            "This is %(chars)s characters; one memory can hold at most %(max)s (the whole "
            "store's limit). Shorten it.",
            chars=match.group(1),
            max=match.group(2),
        )
    if match := UNKNOWN_CATEGORY.fullmatch(message):
        return _(
            "Unknown category %(category)s; use one of: %(categories)s.",
            category=match.group(1),
            categories=format_list(
                [category_label(c) for c in CATEGORIES], style="or", locale=get_locale()
            ),
        )
    return message


def _number(value: int | float) -> str:
    return format_decimal(value)


def os_reason(exc: OSError) -> str:
    """What went wrong with a file, in the page's language (the OS's words when unknown)."""
    known = OS_REASONS.get(exc.errno) if exc.errno is not None else None
    if known is not None and current_language() != "en":
        return str(known)
    return str(exc.strerror or exc)


def _corrupt(exc: StoreCorruptError) -> str:
    if exc.line is not None:
        return _(
            "The store file %(path)s is damaged at line %(line)s, column %(column)s: "
            "%(reason)s. It was left untouched; run `memory-curator repair` to set it aside "
            "and start from the last good backup.",
            path=exc.path,
            line=exc.line,
            column=exc.column,
            reason=exc.reason,
        )
    if exc.offset is not None:
        return _(
            "The store file %(path)s is damaged at byte %(offset)s: %(reason)s. It was left "
            "untouched; run `memory-curator repair` to set it aside and start from the last "
            "good backup.",
            path=exc.path,
            offset=exc.offset,
            reason=exc.reason,
        )
    return _(
        "The store file %(path)s is damaged: %(reason)s. It was left untouched; run "
        "`memory-curator repair` to set it aside and start from the last good backup.",
        path=exc.path,
        reason=exc.reason,
    )


def _full(exc: MemoryFullError) -> str:
    if exc.items > exc.max_items or exc.chars > exc.max_chars:
        return _(
            "Importing would leave %(items)s memories and %(chars)s characters; the caps are "
            "%(max_items)s memories and %(max_chars)s characters. Nothing was imported.",
            items=_number(exc.items),
            chars=_number(exc.chars),
            max_items=_number(exc.max_items),
            max_chars=_number(exc.max_chars),
        )
    if exc.items >= exc.max_items:
        return _(
            "The memory store is full: %(items)s of %(max_items)s memories are used. Delete or "
            "update a memory before adding another.",
            items=_number(exc.items),
            max_items=_number(exc.max_items),
        )
    return _(
        "The memory store is full: %(chars)s of %(max_chars)s characters are used. Shorten, "
        "delete or update memories first.",
        chars=_number(exc.chars),
        max_chars=_number(exc.max_chars),
    )


def describe_error(exc: BaseException) -> str:
    """A library error's message for the page, in the page's language.

    In English it is the library's own message (``str(exc)``, what the CLI and MCP show);
    otherwise the same message translated from the exception's type and fields (or, for a
    plain ``ValueError``, its known wording: see ``describe_message``). A CSRF refusal gives
    flask-wtf's reason; an error this does not know keeps its (English) message.
    """
    if isinstance(exc, CSRFError):
        return _csrf_reason(exc)
    if current_language() == "en":
        return str(exc)
    if isinstance(exc, StoreCorruptError):
        return _corrupt(exc)
    if isinstance(exc, StoreBusyError):
        return _(
            "The store file %(path)s is busy: another process held its lock for more than "
            "%(seconds)s s. Nothing was changed; try again.",
            path=exc.path,
            seconds=_number(exc.timeout),
        )
    if isinstance(exc, StoreWriteError):
        return _(
            "Could not save %(path)s: %(reason)s. The file was left as it was; nothing was "
            "changed.",
            path=exc.path,
            reason=os_reason(exc),
        )
    if isinstance(exc, MemoryFullError):
        return _full(exc)
    if isinstance(exc, DuplicateMemoryError):
        return _("This is already remembered (id %(id)s); nothing was added.", id=exc.existing.id)
    if isinstance(exc, ConflictError):
        return _("This memory was changed elsewhere since you loaded it; nothing was overwritten.")
    if isinstance(exc, OSError) and not isinstance(exc, StoreError):
        return _os_message(exc)
    return describe_message(str(exc))


def _csrf_reason(exc: CSRFError) -> str:
    known = CSRF_REASONS.get(str(exc.description))
    return str(known) if known is not None else str(exc.description)


def _os_message(exc: OSError) -> str:
    where = f" ({exc.filename})" if exc.filename else ""
    return f"{os_reason(exc)}{where}"


def banner_response(title: str, message: str, advice: str, status: int, level: str = "error"):
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


def _store_error(exc: StoreError):
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
            _(
                "Delete or shorten memories you no longer need, or raise MEMORY_MAX_ITEMS / "
                "MEMORY_MAX_CHARS."
            ),
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


def _os_error(exc: OSError):
    return banner_response(
        _("The data folder could not be used"),
        _os_message(exc),
        _("Nothing was changed. Check the permissions and free disk space of the data folder."),
        507,
    )


def _csrf_error(exc: CSRFError):
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
    def _not_found(exc):
        return banner_response(
            _("Not found"),
            _("There is nothing at this address, or the item no longer exists."),
            _("Go back to the list and reload it."),
            404,
        )

    @app.errorhandler(500)
    def _server_error(exc):
        return banner_response(
            _("Something went wrong"),
            _("The server hit an unexpected error."),
            _("Nothing was changed. Try again; if it persists, check the logs."),
            500,
        )
