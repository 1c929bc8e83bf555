"""Review in a real browser: approve, edit-then-approve, reject, bulk, undo — checked on disk."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.review import propose, queue_of
from tests.support.web import (
    assert_accessible,
    screenshot,
    start_server,
    stop_server,
    wait_for_htmx,
)
from webapp.extraction import ReconcileAction

pytestmark = pytest.mark.browser


def card(page, text):
    return page.locator("article.review-item", has_text=text)


def badge(page):
    return page.locator("#review-badge")


def status(server, item_id):
    return queue_of(server).get(item_id).status


def test_review_journey_approve_edit_reject_bulk_undo(live_server, page):
    vim = live_server.memories().add("User prefers vim", category="tool")
    live_server.conversations().add_exchange(
        "slack:C0TEAM:1732240000.000100", "I always use tabs. 我住在台北。", "Noted."
    )
    items = propose(
        live_server,
        [
            ReconcileAction("add", None, "User indents with tabs", "convention"),
            ReconcileAction("add", None, "用戶住在台北", "general"),
            ReconcileAction("add", None, "User drinks oolong tea", "preference"),
            ReconcileAction(
                "update",
                vim.id,
                "User prefers neovim instead of vim",
                "tool",
                current_content=vim.content,
                confidence=0.82,
                extractor="llm",
            ),
            ReconcileAction("add", None, "User works on Memory Curator", "project"),
            ReconcileAction("add", None, "User deploys with Docker", "tool"),
        ],
    )
    ids = {item.content: item.id for item in items}
    assert len(ids) == 6

    page.goto(live_server.url + "/review/")
    expect(page.get_by_role("heading", name="6 pending facts")).to_be_visible()
    expect(badge(page)).to_have_text("6 pending")
    update = card(page, "neovim")
    expect(update.locator("ins")).to_contain_text("neovim instead of")
    expect(update).to_contain_text("82%")
    link = update.get_by_role("link", name="I always use tabs. 我住在台北。")
    assert "/conversations/thread/" in link.get_attribute("href")
    assert link.get_attribute("title") == "slack:C0TEAM:1732240000.000100"
    expect(card(page, "User indents with tabs").locator("blockquote")).to_contain_text("我住在台北")
    assert_accessible(page, "on the review page with pending facts")

    # Approve one: it leaves the list, the badge counts down, the memory is on disk.
    card(page, "User indents with tabs").get_by_role("button", name="Approve").click()
    expect(card(page, "User indents with tabs")).to_have_count(0)
    expect(badge(page)).to_have_text("5 pending")
    assert "User indents with tabs" in [m.content for m in live_server.memories().get_all()]
    assert status(live_server, ids["User indents with tabs"]) == "approved"

    # Edit, then approve the edited text.
    card(page, "用戶住在台北").get_by_role("button", name="Edit").click()
    box = page.get_by_label("Content to remember")
    expect(box).to_be_focused()
    box.fill("用戶住在台北市")
    page.get_by_role("button", name="Approve edited").click()
    expect(card(page, "用戶住在台北")).to_have_count(0)
    assert "用戶住在台北市" in [m.content for m in live_server.memories().get_all()]

    # Escape cancels an edit without saving. (Wait until htmx has wired the swapped-in editor:
    # Escape before that pressed a plain Cancel button, which reloaded the page unasked.)
    card(page, "oolong").get_by_role("button", name="Edit").click()
    wait_for_htmx(page)
    page.get_by_label("Content to remember").fill("something else")
    page.keyboard.press("Escape")
    expect(page.get_by_label("Content to remember")).to_have_count(0)
    expect(card(page, "oolong")).to_contain_text("User drinks oolong tea")
    # The text was changed, so Escape asks first (issue 12; the page fixture accepts).
    assert page.watch.dialogs == ["confirm: Discard your changes? They have not been saved."]
    page.watch.dialogs.clear()

    # Reject one: remembered on disk, memory untouched.
    card(page, "oolong").get_by_role("button", name="Reject").click()
    expect(card(page, "oolong")).to_have_count(0)
    assert status(live_server, ids["User drinks oolong tea"]) == "rejected"
    assert "User drinks oolong tea" not in [m.content for m in live_server.memories().get_all()]

    # Approve the update: the existing memory changes in place.
    card(page, "neovim").get_by_role("button", name="Approve").click()
    expect(card(page, "neovim")).to_have_count(0)
    assert live_server.memories().get(vim.id).content == "User prefers neovim instead of vim"

    # Bulk: select both remaining with "Select all", approve them together.
    expect(badge(page)).to_have_text("2 pending")
    page.get_by_label("Select all").check()
    page.get_by_role("button", name="Approve selected").click()
    expect(page.get_by_text("Nothing to review")).to_be_visible()
    expect(badge(page)).to_have_text("")
    contents = [m.content for m in live_server.memories().get_all()]
    assert "User works on Memory Curator" in contents and "User deploys with Docker" in contents

    # Decided tab: undo the first approval; the memory goes away and the fact is pending again.
    page.get_by_role("link", name="Decided").click()
    expect(page.get_by_role("heading", name="Decided facts")).to_be_visible()
    assert_accessible(page, "on the Decided tab")
    card(page, "User indents with tabs").get_by_role("button", name="Undo").click()
    expect(badge(page)).to_have_text("1 pending")
    assert "User indents with tabs" not in [m.content for m in live_server.memories().get_all()]
    assert status(live_server, ids["User indents with tabs"]) == "pending"
    expect(page.locator("#announcer")).to_contain_text("Undone")

    assert page.watch.dialogs == []
    assert page.watch.console_errors == [] and page.watch.page_errors == []
    # Last: Playwright's screenshot leaves style="" on inputs, which htmx would copy on settle.
    screenshot(page, "review-decided-light")


def test_bulk_reject_selected_by_keyboard(live_server, page):
    propose(
        live_server,
        [
            ReconcileAction("add", None, "User likes jazz", "preference"),
            ReconcileAction("add", None, "User likes rain", "preference"),
            ReconcileAction("add", None, "User likes cats", "preference"),
        ],
    )
    page.goto(live_server.url + "/review/")
    for text in ("jazz", "rain"):
        card(page, text).get_by_role("checkbox", name="Select this fact").focus()
        page.keyboard.press("Space")
    page.get_by_role("button", name="Reject selected").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="1 pending fact")).to_be_visible()
    expect(card(page, "cats")).to_be_visible()
    queue = queue_of(live_server)
    assert sorted(i.content for i in queue.decided() if i.status == "rejected") == [
        "User likes jazz",
        "User likes rain",
    ]
    assert live_server.memories().get_all() == []


def test_deciding_one_fact_keeps_the_edit_and_ticks_of_others(live_server, page, browser):
    propose(
        live_server,
        [
            ReconcileAction("add", None, "User likes jazz", "preference"),
            ReconcileAction("add", None, "User likes rain", "preference"),
            ReconcileAction("add", None, "User likes cats", "preference"),
        ],
    )
    page.goto(live_server.url + "/review/")
    card(page, "jazz").get_by_role("button", name="Edit").click()
    page.get_by_label("Content to remember").fill("User likes modal jazz")
    card(page, "cats").get_by_role("checkbox", name="Select this fact").check()
    card(page, "rain").get_by_role("button", name="Reject").click()
    expect(card(page, "rain")).to_have_count(0)
    expect(page.get_by_label("Content to remember")).to_have_value("User likes modal jazz")
    expect(card(page, "cats").get_by_role("checkbox", name="Select this fact")).to_be_checked()
    page.get_by_role("button", name="Approve edited").click()
    expect(card(page, "jazz")).to_have_count(0)
    assert [m.content for m in live_server.memories().get_all()] == ["User likes modal jazz"]
    assert page.watch.console_errors == [] and page.watch.page_errors == []

    # Without JavaScript "Select all" cannot work, so it is not offered.
    context = browser.new_context(java_script_enabled=False)
    try:
        plain = context.new_page()
        plain.goto(live_server.url + "/review/")
        expect(plain.get_by_role("button", name="Approve selected")).to_be_visible()
        expect(plain.get_by_label("Select all")).to_be_hidden()
    finally:
        context.close()


def test_approval_rates_follow_each_decision_without_a_reload(live_server, page):
    propose(
        live_server,
        [
            ReconcileAction("add", None, f"User likes {thing}", "preference")
            for thing in ("jazz", "rain", "cats", "chess", "hiking")
        ],
    )
    page.goto(live_server.url + "/review/")
    quality = page.locator("#extractor-quality")
    expect(quality).to_contain_text("No decisions yet")
    for key in ("a", "a", "a", "r", "r"):  # five decisions by keyboard
        page.keyboard.press(key)
        wait_for_htmx(page)
    expect(page.get_by_text("Nothing to review")).to_be_visible()
    overall = quality.locator(".quality-table").first.get_by_role("row", name="All decisions")
    # decided, approved as is, after editing, rejected
    expect(overall.get_by_role("cell")).to_have_text(["5", "3 (60.0%)", "0 (0.0%)", "2 (40.0%)"])
    expect(quality).not_to_contain_text("No decisions yet")

    # Undo takes a decision back, and the rates say so too.
    page.locator("#review-notice").get_by_role("button", name="Undo").click()
    expect(page.get_by_role("heading", name="1 pending fact")).to_be_visible()
    expect(overall.get_by_role("cell")).to_have_text(["4", "3 (75.0%)", "0 (0.0%)", "1 (25.0%)"])
    assert page.watch.console_errors == [] and page.watch.page_errors == []


def test_full_store_approve_is_explained_and_nothing_is_lost(tmp_path, page):
    server = start_server(tmp_path / "data", env_extra={"MEMORY_MAX_ITEMS": "1"})
    try:
        server.memories().add("User already has one memory")
        propose(server, [ReconcileAction("add", None, "User prefers green tea", "preference")])
        page.goto(server.url + "/review/")
        card(page, "green tea").get_by_role("button", name="Approve").click()
        notice = page.locator("#review-notice")
        expect(notice).to_contain_text("Memory is full: 1 of 1 memories")
        expect(notice).to_contain_text("Nothing was lost")
        expect(notice).to_be_focused()
        expect(card(page, "green tea")).to_be_visible()
        expect(badge(page)).to_have_text("1 pending")
        assert [m.content for m in server.memories().get_all()] == ["User already has one memory"]
        assert [i.status for i in queue_of(server).pending()] == ["pending"]
        assert_accessible(page, "with the memory-full notice")
        screenshot(page, "review-full-light")
    finally:
        stop_server(server)


@pytest.mark.parametrize("color_scheme", ["dark", "light"], indirect=True)
def test_review_screenshots(live_server, page, color_scheme):
    vim = live_server.memories().add("User prefers vim for quick edits", category="tool")
    propose(
        live_server,
        [
            ReconcileAction(
                "update",
                vim.id,
                "User prefers neovim for quick edits",
                "tool",
                current_content=vim.content,
                confidence=0.9,
                extractor="llm",
            ),
            ReconcileAction(
                "add",
                None,
                "使用者以後都用繁體中文回覆",
                "preference",
                confidence=0.95,
                extractor="llm",
            ),
            ReconcileAction(
                "add", None, "User keeps commit messages under 72 characters", "convention"
            ),
        ],
    )
    page.goto(live_server.url + "/review/")
    expect(page.get_by_role("heading", name="3 pending facts")).to_be_visible()
    assert_accessible(page, f"on the review page in the {color_scheme} theme")
    screenshot(page, f"review-pending-{color_scheme}")
    page.set_viewport_size({"width": 360, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    screenshot(page, f"review-pending-{color_scheme}-360")
    assert re.search(r"\d", badge(page).inner_text())
