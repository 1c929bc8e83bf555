"""The app shell: factory, security headers, health, error pages, CSRF."""

from __future__ import annotations

import json

from webapp.settings import Settings
from webapp.web.plumbing.security import CONTENT_SECURITY_POLICY


def test_index_redirects_to_memories(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response.headers["Location"].endswith("/memories/")


def test_every_page_has_security_headers(client):
    response = client.get("/memories/")
    assert response.status_code == 200
    csp = response.headers["Content-Security-Policy"]
    assert csp == CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert "frame-ancestors 'self'" in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert "HX-Request" in response.headers["Vary"]


def test_healthz_reports_each_store(client, settings: Settings):
    body = client.get("/healthz").get_json()
    assert body["status"] == "ok"
    assert body["stores"]["memories"] in ("ok", "missing")
    settings.memory_file.parent.mkdir(parents=True, exist_ok=True)
    settings.memory_file.write_bytes(b'[{"id": "a", "content": "x"},')
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.get_json()["stores"]["memories"] == "corrupt"


def test_corrupt_store_shows_banner_not_500(client, settings: Settings):
    settings.memory_file.parent.mkdir(parents=True, exist_ok=True)
    damaged = b'{"not": "an array"}'
    settings.memory_file.write_bytes(damaged)
    response = client.get("/memories/")
    assert response.status_code == 503
    html = response.get_data(as_text=True)
    assert "damaged" in html and "memory-curator repair" in html
    assert settings.memory_file.read_bytes() == damaged


def test_unknown_page_is_a_friendly_404(client):
    response = client.get("/no/such/page")
    assert response.status_code == 404
    assert "Not found" in response.get_data(as_text=True)


def test_htmx_error_is_retargeted_to_banner(client):
    response = client.get("/no/such/page", htmx=True)
    assert response.status_code == 404
    assert response.headers["HX-Retarget"] == "#banner"
    assert "<html" not in response.get_data(as_text=True)


def test_csrf_token_is_sent_by_htmx_from_body_attribute(client, settings):
    html = client.get("/memories/").get_data(as_text=True)
    start = html.index("hx-headers='") + len("hx-headers='")
    headers = json.loads(html[start : html.index("'", start)])
    response = client.raw.post(
        "/memories/",
        data={"content": "Likes tea", "category": "general"},
        headers={"HX-Request": "true", **headers},
    )
    assert response.status_code < 400
    refused = client.raw.post(
        "/memories/",
        data={"content": "Likes coffee", "category": "general"},
        headers={"HX-Request": "true"},
    )
    assert refused.status_code == 400
    contents = [r["content"] for r in json.loads(settings.memory_file.read_text("utf-8"))]
    assert contents == ["Likes tea"]


def test_secret_key_is_shared_by_every_app_on_the_same_data(settings):
    from webapp import create_app

    assert create_app(settings).secret_key == create_app(settings).secret_key
    key_file = settings.data_dir / ".secret_key"
    assert key_file.stat().st_mode & 0o077 == 0


def test_healthz_reports_an_unreadable_store_as_json(client, settings: Settings):
    settings.memory_file.parent.mkdir(parents=True, exist_ok=True)
    settings.memory_file.mkdir()  # a folder where the file belongs: unreadable even as root
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.get_json()
    assert body["status"] == "unreadable" and body["stores"]["memories"] == "unreadable"
