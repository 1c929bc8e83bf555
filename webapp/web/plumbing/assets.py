"""Fewer bytes on the wire: compressed responses and static files the browser keeps.

Through Home Assistant's remote access every byte crosses the internet, so:

- HTML, CSS, JavaScript and JSON are compressed (zstd, Brotli or gzip, whichever the client
  accepts) by Flask-Compress;
- every ``url_for('static', ...)`` carries a hash of the file's content (``?v=<hash>``), and a
  request with the current hash is answered with ``Cache-Control: public, max-age=31536000,
  immutable``: the browser asks again only when the file changes (a new hash, a new URL). A
  request without the hash, or with an old one, still gets the file with an ETag to revalidate.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from typing import Any

from flask import Flask, Response, current_app, has_request_context, request, url_for
from flask_compress import Compress
from werkzeug.security import safe_join

COMPRESSED_TYPES = [
    "text/html",
    "text/css",
    "text/javascript",
    "application/javascript",
    "application/json",
    "image/svg+xml",
]
IMMUTABLE = "public, max-age=31536000, immutable"

compress = Compress()
_hashes: dict[str, tuple[tuple[int, int, int], str]] = {}
_guard = threading.Lock()
MAX_CACHED_URLS = 1000


def content_hash(path: str | os.PathLike[str]) -> str | None:
    """The first 12 hex digits of the SHA-256 of the file, cached until the file changes."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    sig = (st.st_ino, st.st_mtime_ns, st.st_size)
    key = os.fspath(path)
    cached = _hashes.get(key)
    if cached is not None and cached[0] == sig:
        return cached[1]
    try:
        with open(path, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()[:12]
    except OSError:
        return None
    with _guard:
        _hashes[key] = (sig, digest)
    return digest


def _static_file(filename: str) -> str | None:
    """The file ``filename`` names inside the static folder (None outside it)."""
    folder = current_app.static_folder
    return _joined(folder, filename) if folder and filename else None


@functools.lru_cache(maxsize=1024)
def _joined(folder: str, filename: str) -> str | None:
    return safe_join(folder, filename)


def add_version(endpoint: str, values: dict[str, Any]) -> None:
    """``url_for('static', filename=...)`` gains ``v=<content hash>``."""
    if endpoint != "static" or "v" in values:
        return
    path = _static_file(str(values.get("filename", "")))
    digest = content_hash(path) if path is not None else None
    if digest:
        values["v"] = digest


def template_url_for(endpoint: str, **values: Any) -> str:
    """``url_for`` for templates, remembering the URLs that depend only on the endpoint, the
    ingress prefix and (for static files) the file's current content: a page asks for the
    same navigation, form and static URLs on every view."""
    filename = values.get("filename") if endpoint == "static" and len(values) == 1 else None
    if (values and filename is None) or endpoint.startswith(".") or not has_request_context():
        return url_for(endpoint, **values)
    urls: dict[tuple[str, str, str], str] = current_app.extensions["memory_curator.urls"]
    key = (request.script_root, endpoint, "")
    if filename is not None:
        path = _static_file(str(filename))
        key = (request.script_root, endpoint, f"{filename}\0{path and content_hash(path)}")
    url = urls.get(key)
    if url is None:
        url = url_for(endpoint, **values)
        with _guard:
            if len(urls) >= MAX_CACHED_URLS:
                urls.clear()
            urls[key] = url
    return url


def cache_versioned_static(response: Response) -> Response:
    """A static file asked for by its current hash may be kept for a year."""
    if request.endpoint != "static" or response.status_code not in (200, 304):
        return response
    if response.status_code == 200 and response.is_streamed:
        # A whole body (these files are small): compressed in one piece, and the compressed
        # response's ETag still answers If-None-Match with 304.
        response.direct_passthrough = False
        response.set_data(response.get_data())
    wanted = request.args.get("v")
    path = _static_file((request.view_args or {}).get("filename", ""))
    if wanted and path is not None and content_hash(path) == wanted:
        response.headers["Cache-Control"] = IMMUTABLE
    return response


def init_app(app: Flask) -> None:
    app.config.setdefault("COMPRESS_MIMETYPES", COMPRESSED_TYPES)
    app.config.setdefault("COMPRESS_STREAMS", False)  # static files are read whole, above
    app.config.setdefault("COMPRESS_MIN_SIZE", 500)
    compress.init_app(app)
    app.url_defaults(add_version)
    app.after_request(cache_versioned_static)
    app.extensions["memory_curator.urls"] = {}
    app.jinja_env.globals["url_for"] = template_url_for
