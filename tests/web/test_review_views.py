"""Review views through the Flask test client: full pages and htmx partials, decisions on disk."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.support.data import make_settings
from tests.support.review import queue_fact, stores_of
from tests.support.web import CsrfClient
from webapp import create_app
from webapp.extraction import MemoryExtractor, ReconcileAction
from webapp.stores import ConversationStore
from webapp.stores.review import Proposal
from webapp.web.plumbing.review_page import diff_segments


def status_of(settings, item_id):
    _, queue = stores_of(settings)
    return queue.get(item_id).status


def badge(html: str) -> str:
    """The number in the nav badge ('' when it is empty); fails when there is no badge."""
    match = re.search(r'<span id="review-badge"[^>]*>(?:<span class="badge">(\d+)<)?', html)
    assert match, "no review badge in the response"
    return match.group(1) or ""


# ----------------------------------------------------------------- the list
def test_full_page_lists_pending_fact_with_evidence_and_details(client, settings):
    item = queue_fact(settings, confidence=0.85, extractor="llm")
    response = client.get("/review/")
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "<!doctype html>" in html
    assert "User prefers tabs over spaces" in html
    assert "I always use tabs, never spaces." in html
    assert "85%" in html and "LLM" in html and "convention" in html
    assert f'id="item-{item.id}"' in html
    assert badge(html) == "1"


def test_partial_is_the_panel_only_and_varies_on_htmx(client, settings):
    queue_fact(settings)
    response = client.get("/review/", htmx=True)
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert html.lstrip().startswith('<section id="review-panel"')
    assert "<html" not in html
    assert "User prefers tabs over spaces" in html
    assert "HX-Request" in response.headers["Vary"]


def test_newest_first(client, settings):
    first = queue_fact(settings, "User lives in Taipei")
    second = queue_fact(settings, "User works on the Memory Curator project", category="project")
    html = client.get("/review/").get_data(as_text=True)
    assert (
        html.index(f"item-{second.id}") < html.index(f"item-{first.id}")
        or first.created_at == second.created_at
    )


def test_empty_state_says_what_the_page_is_for(client):
    html = client.get("/review/").get_data(as_text=True)
    assert "Nothing to review" in html
    assert badge(html) == ""


def test_conversation_links_to_its_thread_while_the_thread_is_kept(app, client, settings):
    ConversationStore.from_settings(settings).add_exchange(
        "slack:C01:1700", "Tabs or spaces?", "Tabs."
    )
    queue_fact(settings, conversation_id="slack:C01:1700")
    queue_fact(settings, "Prefers dark mode", conversation_id="slack:C01:1600")
    html = client.get("/review/").get_data(as_text=True)
    with app.test_request_context():
        from flask import url_for

        link = url_for("conversations.thread", conversation_id="slack:C01:1700")
        gone = url_for("conversations.thread", conversation_id="slack:C01:1600")
    assert f'<a href="{link}" title="slack:C01:1700" translate="no">Tabs or spaces?</a>' in html
    assert f'href="{gone}"' not in html  # a cleared thread has no page to link to
    assert "Slack thread no longer kept" in html and "slack:C01:1600" in html


def test_hostile_fact_and_evidence_are_escaped(client, settings):
    payload = '<script>alert(1)</script><img src=x onerror=alert(2)> hx-get="/x"'
    queue_fact(settings, "User says " + payload, evidence=payload)
    html = client.get("/review/").get_data(as_text=True)
    assert "<script>alert(1)</script>" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_update_shows_a_diff_against_the_memory_it_changes(client, settings):
    memories, _ = stores_of(settings)
    memory = memories.add("User prefers vim <b>", category="tool")
    queue_fact(
        settings,
        "User prefers neovim instead of vim <b>",
        action="update",
        memory_id=memory.id,
        current_content=memory.content,
        category="tool",
    )
    html = client.get("/review/").get_data(as_text=True)
    assert "Update memory" in html
    ins = re.findall(r"<ins>(.*?)</ins>", html, re.S)
    assert any("neovim instead of" in piece for piece in ins)
    assert "&lt;b&gt;" in html and "vim <b>" not in html


@pytest.mark.parametrize(
    "before, after, deleted, inserted",
    [
        ("User prefers vim", "User prefers neovim", ["vim"], ["neovim"]),
        ("我喜歡用 vim 寫程式", "我喜歡用 neovim 寫程式", ["vim"], ["neovim"]),
        ("我住在台北", "我住在台中", ["北"], ["中"]),
        ("<b>old</b>", "<b>new</b>", ["old"], ["new"]),
    ],
)
def test_diff_segments_word_and_chinese_character_level(before, after, deleted, inserted):
    segments = diff_segments(before, after)
    assert [t for op, t in segments if op == "del"] == deleted
    assert [t for op, t in segments if op == "ins"] == inserted
    assert "".join(t for op, t in segments if op != "ins") == before
    assert "".join(t for op, t in segments if op != "del") == after


def test_unknown_tab_falls_back_to_pending(client, settings):
    queue_fact(settings)
    html = client.get("/review/?tab=<script>").get_data(as_text=True)
    assert "User prefers tabs over spaces" in html and "<script>" not in html.split("<main")[1]


# ----------------------------------------------------------------- approve / edit / reject
def test_approve_htmx_writes_memory_and_updates_badge(client, settings):
    item = queue_fact(settings)
    other = queue_fact(settings, "User lives in Taipei", category="general")
    response = client.post(f"/review/{item.id}/approve", htmx=True)
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    memories, _ = stores_of(settings)
    [memory] = memories.get_all()
    assert memory.content == "User prefers tabs over spaces"
    assert memory.category == "convention"
    assert status_of(settings, item.id) == "approved"
    assert f"item-{item.id}" not in html and f"item-{other.id}" in html
    assert 'id="review-badge" hx-swap-oob="true"' in html and badge(html) == "1"
    assert "announce" in json.loads(response.headers["HX-Trigger"])


def test_approve_without_htmx_redirects_back(client, settings):
    item = queue_fact(settings)
    response = client.post(f"/review/{item.id}/approve")
    assert response.status_code == 303
    assert response.headers["Location"].endswith("/review/?tab=pending")
    assert status_of(settings, item.id) == "approved"


def test_approving_twice_is_harmless(client, settings):
    item = queue_fact(settings)
    client.post(f"/review/{item.id}/approve", htmx=True)
    client.post(f"/review/{item.id}/approve", htmx=True)
    memories, _ = stores_of(settings)
    assert len(memories.get_all()) == 1


def test_edit_form_partial_and_full_page(client, settings):
    item = queue_fact(settings, "User prefers tabs & <spaces>")
    partial = client.get(f"/review/{item.id}/edit", htmx=True).get_data(as_text=True)
    assert partial.lstrip().startswith(f'<article id="item-{item.id}"')
    assert f'<textarea id="edit-{item.id}" name="content"' in partial
    assert "User prefers tabs &amp; &lt;spaces&gt;</textarea>" in partial
    full = client.get(f"/review/{item.id}/edit").get_data(as_text=True)
    assert "<!doctype html>" in full and f'id="edit-{item.id}"' in full


def test_cancel_edit_returns_the_card(client, settings):
    item = queue_fact(settings)
    html = client.get(f"/review/{item.id}", htmx=True).get_data(as_text=True)
    assert html.lstrip().startswith(f'<article id="item-{item.id}"') and "<textarea" not in html
    assert client.get(f"/review/{item.id}").status_code == 303


def test_edit_then_approve_stores_the_edited_text(client, settings):
    item = queue_fact(settings, "User prefer tab")
    response = client.post(
        f"/review/{item.id}/approve", data={"content": "  User prefers tabs  "}, htmx=True
    )
    assert response.status_code == 200
    memories, queue = stores_of(settings)
    assert [m.content for m in memories.get_all()] == ["User prefers tabs"]
    assert queue.get(item.id).applied_content == "User prefers tabs"


@pytest.mark.parametrize("blank", ["   ", "\u200b\u200b", "\ufeff \u2060"])
def test_edit_with_empty_content_is_refused_next_to_the_field(client, settings, blank):
    item = queue_fact(settings)
    response = client.post(f"/review/{item.id}/approve", data={"content": blank}, htmx=True)
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert f'id="edit-{item.id}-error"' in html and "cannot be empty" in html
    assert 'aria-invalid="true"' in html
    assert status_of(settings, item.id) == "pending"
    assert stores_of(settings)[0].get_all() == []


def test_deciding_one_fact_keeps_open_edits_and_ticks_of_the_others(client, settings):
    editing = queue_fact(settings, "User prefers tabs")
    ticked = queue_fact(settings, "User likes jazz")
    rejected = queue_fact(settings, "User likes rain")
    response = client.post(
        f"/review/{rejected.id}/reject",
        htmx=True,
        data={
            f"draft-{editing.id}": "User prefers tabs <b>always</b>",
            "keep_selected": [ticked.id],
            f"draft-{rejected.id}": "gone with its item",
        },
    )
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert re.search(
        rf'<textarea id="edit-{editing.id}"[^>]*>User prefers tabs '
        r"&lt;b&gt;always&lt;/b&gt;</textarea>",
        html,
    )
    assert re.search(rf'value="{ticked.id}"[^>]*\schecked', html)
    assert "gone with its item" not in html
    assert status_of(settings, rejected.id) == "rejected"
    assert status_of(settings, editing.id) == "pending"


def test_reject_remembers_and_the_fact_is_not_proposed_again(client, settings):
    item = queue_fact(settings)
    response = client.post(f"/review/{item.id}/reject", htmx=True)
    assert response.status_code == 200
    assert status_of(settings, item.id) == "rejected"
    assert stores_of(settings)[0].get_all() == []
    _, queue = stores_of(settings)
    again = queue.submit([Proposal("add", "user prefers tabs over spaces!", "convention")])
    assert again == []


@pytest.mark.parametrize(
    "method, path",
    [
        ("get", "/review/nope/edit"),
        ("get", "/review/nope"),
        ("post", "/review/nope/approve"),
        ("post", "/review/nope/reject"),
        ("post", "/review/nope/undo"),
    ],
)
@pytest.mark.parametrize("htmx", [False, True])
def test_unknown_item_is_404(client, method, path, htmx):
    response = getattr(client, method)(path, htmx=htmx)
    assert response.status_code == 404
    if htmx:
        assert response.headers.get("HX-Retarget") == "#banner"


@pytest.mark.parametrize("path", ["/review/{id}/approve", "/review/{id}/reject", "/review/bulk"])
def test_csrf_is_required(client, settings, path):
    item = queue_fact(settings)
    response = client.post(
        path.format(id=item.id),
        data={"ids": [item.id], "decision": "approve"},
        csrf=False,
        htmx=True,
    )
    assert response.status_code == 400
    assert status_of(settings, item.id) == "pending"
    assert stores_of(settings)[0].get_all() == []


# ----------------------------------------------------------------- bulk
def test_bulk_approve_and_reject_selected(client, settings):
    a = queue_fact(settings, "User lives in Taipei", category="general")
    b = queue_fact(settings, "User prefers dark roast coffee", category="preference")
    c = queue_fact(settings, "User works on Memory Curator", category="project")
    response = client.post(
        "/review/bulk", data={"decision": "approve", "ids": [a.id, b.id]}, htmx=True
    )
    assert response.status_code == 200
    assert badge(response.get_data(as_text=True)) == "1"
    response = client.post("/review/bulk", data={"decision": "reject", "ids": [c.id]}, htmx=True)
    assert [status_of(settings, i.id) for i in (a, b, c)] == ["approved", "approved", "rejected"]
    contents = sorted(m.content for m in stores_of(settings)[0].get_all())
    assert contents == ["User lives in Taipei", "User prefers dark roast coffee"]
    assert "Nothing to review" in response.get_data(as_text=True)


@pytest.mark.parametrize(
    "data, message",
    [
        ({"decision": "approve"}, "Select at least one fact"),
        ({"decision": "explode", "ids": ["x"]}, "Choose Approve selected or Reject selected"),
    ],
)
def test_bulk_validation(client, settings, data, message):
    item = queue_fact(settings)
    response = client.post("/review/bulk", data=data, htmx=True)
    assert response.status_code == 422
    assert message in response.get_data(as_text=True)
    assert status_of(settings, item.id) == "pending"


def test_bulk_without_htmx_redirects(client, settings):
    item = queue_fact(settings)
    response = client.post("/review/bulk", data={"decision": "reject", "ids": [item.id]})
    assert response.status_code == 303
    assert status_of(settings, item.id) == "rejected"


# ----------------------------------------------------------------- decided tab and undo
def test_decided_tab_full_and_partial(client, settings):
    item = queue_fact(settings)
    client.post(f"/review/{item.id}/reject", htmx=True)
    full = client.get("/review/?tab=decided").get_data(as_text=True)
    assert "Rejected" in full and "User prefers tabs over spaces" in full and "Undo" in full
    partial = client.get("/review/?tab=decided", htmx=True).get_data(as_text=True)
    assert partial.lstrip().startswith('<section id="review-panel"') and "Undo" in partial


def test_undo_an_approval_removes_the_memory_and_requeues(client, settings):
    item = queue_fact(settings)
    client.post(f"/review/{item.id}/approve", htmx=True)
    assert len(stores_of(settings)[0].get_all()) == 1
    response = client.post(f"/review/{item.id}/undo", htmx=True)
    assert response.status_code == 200
    assert stores_of(settings)[0].get_all() == []
    assert status_of(settings, item.id) == "pending"
    assert badge(response.get_data(as_text=True)) == "1"


def test_undo_an_update_restores_the_old_text(client, settings):
    memories, _ = stores_of(settings)
    memory = memories.add("User prefers vim", category="tool")
    item = queue_fact(
        settings,
        "User prefers neovim",
        action="update",
        memory_id=memory.id,
        current_content=memory.content,
    )
    client.post(f"/review/{item.id}/approve", htmx=True)
    assert stores_of(settings)[0].get(memory.id).content == "User prefers neovim"
    client.post(f"/review/{item.id}/undo")
    assert stores_of(settings)[0].get(memory.id).content == "User prefers vim"


def test_undo_refused_when_the_memory_changed_since(client, settings):
    memories, _ = stores_of(settings)
    memory = memories.add("User prefers vim", category="tool")
    item = queue_fact(
        settings,
        "User prefers neovim",
        action="update",
        memory_id=memory.id,
        current_content=memory.content,
    )
    client.post(f"/review/{item.id}/approve", htmx=True)
    memories.update(memory.id, "User prefers emacs now")
    response = client.post(f"/review/{item.id}/undo", htmx=True)
    assert response.status_code == 409
    assert "changed after the approval" in response.get_data(as_text=True)
    assert stores_of(settings)[0].get(memory.id).content == "User prefers emacs now"
    assert status_of(settings, item.id) == "approved"


# ----------------------------------------------------------------- full store
@pytest.fixture
def full_client(tmp_path):
    settings = make_settings(tmp_path, memory_max_items=1)
    app = create_app(settings)
    app.config.update(TESTING=True)
    memories, _ = stores_of(settings)
    memories.add("User already has one memory")
    return CsrfClient(app.test_client()), settings


def test_full_store_approve_is_explained_and_nothing_is_lost(full_client):
    client, settings = full_client
    item = queue_fact(settings)
    response = client.post(f"/review/{item.id}/approve", htmx=True)
    html = response.get_data(as_text=True)
    assert response.status_code == 409
    assert "Memory is full: 1 of 1 memories" in html
    assert "still pending" in html
    assert f"item-{item.id}" in html
    assert status_of(settings, item.id) == "pending"
    assert [m.content for m in stores_of(settings)[0].get_all()] == ["User already has one memory"]


def test_full_store_keeps_the_edited_text_in_the_form(full_client):
    client, settings = full_client
    item = queue_fact(settings)
    response = client.post(
        f"/review/{item.id}/approve", data={"content": "My edited fact"}, htmx=True
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 409
    assert "My edited fact</textarea>" in html
    assert status_of(settings, item.id) == "pending"


def test_full_store_bulk_approve_stops_and_says_how_many(full_client):
    client, settings = full_client
    a = queue_fact(settings, "User lives in Taipei")
    b = queue_fact(settings, "User drinks tea")
    response = client.post(
        "/review/bulk", data={"decision": "approve", "ids": [a.id, b.id]}, htmx=True
    )
    assert response.status_code == 409
    assert "these 2 facts are still pending" in response.get_data(as_text=True)
    assert {status_of(settings, a.id), status_of(settings, b.id)} == {"pending"}


# ----------------------------------------------------------------- the nav badge elsewhere
def test_nav_badge_counts_pending_on_other_pages(client, settings):
    memories, queue = stores_of(settings)
    extractor = MemoryExtractor(memories, review_queue=queue)
    extractor.submit(
        [
            ReconcileAction("add", None, "User prefers tea", "preference"),
            ReconcileAction("add", None, "User lives in Taipei", "general"),
        ],
        conversation_id="cli:me",
        evidence="I prefer tea. I live in Taipei.",
    )
    html = client.get("/memories/").get_data(as_text=True)
    assert badge(html) == "2"


def test_damaged_review_file_does_not_break_other_pages(client, settings):
    settings.review_file.parent.mkdir(parents=True, exist_ok=True)
    settings.review_file.write_bytes(b"[{not json")
    response = client.get("/memories/")
    assert response.status_code == 200
    assert client.get("/healthz").get_json()["stores"]["review"] == "corrupt"
    assert client.get("/review/").status_code == 503
    assert settings.review_file.read_bytes() == b"[{not json"


def test_a_flood_of_proposals_is_paged(client, settings):
    _, queue = stores_of(settings)
    queue.submit([Proposal("add", f"User fact number {i}", "general") for i in range(120)])
    html = client.get("/review/").get_data(as_text=True)
    assert html.count('class="card review-item') == 50
    assert "120 pending facts" in html and "Page 1 of 3" in html and ">Older</a>" in html
    last = client.get("/review/?page=3", htmx=True).get_data(as_text=True)
    assert last.count('class="card review-item') == 20 and ">Newer</a>" in last
    assert (
        client.get("/review/?page=99").get_data(as_text=True).count('class="card review-item') == 20
    )
    assert client.get("/review/?page=-1").status_code == 200


# ----------------------------------------------------------------- approving what the page showed
def _approve_fields(html: str, item_id: str) -> dict[str, str]:
    """The hidden fields of the card's Approve form, as the browser would send them."""
    form = re.search(
        rf'<form method="post" action="/review/{item_id}/approve"[^>]*>(.*?)</form>', html, re.S
    )
    assert form, "no approve form on the card"
    fields = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.group(1))
    return {name: value for name, value in fields if name != "csrf_token"}


def _edit_elsewhere(settings, memory_id: str, text: str) -> None:
    """Another program (an MCP client, a script) changes the memory: a separate process."""
    script = (
        "import sys\n"
        "from webapp.stores import MemoryStore\n"
        "MemoryStore(sys.argv[1], lock_timeout=5).update(sys.argv[2], sys.argv[3])\n"
    )
    subprocess.run(
        [sys.executable, "-c", script, str(settings.memory_file), memory_id, text],
        check=True,
        timeout=60,
    )


def _queued_update(settings):
    memories, _ = stores_of(settings)
    memory = memories.add("User prefers vim", category="tool")
    item = queue_fact(
        settings,
        "User prefers neovim",
        action="update",
        memory_id=memory.id,
        current_content=memory.content,
        category="tool",
    )
    return memory, item


def test_approve_refused_when_the_memory_changed_after_the_page_showed_it(client, settings):
    memory, item = _queued_update(settings)
    page = client.get("/review/").get_data(as_text=True)
    _edit_elsewhere(settings, memory.id, "User prefers helix now")
    response = client.post(
        f"/review/{item.id}/approve", data=_approve_fields(page, item.id), htmx=True
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 409
    assert "changed after this page showed it" in html
    assert "User prefers helix now" in html  # the card shows the new current text
    assert stores_of(settings)[0].get(memory.id).content == "User prefers helix now"
    assert status_of(settings, item.id) == "pending"
    # Deciding again on the refreshed card replaces the text it now shows.
    response = client.post(
        f"/review/{item.id}/approve", data=_approve_fields(html, item.id), htmx=True
    )
    assert response.status_code == 200
    assert stores_of(settings)[0].get(memory.id).content == "User prefers neovim"


def test_approve_conflict_is_said_in_the_page_language(client, settings):
    memory, item = _queued_update(settings)
    page = client.get("/review/").get_data(as_text=True)
    _edit_elsewhere(settings, memory.id, "User prefers helix now")
    response = client.post(
        f"/review/{item.id}/approve",
        data=_approve_fields(page, item.id),
        htmx=True,
        headers={"Accept-Language": "zh-TW"},
    )
    assert response.status_code == 409
    assert "這條記憶在此頁顯示後已被修改" in response.get_data(as_text=True)


def test_edited_approve_also_refused_when_the_memory_changed(client, settings):
    memory, item = _queued_update(settings)
    form = client.get(f"/review/{item.id}/edit", htmx=True).get_data(as_text=True)
    seen = re.search(r'name="expected" value="([^"]*)"', form)
    assert seen, "the edit form carries no version"
    _edit_elsewhere(settings, memory.id, "User prefers helix now")
    response = client.post(
        f"/review/{item.id}/approve",
        data={"content": "User prefers neovim daily", "expected": seen.group(1)},
        htmx=True,
    )
    assert response.status_code == 409
    assert "User prefers neovim daily" in response.get_data(as_text=True)  # the draft is kept
    assert stores_of(settings)[0].get(memory.id).content == "User prefers helix now"


def test_bulk_approve_leaves_a_changed_memory_pending_and_counts_it(client, settings):
    memory, item = _queued_update(settings)
    other = queue_fact(settings, "User lives in Taipei", category="general")
    page = client.get("/review/").get_data(as_text=True)
    versions = dict(
        re.findall(r'<input type="hidden" name="(expected-[^"]+)" value="([^"]*)"', page)
    )
    assert f"expected-{item.id}" in versions
    _edit_elsewhere(settings, memory.id, "User prefers helix now")
    response = client.post(
        "/review/bulk",
        data={"decision": "approve", "ids": [item.id, other.id], **versions},
        htmx=True,
    )
    html = response.get_data(as_text=True)
    assert "Approved 1 fact." in html and "1 left pending" in html
    assert stores_of(settings)[0].get(memory.id).content == "User prefers helix now"
    assert [status_of(settings, i.id) for i in (item, other)] == ["pending", "approved"]


def test_an_edit_holding_a_secret_is_refused_until_the_box_is_ticked(client, settings):
    # Editing a proposal and approving it skipped the secrets check (issue 32 / 35 #12).
    item = queue_fact(settings, "The garage door code changed.")
    secret = "The garage door code is 4821."
    refused = client.post(f"/review/{item.id}/approve", data={"content": secret}, htmx=True)
    html = refused.get_data(as_text=True)
    memories, _ = stores_of(settings)
    assert refused.status_code == 422 and memories.get_all() == []
    assert status_of(settings, item.id) == "pending"
    assert 'name="confirm_secret"' in html and "Keep it anyway" in html
    kept = client.post(
        f"/review/{item.id}/approve", data={"content": secret, "confirm_secret": "1"}, htmx=True
    )
    assert kept.status_code == 200
    assert [m.content for m in memories.get_all()] == [secret]
    assert status_of(settings, item.id) == "approved"
