"""The People page's Home Assistant devices, in a real Chromium at 390 px against a real
server: a device Assist was heard through (a real call to the Assist API) is listed by its
name, set to the household or to a person with the form, and the next prompt keeps to it; a
person who is not an administrator may set a device to themselves, never to another person,
and cannot change one that answers with another person's memory."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.web import LiveServer, assert_accessible, start_server, stop_server
from webapp.stores import PeopleStore

pytestmark = pytest.mark.browser

PROMPT = "/api/assist/v1/prompt"


@pytest.fixture
def server(tmp_path) -> Iterator[LiveServer]:
    live = start_server(
        tmp_path / "data",
        env_extra={"MEMORY_EMBEDDER": "lexical", "MEMORY_TRUSTED_PROXIES": "127.0.0.1"},
    )
    yield live
    stop_server(live)


def heard(server: LiveServer, user_id: str, device_id: str, name: str) -> dict:
    """What the integration gets for a request from ``user_id`` through ``device_id``."""
    context = {"user_id": user_id, "device_id": device_id, "device_name": name}
    answer = httpx.post(server.url + PROMPT, json={"context": context}, timeout=30)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def phone(browser, user_id: str | None = None) -> Page:
    headers = {"X-Remote-User-Id": user_id} if user_id else {}
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, extra_http_headers=headers
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    return page


def test_a_device_is_set_to_the_household_then_to_a_person(server, browser):
    people = PeopleStore.from_settings(server.settings)
    ana = people.add("Ana", identities=(("ha", "u-ana"),))
    people.add("Ben", identities=(("ha", "u-ben"),))
    assert heard(server, "u-ana", "dev-kitchen", "Kitchen satellite")["speaker"]["name"] == "Ana"
    page = phone(browser)
    try:
        page.goto(server.url + "/people/")
        device = page.locator("[data-device='dev-kitchen']")
        choice = device.get_by_label("Kitchen satellite")
        expect(choice).to_have_value("speaker")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert_accessible(page, "People page with a device, 390 px")
        choice.select_option("household")
        device.get_by_role("button", name="Save").click()
        expect(page.locator("[data-device='dev-kitchen'] select")).to_have_value("household")
        assert heard(server, "u-ana", "dev-kitchen", "Kitchen satellite")["speaker"] == {
            "scope": "household",
            "name": None,
        }
        page.locator("[data-device='dev-kitchen'] select").select_option(label="Ben")
        page.locator("[data-device='dev-kitchen']").get_by_role("button", name="Save").click()
        expect(page.locator("[data-device='dev-kitchen'] select")).to_have_value(
            f"person:{people.find('Ben').id}"
        )
        assert (
            heard(server, "u-ana", "dev-kitchen", "Kitchen satellite")["speaker"]["name"] == "Ben"
        )
        entries = people.history_path.read_text(encoding="utf-8")
        assert '"device"' in entries and "dev-kitchen" in entries  # kept with its history
        assert ana.id not in str(people.device("dev-kitchen"))
    finally:
        page.context.close()


def test_a_person_who_is_not_an_administrator_sets_only_their_own(server, browser):
    people = PeopleStore.from_settings(server.settings)
    ana = people.add("Ana", identities=(("ha", "u-ana"),))
    ben = people.add("Ben", identities=(("ha", "u-ben"),))
    heard(server, "u-ana", "dev-hall", "Hall speaker")
    heard(server, "u-ben", "dev-study", "Study speaker")
    people.choose_device("dev-study", "person", ben.id)
    page = phone(browser, "u-ana")
    try:
        page.goto(server.url + "/people/")
        hall = page.locator("[data-device='dev-hall'] select")
        options = hall.locator("option").all_inner_texts()
        assert "Ben" not in options and "Ana" in options
        hall.select_option(label="Ana")
        page.locator("[data-device='dev-hall']").get_by_role("button", name="Save").click()
        expect(page.locator("[data-device='dev-hall'] select")).to_have_value(f"person:{ana.id}")
        study = page.locator("[data-device='dev-study'] select")
        expect(study).to_be_disabled()
        assert page.locator("[data-device='dev-study'] button").count() == 0
        # a form forged past the page is refused, and the device stays Ben's
        token = page.locator("[data-device='dev-study'] input[name=csrf_token]").input_value()
        forged = page.request.post(
            server.url + "/people/device",
            form={"csrf_token": token, "device": "dev-study", "choice": "household"},
        )
        assert forged.status == 422
        hall_to_ben = page.request.post(
            server.url + "/people/device",
            form={"csrf_token": token, "device": "dev-hall", "choice": f"person:{ben.id}"},
        )
        assert hall_to_ben.status == 422
        assert (people.device("dev-study").choice, people.device("dev-study").person) == (
            "person",
            ben.id,
        )
        assert people.device("dev-hall").person == ana.id
    finally:
        page.context.close()
