"""Memories: browse, search and add long-term memories."""

from __future__ import annotations

from flask import Blueprint, render_template, request

from .context import stores

bp = Blueprint("memories", __name__, url_prefix="/memories")


@bp.get("/")
def index():
    """The list of memories, newest last, with the capacity meter."""
    store = stores().memories
    query = request.args.get("q", "").strip()
    memories = store.search(query) if query else store.get_all()
    return render_template("memories/page.html", memories=memories, query=query,
                           usage=store.stats(), page_title="Memories")
