"""Finding things in a real Chromium: search by every word in any order, threads by their
first message and by what was said in them."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.web import assert_accessible, wait_for_htmx

pytestmark = pytest.mark.browser


def test_memory_search_matches_all_words_in_any_order_and_marks_each(live_server, page):
    store = live_server.memories()
    store.add("Drinks coffee in the morning and tea after lunch")
    store.add("Prefers green tea")
    store.add("我喜歡喝無糖綠茶，早上喝咖啡")
    page.goto(live_server.url + "/memories/")

    page.get_by_label("Search", exact=True).fill("tea coffee")
    rows = page.locator("#memory-rows tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Drinks coffee in the morning and tea after lunch")
    assert rows.first.locator("mark").all_inner_texts() == ["coffee", "tea"]

    page.get_by_label("Search", exact=True).fill("ＣＯＦＦＥＥ  Tea")  # width and case folded
    expect(rows).to_have_count(1)
    expect(rows.first.locator("mark")).to_have_count(2)

    page.get_by_label("Search", exact=True).fill("咖啡 绿茶")  # simplified finds traditional
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("無糖綠茶")
    assert rows.first.locator("mark").all_inner_texts() == ["綠茶", "咖啡"]
    assert_accessible(page, "on a multi-word search")


def test_threads_are_titled_by_their_first_message_and_searchable(live_server, page):
    store = live_server.conversations()
    weather = "slack:1731900000.123456"
    store.add_exchange(weather, "What's the weather in Taipei tomorrow?", "Light rain after 15:00.")
    store.add_exchange(weather, "Should I bring an umbrella?", "Yes, a small one.")
    store.add_exchange("cli:session-1731900000000", "記住我喜歡喝無糖綠茶", "好的，記住了。")
    store.add_exchange("schedule:morning-briefing", "Morning briefing please", "Sunny, 24°C.")
    page.goto(live_server.url + "/conversations/")

    slack_row = page.locator("tbody tr", has_text=weather)
    expect(slack_row.locator(".thread-title")).to_have_text(
        "What's the weather in Taipei tomorrow?"
    )
    expect(slack_row).to_contain_text("Slack")
    expect(page.locator("tbody tr", has_text="cli:session").locator(".thread-title")).to_have_text(
        "記住我喜歡喝無糖綠茶"
    )
    link = page.get_by_role("link", name="What's the weather in Taipei tomorrow?")
    expect(link).to_have_attribute("href", f"/conversations/thread/{weather}")

    search = page.get_by_label("Search messages")
    search.fill("umbrella taipei")  # words from two different messages, any order
    expect(page.locator("tbody tr")).to_have_count(1)
    expect(page.locator("tbody tr").first).to_contain_text(weather)
    expect(page.locator(".thread-match mark")).to_have_text(["Taipei"])
    expect(page.locator(".search-summary")).to_contain_text("1 of 3 threads")
    assert "q=umbrella" in page.url  # the search is in the address, so it can be shared

    search.fill("绿茶")  # simplified finds the traditional message
    expect(page.locator("tbody tr")).to_have_count(1)
    expect(page.locator("tbody tr").first).to_contain_text("cli:session")

    search.fill("kubernetes")
    expect(page.locator("tbody tr")).to_have_count(0)
    expect(page.locator("#conversation-list")).to_contain_text("No thread holds every word")
    wait_for_htmx(page)
    assert_accessible(page, "on a conversation search with no match")
