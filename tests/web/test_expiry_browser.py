"""A memory's expiry in a real browser against the real server: set one from the Memories row,
see the memory under Expired in Needs attention once it has passed, extend it there — each
checked on disk. (The server's clock is not frozen: the expiry picked is yesterday's date, so
it has passed at once.)"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from tests.support.web import assert_accessible, wait_for_htmx

pytestmark = pytest.mark.browser


def test_set_an_expiry_see_it_expired_in_needs_attention_and_extend_it(live_server, page):
    store = live_server.memories()
    memory = store.add("Is in Tokyo for the conference")
    today = datetime.now(UTC).date()
    yesterday, later = today - timedelta(days=1), today + timedelta(days=30)

    page.goto(live_server.url + "/memories/")
    row = page.locator(f"#memory-{memory.id}")
    row.get_by_role("button", name="Edit").click()
    wait_for_htmx(page)
    editing = page.locator(f"#memory-{memory.id}")
    editing.get_by_label("True until (the end of that day)").fill(yesterday.isoformat())
    editing.get_by_role("button", name="Set expiry").click()
    wait_for_htmx(page)
    expect(page.locator(f"#memory-{memory.id} .expiry.is-expired")).to_have_text(
        f"expired after {yesterday.isoformat()}"
    )
    stored = store.get(memory.id)
    assert stored is not None and stored.expired()

    page.goto(live_server.url + "/attention/?kind=expired")
    card = page.locator("article.finding", has_text="Is in Tokyo for the conference")
    expect(card).to_contain_text("it is left out of prompts")
    assert_accessible(page, "Needs attention, Expired")
    card.get_by_label("True until (the end of that day)").fill(later.isoformat())
    card.get_by_role("button", name="Extend").click()
    wait_for_htmx(page)
    expect(page.locator("#attention-notice")).to_contain_text(f"is true until {later.isoformat()}")
    expect(page.locator("article.finding", has_text="Is in Tokyo")).to_have_count(0)
    extended = store.get(memory.id)
    assert extended is not None and not extended.expired()
    assert extended.expires_at == datetime.combine(
        later + timedelta(days=1), datetime.min.time(), tzinfo=UTC
    )

    page.goto(live_server.url + "/memories/")
    expect(page.locator(f"#memory-{memory.id} .expiry")).to_have_text(f"until {later.isoformat()}")
    assert page.watch.page_errors == []
