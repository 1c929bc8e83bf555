"""Home Assistant ingress: whom the middleware trusts, the prefix on every URL, the 403 in the
add-on, the user's name as actor, and the per-path session cookie."""

from __future__ import annotations

import dataclasses
import html as html_lib
import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from flask import url_for

from tests.support.data import make_settings
from tests.support.stores import memory_store
from webapp import create_app
from webapp.settings import Settings
from webapp.stores import ConversationStore, MemoryStore
from webapp.web.plumbing.context import actor
from webapp.web.plumbing.ingress import (
    IngressMiddleware,
    header_text,
    ingress_prefix,
    prefixed_location,
)

PREFIX = "/api/hassio_ingress/Tok3n_abc-XYZ"
HA = "172.30.32.2"


def run_middleware(
    settings: Settings, remote: str, headers: dict[str, str], path: str = "/memories/"
):
    """Call the middleware around a WSGI app that records the environ it was given."""
    seen: dict = {}

    def inner(environ, start_response):
        seen.update(environ)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    status: list[str] = []
    environ = {"REMOTE_ADDR": remote, "PATH_INFO": path, "SCRIPT_NAME": "", "REQUEST_METHOD": "GET"}
    environ.update({"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()})
    body = b"".join(IngressMiddleware(inner, settings)(environ, lambda s, h: status.append(s)))
    return status[0], body, seen


def addon(tmp_path: Path, **changes) -> Settings:
    return make_settings(tmp_path, is_addon=True, **changes)


# ------------------------------------------------------------------ middleware


def test_trusted_proxy_sets_prefix_and_user(tmp_path):
    status, _, env = run_middleware(
        addon(tmp_path),
        HA,
        {
            "X-Ingress-Path": PREFIX,
            "X-Remote-User-Display-Name": "Ada Lovelace",
            "X-Remote-User-Id": "u123",
        },
    )
    assert status.startswith("200")
    assert env["SCRIPT_NAME"] == PREFIX
    assert env["PATH_INFO"] == "/memories/"
    assert env["memory_curator.user_name"] == "Ada Lovelace"
    assert env["memory_curator.user_id"] == "u123"


@pytest.mark.parametrize("remote", ["10.0.0.7", "172.30.32.3", "127.0.0.1", "::1", "", "not-an-ip"])
def test_forged_ingress_headers_from_untrusted_address_are_ignored(tmp_path, remote):
    settings = make_settings(tmp_path)  # standalone: the request goes through, without the headers
    status, _, env = run_middleware(
        settings, remote, {"X-Ingress-Path": PREFIX, "X-Remote-User-Display-Name": "Mallory"}
    )
    assert status.startswith("200")
    assert env["SCRIPT_NAME"] == ""
    assert "HTTP_X_INGRESS_PATH" not in env and "HTTP_X_REMOTE_USER_DISPLAY_NAME" not in env
    assert "memory_curator.user_name" not in env


@pytest.mark.parametrize(
    "forged",
    [
        "/api/hassio_ingress/",
        "/api/hassio_ingress/abc/extra",
        "/api/hassio_ingress/abc/../../admin",
        "//evil.example/api/hassio_ingress/abc",
        "https://evil.example/api/hassio_ingress/abc",
        "/api/hassio_ingress/a b",
        '/api/hassio_ingress/abc"><script>',
        "/api/hassio_ingress/abc%2F..",
        "/somewhere/else",
        "",
    ],
)
def test_malformed_ingress_path_is_ignored_even_from_the_proxy(tmp_path, forged):
    status, _, env = run_middleware(addon(tmp_path), HA, {"X-Ingress-Path": forged})
    assert status.startswith("200")
    assert env["SCRIPT_NAME"] == ""
    assert ingress_prefix(forged) is None


@pytest.mark.parametrize("remote", ["10.0.0.7", "172.30.32.1", "127.0.0.1", "192.168.1.20"])
def test_addon_refuses_other_addresses(tmp_path, remote):
    status, body, env = run_middleware(addon(tmp_path), remote, {"X-Ingress-Path": PREFIX})
    assert status.startswith("403")
    assert b"memory_allow_direct_access" in body
    assert env == {}, "the app must not even see the request"


def test_addon_direct_access_when_the_user_opted_in(tmp_path):
    status, _, env = run_middleware(
        addon(tmp_path, allow_direct_access=True), "192.168.1.20", {"X-Ingress-Path": PREFIX}
    )
    assert status.startswith("200")
    assert env["SCRIPT_NAME"] == "", "a direct visitor still cannot choose the prefix"


@pytest.mark.parametrize(
    "proxies, remote, trusted",
    [
        (("172.30.32.0/23",), "172.30.33.9", True),
        (("172.30.32.0/23",), "172.30.34.1", False),
        (("127.0.0.1",), "::ffff:127.0.0.1", True),
        (("::1",), "::1", True),
        (("bogus", "127.0.0.1"), "127.0.0.1", True),
        ((), HA, False),
    ],
)
def test_trusted_proxy_list(tmp_path, proxies, remote, trusted):
    settings = make_settings(tmp_path, trusted_proxies=proxies)
    _, _, env = run_middleware(settings, remote, {"X-Ingress-Path": PREFIX})
    assert (env["SCRIPT_NAME"] == PREFIX) is trusted


def test_unstripped_path_from_proxy_still_routes(tmp_path):
    _, _, env = run_middleware(
        addon(tmp_path), HA, {"X-Ingress-Path": PREFIX}, path=PREFIX + "/review/"
    )
    assert env["SCRIPT_NAME"] == PREFIX and env["PATH_INFO"] == "/review/"


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("Zoë Ånström".encode().decode("latin-1"), "Zoë Ånström"),
        ("张伟".encode().decode("latin-1"), "张伟"),
        ("Eve\x00\x1b[31m", "Eve[31m"),
        ("   ", None),
        ("x" * 500, "x" * 100),
    ],
)
def test_user_name_header_is_decoded_and_cleaned(raw, expected):
    assert header_text(raw) == expected


@pytest.mark.parametrize(
    "value, expected",
    [
        ("/memories/", PREFIX + "/memories/"),
        (PREFIX + "/memories/", PREFIX + "/memories/"),
        (PREFIX, PREFIX),
        ("//evil.example/", "//evil.example/"),
        ("https://example.com/x", "https://example.com/x"),
        ("memories/", "memories/"),
    ],
)
def test_stray_root_absolute_redirect_gets_the_prefix(value, expected):
    assert prefixed_location(value, PREFIX) == expected


# ------------------------------------------------------------------ the app behind ingress


def ingress_get(client, url: str, *, htmx: bool = False, name: str | None = "Ada Lovelace"):
    headers = {"X-Ingress-Path": PREFIX}
    if name:
        headers["X-Remote-User-Display-Name"] = name.encode("utf-8").decode("latin-1")
    if htmx:
        headers["HX-Request"] = "true"
    return client.get(url, headers=headers, environ_base={"REMOTE_ADDR": HA})


@pytest.fixture
def addon_app(tmp_path):
    settings = addon(tmp_path)
    memories = memory_store(settings.memory_file, lock_timeout=10).init()
    for text in ("Prefers tea over coffee", "Works on the <b>garden</b> project", "Uses vim"):
        memories.add(text, category="preference")
    conversations = ConversationStore(settings.conversation_file).init()
    conversations.add_exchange("slack:1731900000.123456", "What's the weather?", "Light rain.")
    conversations.add_exchange("cli:session-1731900000000", "Hello", "Hi!")
    app = create_app(settings)
    app.config.update(TESTING=True)
    return app


URL_ATTRS = (
    "href",
    "src",
    "action",
    "hx-get",
    "hx-post",
    "hx-put",
    "hx-delete",
    "hx-patch",
    "formaction",
    "poster",
    "data-url",
    "hx-push-url",
    "hx-replace-url",
)
URL_ATTR = re.compile(
    r"\s(" + "|".join(re.escape(a) for a in URL_ATTRS) + r"|data-[\w-]*url[\w-]*)"
    r'\s*=\s*(["\'])(.*?)\2',
    re.I | re.S,
)
HEADERS_WITH_URLS = ("Location", "HX-Redirect", "HX-Location", "HX-Push-Url", "HX-Replace-Url")


def unprefixed_urls(html: str) -> list[str]:
    """Root-absolute URLs in URL attributes that do not start with the ingress prefix."""
    bad = []
    for attr, _, raw in URL_ATTR.findall(html):
        value = html_lib.unescape(raw).strip()
        if value.startswith("/") and not value.startswith(PREFIX + "/") and value != PREFIX:
            bad.append(f"{attr}={value}")
    srcset = re.findall(r'srcset\s*=\s*"([^"]*)"', html)
    bad += [f"srcset={s}" for s in srcset if re.search(r"(^|,\s*)/(?!api/hassio_ingress/)", s)]
    return bad


def header_urls(response) -> list[str]:
    found = []
    for name in HEADERS_WITH_URLS:
        value = response.headers.get(name)
        if not value:
            continue
        if value.lstrip().startswith("{"):
            value = json.loads(value).get("path", "")
        found.append(value)
    return found


def test_every_page_and_partial_carries_the_prefix(addon_app):
    """Crawl every GET URL the app links to (pages and htmx partials) and check every URL."""
    client = addon_app.test_client()
    start = [
        rule.rule
        for rule in addon_app.url_map.iter_rules()
        if "GET" in rule.methods and not rule.arguments and rule.endpoint != "static"
    ]
    queue = [PREFIX + path for path in start]
    seen: set[str] = set()
    problems: list[str] = []
    visited = 0
    while queue and visited < 150:
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        for htmx in (False, True):
            response = ingress_get(client, url[len(PREFIX) :], htmx=htmx)
            visited += 1
            for target in header_urls(response):
                if target.startswith("/") and not target.startswith(PREFIX + "/"):
                    problems.append(f"{url} header -> {target}")
            if response.mimetype != "text/html":
                continue
            body = response.get_data(as_text=True)
            problems += [f"{url} (htmx={htmx}): {bad}" for bad in unprefixed_urls(body)]
            for _, _, raw in URL_ATTR.findall(body):
                link = urlsplit(html_lib.unescape(raw))
                if link.path.startswith(PREFIX + "/") and "/static/" not in link.path:
                    queue.append(link.path + (f"?{link.query}" if link.query else ""))
    assert visited > 10, f"the crawl found too little to be meaningful: {sorted(seen)}"
    assert any("/memories/" in u for u in seen)
    assert not problems, "URLs without the ingress prefix:\n" + "\n".join(problems)


def test_redirects_carry_the_prefix(addon_app):
    response = ingress_get(addon_app.test_client(), "/")
    assert response.status_code in (302, 303)
    assert response.headers["Location"].startswith(PREFIX + "/")


def test_scanner_catches_a_stray_url():
    """The scan above must be able to fail."""
    html = (
        '<a href="/memories/">x</a><form action="/x"></form><div hx-get=\'/p\'></div>'
        f'<a href="{PREFIX}/ok">ok</a><img src="data:," alt="">'
    )
    assert unprefixed_urls(html) == ["href=/memories/", "action=/x", "hx-get=/p"]


def test_user_name_is_shown_and_escaped(addon_app):
    client = addon_app.test_client()
    html = ingress_get(client, "/memories/", name="Zoë <script>alert(1)</script>").get_data(
        as_text=True
    )
    assert "Zoë &lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert(1)" not in html


def test_user_name_becomes_the_history_actor(addon_app):
    @addon_app.get("/_test/actor")
    def _actor():
        return actor()

    client = addon_app.test_client()
    assert (
        ingress_get(client, "/_test/actor", name="Ada Lovelace").get_data(as_text=True)
        == "Ada Lovelace"
    )
    assert ingress_get(client, "/_test/actor", name=None).get_data(as_text=True) == "dashboard"
    forged = client.get(
        "/_test/actor",
        headers={"X-Remote-User-Display-Name": "Mallory"},
        environ_base={"REMOTE_ADDR": "10.1.1.1"},
    )
    assert forged.status_code == 403


def test_addon_app_refuses_direct_visitors_with_headers(addon_app):
    response = addon_app.test_client().get(
        "/memories/", environ_base={"REMOTE_ADDR": "192.168.1.5"}
    )
    assert response.status_code == 403
    assert "memory_allow_direct_access" in response.get_data(as_text=True)


def test_security_headers_and_cookie_behind_ingress(addon_app):
    response = ingress_get(addon_app.test_client(), "/memories/")
    assert response.status_code == 200
    assert response.headers["X-Frame-Options"] == "SAMEORIGIN"
    assert "frame-ancestors 'self'" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    cookie = response.headers["Set-Cookie"]
    name = cookie.split("=", 1)[0]
    assert name.startswith("memory_curator_session_") and name != "memory_curator_session"
    assert f"Path={PREFIX};" in cookie or cookie.endswith(f"Path={PREFIX}")
    assert "HttpOnly" in cookie


def test_cookie_names_differ_per_ingress_path(tmp_path):
    app = create_app(addon(tmp_path))
    other = "/api/hassio_ingress/another_token"
    names = set()
    for prefix in (PREFIX, other):
        response = app.test_client().get(
            "/memories/", headers={"X-Ingress-Path": prefix}, environ_base={"REMOTE_ADDR": HA}
        )
        names.add(response.headers["Set-Cookie"].split("=", 1)[0])
    assert len(names) == 2


def test_post_through_ingress_keeps_session_and_records_actor(addon_app):
    """CSRF (kept in the session) works through ingress, and the history names the HA user."""
    client = addon_app.test_client()
    # Full paths (as the browser uses them), so the test client sends the path-scoped cookie.
    page = ingress_get(client, PREFIX + "/memories/").get_data(as_text=True)
    token = re.search(r'"X-CSRFToken": "([^"]+)"', page).group(1)
    with addon_app.test_request_context():
        add_url = url_for("memories.add")
    response = client.post(
        PREFIX + add_url,
        data={"content": "Likes ingress", "category": "general"},
        headers={
            "X-Ingress-Path": PREFIX,
            "X-CSRFToken": token,
            "X-Remote-User-Display-Name": "Ada Lovelace",
        },
        environ_base={"REMOTE_ADDR": HA},
    )
    assert response.status_code < 400, response.get_data(as_text=True)[:300]
    if "Location" in response.headers:
        assert response.headers["Location"].startswith(PREFIX + "/")
    store = MemoryStore(addon_app.config["MEMORY_SETTINGS"].memory_file)
    added = [m for m in store.get_all() if m.content == "Likes ingress"]
    assert len(added) == 1
    assert [e["actor"] for e in store.history(added[0].id)] == ["Ada Lovelace"]


def test_standalone_ignores_settings_for_addon(tmp_path):
    """Standalone (not the add-on) serves any address: the token login guards it instead."""
    app = create_app(make_settings(tmp_path))
    response = app.test_client().get("/memories/", environ_base={"REMOTE_ADDR": "192.168.1.5"})
    assert response.status_code == 200


def test_settings_default_trusts_only_the_supervisor():
    assert Settings().trusted_proxies == ("172.30.32.2",)
    assert dataclasses.replace(Settings(), is_addon=True).allow_direct_access is False


@pytest.mark.parametrize("theme", ["auto", "light", "dark"])
def test_theme_option_reaches_the_page(tmp_path, theme):
    """prefers-color-scheme by default (auto); the add-on's memory_theme option overrides it."""
    app = create_app(addon(tmp_path, theme=theme))
    html = ingress_get(app.test_client(), "/memories/").get_data(as_text=True)
    assert f'<html lang="en" data-theme="{theme}"' in html


def test_static_files_behind_ingress_are_versioned_cached_and_compressed(addon_app):
    """Through Home Assistant's proxy the page's static URLs carry the prefix and a content
    hash; asked for by that hash, a file may be kept for a year and comes compressed."""
    client = addon_app.test_client()
    page = ingress_get(client, "/memories/").get_data(as_text=True)
    statics = re.findall(r'(?:href|src)="([^"]*/static/[^"]+)"', page)
    assert statics and all(u.startswith(PREFIX + "/static/") for u in statics)
    for url in statics:
        link = urlsplit(html_lib.unescape(url))
        assert re.fullmatch(r"v=[0-9a-f]{12}", link.query), url
        path = link.path[len(PREFIX) :] + "?" + link.query
        response = client.get(
            path,
            headers={"X-Ingress-Path": PREFIX, "Accept-Encoding": "gzip"},
            environ_base={"REMOTE_ADDR": HA},
        )
        assert response.status_code == 200
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        if response.content_length > 1000:
            assert response.headers["Content-Encoding"] == "gzip", url
