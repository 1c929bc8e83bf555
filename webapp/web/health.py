"""``/healthz``: the status of each store file, as JSON."""

from __future__ import annotations

from flask import Blueprint, jsonify

from .context import stores

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():
    """Each store file: ok, missing or corrupt; HTTP 503 when any is corrupt."""
    files = stores().health()
    status = "corrupt" if "corrupt" in files.values() else "ok"
    response = jsonify({"status": status, "stores": files})
    response.status_code = 503 if status == "corrupt" else 200
    return response
