"""Keyboard first, in a real Chromium: real buttons, Ctrl/Cmd+Enter submits, Escape closes and
cancels, and a person reviews facts without touching the mouse."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.support.web import assert_accessible, wait_for_htmx
from webapp.extraction import MemoryExtractor, ReconcileAction
from webapp.stores import ReviewQueue

pytestmark = pytest.mark.browser


def queue_of(server) -> ReviewQueue:
    return ReviewQueue(server.settings.review_file, server.memories(), lock_timeout=5)


def propose(server, contents: list[str]):
    extractor = MemoryExtractor(server.memories(), review_queue=queue_of(server), mode="manual")
    facts = [ReconcileAction("add", None, text, "preference") for text in contents]
    return extractor.submit(facts, conversation_id="slack:1732240000.000100", evidence="x").queued


def on_disk(server) -> list[str]:
    path = server.settings.memory_file
    if not path.exists():
        return []
    return [m["content"] for m in json.loads(path.read_text(encoding="utf-8"))]


def focused(page) -> str:
    """A short description of the focused element: tag, id and text."""
    return page.evaluate(
        "() => { const e = document.activeElement;"
        " return e.tagName + '#' + e.id + ' ' + (e.textContent || '').trim().slice(0, 40); }"
    )


def test_memory_controls_are_buttons_and_keys_submit_cancel_and_close(live_server, page):
    memory = live_server.memories().add("Drinks coffee black")
    page.goto(live_server.url + "/memories/")
    row = page.locator(f"#memory-{memory.id}")
    for name in ("Edit", "History", "Delete"):
        expect(row.get_by_role("button", name=name)).to_be_visible()
    expect(row.get_by_role("link")).to_have_count(0)

    add = page.get_by_label("What should the assistant remember?")
    add.fill("Prefers green tea")
    add.press("Control+Enter")
    expect(page.locator("#results")).to_contain_text("Prefers green tea")
    assert sorted(on_disk(live_server)) == ["Drinks coffee black", "Prefers green tea"]
    # The add makes the list reload itself; let htmx wire the new rows before pressing Edit
    # (a row not yet wired answers Space as a plain form: the edit page opens instead).
    wait_for_htmx(page)

    row.get_by_role("button", name="Edit").focus()
    page.keyboard.press("Space")  # a real button: Space presses it instead of scrolling
    box = row.get_by_label("Memory text")
    expect(box).to_be_focused()
    box.fill("Drinks coffee with oat milk")
    box.press("Meta+Enter")  # Cmd+Enter on a Mac
    expect(row).to_contain_text("Drinks coffee with oat milk")
    assert "Drinks coffee with oat milk" in on_disk(live_server)
    wait_for_htmx(page)  # the save reloads the list too

    row.get_by_role("button", name="Edit").press("Enter")
    row.get_by_label("Memory text").fill("changed but cancelled")
    # Wait until htmx has wired the swapped-in editor: Escape before that pressed the plain
    # Cancel button, which reloads the page (seen once in several runs on a loaded machine).
    wait_for_htmx(page)
    page.keyboard.press("Escape")
    expect(row.get_by_role("button", name="Edit")).to_be_focused()
    assert "changed but cancelled" not in on_disk(live_server)

    row.get_by_role("button", name="History").press("Enter")
    panel = page.locator("#history-panel")
    expect(panel.get_by_role("heading", name="History of")).to_be_focused()
    page.keyboard.press("Escape")
    expect(panel).to_be_empty()
    expect(row.get_by_role("button", name="History")).to_be_focused()
    assert page.watch.page_errors == []


def test_edit_and_cancel_buttons_work_without_javascript(live_server, browser):
    memory = live_server.memories().add("Drinks coffee black")
    (item,) = propose(live_server, ["Prefers window seats"])
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(live_server.url + "/memories/")
        page.locator(f"#memory-{memory.id}").get_by_role("button", name="Edit").click()
        page.get_by_role("button", name="Cancel").click()
        expect(page).to_have_url(live_server.url + "/memories/")
        assert on_disk(live_server) == ["Drinks coffee black"]
        page.goto(live_server.url + "/review/")
        page.get_by_role("button", name="Edit").click()
        expect(page.get_by_label("Content to remember")).to_have_value("Prefers window seats")
        page.get_by_role("button", name="Cancel").click()
        expect(page.get_by_role("button", name="Approve", exact=True)).to_be_visible()
        assert queue_of(live_server).get(item.id).status == "pending"
    finally:
        context.close()


def test_five_facts_reviewed_by_keyboard_alone(live_server, page):
    propose(
        live_server,
        [
            "Prefers window seats on trains",
            "Uses metric units",
            "Writes commit messages in English",
            "喜歡喝無糖綠茶",
            "Waters the balcony plants on Sundays",
        ],
    )
    page.goto(live_server.url + "/review/")
    order = page.locator("article.review-item .review-content").all_inner_texts()
    assert len(order) == 5
    presses = 0

    def press(key: str) -> None:
        nonlocal presses
        presses += 1
        page.keyboard.press(key)
        wait_for_htmx(page)

    def approve_button(text: str):
        return page.locator("article.review-item", has_text=text).get_by_role(
            "button", name="Approve", exact=True
        )

    press("a")  # nothing focused yet: acts on the first card
    expect(page.locator("article.review-item")).to_have_count(4)
    expect(approve_button(order[1])).to_be_focused()

    press("j")
    expect(approve_button(order[2])).to_be_focused()
    press("k")
    expect(approve_button(order[1])).to_be_focused()

    press("r")
    expect(approve_button(order[2])).to_be_focused()

    press("e")
    box = page.get_by_label("Content to remember")
    expect(box).to_be_focused()
    box.press("End")
    page.keyboard.type(" (asked again)")  # typing "a", "r", "e" here must not act on cards
    expect(page.locator("article.review-item")).to_have_count(3)
    press("Control+Enter")
    expect(page.locator("article.review-item")).to_have_count(2)
    expect(approve_button(order[3])).to_be_focused()

    press("?")
    help_dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(help_dialog).to_be_visible()
    expect(help_dialog).to_contain_text("Approve")
    assert_accessible(page, "with the shortcut help open")
    press("Escape")
    expect(help_dialog).to_be_hidden()
    expect(approve_button(order[3])).to_be_focused()

    press("Enter")  # the focused primary action is a real button
    expect(approve_button(order[4])).to_be_focused(), focused(page)
    press("a")
    expect(page.get_by_role("heading", name="0 pending facts")).to_be_focused()

    stored = on_disk(live_server)
    assert sorted(stored) == sorted([order[0], order[2] + " (asked again)", order[3], order[4]])
    assert order[1] not in stored
    assert presses <= 10, f"{presses} key presses for five facts"
    assert page.watch.page_errors == []
    assert_accessible(page, "after a keyboard-only review")


def box_of(locator) -> dict:
    box = locator.bounding_box()
    assert box is not None, f"{locator} is not drawn"
    return box


def in_view(box: dict, viewport: dict) -> bool:
    return (
        box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= viewport["width"]
        and box["y"] + box["height"] <= viewport["height"]
    )


def assert_clear_of_the_bar_and_the_notice(page, card, viewport) -> None:
    """The card's heading is in view, below the sticky selection bar and above the notice."""
    heading = box_of(card.locator("h3"))
    bar = box_of(page.locator("#review-bulk"))
    assert in_view(heading, viewport), heading
    assert heading["y"] >= bar["y"] + bar["height"], ("under the selection bar", heading, bar)
    notice = page.locator("#review-notice")
    if notice.count():
        assert heading["y"] + heading["height"] <= box_of(notice)["y"], "under the notice"


@pytest.mark.parametrize("width, height", [(1280, 900), (390, 844)])
def test_a_keyboard_decision_far_down_the_list_is_confirmed_in_view(
    live_server, page, width, height
):
    """Deciding a fact deep in a long list: what happened and its Undo are on screen, and the
    next fact's heading is not hidden under the sticky selection bar."""
    facts = [f"Keeps plant number {n} on the balcony shelf" for n in range(1, 13)]
    propose(live_server, facts)
    viewport = {"width": width, "height": height}
    page.set_viewport_size(viewport)
    page.goto(live_server.url + "/review/")
    cards = page.locator("article.review-item")
    expect(cards).to_have_count(12)

    # The person has read down to the seventh fact: its Approve has focus, its heading has
    # scrolled up under the sticky bar.
    target = cards.nth(6)
    text = target.locator(".review-content").inner_text()
    following = cards.nth(7).locator(".review-content").inner_text()
    target.get_by_role("button", name="Approve", exact=True).focus()
    page.evaluate("y => window.scrollBy(0, y)", box_of(target.locator("h3"))["y"] - 4)
    assert page.evaluate("window.scrollY") > height

    page.keyboard.press("a")
    wait_for_htmx(page)
    expect(cards).to_have_count(11)
    assert text in on_disk(live_server)
    notice = page.locator("#review-notice")
    expect(notice).to_contain_text(f"Approved “{text}”")
    undo = notice.get_by_role("button", name="Undo")
    assert in_view(box_of(notice), viewport), box_of(notice)
    assert in_view(box_of(undo), viewport), box_of(undo)
    next_card = page.locator("article.review-item", has_text=following)
    expect(next_card.get_by_role("button", name="Approve", exact=True)).to_be_focused()
    assert_clear_of_the_bar_and_the_notice(page, next_card, viewport)

    # K goes back one fact: its heading comes into view below the bar, not under it.
    page.keyboard.press("k")
    previous = cards.nth(5)
    expect(previous.get_by_role("button", name="Approve", exact=True)).to_be_focused()
    assert_clear_of_the_bar_and_the_notice(page, previous, viewport)

    # The Undo in view takes the decision back.
    undo.click()
    wait_for_htmx(page)
    expect(cards).to_have_count(12)
    assert text not in on_disk(live_server)
    assert page.watch.console_errors == [] and page.watch.page_errors == []


def test_u_undoes_the_last_decision_and_the_fact_comes_back_with_focus(live_server, page):
    propose(live_server, ["Prefers window seats on trains", "Uses metric units"])
    page.goto(live_server.url + "/review/")
    first = page.locator("article.review-item .review-content").first.inner_text()
    page.keyboard.press("r")
    wait_for_htmx(page)
    expect(page.locator("#review-notice")).to_contain_text(f"Rejected “{first}”")
    page.keyboard.press("u")
    wait_for_htmx(page)
    expect(page.locator("#review-notice")).to_contain_text("Undone: 1 fact pending again")
    card = page.locator("article.review-item", has_text=first)
    expect(card.get_by_role("button", name="Approve", exact=True)).to_be_focused()
    assert [i.content for i in queue_of(live_server).pending()].count(first) == 1

    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_contain_text(
        "Undo the last decision"
    )
    assert page.watch.page_errors == []


# Each key chip against the description on its line, in the page's coordinates.
CHIPS_AND_DESCRIPTIONS = """() => [...document.querySelectorAll('#review-keys .keys > div')].map(row => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  return {
    keys: row.querySelector('dt').textContent.trim(),
    chips: [...row.querySelectorAll('kbd')].map(box),
    description: box(row.querySelector('dd')),
  };
})"""


def overlaps(a: dict, b: dict) -> bool:
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    )


@pytest.mark.parametrize("width", [1280, 360])
@pytest.mark.parametrize("accept", ["en", "zh-TW", "zh-CN"])
def test_shortcut_help_keys_never_run_into_their_descriptions(live_server, browser, accept, width):
    """'Ctrl+Enter (⌘+Enter)' is the widest keys column; its chips must stay clear of the
    text that says what the keys do, whatever the language, on a desktop and on a phone."""
    context = browser.new_context(
        locale=accept,
        extra_http_headers={"Accept-Language": accept},
        viewport={"width": width, "height": 900},
    )
    page = context.new_page()
    page.goto(live_server.url + "/review/")
    page.locator("[data-open-keys]").click()
    expect(page.locator("#review-keys")).to_be_visible()
    rows = page.evaluate(CHIPS_AND_DESCRIPTIONS)
    assert len(rows) == 9 and all(row["chips"] for row in rows)  # U (Undo) made it nine
    hit = [
        row["keys"]
        for row in rows
        if any(overlaps(chip, row["description"]) for chip in row["chips"])
    ]
    context.close()
    assert not hit, f"key chips overlap their description in {accept} at {width} px: {hit}"
