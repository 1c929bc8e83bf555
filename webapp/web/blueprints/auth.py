"""Standalone access control: an access token, a login page that sets a session, logout.

Active only when a token is configured (``MEMORY_DASHBOARD_TOKEN`` or ``--token-file``).
In the add-on, requests that Home Assistant's ingress forwarded are already authenticated
by Home Assistant and skip it. Failed logins are counted per client address and in total in a
small JSON file in the data folder, so every worker process and thread shares the same
counters; the client address is the one a trusted proxy forwarded, else the peer's. Each login
is registered server-side (``.sessions.json``): logging out removes it, so a cookie saved
before then no longer works.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Flask,
    Response,
    current_app,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask.sessions import SecureCookieSessionInterface
from flask_babel import gettext as _
from flask_babel import ngettext
from itsdangerous import BadSignature
from werkzeug.http import parse_cookie
from werkzeug.wrappers import Response as BaseResponse

from ...settings import Settings
from ...stores import Changed, StoreCorruptError, Unchanged
from ...stores.dashboard_files import (
    ATTEMPTS_FILE,
    SESSIONS_FILE,
    attempts_document,
    sessions_document,
)
from ..plumbing.context import settings
from ..plumbing.ingress import TRUSTED_KEY, via_ingress

bp = Blueprint("auth", __name__)

R = TypeVar("R")
V = TypeVar("V")

MAX_FAILURES = 5
GLOBAL_MAX_FAILURES = 30  # from all addresses together, per window
WINDOW_SECONDS = 15 * 60
MAX_TRACKED_CLIENTS = 5000
MAX_TOKEN_LENGTH = 4096
OPEN_ENDPOINTS = frozenset({"auth.login", "health.healthz", "static", "i18n.set_language"})
MAX_SESSIONS = 200
SESSION_DAYS = 30
EVERYONE = "*"  # the counter key of all failed attempts together


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def token_matches(given: str, token: str) -> bool:
    """Constant-time comparison (of digests, so the token's length does not leak either)."""
    if not token or len(given) > MAX_TOKEN_LENGTH:
        return False
    return hmac.compare_digest(_digest(given), _digest(token))


def _session_mark(token: str) -> str:
    """What the session stores: changes with the token, so a new token logs everyone out."""
    return hashlib.sha256(b"memory-curator-login\0" + token.encode("utf-8")).hexdigest()


def login_enabled() -> bool:
    """True when this request must come from a logged-in session.

    Only in the add-on does ingress stand in for a login (Home Assistant authenticated the
    user); a standalone server behind some proxy still asks for the token.
    """
    current = settings()
    return bool(current.dashboard_token) and not (current.is_addon and via_ingress())


def may_send_body(app: Flask, cookies: str) -> bool:
    """Whether a request with this Cookie header comes from someone the dashboard serves, asked
    by the server (``webapp.web.plumbing.guard``) before it reads a body larger than an anonymous one:
    with a token set, a session signed by this app with a login made with the current token
    (a login ended since still passes here and is refused by the view); in the add-on without
    direct access nobody but Home Assistant's proxy (exempt there); else anyone who reaches
    the server."""
    current: Settings = app.config["MEMORY_SETTINGS"]
    if current.is_addon and not current.allow_direct_access:
        return False
    if not current.dashboard_token:
        return True
    interface = app.session_interface
    signer = (
        interface.get_signing_serializer(app)
        if isinstance(interface, SecureCookieSessionInterface)
        else None
    )
    value = parse_cookie(cookies).get(app.config["SESSION_COOKIE_NAME"])
    if signer is None or not value:
        return False
    try:
        data = signer.loads(value, max_age=int(app.permanent_session_lifetime.total_seconds()))
    except BadSignature:
        return False
    mark = data.get("auth") if isinstance(data, dict) else None
    expected = _session_mark(current.dashboard_token)
    return isinstance(mark, str) and hmac.compare_digest(mark, expected)


def logged_in() -> bool:
    """True when the session carries a login made with the current token that has not ended."""
    mark = session.get("auth")
    token = settings().dashboard_token
    if not (token and isinstance(mark, str) and hmac.compare_digest(mark, _session_mark(token))):
        return False
    return sessions().is_active(session.get("sid"), mark)


class SessionRegistry:
    """Logins that have not ended, shared through a JSON file: ``{session id: [mark, started]}``.

    A signed cookie alone cannot be taken back; checking its id here lets logout (and a new
    token, whose mark differs) end it on the server.
    """

    def __init__(self, path: Path) -> None:
        self.document = sessions_document(path)

    def start(self, mark: str, now: float | None = None) -> str:
        """Register a new login; returns its session id."""
        now = time.time() if now is None else now
        sid = secrets.token_urlsafe(24)

        def mutate(data: dict[str, list[Any]]) -> Changed[None]:
            for old in [k for k, (m, t) in data.items() if m != mark or now - t > _MAX_AGE]:
                del data[old]
            for old in sorted(data, key=lambda k: data[k][1])[
                : max(0, len(data) - MAX_SESSIONS + 1)
            ]:
                del data[old]
            data[sid] = [mark, now]
            return Changed(None)

        self._update(mutate)
        return sid

    def end(self, sid: Any) -> None:
        """Forget one login (logout)."""
        if not isinstance(sid, str):
            return

        def mutate(data: dict[str, list[Any]]) -> Changed[object] | Unchanged[None]:
            return Changed(data.pop(sid)) if sid in data else Unchanged(None)

        self._update(mutate)

    def is_active(self, sid: Any, mark: str) -> bool:
        """True when ``sid`` is a registered login made with ``mark`` and not too old."""
        if not isinstance(sid, str):
            return False
        try:
            entry = self.document.read().get(sid)
        except StoreCorruptError:
            return False
        return (
            isinstance(entry, list)
            and entry[0] == mark
            and time.time() - float(entry[1]) <= _MAX_AGE
        )

    def _update(self, mutate: Callable[[dict[str, list[Any]]], Changed[R] | Unchanged[V]]) -> R | V:
        try:
            return self.document.update(mutate)
        except StoreCorruptError:
            self.document.repair()  # only login records: set the damaged file aside, start afresh
            return self.document.update(mutate)


_MAX_AGE = SESSION_DAYS * 24 * 3600


def sessions() -> SessionRegistry:
    """The app's login registry."""
    registry: SessionRegistry = current_app.extensions["memory_curator_sessions"]
    return registry


def client_address() -> str:
    """Who is logging in: the address a trusted proxy forwarded (X-Forwarded-For), else the peer.

    Only the proxy's own entry (the last) is believed; earlier ones are whatever the client sent.
    """
    peer = request.remote_addr or "unknown"
    if not request.environ.get(TRUSTED_KEY):
        return peer
    forwarded = request.headers.get("X-Forwarded-For", "")
    last = forwarded.rsplit(",", 1)[-1].strip()
    return last[:64] if last else peer


class LoginLimiter:
    """Failed-login counters per client address, shared through a JSON file."""

    def __init__(
        self, path: Path, *, max_failures: int = MAX_FAILURES, window: float = WINDOW_SECONDS
    ) -> None:
        self.document = attempts_document(path)
        self.max_failures = max_failures
        self.global_max_failures = GLOBAL_MAX_FAILURES
        self.window = window

    def begin_attempt(self, client: str, now: float | None = None) -> float:
        """Count an attempt before checking it (so parallel guesses cannot slip past the limit).

        Returns 0 when the attempt may go ahead, else the seconds until the client may retry.
        The global limit holds only the addresses that failed in the window: the owner, from
        an address that has not guessed wrong, still gets in while someone else is guessing.
        """
        now = time.time() if now is None else now

        def mutate(data: dict[str, list[float]]) -> Changed[float] | Unchanged[float]:
            self._prune(data, now)
            recent = data.get(client, [])
            everyone = data.get(EVERYONE, [])
            if len(recent) >= self.max_failures:
                return Unchanged(max(1.0, recent[0] + self.window - now))
            if recent and len(everyone) >= self.global_max_failures:
                return Unchanged(max(1.0, everyone[0] + self.window - now))
            data[client] = [*recent, now]
            # The latest attempts only: the limit is reached while the last of them are recent.
            data[EVERYONE] = [*everyone, now][-self.global_max_failures :]
            return Changed(0.0)

        return self._update(mutate)

    def succeeded(self, client: str) -> None:
        """Forget the client's failures after a good login."""

        def mutate(data: dict[str, list[float]]) -> Changed[None] | Unchanged[None]:
            if client not in data:
                return Unchanged(None)
            data.pop(client)
            if data.get(EVERYONE):
                data[EVERYONE].pop()  # the good attempt itself is no failure
            return Changed(None)

        self._update(mutate)

    def failures(self, client: str) -> int:
        """Failed attempts of ``client`` in the current window (for tests and messages)."""
        now = time.time()
        return sum(1 for t in self.document.read().get(client, []) if now - t < self.window)

    def _prune(self, data: dict[str, list[float]], now: float) -> None:
        for client in list(data):
            data[client] = [t for t in data[client] if now - t < self.window]
            if not data[client]:
                del data[client]
        if len(data) > MAX_TRACKED_CLIENTS:
            clients = sorted((c for c in data if c != EVERYONE), key=lambda c: data[c][-1])
            for client in clients[: len(data) - MAX_TRACKED_CLIENTS]:
                del data[client]

    def _update(
        self, mutate: Callable[[dict[str, list[float]]], Changed[R] | Unchanged[V]]
    ) -> R | V:
        try:
            return self.document.update(mutate)
        except StoreCorruptError:
            # Only counters: set the damaged file aside (bytes kept) and count afresh.
            self.document.repair()
            return self.document.update(mutate)


def limiter() -> LoginLimiter:
    """The app's limiter (one per app; the file is what the workers share)."""
    found: LoginLimiter = current_app.extensions["memory_curator_login_limiter"]
    return found


def safe_next(value: str | None) -> str | None:
    """``value`` when it is a local path of this app (no scheme, host or backslash), else None."""
    if not value or len(value) > 2000 or any(ord(c) < 32 or c == "\\" for c in value):
        return None
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or not value.startswith("/") or value.startswith("//"):
        return None
    root = request.script_root
    if root and not (value == root or value.startswith(root + "/")):
        return None
    return value


def _current_location() -> str | None:
    """Where the person was: the page (for htmx, the page that made the request)."""
    if request.headers.get("HX-Request"):
        current = urlsplit(request.headers.get("HX-Current-URL", ""))
        target = current.path + (f"?{current.query}" if current.query else "")
        return safe_next(target)
    path = request.script_root + request.path
    query = request.query_string.decode("latin-1")
    return safe_next(path + (f"?{query}" if query else ""))


def _to_login() -> BaseResponse:
    """htmx gets HX-Redirect (a swap would put the login page inside a partial); others a 303."""
    target = url_for("auth.login", next=_current_location())
    if request.headers.get("HX-Request"):
        response = Response("", 401)
        response.headers["HX-Redirect"] = target
        return response
    return redirect(target, 303)


def require_login() -> BaseResponse | None:
    """Before every request: send a visitor without a session to the login page."""
    if not login_enabled() or request.endpoint in OPEN_ENDPOINTS:
        return None
    if logged_in():
        return None
    return _to_login()


@bp.route("/login", methods=["GET", "POST"])
def login() -> BaseResponse:
    """The login form; a right token starts a session, a wrong one counts against the client."""
    token = settings().dashboard_token
    next_url = safe_next(request.values.get("next"))
    if not login_enabled() or logged_in():
        return redirect(next_url or url_for("index"), 303)
    if request.method == "GET":
        return _login_page(next_url)
    client = client_address()
    wait = limiter().begin_attempt(client)
    if wait:
        minutes = max(1, round(wait / 60))
        response = _login_page(
            next_url,
            error=ngettext(
                "Too many failed attempts. Try again in about %(num)s minute.",
                "Too many failed attempts. Try again in about %(num)s minutes.",
                minutes,
            ),
            status=429,
        )
        response.headers["Retry-After"] = str(int(wait) + 1)
        return response
    if not token_matches(request.form.get("token", ""), token):
        return _login_page(next_url, error=_("That access token is not right."), status=401)
    limiter().succeeded(client)
    session.clear()  # a fresh session: nothing chosen before login survives it
    mark = _session_mark(token)
    session["auth"] = mark
    session["sid"] = sessions().start(mark)
    return redirect(next_url or url_for("index"), 303)


def _login_page(next_url: str | None, *, error: str | None = None, status: int = 200) -> Response:
    html = render_template(
        "auth/login_page.html",
        next_url=next_url,
        error=error,
        page_title=_("Log in"),
        nav_items=[],
        nav_pending=0,
        store_health={},
        set_aside={},
    )
    return Response(html, status, mimetype="text/html")


@bp.post("/logout")
def logout() -> BaseResponse:
    """End the session (POST with the CSRF token, so no other site can log you out).

    The login is removed from the registry too, so a copy of the cookie no longer works.
    """
    sessions().end(session.get("sid"))
    session.clear()
    target = url_for("auth.login")
    if request.headers.get("HX-Request"):
        response = Response("", 204)
        response.headers["HX-Redirect"] = target
        return response
    return redirect(target, 303)


def template_globals() -> dict[str, Any]:
    """Whether the page shows a Log out button."""
    return {"show_logout": login_enabled() and logged_in()}


def init_app(app: Flask) -> None:
    """Register the login pages, the guard in front of every view and the limiter."""
    data_dir = Path(app.config["MEMORY_SETTINGS"].data_dir)
    app.extensions["memory_curator_login_limiter"] = LoginLimiter(data_dir / ATTEMPTS_FILE)
    app.extensions["memory_curator_sessions"] = SessionRegistry(data_dir / SESSIONS_FILE)
    app.register_blueprint(bp)
    app.before_request(require_login)
    app.context_processor(template_globals)
