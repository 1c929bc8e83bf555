"""Fixtures for the dashboard: a Flask app and client over a temporary data folder, a real
server process, and a real Chromium driven by Playwright (Debian's /usr/bin/chromium)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.web import (
    CHROMIUM,
    CHROMIUM_ARGS,
    CsrfClient,
    LiveServer,
    PageWatch,
    start_server,
    stop_server,
)
from webapp import create_app
from webapp.settings import Settings


@pytest.fixture
def app(settings: Settings):
    app = create_app(settings)
    app.config.update(TESTING=True)
    return app


@pytest.fixture
def client(app) -> CsrfClient:
    return CsrfClient(app.test_client())


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[LiveServer]:
    server = start_server(tmp_path / "data")
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: run ./test.sh (it installs Debian's chromium)"
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        yield browser
        browser.close()


@pytest.fixture(params=["light"])
def color_scheme(request) -> str:
    return request.param


@pytest.fixture
def page(browser, color_scheme):
    context = browser.new_context(
        color_scheme=color_scheme, viewport={"width": 1280, "height": 900}
    )
    page = context.new_page()
    watch = PageWatch([], [], [])

    def on_dialog(dialog):
        watch.dialogs.append(f"{dialog.type}: {dialog.message}")
        if dialog.type == "confirm":
            dialog.accept()
        else:
            dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on(
        "console",
        lambda msg: (
            watch.console_errors.append(f"{msg.text} at {msg.location}")
            if msg.type == "error"
            else None
        ),
    )
    page.on("pageerror", lambda exc: watch.page_errors.append(str(exc)))
    page.watch = watch
    page.set_default_timeout(10_000)
    yield page
    context.close()
