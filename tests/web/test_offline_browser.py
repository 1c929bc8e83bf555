"""The dashboard when the server cannot be reached: a real ``memory-curator serve`` process is
killed mid-session and started again on the same port. Every htmx action must say so in a
banner, keep what was typed, and let the person retry once the server answers again."""

from __future__ import annotations

import json
import os
import signal

import pytest
from playwright.sync_api import expect

from tests.support.web import assert_accessible, start_server, stop_server, wait_for_htmx
from webapp.extraction import MemoryExtractor, ReconcileAction
from webapp.stores import ReviewQueue

pytestmark = pytest.mark.browser

UNREACHABLE = "Cannot reach the dashboard"


def kill(server) -> None:
    """Kill the server process for real (no clean shutdown) and wait until it is gone."""
    os.killpg(server.process.pid, signal.SIGKILL)
    server.process.wait(timeout=10)
    if server.process.stdout:
        server.process.stdout.close()


def restart(server):
    """The same data folder served again on the same port."""
    port = int(server.url.rsplit(":", 1)[1])
    return start_server(server.data_dir, port=port)


def on_disk(server) -> list[dict]:
    path = server.settings.memory_file
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []


def expect_offline_banner(page) -> None:
    banner = page.locator("#offline-banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text(UNREACHABLE)
    expect(banner).to_contain_text("Nothing was saved; your text is kept")
    expect(banner.get_by_role("button", name="Retry")).to_be_visible()


def dismiss_banner(page) -> None:
    page.locator("#offline-banner").get_by_role("button", name="Dismiss this message").click()
    expect(page.locator("#offline-banner")).to_have_count(0)


def test_every_memories_action_with_the_server_stopped_then_retry(tmp_path, page):
    server = start_server(tmp_path / "data")
    try:
        kept = server.memories().add("Prefers window seats", category="preference")
        page.goto(server.url + "/memories/")
        page.wait_for_function("() => window.htmx !== undefined")
        expect(page.locator("#results")).to_contain_text("Prefers window seats")
        kill(server)

        # search
        page.get_by_role("searchbox", name="Search").fill("window")
        expect_offline_banner(page)
        expect(page.get_by_role("searchbox", name="Search")).to_have_value("window")
        dismiss_banner(page)
        # edit (open the form)
        row = page.locator(f"#memory-{kept.id}")
        row.get_by_role("button", name="Edit").click()
        expect_offline_banner(page)
        expect(row).to_contain_text("Prefers window seats")
        dismiss_banner(page)
        # delete
        row.get_by_role("button", name="Delete").click()
        expect_offline_banner(page)
        expect(row).to_contain_text("Prefers window seats")
        dismiss_banner(page)
        # add: the typed text stays in the box
        box = page.get_by_label("What should the assistant remember?")
        box.fill("Buys oat milk, never cow's milk")
        page.get_by_role("button", name="Add memory").click()
        expect_offline_banner(page)
        expect(box).to_have_value("Buys oat milk, never cow's milk")
        expect(page.get_by_role("button", name="Add memory")).to_be_enabled()
        assert_accessible(page, "with the offline banner")
        assert [r["content"] for r in on_disk(server)] == ["Prefers window seats"]

        server = restart(server)
        # The page notices by itself that the server answers again: the offline banner goes.
        expect(page.locator("#offline-banner")).to_have_count(0, timeout=15_000)
        again = page.locator("#online-again")
        expect(again).to_contain_text("answers again")
        again.get_by_role("button", name="Retry").click()
        wait_for_htmx(page)
        expect(page.locator("#add-form")).to_contain_text("Added “Buys oat milk")
        expect(page.locator("#online-again")).to_have_count(0)
        assert [r["content"] for r in on_disk(server)] == [
            "Prefers window seats",
            "Buys oat milk, never cow's milk",
        ]
    finally:
        stop_server(server)


def test_edit_save_with_the_server_stopped_keeps_the_text(tmp_path, page):
    server = start_server(tmp_path / "data")
    try:
        memory = server.memories().add("Lives in Taipei")
        page.goto(server.url + "/memories/")
        row = page.locator(f"#memory-{memory.id}")
        row.get_by_role("button", name="Edit").click()
        text = row.get_by_label("Memory text")
        text.fill("Lives in Tainan since 2025")
        kill(server)
        row.get_by_role("button", name="Save").click()
        expect_offline_banner(page)
        expect(text).to_have_value("Lives in Tainan since 2025")
        server = restart(server)
        expect(page.locator("#online-again")).to_be_visible(timeout=15_000)
        page.locator("#online-again").get_by_role("button", name="Retry").click()
        expect(row).to_contain_text("Lives in Tainan since 2025")
        assert [r["content"] for r in on_disk(server)] == ["Lives in Tainan since 2025"]
    finally:
        stop_server(server)


def test_review_approve_with_the_server_stopped_then_retry(tmp_path, page):
    server = start_server(tmp_path / "data")
    try:
        queue = ReviewQueue(server.settings.review_file, server.memories(), lock_timeout=5)
        extractor = MemoryExtractor(server.memories(), review_queue=queue, mode="manual")
        extractor.submit(
            [ReconcileAction("add", None, "User drinks oolong tea", "preference")],
            conversation_id="cli:session-1",
            evidence="I drink oolong tea.",
        )
        page.goto(server.url + "/review/")
        card = page.locator("article.review-item", has_text="oolong")
        kill(server)
        card.get_by_role("button", name="Approve").click()
        expect_offline_banner(page)
        expect(card).to_be_visible()
        server = restart(server)
        expect(page.locator("#online-again")).to_be_visible(timeout=15_000)
        page.locator("#online-again").get_by_role("button", name="Retry").click()
        expect(page.locator("article.review-item", has_text="oolong")).to_have_count(0)
        assert [m.content for m in server.memories().get_all()] == ["User drinks oolong tea"]
    finally:
        stop_server(server)


def test_a_proxy_error_page_never_replaces_the_form(live_server, page):
    """A 502 from a proxy in front (Home Assistant's ingress while the add-on restarts)."""
    page.goto(live_server.url + "/memories/")
    page.route(
        "**/memories/",
        lambda route: (
            route.fulfill(status=502, body="<h1>502 Bad Gateway</h1>", content_type="text/html")
            if route.request.method == "POST"
            else route.continue_()
        ),
    )
    box = page.get_by_label("What should the assistant remember?")
    box.fill("Keeps receipts for ten years")
    page.get_by_role("button", name="Add memory").click()
    banner = page.locator("#offline-banner")
    expect(banner).to_contain_text("HTTP 502")
    expect(banner).to_contain_text("Nothing was saved; your text is kept")
    expect(box).to_have_value("Keeps receipts for ten years")
    expect(page.locator("body")).not_to_contain_text("Bad Gateway")
    page.unroute("**/memories/")
    # The server itself answers: the banner goes away by itself; Retry sends it.
    expect(page.locator("#online-again")).to_be_visible(timeout=15_000)
    page.locator("#online-again").get_by_role("button", name="Retry").click()
    expect(page.locator("#results")).to_contain_text("Keeps receipts for ten years")


def test_retry_of_a_failed_edit_link_and_search_opens_them(tmp_path, page):
    server = start_server(tmp_path / "data")
    try:
        memory = server.memories().add("Walks the dog at seven")
        server.memories().add("Prefers tea")
        page.goto(server.url + "/memories/")
        page.wait_for_function("() => window.htmx !== undefined")
        kill(server)
        row = page.locator(f"#memory-{memory.id}")
        row.get_by_role("button", name="Edit").click()
        expect_offline_banner(page)
        server = restart(server)
        expect(page.locator("#online-again")).to_be_visible(timeout=15_000)
        page.locator("#online-again").get_by_role("button", name="Retry").click()
        expect(row.get_by_label("Memory text")).to_have_value("Walks the dog at seven")

        kill(server)
        page.get_by_role("searchbox", name="Search").fill("tea")
        expect_offline_banner(page)
        expect(page.locator("#memory-rows tr")).to_have_count(2)
        server = restart(server)
        expect(page.locator("#online-again")).to_be_visible(timeout=15_000)
        page.locator("#online-again").get_by_role("button", name="Retry").click()
        expect(page.locator("#results mark")).to_have_text(["tea"])
    finally:
        stop_server(server)


def test_the_offer_to_retry_goes_once_the_person_does_something_else(tmp_path, page):
    server = start_server(tmp_path / "data")
    try:
        server.memories().add("Prefers window seats")
        page.goto(server.url + "/memories/")
        page.wait_for_function("() => window.htmx !== undefined")
        kill(server)
        box = page.get_by_label("What should the assistant remember?")
        box.fill("Buys oat milk")
        page.get_by_role("button", name="Add memory").click()
        expect_offline_banner(page)
        server = restart(server)
        again = page.locator("#online-again")
        expect(again).to_contain_text("press Retry", timeout=15_000)
        # The person presses Add again by hand: it is saved, and Retry is no longer offered
        # (it would send the same memory a second time).
        page.get_by_role("button", name="Add memory").click()
        expect(page.locator("#add-form")).to_contain_text("Added “Buys oat milk")
        expect(again).to_have_count(0)

        kill(server)
        page.get_by_role("searchbox", name="Search").fill("window")
        expect_offline_banner(page)
        server = restart(server)
        expect(again).to_be_visible(timeout=15_000)
        # A search of their own that works is something else as well.
        page.get_by_role("searchbox", name="Search").fill("oat")
        expect(page.locator("#results mark")).to_have_text(["oat"])
        expect(again).to_have_count(0)
        assert [r["content"] for r in on_disk(server)] == ["Prefers window seats", "Buys oat milk"]
    finally:
        stop_server(server)
