"""A household adopts it, in a real Chromium against a real server (issue 36): each Home
Assistant user comes through the trusted proxy (its X-Remote-User-Id header); an import's
preview says whose each fact is (the signed-in person's by default); identities are added
to and taken from a person; a person is removed only after a confirmation, with Undo; a new
Home Assistant user is asked "Is this you?"; a thread names each message's speaker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.support.web import (
    LiveServer,
    assert_accessible,
    start_server,
    stop_server,
    wait_for_htmx,
)
from webapp.stores import ConversationStore, PeopleStore, ReviewQueue

pytestmark = pytest.mark.browser

NOTES = "Likes jazz on Sunday mornings.\nThe bins go out on Tuesday.\n"


@pytest.fixture
def server(tmp_path) -> Iterator[LiveServer]:
    live = start_server(
        tmp_path / "data",
        env_extra={"MEMORY_EMBEDDER": "lexical", "MEMORY_TRUSTED_PROXIES": "127.0.0.1"},
    )
    yield live
    stop_server(live)


@pytest.fixture
def people(server: LiveServer) -> PeopleStore:
    return PeopleStore.from_settings(server.settings)


@pytest.fixture
def as_user(browser) -> Iterator:
    """A page of a Home Assistant user behind the proxy (None: nobody signed in)."""
    contexts = []

    def open_page(user_id: str | None, name: str = "") -> Page:
        headers = {"X-Remote-User-Id": user_id, "X-Remote-User-Display-Name": name}
        context = browser.new_context(
            viewport={"width": 1280, "height": 900},
            extra_http_headers=headers if user_id else {},
        )
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        return page

    yield open_page
    for context in contexts:
        context.close()


def test_the_import_preview_says_whose_each_fact_is(server, people, as_user):
    maya = people.add("Maya", identities=(("ha", "u-maya"),))
    page = as_user("u-maya", "Maya")
    page.goto(f"{server.url}/memories/bring/")
    expect(page.get_by_label("Whose these facts are")).to_have_value(maya.id)
    page.get_by_label("Or paste your memories, one per line").fill(NOTES)
    page.get_by_role("button", name="Preview import").click()
    wait_for_htmx(page)
    owner = page.get_by_label("Whose these facts are")
    expect(owner.locator("option:checked")).to_have_text("You")
    rows = page.locator(".bring-actions tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator(".bring-actions thead")).to_contain_text("Whose")
    expect(page.get_by_label("Whose is line 1").locator("option:checked")).to_have_text("You")
    assert_accessible(page, "on the import preview with its Whose column")
    page.get_by_label("Whose is line 2").select_option(label="Household")
    wait_for_htmx(page)
    expect(page.get_by_label("Whose is line 2").locator("option:checked")).to_have_text("Household")
    page.get_by_role("button", name="Queue 2 facts for review").click()
    wait_for_htmx(page)
    expect(page.locator("#bring-panel .ok-text")).to_contain_text("Queued 2 facts")
    whose = {i.content: i.person for i in ReviewQueue.from_settings(server.settings).pending()}
    assert whose == {"Likes jazz on Sunday mornings.": maya.id, "The bins go out on Tuesday.": None}


def test_nobody_signed_in_imports_as_the_household(server, people, as_user):
    people.add("Maya")
    page = as_user(None)
    page.goto(f"{server.url}/memories/bring/")
    expect(page.get_by_label("Whose these facts are").locator("option:checked")).to_have_text(
        "Household"
    )


def test_an_identity_is_added_to_a_person_and_taken_away(server, people, as_user):
    sam = people.add("Sam")
    page = as_user(None)
    page.goto(f"{server.url}/people/")
    card = page.locator(f"#person-{sam.id}")
    card.get_by_label("Identity").select_option(label="Slack")
    card.get_by_label("Id or name").fill("U07SAM")
    card.get_by_role("button", name="Add identity").click()
    card = page.locator(f"#person-{sam.id}")
    expect(card.locator(".identities")).to_contain_text("Slack U07SAM")
    assert [i.key for i in people.get(sam.id).identities] == [("slack", "U07SAM")]
    card.get_by_role("button", name="Unlink").click()
    expect(page.locator(f"#person-{sam.id} .identities li")).to_have_count(0)
    expect(page.locator(".unlinked")).to_contain_text("U07SAM")


def test_a_person_is_removed_after_a_confirmation_and_can_be_brought_back(server, people, as_user):
    sam = people.add("Sam", identities=(("slack", "U07SAM"),))
    page = as_user(None)
    page.goto(f"{server.url}/people/")
    asked: list[str] = []
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    page.get_by_role("button", name="Remove Sam…").click()
    assert asked and "Nothing of theirs becomes the household's" in asked[0]
    expect(page.locator(f"#person-{sam.id}")).to_have_count(1)  # dismissed: nothing removed
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="Remove Sam…").click()
    expect(page.locator("#removed-notice")).to_contain_text("Removed Sam from the household")
    expect(page.locator(f"#person-{sam.id}")).to_have_count(0)
    expect(page.locator(".unlinked")).to_contain_text("U07SAM")
    page.locator("#removed-notice").get_by_role("button", name="Undo").click()
    expect(page.locator(f"#person-{sam.id}")).to_contain_text("U07SAM")
    assert people.get(sam.id) == sam


def test_a_person_who_owns_memories_is_not_removed(server, people, as_user):
    sam = people.add("Sam")
    server.memories().add("Is allergic to penicillin.", person=sam.id)
    page = as_user(None)
    page.goto(f"{server.url}/people/")
    expect(page.locator(f"#person-{sam.id} .remove-note")).to_contain_text(
        "Sam owns 1 private memory"
    )
    assert_accessible(page, "on the People page with its identity and remove forms")
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="Remove Sam…").click()
    expect(page.get_by_role("alert")).to_contain_text("Sam still owns 1 private memories")
    assert people.get(sam.id) is not None
    assert [m.person for m in server.memories().get_all()] == [sam.id]


def test_a_new_home_assistant_user_is_asked_who_they_are(server, people, as_user):
    maya = people.add("Maya")
    page = as_user("u-maya", "Maya")
    page.goto(f"{server.url}/memories/")
    prompt = page.get_by_role("region", name="Is this you?")
    expect(prompt).to_be_visible()
    assert_accessible(page, "on Memories with the first-visit prompt")
    prompt.get_by_label("I am").select_option(label="Maya")
    prompt.get_by_role("button", name="Link yourself").click()
    expect(page.get_by_role("region", name="Is this you?")).to_have_count(0)
    assert people.resolve("ha", "u-maya") == people.get(maya.id)
    page.get_by_label("What should the assistant remember?").fill("Likes oolong tea.")
    page.get_by_role("button", name="Add memory").click()
    expect(page.locator("td.whose").first).to_have_text("You")


def test_a_thread_names_each_speaker(server, people, as_user):
    maya = people.add("Maya", identities=(("ha", "u-maya"),))
    leo = people.add("Leo", identities=(("ha", "u-leo"),))
    threads = ConversationStore.from_settings(server.settings)
    threads.add_exchange("ha:kitchen", "Put the kettle on.", "Done.", person=maya.id)
    threads.add_exchange("ha:kitchen", "And mine too.", "Done.", person=leo.id)
    page = as_user("u-maya", "Maya")
    page.goto(f"{server.url}/conversations/thread/ha:kitchen")
    speakers = page.locator(".turn-user .turn-head .role")
    expect(speakers).to_have_text(["You", "Leo"])
    leo_page = as_user("u-leo", "Leo")
    leo_page.goto(f"{server.url}/conversations/thread/ha:kitchen")
    expect(leo_page.locator(".turn-user .turn-head .role")).to_have_text(["Maya", "You"])
