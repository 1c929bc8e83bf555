"""Provenance in a real Chromium against a real server: from an approved memory to its
conversation and back, forgetting what a thread left behind (and Undo), restoring from
Recently deleted after a reload — each checked on disk through the library."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from tests.support.review import approve
from tests.support.web import (
    assert_accessible,
    screenshot,
    start_server,
    stop_server,
    wait_for_htmx,
)
from webapp.stores import Proposal, ReviewQueue

pytestmark = pytest.mark.browser

THREAD = "slack:C07HOME:1732240000.000100"
DEMO_THREAD = "slack:1731900000.123456"  # the demo's English thread (hallway lights, speaker…)

# The first extraction in a server process loads the similarity model (seconds on a busy
# machine) before it answers.
EXTRACTED = 30_000


def queue_of(server) -> ReviewQueue:
    return ReviewQueue(server.settings.review_file, server.memories(), lock_timeout=5)


def test_approve_then_go_from_the_memory_to_its_conversation_and_back(live_server, page):
    live_server.conversations().add_exchange(
        THREAD, "I always water the balcony plants on Sundays.", "Noted, Sundays it is."
    )
    # Extract on the thread page (the regex rules: no LLM is configured).
    page.goto(live_server.url + "/conversations/")
    page.get_by_role("link", name=THREAD).click()
    expect(page.locator("#derived")).to_contain_text("No memory and no pending proposal")
    page.get_by_role("button", name="Extract facts").click()
    expect(page.locator(".extract-result")).to_contain_text(
        "1 fact landed in Review", timeout=EXTRACTED
    )
    [item] = queue_of(live_server).pending()

    # Approve it in Review.
    page.get_by_role("link", name="Open Review").click()
    page.locator("article.review-item", has_text=item.content).get_by_role(
        "button", name="Approve"
    ).click()
    expect(page.get_by_text("Nothing to review")).to_be_visible()
    [memory] = live_server.memories().get_all()
    assert memory.origin["conversationId"] == THREAD and memory.origin["approvedBy"] == "dashboard"

    # From the memory's row on the Memories page to its conversation…
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Memories").click()
    row = page.locator(f"#memory-{memory.id}")
    row.get_by_text("Evidence").click()
    expect(row.locator("blockquote")).to_have_text("I always water the balcony plants on Sundays.")
    row.get_by_role("link", name="from its conversation").click()
    expect(page).to_have_url(f"{live_server.url}/conversations/thread/{THREAD}")
    derived = page.locator("#derived")
    expect(derived).to_contain_text("1 memory from this conversation")
    expect(derived).to_contain_text("approved by dashboard")
    assert_accessible(page, "on a thread with its derived memory")

    # …and back to the memory, which says where it came from and who approved it.
    derived.get_by_role("link", name=memory.content).click()
    card = page.locator("#origin-card")
    expect(card).to_contain_text("Approved")
    expect(card).to_contain_text("by dashboard")
    expect(card).to_contain_text("rules")
    expect(page.locator(".history-entry").first).to_contain_text("approved in Review by dashboard")
    expect(card).to_contain_text(THREAD)  # the key, next to the thread's first message
    card.get_by_role("link", name="I always water the balcony plants on Sundays.").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "I always water the balcony plants on Sundays."
    )
    assert page.watch.console_errors == [] and page.watch.page_errors == []


def test_extracting_on_a_thread_lists_its_proposals_in_what_it_left_behind(live_server, page):
    live_server.conversations().add_exchange(
        THREAD,
        "Remember that I prefer the hallway lights at 30% after 22:00. I always use metric units.",
        "Noted.",
    )
    page.goto(f"{live_server.url}/conversations/thread/{THREAD}")
    derived = page.locator("#derived")
    expect(derived).to_contain_text("No memory and no pending proposal")
    page.get_by_role("button", name="Extract facts").click()
    expect(page.locator(".extract-result")).to_contain_text(
        "2 facts landed in Review", timeout=EXTRACTED
    )
    # The section below says the same without a reload: the two proposals wait in Review.
    expect(derived).to_contain_text("2 proposals waiting in Review")
    expect(derived).not_to_contain_text("No memory and no pending proposal")
    for item in queue_of(live_server).pending():
        expect(derived.get_by_role("link", name=item.content)).to_be_visible()
    expect(
        derived.get_by_role("link", name="Forget what came from this conversation…")
    ).to_be_visible()
    assert page.watch.console_errors == [] and page.watch.page_errors == []


def test_forget_what_came_from_a_thread_and_undo_it(live_server, page):
    live_server.conversations().add_exchange(
        THREAD,
        "Remember that I prefer the hallway lights at 30% after 22:00. I always use metric units.",
        "Noted.",
    )
    live_server.conversations().add_exchange("cli:other", "I always drink tea at 16:00.", "Ok.")
    queue = queue_of(live_server)
    page.goto(f"{live_server.url}/conversations/thread/cli:other")
    page.get_by_role("button", name="Extract facts").click()
    expect(page.locator(".extract-result")).to_contain_text("landed in Review", timeout=EXTRACTED)
    page.goto(f"{live_server.url}/conversations/thread/{THREAD}")
    page.get_by_role("button", name="Extract facts").click()
    expect(page.locator(".extract-result")).to_contain_text(
        "2 facts landed in Review", timeout=EXTRACTED
    )
    mine = [i for i in queue.pending() if i.conversation_id == THREAD]
    approve(queue, mine[0].id, actor="alice")
    other = next(i for i in queue.pending() if i.conversation_id == "cli:other")
    approve(queue, other.id, actor="alice")
    kept = live_server.memories().add("Typed by hand", source="dashboard")

    page.reload()
    derived = page.locator("#derived")
    expect(derived).to_contain_text("1 memory from this conversation")
    expect(derived).to_contain_text("1 proposal waiting in Review")
    derived.get_by_role("link", name="Forget what came from this conversation…").click()

    # The preview says what goes; nothing is gone yet.
    expect(page.get_by_role("heading", name="1 memory is deleted")).to_be_visible()
    expect(page.get_by_role("heading", name="1 pending proposal is rejected")).to_be_visible()
    expect(page.locator(".forget-preview")).to_contain_text(mine[0].content)
    expect(page.locator(".forget-preview")).to_contain_text(mine[1].content)
    assert len(live_server.memories().get_all()) == 3
    assert_accessible(page, "on the forget preview")
    page.get_by_role("button", name="Forget 2 items").click()

    notice = page.locator("#forget-notice")
    expect(notice).to_contain_text("Forgot 1 memory and rejected 1 pending proposal")
    expect(derived).to_contain_text("No memory and no pending proposal")
    contents = sorted(m.content for m in live_server.memories().get_all())
    assert contents == sorted([kept.content, other.content])
    assert queue.get(mine[1].id).status == "rejected"

    notice.get_by_role("button", name="Undo").click()
    expect(page.locator("#forget-notice")).to_contain_text(
        "1 memory restored and 1 proposal pending again"
    )
    expect(derived).to_contain_text("1 memory from this conversation")
    assert len(live_server.memories().get_all()) == 3
    assert queue.get(mine[1].id).status == "pending"
    assert page.watch.console_errors == [] and page.watch.page_errors == []


def test_forget_and_undo_work_without_javascript(live_server, browser):
    live_server.conversations().add_exchange(THREAD, "I always use metric units.", "Ok.")
    queue = queue_of(live_server)
    from webapp.stores import Proposal

    [item] = queue.submit([Proposal("add", "Uses metric units")], conversation_id=THREAD)
    memory_id = approve(queue, item.id).applied_memory_id
    context = browser.new_context(java_script_enabled=False)
    try:
        plain = context.new_page()
        plain.goto(f"{live_server.url}/conversations/forget/{THREAD}")
        plain.get_by_role("button", name="Forget 1 item").click()
        expect(plain.locator("#forget-notice")).to_contain_text("Forgot 1 memory")
        assert live_server.memories().get(memory_id) is None
        plain.get_by_role("button", name="Undo").click()
        expect(plain.locator("#forget-notice")).to_contain_text("1 memory restored")
        assert live_server.memories().get(memory_id).content == "Uses metric units"
    finally:
        context.close()


def test_restore_from_recently_deleted_after_reloading(live_server, page):
    store = live_server.memories()
    tea = store.add("Prefers oolong tea in the afternoon", category="preference", source="mcp")
    store.add("Keeps the hallway lights at 30% after 22:00", category="preference")
    page.goto(live_server.url + "/memories/")
    page.locator(f"#memory-{tea.id}").get_by_role("button", name="Delete").click()
    expect(page.locator(f"#memory-{tea.id}")).to_contain_text("Deleted")
    # The Whose choices reload after the delete; the address stays the page's (it became the
    # options' own URL, so a reload showed the bare options).
    wait_for_htmx(page)
    expect(page.locator("#filter-whose option").first).to_be_attached()
    assert urlparse(page.url).path == "/memories/"
    page.reload()  # the row's Undo is gone with the page
    expect(page.locator(f"#memory-{tea.id}")).to_have_count(0)

    page.get_by_role("link", name="Recently deleted").click()
    page.reload()
    row = page.locator(f"#deleted-{tea.id}")
    expect(row).to_contain_text("Prefers oolong tea in the afternoon")
    expect(row).to_contain_text("dashboard")  # who deleted it
    expect(row).to_contain_text("told through manage_memory")
    assert_accessible(page, "on Recently deleted")
    row.get_by_role("button", name="Restore").click()
    wait_for_htmx(page)
    expect(page.locator("#deleted-list .notice")).to_contain_text("Restored")
    expect(page.locator(f"#deleted-{tea.id}")).to_have_count(0)
    restored = live_server.memories().get(tea.id)
    assert restored.content == tea.content and restored.origin == {"how": "mcp"}

    page.get_by_role("link", name="← Memories").click()
    expect(page.locator(f"#memory-{tea.id}")).to_contain_text("Prefers oolong tea")
    assert page.watch.console_errors == [] and page.watch.page_errors == []


def test_delete_forever_asks_first_and_removes_the_history(live_server, page):
    store = live_server.memories()
    gone = store.add("A fact to purge")
    store.delete(gone.id)
    page.goto(live_server.url + "/memories/deleted")
    page.locator(f"#deleted-{gone.id}").get_by_role("button", name="Delete forever").click()
    expect(page.locator("#deleted-list .notice")).to_contain_text("Deleted forever")
    assert page.watch.dialogs and page.watch.dialogs[0].startswith("confirm: Delete “A fact")
    assert live_server.memories().history(gone.id) == []


@pytest.mark.parametrize("color_scheme", ["light", "dark"], indirect=True)
def test_conversation_with_its_memories_screenshots(tmp_path: Path, page, color_scheme):
    server = start_server(tmp_path / "data", args=["--demo"])
    try:
        page.goto(f"{server.url}/conversations/thread/{DEMO_THREAD}")
        page.get_by_role("button", name="Extract facts").click()
        expect(page.locator(".extract-result")).to_contain_text(
            "landed in Review", timeout=EXTRACTED
        )
        queue = queue_of(server)
        pending = [i for i in queue.pending() if i.conversation_id == DEMO_THREAD]
        assert len(pending) >= 3
        for item in pending[:-1]:
            approve(queue, item.id, actor="Mei-Ling")
        page.reload()
        expect(page.locator("#derived")).to_contain_text(f"{len(pending) - 1} memories")
        expect(page.locator("#derived")).to_contain_text("1 proposal waiting in Review")
        page.wait_for_load_state("load")
        assert_accessible(page, f"on a thread with derived memories ({color_scheme})")
        screenshot(page, f"conversation-provenance-{color_scheme}")
        page.goto(f"{server.url}/review/")
        assert_accessible(page, f"on Review with approval rates ({color_scheme})")
        screenshot(page, f"review-quality-{color_scheme}")
        page.set_viewport_size({"width": 360, "height": 800})
        for url in (f"/conversations/thread/{DEMO_THREAD}", "/review/", "/memories/deleted"):
            page.goto(server.url + url)
            assert page.evaluate("document.documentElement.scrollWidth") <= 360, url
    finally:
        stop_server(server)


def test_an_extracted_memory_edited_on_the_page_says_it_was_edited_and_by_whom(live_server, page):
    live_server.conversations().add_exchange(THREAD, "I always water the plants on Sundays.", "OK")
    queue = queue_of(live_server)
    [item] = queue.submit(
        [Proposal("add", "Waters the plants on Sundays", "workflow", evidence="I always water…")],
        conversation_id=THREAD,
    )
    memory_id = approve(queue, item.id, actor="alice").applied_memory_id
    page.goto(live_server.url + "/memories/")
    row = page.locator(f"#memory-{memory_id}")
    row.get_by_role("button", name="Edit").click()
    row.get_by_label("Memory text").fill("Waters the plants on Sundays and Wednesdays")
    row.get_by_role("button", name="Save").click()
    expect(row.locator("td.content")).to_have_text("Waters the plants on Sundays and Wednesdays")
    expect(row.locator("td.origin")).to_contain_text("edited by dashboard")

    row.get_by_role("button", name="History").click()
    card = page.locator("#origin-card")
    expect(card.locator(".origin-summary")).to_have_text(
        "“Waters the plants on Sundays and Wednesdays” — extracted by rules from the conversation "
        "“I always water the plants on Sundays.”, approved by alice, then edited by dashboard."
    )
    expect(card).to_contain_text("Edited since")
    # The edit is the person's, not the approval's: only the first entry says "approved".
    entries = page.locator(".history-entry")
    expect(entries).to_have_count(2)
    expect(entries.nth(0)).to_contain_text("Changed by dashboard")
    expect(entries.nth(0)).not_to_contain_text("approved in Review")
    expect(entries.nth(1)).to_contain_text("approved in Review by alice")
    origin = live_server.memories().get(memory_id).origin
    assert (origin["how"], origin["approvedBy"], origin["editedBy"]) == (
        "extracted",
        "alice",
        "dashboard",
    )
    assert page.watch.console_errors == [] and page.watch.page_errors == []
