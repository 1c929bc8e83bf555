"""Bring your memories in a real browser: each fixture of tests/data/imports uploaded on the
import page, previewed, queued, found in Review with its origin, approved into memory."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.imports import EXPECTED, FIXTURES, today
from tests.support.web import assert_accessible, start_server, stop_server, wait_for_htmx
from webapp.stores import ReviewQueue
from webapp.stores.origin import describe_origin

pytestmark = pytest.mark.browser


@pytest.fixture
def server(tmp_path):
    live = start_server(tmp_path / "data", env_extra={"MEMORY_EMBEDDER": "lexical"})
    yield live
    stop_server(live)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_file_is_previewed_queued_reviewed_and_approved_in_the_browser(server, page, name):
    fmt, add, update, known, refused = EXPECTED[name]
    page.goto(f"{server.url}/memories/bring/")
    page.set_input_files("#bring-file", str(FIXTURES / name))
    page.get_by_role("button", name="Preview import").click()
    wait_for_htmx(page)
    expect(page.locator("#bring-counts")).to_have_text(
        f"{add} to add · {update} to update · {known} skipped as known · {refused} refused"
    )
    expect(page.locator(".bring-refused tbody tr")).to_have_count(refused)
    assert not (server.data_dir / "review.json").exists()  # a preview queues nothing

    page.get_by_role("button", name=f"Queue {add + update} facts for review").click()
    wait_for_htmx(page)
    source = f"{fmt}, {name}, {today()}"
    expect(page.locator("#bring-panel .ok-text")).to_contain_text(
        f"Queued {add + update} facts for review from {source}."
    )
    assert server.memories().get_all() == []  # Review only

    page.goto(f"{server.url}/review/")
    if name == "mem0_get_all.json":
        assert_accessible(page, "on Review with an imported file's source bar")
    expect(page.locator(".review-sources li")).to_have_text(
        f"{source}: {add + update} waiting Approve all Reject all", use_inner_text=True
    )
    expect(page.locator("article.review-item").first).to_contain_text(f"Imported from {source}")
    page.get_by_role("button", name=f"Approve all from {source}").click()
    wait_for_htmx(page)
    expect(page.locator("#review-notice")).to_contain_text(
        f"Approved {add + update} facts from {source}."
    )
    kept = server.memories().get_all()
    assert len(kept) == add + update
    assert {describe_origin(m.origin).split(", then")[0] for m in kept} == {
        f"imported from {source}"
    }
    assert ReviewQueue(server.settings.review_file, server.memories()).pending() == []
    assert page.watch.dialogs == []  # hostile text (<script>alert…) stayed text


def test_hostile_text_is_shown_as_text_and_a_wrong_format_is_named(server, page):
    page.goto(f"{server.url}/memories/bring/")
    page.fill("#bring-pasted", "<img src=x onerror=alert(1)> Prefers dark mode\n- 喜歡爬山")
    page.get_by_role("button", name="Preview import").click()
    wait_for_htmx(page)
    expect(page.locator(".bring-actions")).to_contain_text(
        "<img src=x onerror=alert(1)> Prefers dark mode"
    )
    assert page.watch.dialogs == []
    assert_accessible(page, "on the import preview")

    page.goto(f"{server.url}/memories/bring/")
    page.set_input_files("#bring-file", str(FIXTURES / "mcp_memory.jsonl"))
    page.select_option("#bring-format", "mem0")
    page.get_by_role("button", name="Preview import").click()
    wait_for_htmx(page)
    expect(page.locator("#bring-error")).to_have_text(
        "This file is not mem0: it looks like MCP memory JSONL (format mcp-jsonl, or auto)."
    )
    assert not (server.data_dir / "review.json").exists()


def test_export_offers_each_format(server, page):
    server.memories().add("Prefers tea", category="preference")
    page.goto(f"{server.url}/memories/bring/")
    page.select_option("#bring-export-format", "markdown")
    with page.expect_download() as download:
        page.get_by_role("button", name="Export", exact=True).click()
    body = Path(download.value.path()).read_text(encoding="utf-8")
    assert body.startswith("# Memories\n\n## Preference\n\n- Prefers tea")
