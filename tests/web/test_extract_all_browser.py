"""Extract from all conversations, in a real Chromium: reached from the empty Review page, with
progress thread by thread and what was found, and without JavaScript too."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.web import assert_accessible, wait_for_htmx
from webapp.stores import ReviewQueue

pytestmark = pytest.mark.browser

THREADS = {
    "slack:1731900000.123456": "I always use metric units, please.",
    "slack:1731986400.000200": "記住我喜歡喝無糖綠茶。",
    "cli:session-1731990000000": "以后都用 YAML 格式写自动化。",
    "schedule:morning-briefing": "Run the morning briefing.",
}

WATCH_PROGRESS = """() => {
  window.__progress = [];
  const note = () => {
    const label = document.querySelector('.extract-all-progress label');
    if (label) window.__progress.push(label.textContent.trim());
  };
  new MutationObserver(note).observe(document.body, {childList: true, subtree: true});
}"""


def add_threads(server) -> None:
    store = server.conversations()
    for key, message in THREADS.items():
        store.add_exchange(key, message, "OK.")


def pending(server) -> list[str]:
    queue = ReviewQueue(server.settings.review_file, server.memories(), lock_timeout=5)
    return [item.content for item in queue.pending()]


def test_extract_all_from_the_empty_review_page_with_progress(live_server, page):
    add_threads(live_server)
    page.goto(live_server.url + "/review/")
    empty = page.locator(".empty-state")
    expect(empty).to_contain_text("Facts get here when extraction reads the conversations")
    empty.get_by_role("link", name="Extract from all conversations").click()
    expect(page).to_have_url(live_server.url + "/conversations/#extract-all")

    steps: list[str] = []
    page.on("request", lambda r: steps.append(r.url) if r.url.endswith("/step") else None)
    page.evaluate(WATCH_PROGRESS)
    page.get_by_role("button", name="Extract from all conversations").click()
    result = page.locator("#extract-all-result")
    expect(result).to_contain_text("Done: read 4 threads")
    wait_for_htmx(page)
    found = pending(live_server)
    assert len(found) >= 2
    expect(result).to_contain_text(f"{len(found)} facts landed in Review")
    expect(result).to_be_focused()
    assert len(steps) == 4  # one thread per step, each step a request of its own
    seen = page.evaluate("window.__progress")
    for done in range(4):
        assert any(text.startswith(f"{done} of 4 threads done") for text in seen), seen
    page.locator(".extract-found summary").click()
    for fact in found:
        expect(page.locator(".extract-found")).to_contain_text(fact)
    expect(page.locator("#review-badge")).to_contain_text(str(len(found)))
    assert_accessible(page, "after extracting from all conversations")

    result.get_by_role("link", name="Open Review").click()
    expect(page.locator("article.review-item")).to_have_count(len(found))
    assert page.watch.page_errors == [] and page.watch.console_errors == []


def test_extract_all_without_javascript(live_server, browser):
    add_threads(live_server)
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(live_server.url + "/conversations/")
        page.get_by_role("button", name="Extract from all conversations").click()
        expect(page.locator("#extract-all-result")).to_contain_text("read 4 threads")
        assert len(pending(live_server)) >= 2
    finally:
        context.close()
