"""The README's pictures, taken from `serve --demo` as a new user first sees it (Review with
its pending facts included), in light and dark; each page axe-clean on the way.

`UPDATE_DOC_SCREENSHOTS=1 pytest tests/web/test_readme_screenshots.py` refreshes
docs/screenshots/; otherwise the pictures go to test-artifacts/screenshots/ only."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.support.web import assert_accessible, screenshot, start_server, stop_server
from webapp.cli.demo import DEMO_DATA

pytestmark = pytest.mark.browser

ZH_THREAD = "slack:1731986400.000200"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    server = start_server(tmp_path_factory.mktemp("readme") / "data", args=["--demo"])
    yield server
    stop_server(server)


@pytest.mark.parametrize("color_scheme", ["light", "dark"], indirect=True)
def test_readme_pictures_of_the_demo(demo, page, color_scheme):
    shots = [
        ("memories", "/memories/", "#memory-rows tr"),
        ("conversations", "/conversations/", ".thread-title"),
        ("conversation-thread", f"/conversations/thread/{ZH_THREAD}", ".turn"),
        ("prompt", f"/prompt/?conversation={ZH_THREAD}&message=明天呢？", "#prompt-text .section"),
        ("review", "/review/", "article.review-item"),
        ("skills", "/skills/", "main table, main .card"),
        ("people", "/people/", ".person"),
        ("bring", "/memories/bring/", "#main form"),
    ]
    for name, path, ready in shots:
        page.goto(demo.url + path)
        expect(page.locator(ready).first).to_be_visible()
        assert_accessible(page, f"on {path} ({color_scheme})")
        screenshot(page, f"readme-{name}-{color_scheme}", doc_name=f"{name}-{color_scheme}")
    proposals = json.loads((DEMO_DATA / "proposals.json").read_text(encoding="utf-8"))
    expect(page.locator("#review-badge")).to_contain_text(f"{len(proposals)} pending")
