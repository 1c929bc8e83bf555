"""How every view answers: the whole page, or for htmx the partial it swaps in.

``render`` is the one place that chooses between a page and its partial and that writes the
htmx response headers (``HX-Trigger``, ``HX-Retarget``, ``HX-Reswap``); ``redirect_or`` is the
answer to a form that also works without JavaScript (303 See Other after a plain post). The
blueprints call these two and never build htmx headers themselves (a test checks it).

An *announcement* is what the page's live region says out loud after a swap (app.js listens for
the ``announce`` event); an *event* (``memories-changed``, ``review-changed``…) makes the parts
of the page that listen for it reload themselves.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from flask import make_response, redirect, render_template
from werkzeug.wrappers import Response

from .context import wants_partial

ANNOUNCE = "announce"  # the event app.js turns into a live-region message

Events = str | Iterable[str] | None
Context = Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None


def trigger_header(events: Events = None, announce: str | None = None) -> str | None:
    """The ``HX-Trigger`` value: a JSON object with each event (``true``) and, when there is
    one, the announcement (``"announce": "<text>"``); None when there is nothing to send."""
    names = [events] if isinstance(events, str) else list(events or ())
    trigger: dict[str, Any] = dict.fromkeys(names, True)
    if announce:
        trigger[ANNOUNCE] = str(announce)
    return json.dumps(trigger) if trigger else None


def render(
    partial: str | None,
    page: str | None = None,
    *,
    status: int = 200,
    announce: str | None = None,
    trigger: Events = None,
    title: str | None = None,
    page_context: Context = None,
    partial_context: Context = None,
    retarget: str | None = None,
    reswap: str | None = None,
    **context: Any,
) -> Response:
    """The answer to a request: ``partial`` for htmx (with ``status``, the ``announce`` message
    and the ``trigger`` events in ``HX-Trigger``), the full ``page`` otherwise (with ``status``).

    - ``context`` goes to either template; ``title`` becomes the page's ``page_title``;
      ``page_context`` / ``partial_context`` (a mapping, or a function returning one, called
      only for the template that is rendered) add what only one of them needs.
    - ``page=None``: the partial answers every request (a piece a page loads by itself);
      ``partial=None``: the page answers every request (a page with no partial).
    - ``retarget`` / ``reswap``: swap the partial somewhere else than the request asked
      (``HX-Retarget``, ``HX-Reswap``), e.g. into the page-wide banner.
    - A full page sends no htmx headers: nothing on it listens for them.
    """
    if partial is not None and (page is None or wants_partial()):
        html = render_template(partial, **{**context, **_resolved(partial_context)})
        response = make_response(html, status)
        header = trigger_header(trigger, announce)
        if header:
            response.headers["HX-Trigger"] = header
        if retarget:
            response.headers["HX-Retarget"] = retarget
        if reswap:
            response.headers["HX-Reswap"] = reswap
        return response
    if page is None:
        raise ValueError("render needs a partial, a page or both")
    extra = dict(_resolved(page_context))
    if title is not None:
        extra.setdefault("page_title", title)
    return make_response(render_template(page, **{**context, **extra}), status)


def see_other(target: str) -> Response:
    """303 See Other to ``target``: where a plain form post goes next (a reload does not post
    again)."""
    return redirect(target, code=303)


def redirect_or(
    target: str,
    partial: Callable[[], Response] | None = None,
    *,
    announce: str | None = None,
) -> Response:
    """After a form post: without JavaScript, on to ``target`` (303 See Other, so a reload
    does not post again); for htmx, ``partial()`` (built only then), or, without one, htmx
    goes to ``target`` itself (``HX-Redirect``) and says ``announce``."""
    if not wants_partial():
        return see_other(target)
    if partial is not None:
        return partial()
    response = make_response("", 200)
    response.headers["HX-Redirect"] = target
    header = trigger_header(announce=announce)
    if header:
        response.headers["HX-Trigger"] = header
    return response


def _resolved(extra: Context) -> Mapping[str, Any]:
    if extra is None:
        return {}
    return extra() if callable(extra) else extra
