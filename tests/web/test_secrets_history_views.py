"""After "Rewrite as … (not kept in memory)" on Needs attention, the dashboard never shows or
offers back the secret: not on the memory's History page, not through any Restore it offers,
not through the rewrite's Undo, not on Recently deleted (issue 35, item 13)."""

from __future__ import annotations

import re
from html import unescape

import pytest

from webapp.sensitive.secrets import find_secrets
from webapp.stores import MemoryStore

CASES = [
    ("The garage door code is 4821", "4821"),
    ("Guest Wi-Fi password is tulip-Rocket-88; the network is HomeNet-Guest.", "tulip-Rocket-88"),
    ("保險箱是 4821", "4821"),
]


@pytest.fixture
def store(settings) -> MemoryStore:
    return MemoryStore.from_settings(settings, actor="test")


def text(response) -> str:
    return unescape(response.get_data(as_text=True))


def rewrite(client, memory):
    finding = find_secrets(memory.content)
    assert finding is not None
    data = {"id": memory.id, "version": memory.version, "content": finding.fact, "kind": "secret"}
    return client.post("/attention/rewrite", htmx=True, data=data)


@pytest.mark.parametrize(("content", "secret"), CASES)
def test_after_the_rewrite_history_shows_no_secret_and_no_restore_brings_it_back(
    client, store, content, secret
) -> None:
    memory = store.add(content)
    done = rewrite(client, memory)
    assert done.status_code == 200
    assert secret not in text(done)
    assert "undo-rewrite" not in text(done)  # its Undo would bring back a masked text
    page = text(client.get(f"/memories/{memory.id}/history"))
    assert secret not in page
    refs = re.findall(r'name="ref" value="([^"]+)"', page)
    for ref in refs:
        client.post("/memories/restore", data={"ref": ref, "return": "history"})
        assert secret not in store.get(memory.id).content
    assert secret not in text(client.get(f"/memories/{memory.id}/history"))


def test_a_history_written_before_the_fix_is_shown_masked(client, store) -> None:
    memory = store.add("The garage door code is 4821")
    store.update(memory.id, "Has a garage door code (not kept in memory).")
    log = store.history_path
    log.write_text(log.read_text("utf-8").replace("••••", "4821"), "utf-8")
    page = text(client.get(f"/memories/{memory.id}/history"))
    assert "4821" not in page and "The garage door code is ••••" in page


def test_recently_deleted_never_lists_a_secret(client, store) -> None:
    memory = store.add("The alarm code is 9157")
    store.delete(memory.id)
    page = text(client.get("/memories/deleted"))
    assert "9157" not in page and "The alarm code is ••••" in page
