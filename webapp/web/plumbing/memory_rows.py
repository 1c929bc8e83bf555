"""The Memories list's rows, each rendered once per version of the files it shows, and the
URLs a row links to (the templates' ``memory_rows``, ``memory_url``, ``memory_links`` and
``row_date_column``, registered by ``web.blueprints.memories``)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any, NamedTuple
from urllib.parse import quote

from flask import current_app, g, request, url_for
from flask_babel import get_locale
from markupsafe import Markup, escape

from ...stores import Memory
from ..blueprints.people import you
from .context import stores
from .memory_listing import date_column

_ID_SLOT = "__memory_id__"
_PATH_SAFE = "!$&'()*+,/:;=@"  # what Werkzeug's URL converters leave unquoted


class RowLinks(NamedTuple):
    edit: str
    history: str
    delete: str


def memory_links(memory_id: str) -> RowLinks:
    """The URLs a row of the list links to."""
    return RowLinks(
        memory_url("memories.edit", memory_id),
        memory_url("provenance.history", memory_id),
        memory_url("memories.delete", memory_id),
    )


CSRF_SLOT = f"csrf-{secrets.token_hex(16)}"  # stands for the page's token in cached rows
MAX_CACHED_ROWS = 5000  # per file version


def row_date_column() -> str:
    """The date a row drawn on its own shows: the one the list it sits in is sorted by (the
    row's requests carry the list's filters)."""
    return date_column(request.values.get("sort"))


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


def memory_url(endpoint: str, memory_id: str) -> str:
    """``url_for(endpoint, memory_id=memory_id)``, with the URL around the id built once per
    request and endpoint (a page of 50 rows links each row six times)."""
    cache: dict[str, tuple[str, str]] = g.setdefault("memory_urls", {})
    parts = cache.get(endpoint)
    if parts is None:
        head, _slot, tail = url_for(endpoint, memory_id=_ID_SLOT).partition(_ID_SLOT)
        parts = cache[endpoint] = (head, tail)
    return parts[0] + quote(str(memory_id), safe=_PATH_SAFE) + parts[1]
