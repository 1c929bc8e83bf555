"""A thread is named by its first message wherever a person reads it (the Prompt page's
picker, the thread's own page, Review cards), with its key only as a secondary detail; a
thread with no message from the person, or no longer kept, gets a readable label."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from webapp.extraction import MemoryExtractor, ReconcileAction
from webapp.stores import ReviewQueue

pytestmark = pytest.mark.browser

SLACK = "slack:1732050000.777000"
SILENT = "cli:session-1732050000000"  # only the assistant spoke
GONE = "slack:1700000000.000100"  # cleared long ago: its facts still wait in Review
TITLE = "What should I cook tonight?"


def seed(server) -> None:
    conversations = server.conversations()
    conversations.add_exchange(SLACK, TITLE, "A mushroom risotto, maybe.")
    conversations.add_exchange(SLACK, "I am vegetarian, remember that", "Noted.")
    conversations.add_exchange(SILENT, "", "Good morning. Nothing is due today.")
    queue = ReviewQueue(server.settings.review_file, server.memories(), lock_timeout=5)
    extractor = MemoryExtractor(server.memories(), review_queue=queue, mode="manual")
    for thread, fact in ((SLACK, "Is vegetarian"), (GONE, "Prefers window seats")):
        action = ReconcileAction("add", None, fact, "preference")
        extractor.submit([action], conversation_id=thread, evidence=fact)


def test_the_prompt_picker_names_threads_by_their_first_message(live_server, page):
    seed(live_server)
    page.goto(live_server.url + "/prompt/")
    options = page.locator("#prompt-conversation option")
    expect(options).to_have_count(3)
    texts = options.all_inner_texts()
    assert f"{TITLE} · 4 turns" in texts
    assert "CLI thread with no message from the person · 2 turns" in texts
    assert not [text for text in texts if "slack:" in text or "cli:" in text], texts
    assert (
        page.locator(f"#prompt-conversation option[value='{SLACK}']").get_attribute("title")
        == SLACK
    )

    page.get_by_label("Conversation").select_option(label=f"{TITLE} · 4 turns")
    expect(page.locator("#prompt-text")).to_contain_text("I am vegetarian, remember that")


def test_a_thread_page_is_headed_by_its_first_message(live_server, page):
    seed(live_server)
    page.goto(f"{live_server.url}/conversations/thread/{SLACK}")
    expect(page.get_by_role("heading", level=1)).to_have_text(TITLE)
    expect(page.locator(".thread-key")).to_have_text(SLACK)
    page.goto(f"{live_server.url}/conversations/thread/{SILENT}")
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "CLI thread with no message from the person"
    )


def test_review_cards_name_the_thread_a_fact_came_from(live_server, page):
    seed(live_server)
    page.goto(live_server.url + "/review/")
    kept = page.locator("article.review-item", has_text="Is vegetarian")
    link = kept.locator(".review-meta").get_by_role("link", name=TITLE)
    expect(link).to_be_visible()
    assert link.get_attribute("title") == SLACK
    link.click()
    expect(page.get_by_role("heading", level=1)).to_have_text(TITLE)

    page.goto(live_server.url + "/review/")
    gone = page.locator("article.review-item", has_text="Prefers window seats").locator(
        ".review-meta"
    )
    expect(gone).to_contain_text("Slack thread no longer kept")
    expect(gone.get_by_role("link")).to_have_count(0)
    assert page.watch.page_errors == []
