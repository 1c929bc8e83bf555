"""A "forget" said in a conversation, extracted, shown on the Review page as a deletion,
approved in a real browser (the memory goes, with history) and undone (it comes back)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.web import assert_accessible
from webapp.extraction import extract_conversation
from webapp.stores import ReviewQueue

pytestmark = pytest.mark.browser

FORGET = "Forget that I like green tea. Also, my shift starts at 7 now."


def test_delete_proposal_approved_removes_the_memory_and_undo_brings_it_back(live_server, page):
    memories = live_server.memories()
    tea = memories.add("Likes green tea.", category="preference")
    coffee = memories.add("Drinks a cup of coffee every morning", category="preference")
    live_server.conversations().add_exchange("slack:C0HOME:1732240000.000100", FORGET, "Noted.")
    # Extraction as `memory-curator extract` runs it: rules only, manual mode.
    result = extract_conversation(
        live_server.settings, "slack:C0HOME:1732240000.000100", caller=None
    )
    [item] = [i for i in result.queued if i.action == "delete"]
    assert item.memory_id == tea.id

    page.goto(live_server.url + "/review/")
    proposal = page.locator(f"#item-{item.id}")
    # Shown plainly: what would go, struck through, and the words it comes from.
    expect(proposal.locator(".action-label")).to_have_text("Delete memory")
    expect(proposal.locator("h3 del")).to_contain_text("Likes green tea.")
    expect(proposal.locator("blockquote")).to_have_text("Forget that I like green tea.")
    expect(proposal.get_by_role("button", name="Edit")).to_have_count(0)
    assert "line-through" in proposal.locator("h3 del").evaluate(
        "el => getComputedStyle(el).textDecorationLine"
    )
    assert_accessible(page, "on the review page with a delete proposal")

    proposal.get_by_role("button", name="Approve").click()
    expect(proposal).to_have_count(0)
    store = live_server.memories()
    assert store.get(tea.id) is None
    assert store.get(coffee.id) is not None
    deleted = store.history(tea.id)[-1]
    assert deleted["action"] == "delete" and deleted["before"]["content"] == "Likes green tea."

    page.get_by_role("link", name="Decided").click()
    decided = page.locator(f"#item-{item.id}")
    expect(decided.locator("del")).to_contain_text("Likes green tea.")
    decided.get_by_role("button", name="Undo").click()
    expect(page.locator("#announcer")).to_contain_text("Undone")
    back = live_server.memories().get(tea.id)
    assert back is not None and back.content == "Likes green tea."
    queue = ReviewQueue(live_server.settings.review_file, live_server.memories())
    assert queue.get(item.id).status == "pending"

    # The Memories page shows it again.
    page.goto(live_server.url + "/memories/")
    expect(page.get_by_text("Likes green tea.")).to_be_visible()
    assert page.watch.console_errors == [] and page.watch.page_errors == []
