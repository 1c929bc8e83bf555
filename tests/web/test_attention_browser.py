"""Needs attention in a real browser: merge a near-duplicate pair and undo it, keep one side of
a contradiction, dismiss a finding across a reload — each checked on disk."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.web import assert_accessible, screenshot, wait_for_htmx

pytestmark = pytest.mark.browser


def seed(server) -> dict[str, str]:
    store = server.memories()
    texts = [
        ("Prefers tea", "preference"),
        ("The user likes tea", "preference"),
        ("Alarm at 06:45", "workflow"),
        ("Alarm at 07:00", "workflow"),
        ("喜歡喝無糖綠茶", "preference"),
        ("用户喜欢喝无糖绿茶", "preference"),
        ("I prefer the hallway lights at 30% after 22:00", "preference"),
        ("Trip to Kyoto until 2026-10-01", "general"),
        ("Works from home on Fridays", "workflow"),
    ]
    return {text: store.add(text, category=category).id for text, category in texts}


def finding(page, text):
    return page.locator("article.finding", has_text=text)


def contents(server) -> list[str]:
    return sorted(m.content for m in server.memories().get_all())


def keep_button(card, text):
    """The Keep button of the memory whose whole text is ``text``, named by that text."""
    figure = card.locator("figure").filter(has=card.page.get_by_text(text, exact=True))
    return figure.get_by_role("button", name=f"Keep this one: keep “{text}” and delete the other")


@pytest.mark.parametrize("width, height", [(390, 844), (1280, 900)])
def test_each_keep_button_is_drawn_with_the_memory_it_keeps(live_server, page, width, height):
    """On a phone the two memories are stacked, side by side on a wide screen: either way the
    button that keeps a memory sits with it (no "left" or "right" to work out)."""
    seed(live_server)
    page.set_viewport_size({"width": width, "height": height})
    page.goto(live_server.url + "/attention/?kind=contradiction")
    card = finding(page, "Alarm at 07:00")
    figures = card.locator("figure")
    expect(figures).to_have_count(2)
    boxes = []
    for index in range(2):
        figure = figures.nth(index)
        text = figure.locator("blockquote").inner_text()
        button = card.get_by_role(
            "button", name=f"Keep this one: keep “{text}” and delete the other"
        )
        expect(button).to_be_visible()
        inside, outside = figure.bounding_box(), button.bounding_box()
        assert inside and outside
        assert inside["x"] <= outside["x"] and inside["y"] <= outside["y"], (text, inside, outside)
        assert outside["x"] + outside["width"] <= inside["x"] + inside["width"], text
        assert outside["y"] + outside["height"] <= inside["y"] + inside["height"], text
        boxes.append((inside, text))
    first, second = boxes[0][0], boxes[1][0]
    stacked = second["y"] >= first["y"] + first["height"]
    assert stacked == (width < 640)

    # The button with the memory drawn first (on top, or on the left) keeps that one.
    kept, gone = boxes[0][1], boxes[1][1]
    keep_button(card, kept).click()
    wait_for_htmx(page)
    after = contents(live_server)
    assert kept in after and gone not in after
    assert page.watch.page_errors == []


def test_merge_a_near_duplicate_pair_and_undo(live_server, page):
    ids = seed(live_server)
    page.goto(live_server.url + "/attention/")
    expect(page.get_by_role("heading", name="Near-duplicates: 2")).to_be_visible()
    card = finding(page, "The user likes tea")
    expect(card).to_contain_text("The same terms (tea)")
    card.get_by_label("Merged text").fill("Prefers tea, green and without sugar")
    card.get_by_role("button", name="Merge", exact=True).click()
    wait_for_htmx(page)
    notice = page.locator("#attention-notice")
    expect(notice).to_contain_text("Kept “Prefers tea, green and without sugar”")
    expect(page.get_by_role("heading", name="Near-duplicates: 1")).to_be_visible()

    after = contents(live_server)
    assert "Prefers tea, green and without sugar" in after
    assert "Prefers tea" not in after and "The user likes tea" not in after
    history = live_server.memories().history()
    assert [e["action"] for e in history[-2:]] == ["update", "delete"]
    assert {e["id"] for e in history[-2:]} == {ids["Prefers tea"], ids["The user likes tea"]}

    notice.get_by_role("button", name="Undo").click()
    wait_for_htmx(page)
    expect(page.locator("#attention-notice")).to_contain_text("both memories are back")
    restored = contents(live_server)
    assert "Prefers tea" in restored and "The user likes tea" in restored
    assert "Prefers tea, green and without sugar" not in restored
    page.reload()
    expect(page.get_by_role("heading", name="Near-duplicates: 2")).to_be_visible()
    assert not page.watch.dialogs and not page.watch.page_errors


def test_keep_one_side_of_a_contradiction_and_dismiss_across_reload(live_server, page):
    seed(live_server)
    page.goto(live_server.url + "/attention/?kind=contradiction")
    card = finding(page, "Alarm at 07:00")
    expect(card).to_contain_text("06:45 vs 07:00")
    keep_button(card, "Alarm at 07:00").click()
    wait_for_htmx(page)
    after = contents(live_server)
    assert "Alarm at 07:00" in after and "Alarm at 06:45" not in after

    page.get_by_role("link", name="Hard to use (1)").click()
    wait_for_htmx(page)
    card = finding(page, "hallway lights")
    card.get_by_role("button", name="Dismiss").click()
    wait_for_htmx(page)
    expect(page.get_by_role("heading", name="Hard to use: 0")).to_be_visible()
    page.reload()
    expect(page.get_by_role("heading", name="Hard to use: 0")).to_be_visible()
    assert "I prefer the hallway lights at 30% after 22:00" in contents(live_server)


def test_without_javascript_merge_still_works(live_server, browser):
    seed(live_server)
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(live_server.url + "/attention/")
        keep_button(finding(page, "The user likes tea"), "Prefers tea").click()
        expect(page.locator("#attention-notice")).to_contain_text("Kept “Prefers tea”")
        assert "The user likes tea" not in contents(live_server)
        page.locator("#attention-notice").get_by_role("button", name="Undo").click()
        expect(page.locator("#attention-notice")).to_contain_text("both memories are back")
        assert "The user likes tea" in contents(live_server)
    finally:
        context.close()


@pytest.mark.parametrize("color_scheme", ["light", "dark"], indirect=True)
def test_attention_screenshots(live_server, page, color_scheme):
    seed(live_server)
    page.goto(live_server.url + "/attention/")
    expect(page.get_by_role("heading", name="Near-duplicates: 2")).to_be_visible()
    assert_accessible(page, f"on the attention page in the {color_scheme} theme")
    screenshot(page, f"attention-{color_scheme}")
    page.set_viewport_size({"width": 360, "height": 800})
    screenshot(page, f"attention-{color_scheme}-360")


def test_contradictions_show_values_as_the_memories_write_them(live_server, page):
    store = live_server.memories()
    for text in (
        "Bedroom at 24°C at night",
        "Bedroom at 22°C at night",
        "臥室晚上十點關燈",
        "臥室晚上十一點關燈",
    ):
        store.add(text, category="workflow")
    page.goto(live_server.url + "/attention/?kind=contradiction")
    expect(page.get_by_role("heading", name="Contradictions: 2")).to_be_visible()
    why = " ".join(page.locator("article.finding .finding-why").all_inner_texts())
    for value in ("24°C", "22°C", "晚上十點", "晚上十一點", "Bedroom, night", "臥室, 關燈"):
        assert value in why, f"{value} not in {why!r}"
    for folded in ("24°c", "22°c", "十点", "卧室", "关灯"):
        assert folded not in why, f"{folded} in {why!r}"


@pytest.mark.parametrize(
    ("accept", "said", "undo", "undone"),
    [
        ("en", "Rewritten as “Prefers green tea in the morning.”", "Undo", "reads as before"),
        ("zh-TW", "已改寫成「Prefers green tea in the morning.」", "復原", "已復原"),
        ("zh-CN", "已改写成“Prefers green tea in the morning.”", "撤销", "已撤销"),
    ],
    ids=["en", "zh-TW", "zh-CN"],
)
def test_rewrite_as_says_it_once_and_can_be_undone(
    live_server, browser, accept, said, undo, undone
):
    """Like every other fix on the page, a rewrite offers Undo, and its message does not close
    the memory's own full stop with a second one."""
    memory = live_server.memories().add("I prefer green tea in the morning.", category="general")
    context = browser.new_context(locale=accept, extra_http_headers={"Accept-Language": accept})
    page = context.new_page()
    page.goto(live_server.url + "/attention/?kind=hard")
    finding(page, "I prefer green tea").locator("button.primary").click()
    wait_for_htmx(page)
    notice = page.locator("#attention-notice")
    expect(notice.locator("p")).to_have_text(said)
    assert live_server.memories().get(memory.id).content == "Prefers green tea in the morning."

    notice.get_by_role("button", name=undo).click()
    wait_for_htmx(page)
    expect(page.locator("#attention-notice")).to_contain_text(undone)
    assert live_server.memories().get(memory.id).content == "I prefer green tea in the morning."
    expect(finding(page, "I prefer green tea")).to_be_visible()
    context.close()
