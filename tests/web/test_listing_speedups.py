"""The page-rendering shortcuts give exactly what the plain way gave: row URLs built once per
request equal url_for (ingress prefix included), and cached rows stay right for each visitor."""

from __future__ import annotations

import pytest
from flask import url_for

from tests.support.data import make_settings
from webapp import create_app
from webapp.web.plumbing.memory_rows import memory_url

ODD_IDS = ["abc123", "a b", "中文", "a/b", "100%", "?#&=", "é\u0301", "x" * 100]


@pytest.mark.parametrize("prefix", ["", "/api/hassio_ingress/Tok3n"])
def test_row_urls_equal_url_for(tmp_path, prefix):
    app = create_app(make_settings(tmp_path))
    with app.test_request_context("/memories/", base_url=f"http://localhost{prefix}/"):
        for endpoint in ("memories.edit", "provenance.history", "memories.delete", "memories.row"):
            for memory_id in ODD_IDS:
                expected = url_for(endpoint, memory_id=memory_id)
                assert memory_url(endpoint, memory_id) == expected
                assert expected.startswith(prefix + "/memories/")


def test_cached_rows_carry_each_visitors_prefix_token_and_the_current_content(tmp_path):
    """Rows are rendered once per file version, search text and prefix; the CSRF token is the
    requesting session's, and a change to the file shows at once."""
    import re

    from webapp.stores import MemoryStore

    settings = make_settings(tmp_path, is_addon=True, allow_direct_access=True)
    store = MemoryStore.from_settings(settings).init()
    memory = store.add("Prefers green tea")
    app = create_app(settings)
    app.config.update(TESTING=True)
    prefix = "/api/hassio_ingress/Tok3n"

    def rows(client, headers=None):
        html = client.get("/memories/", headers=headers or {}).get_data(as_text=True)
        page_token = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
        row = html[html.index(f'id="memory-{memory.id}"') :].split("</tr>")[0]
        return row, page_token

    first, second = app.test_client(), app.test_client()
    plain, token_a = rows(first)
    behind, token_b = rows(
        second, {"X-Ingress-Path": prefix}
    )  # not from the proxy's address: ignored
    assert f'action="/memories/{memory.id}/delete"' in plain
    assert f'value="{token_a}"' in plain and f'value="{token_b}"' in behind
    assert token_a != token_b
    proxied = second.get(
        "/memories/",
        headers={"X-Ingress-Path": prefix},
        environ_base={"REMOTE_ADDR": "172.30.32.2"},
    ).get_data(as_text=True)
    assert f'action="{prefix}/memories/{memory.id}/delete"' in proxied
    store.update(memory.id, "Prefers oolong tea")
    assert "Prefers oolong tea" in rows(first)[0]


@pytest.mark.parametrize("with_conversations", [False, True])
def test_rows_are_rendered_once_per_file_version(tmp_path, with_conversations):
    """A second view of the same page reuses every row, also before any conversation was
    saved (the row cache was keyed on a token the missing conversations file renewed on each
    request, so every view rendered all its rows again: 7× slower at 50 rows)."""
    from webapp.stores import ConversationStore, MemoryStore
    from webapp.web.plumbing.context import stores

    settings = make_settings(tmp_path)
    store = MemoryStore.from_settings(settings).init()
    for i in range(5):
        store.add(f"Fact number {i}")
    if with_conversations:
        ConversationStore.from_settings(settings).add_exchange("cli:one", "hello", "hi")
    app = create_app(settings)
    client = app.test_client()
    for _ in range(3):
        assert client.get("/memories/").get_data(as_text=True).count('class="memory-row"') == 5
    with app.test_request_context("/memories/"):
        cache = stores().memories.cached("web.row_html", dict)
    assert len(cache) == 5, f"{len(cache)} rows rendered for 5 memories viewed three times"
