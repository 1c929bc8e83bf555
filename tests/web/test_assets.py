"""Compressed responses and static files cached by content hash (webapp/web/plumbing/assets.py)."""

from __future__ import annotations

import gzip
import re
from urllib.parse import urlsplit

import pytest

from tests.support.data import make_settings
from webapp import create_app
from webapp.stores import MemoryStore


@pytest.fixture
def client(tmp_path):
    settings = make_settings(tmp_path)
    store = MemoryStore.from_settings(settings).init()
    for n in range(60):
        store.add(f"Prefers tea number {n} 綠茶", category="preference")
    app = create_app(settings)
    app.config.update(TESTING=True)
    return app.test_client()


def static_urls(client) -> list[str]:
    page = client.get("/memories/").get_data(as_text=True)
    return re.findall(r'(?:href|src)="(/static/[^"]+)"', page)


def test_pages_are_compressed_only_when_the_client_accepts_it(client):
    plain = client.get("/memories/", headers={"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in plain.headers
    packed = client.get("/memories/", headers={"Accept-Encoding": "gzip"})
    assert packed.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in packed.headers["Vary"]
    assert packed.headers["Cache-Control"] == "no-store"  # pages are never cached
    text = gzip.decompress(packed.data).decode("utf-8")
    assert "Prefers tea number 59" in text
    assert len(packed.data) * 4 < len(plain.data)
    partial = client.get(
        "/memories/?q=tea", headers={"HX-Request": "true", "Accept-Encoding": "br"}
    )
    assert partial.headers["Content-Encoding"] == "br"


def test_static_urls_carry_the_content_hash_and_are_kept_for_a_year(client):
    urls = static_urls(client)
    assert any(u.split("?")[0].endswith(".js") for u in urls)
    assert any(u.split("?")[0].endswith(".css") for u in urls)
    for url in urls:
        response = client.get(url, headers={"Accept-Encoding": "gzip"})
        assert response.status_code == 200
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        body = response.data
        if response.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        path = urlsplit(url).path
        assert body == client.get(path, headers={"Accept-Encoding": "identity"}).data


def test_an_old_or_missing_hash_gets_a_validator_instead(client):
    url = next(u for u in static_urls(client) if "app.css" in u)
    path = urlsplit(url).path
    for stale in (path, path + "?v=000000000000"):
        response = client.get(stale, headers={"Accept-Encoding": "gzip"})
        assert response.status_code == 200
        assert "immutable" not in response.headers.get("Cache-Control", "")
        etag = response.headers["ETag"]
        again = client.get(stale, headers={"Accept-Encoding": "gzip", "If-None-Match": etag})
        assert again.status_code == 304 and again.data == b""


def test_a_changed_file_gets_a_new_url(tmp_path, client):
    from webapp.web.plumbing import assets

    css = tmp_path / "x.css"
    css.write_text("a{}", encoding="utf-8")
    first = assets.content_hash(css)
    css.write_text("b{color:red}", encoding="utf-8")
    assert assets.content_hash(css) not in (None, first)
