"""``/healthz``: the status of each store file, as JSON."""

from __future__ import annotations

from flask import Blueprint, jsonify
from werkzeug.wrappers import Response

from ..plumbing.context import stores

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> Response:
    """Each store file: ok, missing, corrupt or unreadable; HTTP 503 when any is not usable."""
    files = stores().health()
    broken = [state for state in ("corrupt", "unreadable") if state in files.values()]
    status = broken[0] if broken else "ok"
    response = jsonify({"status": status, "stores": files})
    response.status_code = 503 if broken else 200
    return response
