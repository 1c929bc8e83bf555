"""Provenance in the dashboard through the Flask test client: origins on the Memories page and
in a memory's history, a thread's memories and Forget (no JavaScript), Recently deleted, and
the extractor's approval rates on the Review page."""

from __future__ import annotations

import io
import json
import re

from tests.support.review import approve
from webapp.stores import ConversationStore, MemoryStore, Proposal, ReviewQueue

THREAD = "slack:C01:1732240000.000100"
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def stores_of(settings):
    memories = MemoryStore.from_settings(settings, actor="test")
    return memories, ReviewQueue(settings.review_file, memories, lock_timeout=5)


def with_thread(settings, conversation_id=THREAD):
    ConversationStore.from_settings(settings).add_exchange(
        conversation_id, "I really prefer oolong tea.", "Noted."
    )


def approved(settings, content="Prefers oolong tea", conversation_id=THREAD, **kw):
    memories, queue = stores_of(settings)
    [item] = queue.submit(
        [
            Proposal(
                "add",
                content,
                "preference",
                extractor=kw.pop("extractor", "llm"),
                model=kw.pop("model", "openai/gpt-4o-mini"),
                evidence=kw.pop("evidence", "I really prefer oolong tea."),
                evidence_at="2026-11-20T08:00:00.000Z",
            )
        ],
        conversation_id=conversation_id,
    )
    done = approve(queue, item.id, actor=kw.pop("actor", "alice"))
    return memories.get(done.applied_memory_id)


def text(response) -> str:
    return response.get_data(as_text=True)


# ----------------------------------------------------------------- the Memories page
def test_row_links_an_extracted_memory_to_its_thread_and_shows_the_evidence(client, settings):
    with_thread(settings)
    memory = approved(settings)
    html = text(client.get("/memories/"))
    row = html[html.index(f'id="memory-{memory.id}"') :]
    row = row[: row.index("</tr>")]
    assert f'href="/conversations/thread/{THREAD}"' in row
    assert "by LLM openai/gpt-4o-mini" in row
    assert "<blockquote>I really prefer oolong tea.</blockquote>" in row
    assert "2026-11-20 08:00 UTC" in row


def test_a_thread_no_longer_kept_is_named_but_not_linked(client, settings):
    with_thread(settings)
    approved(settings)
    ConversationStore.from_settings(settings).clear(THREAD)
    html = text(client.get("/memories/", htmx=True))
    assert "from a conversation no longer kept" in html
    assert "/conversations/thread/" not in html


def test_other_origins_and_records_without_one(client, settings):
    memories, _ = stores_of(settings)
    memories.add("Typed fact", source="dashboard")
    memories.add("Told fact", source="mcp")
    memories.add("Old fact", source="slack")
    html = text(client.get("/memories/", htmx=True))
    assert "Typed in the dashboard" in html and "Told through manage_memory" in html
    # a source no label names is shown as written, and no translator touches it
    assert re.search(r'class="origin">\s*<span translate="no">slack</span>\s*</td>', html)


def test_hostile_evidence_is_escaped(client, settings):
    with_thread(settings)
    memory = approved(settings, evidence=HOSTILE)
    for url in ("/memories/", f"/memories/{memory.id}/history", f"/conversations/thread/{THREAD}"):
        html = text(client.get(url))
        assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html, url


def test_history_says_where_it_came_from_and_who_approved_it(client, settings):
    with_thread(settings)
    memory = approved(settings, actor="alice")
    html = text(client.get(f"/memories/{memory.id}/history"))
    card = html[html.index('id="origin-card"') :]
    assert f'href="/conversations/thread/{THREAD}"' in card
    assert re.search(r'<dt>Approved</dt><dd>by <span translate="no">alice</span>', card)
    assert 'approved in Review by <span translate="no">alice</span>' in html
    assert "LLM openai/gpt-4o-mini" in card


def test_import_from_the_dashboard_records_the_file_name(client, settings):
    payload = json.dumps([{"id": "imp1", "content": "Imported fact"}]).encode()
    preview = client.post(
        "/memories/import", data={"file": (io.BytesIO(payload), "backup-2026.json")}
    )
    assert 'name="filename" value="backup-2026.json"' in text(preview)
    done = client.post(
        "/memories/import/confirm",
        data={"payload": payload.decode(), "filename": "../../etc/backup-2026.json"},
    )
    assert done.status_code == 303
    memories, _ = stores_of(settings)
    assert memories.get("imp1").origin["importedFrom"] == "backup-2026.json"
    assert 'from <span translate="no">backup-2026.json</span>' in text(client.get("/memories/"))


# ----------------------------------------------------------------- a thread and Forget
def test_thread_lists_its_memories_and_pending_proposals(client, settings):
    with_thread(settings)
    memory = approved(settings)
    _, queue = stores_of(settings)
    [waiting] = queue.submit([Proposal("add", "Drinks tea at 16:00")], conversation_id=THREAD)
    queue.submit([Proposal("add", "From another thread")], conversation_id="cli:1")
    html = text(client.get(f"/conversations/thread/{THREAD}"))
    derived = html[html.index('id="derived"') : html.index("Turns the assistant sees")]
    assert f'href="/memories/{memory.id}/history"' in derived
    assert 'approved by <span translate="no">alice</span>' in derived
    assert f'href="/review/#item-{waiting.id}"' in derived
    assert "From another thread" not in derived
    assert f'href="/conversations/forget/{THREAD}"' in derived


def test_forget_previews_then_forgets_then_undoes_without_javascript(client, settings):
    with_thread(settings)
    memory = approved(settings)
    memories, queue = stores_of(settings)
    [waiting] = queue.submit([Proposal("add", "Drinks tea at 16:00")], conversation_id=THREAD)
    preview = text(client.get(f"/conversations/forget/{THREAD}"))
    assert "1 memory is deleted" in preview and "1 pending proposal is rejected" in preview
    assert "Prefers oolong tea" in preview and "Drinks tea at 16:00" in preview
    assert memories.get(memory.id) is not None  # a preview changes nothing

    done = client.post(f"/conversations/forget/{THREAD}")
    assert done.status_code == 303
    assert memories.get(memory.id) is None and queue.get(waiting.id).status == "rejected"
    page = text(client.get(done.headers["Location"]))
    assert "Forgot 1 memory and rejected 1 pending proposal" in page
    undo = re.search(r'<form method="post" action="([^"]+/unforget/[^"]+)"', page).group(1)
    fields = dict(
        re.findall(r'<input type="hidden" name="(memory_id|item_id)" value="([^"]+)"', page)
    )
    back = client.post(undo, data=fields)
    assert back.status_code == 303
    assert memories.get(memory.id).content == "Prefers oolong tea"
    assert queue.get(waiting.id).status == "pending"
    assert "1 memory restored and 1 proposal pending again" in text(
        client.get(back.headers["Location"])
    )


def test_forget_puts_back_a_memory_the_thread_changed_and_undo_changes_it_again(client, settings):
    with_thread(settings)
    memories, queue = stores_of(settings)
    alarm = memories.add("Alarm at 06:45", source="dashboard")
    [change] = queue.submit(
        [Proposal("update", "Alarm at 07:00", memory_id=alarm.id)], conversation_id=THREAD
    )
    approve(queue, change.id, actor="alice")
    thread = text(client.get(f"/conversations/thread/{THREAD}"))
    assert "1 memory changed by this conversation" in thread and "was: " in thread
    preview = text(client.get(f"/conversations/forget/{THREAD}"))
    assert "1 memory goes back to what it said before" in preview
    assert "1 memory is deleted" not in preview and "Forget 1 item" in preview

    done = client.post(f"/conversations/forget/{THREAD}")
    assert memories.get(alarm.id).content == "Alarm at 06:45"
    page = text(client.get(done.headers["Location"]))
    assert "1 memory it changed says what it said before." in page
    undo = re.search(r'<form method="post" action="([^"]+/unforget/[^"]+)"', page).group(1)
    fields = re.findall(r'<input type="hidden" name="(reverted_hid)" value="([^"]+)"', page)
    assert len(fields) == 1
    client.post(undo, data=dict(fields))
    assert memories.get(alarm.id).content == "Alarm at 07:00"


def test_forget_leaves_alone_what_changed_after_the_preview_and_says_so(client, settings):
    """The preview lists what goes; what someone changes after it was shown (the MCP server,
    another tab) stays as they left it, and the answer names it."""
    with_thread(settings)
    memories, queue = stores_of(settings)
    kept = approved(settings, "Prefers oolong tea")
    goes = approved(settings, "Walks the dog at 18:00")
    alarm = memories.add("Alarm at 06:45", source="dashboard")
    [change] = queue.submit(
        [Proposal("update", "Alarm at 07:00", memory_id=alarm.id)], conversation_id=THREAD
    )
    approve(queue, change.id, actor="alice")
    preview = text(client.get(f"/conversations/forget/{THREAD}"))
    form = preview[preview.index('action="/conversations/forget/') :]
    form = form[: form.index("</form>")]
    fields = re.findall(r'<input type="hidden" name="(seen_[a-z]+)" value="([^"]+)"', form)
    assert fields, "the Forget form says nothing about what it showed"

    mcp = MemoryStore.from_settings(settings, actor="mcp")
    mcp.update(kept.id, "Prefers oolong tea, not too strong")
    mcp.update(alarm.id, "Alarm at 07:15")
    data: dict[str, list[str]] = {}
    for name, value in fields:
        data.setdefault(name, []).append(value)
    done = client.post(f"/conversations/forget/{THREAD}", data=data)
    assert done.status_code == 303
    assert memories.get(kept.id).content == "Prefers oolong tea, not too strong"
    assert memories.get(alarm.id).content == "Alarm at 07:15"
    assert memories.get(goes.id) is None
    page = text(client.get(done.headers["Location"]))
    assert "Forgot 1 memory" in page
    assert "2 memories were changed elsewhere after you looked; they are left as they are:" in page
    notice = page[page.index('id="forget-notice"') :]
    assert "Prefers oolong tea, not too strong" in notice and "Alarm at 07:15" in notice


def test_forget_needs_the_csrf_token(client, settings):
    with_thread(settings)
    memory = approved(settings)
    assert client.post(f"/conversations/forget/{THREAD}", csrf=False).status_code == 400
    assert stores_of(settings)[0].get(memory.id) is not None


def test_forget_works_for_a_thread_no_longer_kept(client, settings):
    with_thread(settings)
    memory = approved(settings)
    ConversationStore.from_settings(settings).clear(THREAD)
    done = client.post(f"/conversations/forget/{THREAD}")
    assert done.status_code == 303 and "/conversations/forget/" in done.headers["Location"]
    assert stores_of(settings)[0].get(memory.id) is None
    html = text(client.get(done.headers["Location"]))
    assert "Forgot 1 memory" in html and "Nothing left to forget" in html


# ----------------------------------------------------------------- Recently deleted
def test_recently_deleted_lists_restores_and_purges(client, settings):
    memories, _ = stores_of(settings)
    keep = memories.add("Keep me", source="dashboard")
    drop = memories.add("Drop me")
    memories.delete(keep.id, actor="alice")
    memories.delete(drop.id, actor="bob")
    html = text(client.get("/memories/deleted"))
    assert html.index("Drop me") < html.index("Keep me")
    by = '<td data-label="By"><span translate="no">{}</span></td>'
    assert by.format("alice") in html and by.format("bob") in html

    restored = client.post("/memories/deleted/restore", data={"id": keep.id})
    assert restored.status_code == 303 and memories.get(keep.id).content == "Keep me"
    partial = text(client.post("/memories/deleted/purge", data={"id": drop.id}, htmx=True))
    assert partial.lstrip().startswith('<section id="deleted-list"')
    assert "Deleted forever." in partial and "Drop me" not in partial
    assert memories.history(drop.id) == []
    assert "Nothing deleted" in text(client.get("/memories/deleted"))


def test_purge_refuses_a_memory_that_is_not_deleted(client, settings):
    memories, _ = stores_of(settings)
    alive = memories.add("Still here")
    assert client.post("/memories/deleted/purge", data={"id": alive.id}).status_code == 404
    missing = client.post("/memories/deleted/restore", data={"id": "nope"}, htmx=True)
    assert missing.status_code == 404
    assert text(missing).lstrip().startswith('<section id="deleted-list"')
    assert "restored or deleted forever meanwhile" in text(missing)
    assert memories.get(alive.id) is not None


# ----------------------------------------------------------------- Review: approval rates
def test_review_page_shows_the_approval_rates(client, settings):
    _, queue = stores_of(settings)
    items = queue.submit(
        [
            Proposal("add", "Prefers tea", extractor="regex"),
            Proposal("add", "喜歡喝綠茶", extractor="llm", model="openai/gpt-4o-mini"),
            Proposal("add", "Is tired", extractor="regex"),
        ]
    )
    approve(queue, items[0].id)
    approve(queue, items[1].id, content="喜歡喝無糖綠茶")
    queue.reject(items[2].id)
    html = text(client.get("/review/"))
    section = html[html.index('id="extractor-quality"') :]
    row = re.search(r"<th scope=\"row\">Extractor: rules</th>(.*?)</tr>", section, re.S).group(1)
    assert re.findall(r"<td>(\d+)", row) == ["2", "1", "0", "1"]
    # "LLM" is a word of the page's language; the model's name is left untranslated.
    assert 'Extractor: LLM <span translate="no">openai/gpt-4o-mini</span>' in section
    assert "Language: Chinese (Traditional)" in section
    chinese = text(client.get("/review/", headers={"Accept-Language": "zh-TW"}))
    assert "擷取器：規則" in chinese and "語言：中文 (繁體)" in chinese and "類別：一般" in chinese
    assert "(33.3%)" in section


def test_forget_pages_take_any_thread_id_as_text(client, settings):
    for hostile in (HOSTILE, "../../etc/passwd", "slack:%00:1"):
        response = client.get(f"/conversations/forget/{hostile}")
        assert response.status_code in (200, 404)
        assert "<script>alert(1)" not in text(response)
    response = client.post(f"/conversations/forget/{HOSTILE}")
    assert response.status_code == 303
    assert "Nothing left to forget" in text(client.get(response.headers["Location"]))


def test_review_item_shows_when_its_evidence_was_said(client, settings):
    _, queue = stores_of(settings)
    queue.submit(
        [
            Proposal(
                "add",
                "Prefers tea",
                evidence="I prefer tea",
                evidence_at="2026-11-20T08:00:00.000Z",
            )
        ],
        conversation_id=THREAD,
    )
    html = text(client.get("/review/"))
    assert '<time datetime="2026-11-20T08:00:00Z" title="2026-11-20 08:00 UTC">' in html


def test_recently_deleted_pages_through_many_deletions(client, settings):
    memories, _ = stores_of(settings)
    memories.max_items = 300
    ids = [memories.add(f"fact number {n}").id for n in range(130)]
    memories.delete_many(ids)
    first = text(client.get("/memories/deleted"))
    assert "130 deleted memories" in first and "Page 1 of 3" in first
    assert first.count('class="deleted-memory"') == 50
    second = text(client.get("/memories/deleted?page=3"))
    assert second.count('class="deleted-memory"') == 30
    assert text(client.get("/memories/deleted?page=99999999")).count('class="deleted-memory"') == 30


def test_who_deleted_is_named_in_the_pages_language(client, settings):
    """Actors are stored as keys (mcp, cli, dashboard); the By column names them, and keeps a
    person's name as written."""
    for actor in ("mcp", "cli", "dashboard", "Alice Chen"):
        store = MemoryStore.from_settings(settings, actor=actor)
        store.delete(store.add(f"Deleted by {actor}").id)
    for language, names in (
        ("en", ("the assistant (MCP)", "the command line", "dashboard")),
        ("zh-TW", ("助理（MCP）", "命令列", "儀表板")),
        ("zh-CN", ("助手（MCP）", "命令行", "仪表板")),
    ):
        html = text(client.get("/memories/deleted", headers={"Accept-Language": language}))
        column = re.findall(r'<td data-label="[^"]+">(.*?)</td>', html)
        for name in names:
            assert name in column, (language, name, column)
        assert '<span translate="no">Alice Chen</span>' in column
        assert not {"mcp", "cli"} & set(column)


def test_provenance_pages_are_part_of_the_memories_area(client, settings):
    """Their own blueprint, the same URLs, and Memories marked as the current area."""
    memories, _ = stores_of(settings)
    memory = memories.add("Prefers tea", source="dashboard")
    for url in ("/memories/deleted", f"/memories/{memory.id}/history"):
        html = text(client.get(url))
        assert re.search(r'href="/memories/"\s+aria-current="page"', html), url
