"""The app shell in a real browser: htmx loads under the CSP, no console errors, axe-clean."""

from __future__ import annotations

import pytest

from tests.support.web import assert_accessible

pytestmark = pytest.mark.browser


def test_shell_loads_htmx_without_csp_violations(live_server, page):
    page.goto(live_server.url + "/memories/")
    assert page.evaluate("typeof window.htmx") == "object"
    assert page.evaluate("htmx.config.allowEval") is False
    assert page.watch.console_errors == []
    assert page.watch.page_errors == []
    nav = page.get_by_role("navigation", name="Main")
    assert nav.get_by_role("link", name="Memories").get_attribute("aria-current") == "page"
    assert_accessible(page, "on the memories page shell")
