"""Forgetting that sticks: after a memory is deleted, "Don't propose this again" and "Delete
forever" (its words gone from every file, a fingerprint kept), and what Review shows of a fact
a person deleted before (``deleted_fact``). The URLs sit under ``/memories/``."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, abort, request, url_for
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from ...stores import NotFoundError
from ...stores.readers import Tombstone
from ..plumbing.context import actor, curator, stores
from ..plumbing.htmx import redirect_or, render

bp = Blueprint("forgetting", __name__, url_prefix="/memories")


@bp.context_processor
def _in_memories() -> dict[str, Any]:
    return {"active_area": "memories"}


@bp.post("/<memory_id>/forget")
def forget(memory_id: str) -> Response:
    """For a memory deleted already: never propose it again, and/or delete it forever."""
    if stores().memories.get(memory_id) is not None:
        abort(404)
    forever = request.form.get("forever") == "1"
    try:
        # Delete forever loads the similarity model once (a few seconds): its vector is the
        # fingerprint. A memory a program deleted without a tombstone is remembered now.
        done = curator().forget(memory_id, dont_propose_again=True, forever=forever, actor=actor())
    except NotFoundError:
        abort(404)
    if forever:
        if done.forever is None:
            abort(404)
        tombstone = done.forever.tombstone
        announce = _("Deleted forever: its words are gone; it will not be proposed again.")
    else:
        if done.tombstone is None:
            abort(404)
        tombstone = done.tombstone
        announce = _("It will not be proposed again.")
    return redirect_or(
        url_for("memories.index"),
        lambda: render("memories/_forgotten_row.html", tombstone=tombstone, announce=announce),
    )


def deleted_fact(tombstone_id: Any) -> Tombstone | None:
    """The tombstone a review item names (None when it is gone)."""
    if not isinstance(tombstone_id, str) or not tombstone_id:
        return None
    return stores().tombstones.get(tombstone_id)


def init_app(app: Flask) -> None:
    app.add_template_global(deleted_fact)
