"""Standalone access: token login and logout, the guard on every page and partial, safe
``next``, shared rate limiting, and the refusal to listen publicly without a token."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from tests.support.auth import CSRF, TOKEN, log_in, serve_command
from tests.support.cli import clean_env
from tests.support.data import make_settings
from tests.support.mcp_http import free_port
from tests.support.web import CsrfClient
from webapp import create_app
from webapp.web.blueprints.auth import MAX_FAILURES, LoginLimiter, token_matches


@pytest.fixture
def token_settings(tmp_path):
    return make_settings(tmp_path, dashboard_token=TOKEN)


@pytest.fixture
def token_app(token_settings):
    app = create_app(token_settings)
    app.config.update(TESTING=True)
    return app


def test_without_a_token_pages_are_open_and_login_is_not_needed(client):
    assert client.get("/memories/").status_code == 200
    response = client.raw.get("/login")
    assert response.status_code == 303 and response.headers["Location"].endswith("/")


@pytest.mark.parametrize("path", ["/", "/memories/", "/memories/?q=tea", "/no/such/page"])
def test_pages_redirect_to_login(token_app, path):
    response = token_app.test_client().get(path)
    assert response.status_code == 303
    location = response.headers["Location"]
    assert location.startswith("/login?next=")
    assert "memories" in location or path in ("/", "/no/such/page")


def test_partials_get_hx_redirect(token_app):
    response = token_app.test_client().get(
        "/memories/?q=x",
        headers={"HX-Request": "true", "HX-Current-URL": "http://127.0.0.1:1/memories/?q=x"},
    )
    assert response.status_code == 401
    assert response.headers["HX-Redirect"] == "/login?next=/memories/?q%3Dx"
    assert response.get_data() == b""


def test_state_changes_without_session_go_to_login_not_through(token_app, token_settings):
    client = token_app.test_client()
    response = client.post("/memories/", data={"content": "sneaky", "category": "general"})
    assert response.status_code == 303 and "/login" in response.headers["Location"]
    assert (
        not token_settings.memory_file.exists()
        or "sneaky" not in token_settings.memory_file.read_text()
    )


def test_healthz_and_static_stay_open(token_app):
    client = token_app.test_client()
    assert client.get("/healthz").status_code == 200
    assert client.get("/static/app.css").status_code == 200


def test_login_page_is_a_form_with_label_and_csrf(token_app):
    html = token_app.test_client().get("/login?next=/memories/").get_data(as_text=True)
    assert '<label for="token">' in html and 'type="password"' in html
    assert CSRF.search(html)
    assert 'name="next" value="/memories/"' in html
    assert 'href="/memories/"' not in html, "no navigation before login"


def test_wrong_token_is_refused(token_app):
    client = token_app.test_client()
    response = log_in(client, "wrong-token")
    assert response.status_code == 401
    assert "not right" in response.get_data(as_text=True)
    assert client.get("/memories/").status_code == 303


def test_login_then_logout(token_app):
    client = token_app.test_client()
    response = log_in(client, next_url="/memories/?q=tea")
    assert response.status_code == 303
    assert response.headers["Location"] == "/memories/?q=tea"
    page = client.get("/memories/")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "Log out" in html
    assert client.get("/memories/", headers={"HX-Request": "true"}).status_code == 200
    # logout needs the CSRF token: another site cannot log you out
    assert client.post("/logout").status_code == 400
    token = CSRF.search(html).group(1)
    response = client.post("/logout", data={"csrf_token": token})
    assert response.status_code == 303 and response.headers["Location"] == "/login"
    assert client.get("/memories/").status_code == 303


def test_login_requires_csrf(token_app):
    client = token_app.test_client()
    response = client.post("/login", data={"token": TOKEN})
    assert response.status_code == 400
    assert client.get("/memories/").status_code == 303


@pytest.mark.parametrize(
    "evil",
    [
        "//evil.example/",
        "https://evil.example/",
        "/\\evil.example",
        "\\\\evil.example",
        "javascript:alert(1)",
        "/memories/\r\nSet-Cookie: x=1",
        "evil.example",
        "http:/evil.example",
    ],
)
def test_next_can_only_be_a_local_path(token_app, evil):
    response = log_in(token_app.test_client(), next_url=evil)
    assert response.status_code == 303
    assert response.headers["Location"] == "/"


def test_a_new_token_ends_old_sessions(tmp_path, token_settings):
    client = create_app(token_settings).test_client()
    log_in(client)
    assert client.get("/memories/").status_code == 200
    changed = make_settings(tmp_path, dashboard_token="a-completely-different-token")
    other = create_app(changed).test_client()
    # the same browser, the app restarted with a new token
    other.set_cookie("memory_curator_session", client.get_cookie("memory_curator_session").value)
    assert other.get("/memories/").status_code == 303


def test_ingress_requests_skip_the_login(tmp_path):
    app = create_app(
        make_settings(tmp_path, dashboard_token=TOKEN, is_addon=True, allow_direct_access=True)
    )
    client = app.test_client()
    via_ha = client.get(
        "/memories/",
        headers={"X-Ingress-Path": "/api/hassio_ingress/abc"},
        environ_base={"REMOTE_ADDR": "172.30.32.2"},
    )
    assert via_ha.status_code == 200
    direct = client.get("/memories/", environ_base={"REMOTE_ADDR": "192.168.1.9"})
    assert direct.status_code == 303 and "/login" in direct.headers["Location"]


def test_standalone_ingress_headers_never_replace_the_login(tmp_path):
    # A standalone server behind a trusted proxy (say, a container at 172.30.32.2 on a
    # Docker bridge) still asks for the token: only Home Assistant's ingress logs users in.
    app = create_app(make_settings(tmp_path, dashboard_token=TOKEN, is_addon=False))
    client = app.test_client()
    response = client.get(
        "/memories/",
        headers={"X-Ingress-Path": "/api/hassio_ingress/abc"},
        environ_base={"REMOTE_ADDR": "172.30.32.2"},
    )
    assert response.status_code == 303
    assert response.headers["Location"].startswith("/api/hassio_ingress/abc/login")


@pytest.mark.parametrize(
    "given, expected",
    [
        (TOKEN, True),
        (TOKEN + " ", False),
        (TOKEN[:-1], False),
        ("", False),
        ("x" * 100_000, False),
        ("ünïcode", False),
    ],
)
def test_token_comparison(given, expected):
    assert token_matches(given, TOKEN) is expected
    assert token_matches(given, "") is False


# ------------------------------------------------------------------ rate limiting


def test_failed_logins_are_rate_limited_across_workers(token_settings):
    worker_a = create_app(token_settings).test_client()
    worker_b = create_app(token_settings).test_client()  # another process on the same data folder
    for attempt in range(MAX_FAILURES):
        client = worker_a if attempt % 2 else worker_b
        assert log_in(client, f"guess-{attempt}", remote="203.0.113.9").status_code == 401
    blocked = log_in(worker_a, TOKEN, remote="203.0.113.9")
    assert blocked.status_code == 429, "even the right token waits once the limit is reached"
    assert int(blocked.headers["Retry-After"]) > 0
    assert "Too many failed attempts" in blocked.get_data(as_text=True)
    assert log_in(worker_b, TOKEN, remote="203.0.113.9").status_code == 429
    assert worker_b.get("/memories/").status_code == 303
    counters = json.loads((token_settings.data_dir / ".login_attempts.json").read_text())
    assert len(counters["203.0.113.9"]) == MAX_FAILURES
    # another address is not affected
    assert (
        log_in(create_app(token_settings).test_client(), remote="198.51.100.4").status_code == 303
    )


def test_a_good_login_clears_the_failures(token_settings):
    client = create_app(token_settings).test_client()
    for _ in range(MAX_FAILURES - 1):
        log_in(client, "nope", remote="203.0.113.5")
    assert log_in(client, remote="203.0.113.5").status_code == 303
    limiter = LoginLimiter(token_settings.data_dir / ".login_attempts.json")
    assert limiter.failures("203.0.113.5") == 0


def test_limiter_window_expires(tmp_path):
    limiter = LoginLimiter(tmp_path / "attempts.json", max_failures=2, window=60)
    assert limiter.begin_attempt("a", now=1000) == 0
    assert limiter.begin_attempt("a", now=1001) == 0
    assert limiter.begin_attempt("a", now=1002) == pytest.approx(58)
    assert limiter.begin_attempt("a", now=1061) == 0, "the first failure left the window"


def test_damaged_counter_file_is_set_aside(tmp_path):
    path = tmp_path / "attempts.json"
    path.write_bytes(b"{not json")
    limiter = LoginLimiter(path)
    assert limiter.begin_attempt("a") == 0
    assert json.loads(path.read_text())["a"]
    assert [p.name for p in tmp_path.glob("attempts.json.corrupt-*")], "bytes kept, not lost"


# ------------------------------------------------------------------ headers


@pytest.mark.parametrize("path", ["/login", "/memories/", "/healthz"])
def test_security_headers_everywhere(token_app, path):
    response = token_app.test_client().get(path)
    csp = response.headers["Content-Security-Policy"]
    assert "frame-ancestors 'self'" in csp and "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert response.headers["X-Frame-Options"] == "SAMEORIGIN"


def test_session_cookie_is_http_only_and_app_specific(token_app):
    client = token_app.test_client()
    response = log_in(client)
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith("memory_curator_session=")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie


# ------------------------------------------------------------------ the serve command


def test_serve_refuses_a_public_address_without_a_token(tmp_path):
    data_dir = tmp_path / "data"
    result = subprocess.run(
        serve_command(free_port(), data_dir),
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 2
    assert "Refusing to listen on 0.0.0.0" in result.stderr
    assert "MEMORY_DASHBOARD_TOKEN" in result.stderr and "--token-file" in result.stderr
    assert "Traceback" not in result.stderr
    assert not data_dir.exists(), "nothing is created when it refuses"


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "must hold one line"),
        (b"short\n", "has only 5 visible characters"),
        ("\u0301".encode() * 16 + b"\n", "has only 0 visible characters"),
        (b"a" * 16 + b"\n", "has only 1 different characters"),
        (b"\xff\xfe", "not UTF-8"),
        (b"line-one-is-long\nline-two-is-long\n", "must hold one line"),
    ],
)
def test_serve_rejects_a_bad_token_file(tmp_path, content, message):
    token_file = tmp_path / "token"
    token_file.write_bytes(content)
    result = subprocess.run(
        serve_command(free_port(), tmp_path / "data", "--token-file", str(token_file)),
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert message in result.stderr


def test_serve_with_token_file_listens_publicly_and_requires_login(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    port = free_port()
    process = subprocess.Popen(
        serve_command(port, tmp_path / "data", "--token-file", str(token_file)),
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for_port(port, process)

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None

        opener = urllib.request.build_opener(NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as caught:
            opener.open(f"http://127.0.0.1:{port}/memories/", timeout=10)
        assert caught.value.code == 303
        assert caught.value.headers["Location"].startswith("/login?next=")
        caught.value.close()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/login", timeout=10) as response:
            assert "Access token" in response.read().decode("utf-8")
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
        process.stdout.close()


def test_serve_with_env_token_listens_publicly(tmp_path):
    port = free_port()
    process = subprocess.Popen(
        serve_command(port, tmp_path / "data"),
        env=clean_env(MEMORY_DASHBOARD_TOKEN=TOKEN),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for_port(port, process)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
        output = process.stdout.read().decode()
        process.stdout.close()
    assert "direct visitors must log in" in output


def wait_for_port(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited: {process.stdout.read().decode()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the server did not start")


def test_csrf_client_helper_still_works_without_token(client: CsrfClient):
    """The shared test client (no token) is unaffected by the login guard."""
    assert client.token()


# ------------------------------------------------------------------ in a real browser


@pytest.mark.browser
@pytest.mark.parametrize("color_scheme", ["light", "dark"], indirect=True)
def test_login_journey_in_a_browser(tmp_path, page, color_scheme):
    from tests.support.web import assert_accessible, screenshot, start_server, stop_server

    server = start_server(tmp_path / "data", env_extra={"MEMORY_DASHBOARD_TOKEN": TOKEN})
    try:
        page.goto(server.url + "/memories/?q=tea")
        assert "/login" in page.url
        assert page.get_by_label("Access token").evaluate("el => el === document.activeElement")
        assert page.get_by_role("navigation", name="Main").get_by_role("link").count() == 1
        assert_accessible(page, "on the login page")
        page.get_by_label("Access token").fill("not-the-token")
        page.get_by_role("button", name="Log in").click()
        assert page.get_by_role("alert").inner_text() == "That access token is not right."
        assert_accessible(page, "on the login page with an error")
        screenshot(page, f"login-error-{color_scheme}")
        page.set_viewport_size({"width": 360, "height": 740})
        screenshot(page, f"login-phone-{color_scheme}")
        page.set_viewport_size({"width": 1280, "height": 900})
        page.get_by_label("Access token").fill(TOKEN)
        page.get_by_role("button", name="Log in").click()
        page.get_by_role("heading", name="Memories").first.wait_for()
        assert page.url == server.url + "/memories/?q=tea", "back where the person wanted to go"
        page.get_by_role("button", name="Log out").click()
        page.get_by_role("heading", name="Log in").wait_for()
        page.goto(server.url + "/memories/")
        assert "/login" in page.url, "logged out means logged out"
        assert not page.watch.page_errors and not page.watch.dialogs
    finally:
        stop_server(server)
