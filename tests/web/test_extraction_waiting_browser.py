"""Issue 36, item 1 on the page: the Conversations page says when extraction last ran and what
waits for it (the messages not yet read, those the trim kept aside, the threads due), in a
real Chromium against a real ``memory-curator serve``."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.data import make_settings
from tests.support.web import assert_accessible, start_server, stop_server
from webapp.curator import Curator
from webapp.stores import ConversationStore

pytestmark = pytest.mark.browser

THREAD = "cli:session-1700000000000"
FACT = "Is allergic to penicillin"


def host_adds_13_exchanges(data_dir: Path) -> None:
    """A host program using the library (no dashboard running): 26 turns, a cap of 20."""
    conversations = ConversationStore.from_settings(make_settings(data_dir.parent))
    conversations.add_exchange(THREAD, "I'm allergic to penicillin.", "Noted.")
    for i in range(1, 13):
        conversations.add_exchange(THREAD, f"What's the weather like on day {i}?", "Sunny.")


def test_the_conversations_page_says_what_waits_and_when_extraction_last_ran(tmp_path, page):
    data = tmp_path / "data"
    host_adds_13_exchanges(data)
    server = start_server(data, {"MEMORY_AUTO_EXTRACT": "false"})
    try:
        page.goto(server.url + "/conversations/")
        section = page.locator("#extraction-waiting")
        expect(section).to_contain_text("Extraction has not run yet.")
        expect(section).to_contain_text("reading by itself is off (MEMORY_AUTO_EXTRACT)")
        expect(section).to_contain_text(
            "Waiting: 26 unread messages in 1 thread; 1 thread is due now."
        )
        expect(section).to_contain_text(
            "6 of these messages were trimmed from their threads and are kept until "
            "extraction reads them."
        )
        assert_accessible(page, "conversations, extraction waiting")
    finally:
        stop_server(server)

    server = start_server(data, {"MEMORY_AUTO_EXTRACT": "true", "MEMORY_AUTO_EXTRACT_EVERY": "1"})
    try:
        curator = Curator(make_settings(tmp_path))
        deadline = time.monotonic() + 60
        while FACT not in {i.content for i in curator.review.pending()}:
            assert time.monotonic() < deadline, "the server did not extract by itself"
            time.sleep(0.3)
        page.goto(server.url + "/conversations/")
        section = page.locator("#extraction-waiting")
        expect(section).to_contain_text("Extraction last ran just now.")
        expect(section).to_contain_text("It runs by itself while the dashboard runs")
        expect(section).to_contain_text("Nothing waits: extraction has read every message.")
        expect(section.locator("time")).to_have_attribute("datetime", value=_iso_like())
        page.set_extra_http_headers({"Accept-Language": "zh-TW"})
        page.goto(server.url + "/conversations/")
        expect(page.locator("#extraction-waiting")).to_contain_text("上次擷取：")
        expect(page.locator("#extraction-waiting")).to_contain_text("沒有待處理的訊息")
    finally:
        stop_server(server)


def _iso_like():
    import re

    return re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
