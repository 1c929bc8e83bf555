"""Secrets are not memories, on the dashboard: adding or editing a memory that holds one is
refused with the reason (in the page's language) and a confirm checkbox; an import refuses it
line by line in its preview; Needs attention lists a memory that already holds one, masked;
Review says why a proposal leaves its secret out."""

from __future__ import annotations

import io
import json
import re
from html import unescape

import pytest

from tests.support.data import on_disk
from webapp.stores import MemoryStore, Proposal, ReviewQueue

DOOR = "The garage door code is 4821"
ZH_TW = {"Accept-Language": "zh-TW"}


@pytest.fixture
def store(settings) -> MemoryStore:
    return MemoryStore.from_settings(settings, actor="test")


def text(response) -> str:
    return unescape(response.get_data(as_text=True))


def test_adding_a_secret_is_refused_with_a_confirm_box_then_kept_when_confirmed(
    client, settings
) -> None:
    refused = client.post("/memories/", htmx=True, data={"content": DOOR, "category": "general"})
    page = text(refused)
    assert refused.status_code == 422
    assert "door, alarm or PIN code" in page and "••••" in page
    assert 'name="confirm_secret"' in page
    assert on_disk(settings.memory_file) == []
    kept = client.post(
        "/memories/",
        htmx=True,
        data={"content": DOOR, "category": "general", "confirm_secret": "1"},
    )
    assert kept.status_code == 200
    assert [r["content"] for r in on_disk(settings.memory_file)] == [DOOR]


def test_the_refusal_is_in_the_pages_language(client, settings) -> None:
    refused = client.post(
        "/memories/", htmx=True, headers=ZH_TW, data={"content": "大門密碼是 2580"}
    )
    page = text(refused)
    assert refused.status_code == 422
    assert "門、警報或 PIN 密碼" in page and "大門密碼是 ••••" in page
    assert "2580" not in page.replace('value="大門密碼是 2580"', "").split("<textarea")[0]
    assert on_disk(settings.memory_file) == []


def test_an_edit_that_adds_a_secret_is_refused_until_confirmed(client, store) -> None:
    memory = store.add("Has a garage door code.")
    form = {"content": DOOR, "category": "general", "expected_updated_at": memory.version}
    refused = client.post(f"/memories/{memory.id}", htmx=True, data=form)
    assert refused.status_code == 422 and 'name="confirm_secret"' in text(refused)
    assert store.get(memory.id).content == "Has a garage door code."
    saved = client.post(f"/memories/{memory.id}", htmx=True, data={**form, "confirm_secret": "1"})
    assert saved.status_code == 200
    assert store.get(memory.id).content == DOOR


def test_an_import_refuses_each_line_that_holds_a_secret_unless_confirmed(client, settings) -> None:
    records = [
        {"id": "plain", "content": "Prefers oat milk."},
        {"id": "door", "content": DOOR},
    ]
    preview = client.post(
        "/memories/import",
        htmx=True,
        content_type="multipart/form-data",
        data={"file": (io.BytesIO(json.dumps(records).encode()), "memories.json")},
    )
    page = text(preview)
    assert preview.status_code == 200
    assert "The garage door code is ••••" in page and "4821" not in page.split("<form")[0]
    assert "door, alarm or PIN code" in page
    payload = re.search(r'name="payload" value="([^"]*)"', preview.get_data(as_text=True))
    confirm = client.post(
        "/memories/import/confirm", htmx=True, data={"payload": unescape(payload.group(1))}
    )
    assert confirm.status_code == 200
    assert [r["id"] for r in on_disk(settings.memory_file)] == ["plain"]
    assert "1 refused" in text(confirm)
    again = client.post(
        "/memories/import/confirm",
        htmx=True,
        data={"payload": unescape(payload.group(1)), "confirm_secrets": "1"},
    )
    assert again.status_code == 200
    assert [r["id"] for r in on_disk(settings.memory_file)] == ["plain", "door"]


def test_needs_attention_lists_a_memory_that_holds_a_secret_masked(client, store) -> None:
    store.add("Prefers oat milk.")
    secret = store.add("My bank card is 4111 1111 1111 1111")
    page = text(client.get("/attention/?kind=secret"))
    assert "My bank card is ••••1111" in page
    assert "4111 1111 1111 1111" not in page
    assert "card number" in page
    assert "Has a card number (not kept in memory)." in page  # the rewrite offered
    zh = text(client.get("/attention/?kind=secret", headers=ZH_TW))
    assert "卡號" in zh and "4111 1111 1111 1111" not in zh
    rewrite = client.post(
        "/attention/rewrite",
        htmx=True,
        data={
            "id": secret.id,
            "version": secret.version,
            "content": "Has a card number (not kept in memory).",
            "kind": "secret",
        },
    )
    assert rewrite.status_code == 200
    assert store.get(secret.id).content == "Has a card number (not kept in memory)."


def test_the_secrets_rewrite_keeps_the_clauses_that_hold_no_secret(client, store) -> None:
    memory = store.add("Guest Wi-Fi password is tulip-Rocket-88; the network is HomeNet-Guest.")
    kept = "Has a guest Wi-Fi password (not kept in memory); the network is HomeNet-Guest."
    page = text(client.get("/attention/?kind=secret"))
    assert "tulip-Rocket-88" not in page
    assert f'name="content" value="{kept}"' in page  # what the Rewrite button saves
    rewrite = client.post(
        "/attention/rewrite",
        htmx=True,
        data={"id": memory.id, "version": memory.version, "content": kept, "kind": "secret"},
    )
    assert rewrite.status_code == 200
    assert store.get(memory.id).content == kept


def test_review_says_why_a_proposal_leaves_its_secret_out(client, store, settings) -> None:
    queue = ReviewQueue.from_settings(settings, store)
    queue.submit(
        [
            Proposal(
                "add",
                "Has a garage door code (not kept in memory).",
                evidence="Remember the garage door code is ••••",
                withheld="access_code",
            )
        ]
    )
    page = text(client.get("/review/"))
    assert "door, alarm or PIN code" in page
    assert "never the secret itself" in page
