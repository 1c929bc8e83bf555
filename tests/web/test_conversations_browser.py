"""The Conversations pages in a real Chromium against a real server started with --demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.llm import FakeLlmServer, openai_body
from tests.support.web import assert_accessible, screenshot, start_server, stop_server
from webapp.cli.demo import DEMO_DATA
from webapp.stores.review import ReviewQueue

pytestmark = pytest.mark.browser

LONG = "slack:1732100000.000100"
PLANTS = "I always water the balcony plants on Sundays"
FACT = "Waters the balcony plants on Sundays."
SAMPLE_THREADS = json.loads((DEMO_DATA / "threads.json").read_text(encoding="utf-8"))
XSS = [
    "<script>window.__xss=1;alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "<svg onload=alert(3)>",
    '<a href="javascript:alert(4)">click</a>',
    '<button hx-get="/healthz" hx-trigger="load" hx-on::load="alert(5)">x</button>',
    '"><script>alert(6)</script>',
    '<iframe src="javascript:alert(7)"></iframe>',
    "{{ 7*7 }} <details open ontoggle=alert(8)>",
]


def add_long_thread(server) -> None:
    """12 exchanges against a cap of 20 turns: the 4 oldest turns are trimmed."""
    store = server.conversations()
    for n in range(12):
        store.add_exchange(LONG, f"Note {n}: {PLANTS}.", f"Noted ({n}).")


def test_person_reads_extracts_from_and_clears_a_thread(tmp_path: Path, page):
    reply = json.dumps(
        [{"content": FACT, "category": "workflow", "confidence": 0.95, "evidence": PLANTS}]
    )
    with FakeLlmServer(openai_body, reply=reply, hold_seconds=30) as llm:
        llm.mode = "slow"  # answers only once the test has seen the progress indicator
        server = start_server(
            tmp_path / "data",
            args=["--demo"],
            env_extra={
                "MEMORY_LLM_PROVIDER": "openai",
                "MEMORY_LLM_MODEL": "test-model",
                "MEMORY_LLM_BASE_URL": llm.url + "/v1",
                "MEMORY_LLM_API_KEY": "sk-test",
            },
        )
        try:
            add_long_thread(server)
            page.goto(server.url + "/conversations/")
            rows = page.locator("tbody tr")
            expect(rows).to_have_count(len(SAMPLE_THREADS) + 1)
            expect(rows.first).to_contain_text(LONG)  # the most recent activity comes first
            expect(rows.first).to_contain_text("Slack")
            expect(page.get_by_role("row", name="schedule:morning-briefing")).to_contain_text(
                "Schedule"
            )

            page.get_by_role("link", name=LONG).click()
            expect(page.locator("#trimmed-note")).to_contain_text("4 older turns trimmed")
            expect(page.locator(".turn")).to_have_count(20)
            expect(page.locator(".turn").first).to_contain_text("Note 2:")

            button = page.get_by_role("button", name="Extract facts")
            button.click()
            expect(page.locator("#extract-progress")).to_be_visible()
            expect(button).to_be_disabled()
            llm.release.set()
            result = page.locator(".extract-result")
            # The server imports the OpenAI SDK on this first LLM call: seconds on a busy machine.
            expect(result).to_contain_text(
                "1 fact landed in Review (found by the LLM)", timeout=30_000
            )
            expect(button).to_be_enabled()
            expect(result).to_be_focused()
            # (the first extraction in a server loads the similarity model first)
            expect(page.locator("#announcer")).to_contain_text("landed in Review", timeout=30_000)
            pending = ReviewQueue(server.settings.review_file, server.memories()).pending()
            demo_pending = {p.conversation_id for p in pending} - {LONG}  # the demo's proposals
            assert demo_pending <= set(SAMPLE_THREADS)
            assert [
                (p.content, p.conversation_id) for p in pending if p.conversation_id == LONG
            ] == [(FACT, LONG)]
            path, _, payload = llm.requests[0]
            assert path == "/v1/chat/completions"
            assert PLANTS in payload["messages"][0]["content"]
            review_link = result.get_by_role("link", name="Open Review")
            assert review_link.get_attribute("href") == "/review/"

            page.get_by_role("link", name="Preview prompt").click()
            expect(page.locator("#prompt-conversation")).to_have_value(LONG)
            expect(page.locator("#prompt-text")).to_contain_text(f"[User]: Note 11: {PLANTS}.")
            page.go_back()

            page.get_by_role("button", name="Clear…").click()
            page.wait_for_url("**/conversations/?cleared=*")
            assert page.watch.dialogs == [
                "confirm: Clear this conversation? The assistant forgets all 20 turns of it."
            ]
            expect(page.locator(".status-note")).to_contain_text(f"Cleared conversation {LONG}")
            expect(page.get_by_role("link", name=LONG)).to_have_count(0)
            on_disk = json.loads(server.settings.conversation_file.read_text(encoding="utf-8"))
            assert LONG not in on_disk and set(SAMPLE_THREADS) <= set(on_disk)
            assert page.watch.console_errors == [] and page.watch.page_errors == []
        finally:
            stop_server(server)


def test_hostile_turns_are_shown_as_text(tmp_path: Path, page):
    server = start_server(tmp_path / "data")
    try:
        store = server.conversations()
        for payload in XSS:
            store.add_exchange("cli:session-1", payload, payload)
        page.goto(server.url + "/conversations/")
        page.get_by_role("link", name="cli:session-1").click()
        expect(page.locator(".turn")).to_have_count(2 * len(XSS))
        for index, payload in enumerate(XSS):
            expect(page.locator(".turn-content").nth(2 * index)).to_have_text(payload)
        page.get_by_role("link", name="Preview prompt").click()
        expect(page.locator("#prompt-text")).to_contain_text(XSS[0])
        page.wait_for_timeout(300)  # give anything that would fire a moment to do so
        assert page.watch.dialogs == []
        assert page.evaluate("window.__xss") is None
        assert page.watch.page_errors == []
    finally:
        stop_server(server)


@pytest.mark.parametrize("color_scheme", ["light", "dark"], indirect=True)
def test_conversation_pages_are_accessible_in_both_themes(tmp_path: Path, page, color_scheme):
    server = start_server(tmp_path / "data", args=["--demo"])
    try:
        add_long_thread(server)
        page.goto(server.url + "/conversations/")
        expect(page.locator("tbody tr")).to_have_count(len(SAMPLE_THREADS) + 1)
        assert_accessible(page, f"on the conversation list ({color_scheme})")
        screenshot(page, f"conversations-{color_scheme}")
        page.get_by_role("link", name=LONG).click()
        expect(page.locator("#trimmed-note")).to_contain_text("trimmed")
        page.wait_for_load_state("load")  # styles applied, or axe judges unstyled contrast
        assert_accessible(page, f"on a thread ({color_scheme})")
        screenshot(page, f"conversation-thread-{color_scheme}")
        page.set_viewport_size({"width": 360, "height": 800})
        screenshot(page, f"conversation-thread-{color_scheme}-360")
        page.goto(server.url + "/conversations/")
        assert_accessible(page, f"on the conversation list at 360 px ({color_scheme})")
        screenshot(page, f"conversations-{color_scheme}-360")
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
    finally:
        stop_server(server)


def test_empty_state_in_the_browser(live_server, page):
    page.goto(live_server.url + "/conversations/")
    expect(page.locator(".empty-state")).to_contain_text("No conversations yet")
    assert_accessible(page, "on the empty conversation list")
    screenshot(page, "conversations-empty")
