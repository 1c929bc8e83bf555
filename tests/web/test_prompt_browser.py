"""The Prompt page in a real Chromium: what is shown is exactly compose_prompt's text as you type."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.web import assert_accessible, screenshot, start_server, stop_server
from webapp.prompts import compose_prompt, compose_prompt_sections

pytestmark = pytest.mark.browser

ZH_THREAD = "slack:1731986400.000200"
SHOWN = "document.getElementById('prompt-text') ? document.getElementById('prompt-text').textContent : null"


def wait_for_preview(page, expected: str) -> None:
    """Wait until the preview shows ``expected``, then compare it exactly (a clear diff if not)."""
    try:
        page.wait_for_function(f"expected => ({SHOWN}) === expected", arg=expected, timeout=10_000)
    finally:
        assert page.evaluate(SHOWN) == expected


def test_preview_follows_typing_character_for_character(tmp_path: Path, page):
    server = start_server(tmp_path / "data", args=["--demo"])
    try:
        memories, conversations = server.memories(), server.conversations()
        page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
        page.goto(server.url + "/prompt/?person=everyone")  # every memory, as compose_prompt
        wait_for_preview(page, compose_prompt(memories.get_all(), [], ""))

        page.get_by_label("Conversation").select_option(ZH_THREAD)
        history = conversations.get_history(ZH_THREAD)
        wait_for_preview(page, compose_prompt(memories.get_all(), history, ""))

        box = page.get_by_label("Next message")
        message = "明天會下雨嗎？ <b>請</b> remind me   \n\n"
        box.press_sequentially(message, delay=15)
        assert box.input_value() == message
        expected = compose_prompt(memories.get_all(), history, message)
        wait_for_preview(page, expected)
        expect(page.locator("#prompt-text .section")).to_have_count(3)
        composed = compose_prompt_sections(memories.get_all(), history, message)
        total = page.locator("[data-section='total']")
        # Shown grouped, as the page's number filter writes them in English (1,540).
        expect(total.locator(".legend-chars")).to_have_text(f"{composed.chars:,}")
        expect(total.locator(".legend-tokens")).to_have_text(f"{composed.tokens:,}")
        for section in composed.sections:
            legend = page.locator(f"[data-section='{section.name}'] .legend-chars")
            expect(legend).to_have_text(f"{section.chars:,}")

        page.get_by_role("button", name="Copy prompt").click()
        expect(page.locator("#announcer")).to_have_text("Prompt copied to the clipboard")
        assert page.evaluate("navigator.clipboard.readText()") == expected

        box.press("Backspace")  # the textarea keeps its focus and caret while the preview swaps
        box.press("Backspace")
        wait_for_preview(page, compose_prompt(memories.get_all(), history, message[:-2]))
        expect(box).to_be_focused()

        page.get_by_label("Conversation").select_option("")
        wait_for_preview(page, compose_prompt(memories.get_all(), [], message[:-2]))
        expect(page.locator("#prompt-text .section-history")).to_have_count(0)
        assert page.watch.console_errors == [] and page.watch.page_errors == []
        assert page.watch.dialogs == []
    finally:
        stop_server(server)


def test_too_long_message_is_explained_next_to_the_field(tmp_path: Path, page):
    server = start_server(tmp_path / "data", args=["--demo"])
    try:
        page.goto(server.url + "/prompt/?person=everyone")  # every memory, as compose_prompt
        box = page.get_by_label("Next message")
        box.fill("長" * 100_001)
        box.press("End")
        box.press("Space")
        expect(page.locator("#message-error")).to_contain_text("too long to preview")
        expect(page.locator("#prompt-text")).to_have_count(0)
        box.press("Control+a")
        box.press("Delete")
        box.press_sequentially("ok")
        memories = server.memories().get_all()
        wait_for_preview(page, compose_prompt(memories, [], "ok"))
        expect(page.locator("#message-error")).to_be_empty()
    finally:
        stop_server(server)


@pytest.mark.parametrize("color_scheme", ["light", "dark"], indirect=True)
def test_prompt_page_is_accessible_in_both_themes(tmp_path: Path, page, color_scheme):
    server = start_server(tmp_path / "data", args=["--demo"])
    try:
        page.goto(server.url + f"/prompt/?conversation={ZH_THREAD}&message=明天呢？")
        expect(page.locator("#prompt-text .section")).to_have_count(3)
        assert_accessible(page, f"on the prompt page ({color_scheme})")
        screenshot(page, f"prompt-{color_scheme}")
        page.set_viewport_size({"width": 360, "height": 800})
        assert_accessible(page, f"on the prompt page at 360 px ({color_scheme})")
        screenshot(page, f"prompt-{color_scheme}-360")
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
    finally:
        stop_server(server)


def test_the_preview_opens_on_the_household_when_nobody_is_signed_in(tmp_path: Path, page):
    # Issue 36: it opened on "Everyone", a prompt mixing every person's private memories.
    server = start_server(tmp_path / "data", args=["--demo"])
    try:
        memories = server.memories()
        everything = memories.get_all()
        assert any(m.person for m in everything), "the demo has private memories"
        page.goto(server.url + "/prompt/")
        shared = [m for m in everything if m.person is None]
        wait_for_preview(page, compose_prompt(shared, [], ""))
        expect(page.get_by_label("Who is asking")).to_have_value("household")
        page.get_by_label("Who is asking").select_option("everyone")
        wait_for_preview(page, compose_prompt(everything, [], ""))
    finally:
        stop_server(server)
