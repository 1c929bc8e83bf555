"""Time in the household's zone, in a real browser against the real server (issue 36):

- the Add form reads the end a typed fact states, shows it before saving ("Expires Fri 5 Dec
  (Europe/Berlin)"), saves it, and saves no end once the person removed it;
- the Edit form of a row does the same for a memory stored as never expiring;
- Review's Edit clears a proposal's expiry, or sets one, before approving;
- times on the pages are on Europe/Berlin's clock with the zone named, and the As-of picker
  reads what is typed in that zone.

Each is checked on disk through the library."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from tests.support.review import propose
from tests.support.web import assert_accessible, start_server, stop_server, wait_for_htmx
from webapp.extraction import ReconcileAction
from webapp.stores.timefmt import to_iso

pytestmark = pytest.mark.browser

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture
def berlin_server(tmp_path):
    server = start_server(tmp_path / "data", {"MEMORY_TIMEZONE": "Europe/Berlin"})
    yield server
    stop_server(server)


def next_friday() -> date:
    """The Friday "until Friday" means now, in Berlin (today when it is Friday)."""
    today = datetime.now(UTC).astimezone(BERLIN).date()
    return today + timedelta(days=(4 - today.weekday()) % 7)


def end_of(day: date) -> datetime:
    return datetime.combine(day + timedelta(days=1), time(0), tzinfo=BERLIN).astimezone(UTC)


def short(day: date) -> str:
    text = f"{day:%a} {day.day} {day:%b}"
    return text if day.year == datetime.now(UTC).astimezone(BERLIN).year else f"{text} {day.year}"


def test_the_add_form_shows_the_expiry_before_saving_and_saves_it(berlin_server, page):
    store = berlin_server.memories()
    friday = next_friday()
    page.goto(berlin_server.url + "/memories/")
    page.locator("#add-content").fill("Is in Tokyo until Friday.")
    hint = page.locator("#add-expiry [data-expiry-text]")
    expect(hint).to_have_text(f"Expires {short(friday)} (Europe/Berlin)")
    assert_accessible(page, "Memories, an expiry read from the Add form's text")
    page.get_by_role("button", name="Add memory").click()
    wait_for_htmx(page)
    [tokyo] = [m for m in store.get_all() if "Tokyo" in m.content]
    assert tokyo.expires_at == end_of(friday)

    # Removed before saving: it never expires.
    page.locator("#add-content").fill("Is in Lisbon until Friday.")
    expect(page.locator("#add-expiry [data-expiry-text]")).to_contain_text("Expires")
    page.locator("#add-expiry").get_by_role("button", name="Remove expiry").click()
    expect(page.locator("#add-expiry")).to_contain_text("Never expires.")
    page.get_by_role("button", name="Add memory").click()
    wait_for_htmx(page)
    [lisbon] = [m for m in store.get_all() if "Lisbon" in m.content]
    assert lisbon.expires_at is None
    assert page.watch.page_errors == []


def test_the_edit_form_reads_the_expiry_of_a_memory_that_never_expired(berlin_server, page):
    store = berlin_server.memories()
    memory = store.add("Is at a conference")
    friday = next_friday()
    page.goto(berlin_server.url + "/memories/")
    page.locator(f"#memory-{memory.id}").get_by_role("button", name="Edit").click()
    wait_for_htmx(page)
    text = page.locator(f"#edit-content-{memory.id}")
    text.fill("Is in Tokyo until Friday.")
    expect(page.locator(f"#edit-{memory.id}-expiry [data-expiry-text]")).to_have_text(
        f"Expires {short(friday)} (Europe/Berlin)"
    )
    page.locator(f"#memory-{memory.id}").get_by_role("button", name="Save").click()
    wait_for_htmx(page)
    saved = store.get(memory.id)
    assert saved is not None and saved.content == "Is in Tokyo until Friday."
    assert saved.expires_at == end_of(friday)


def test_review_edit_clears_or_sets_an_expiry_before_approving(berlin_server, page):
    tomorrow = datetime.now(UTC).astimezone(BERLIN).date() + timedelta(days=1)
    rule = "Never turns on the bedroom speaker before 8am"
    items = propose(
        berlin_server,
        [
            ReconcileAction("add", None, rule, "preference", expires_at=to_iso(end_of(tomorrow))),
            ReconcileAction("add", None, "Has guests staying", "general"),
        ],
        evidence="Never turn on the bedroom speaker before 8am. We have guests.",
    )
    by_text = {item.content: item for item in items}
    page.goto(berlin_server.url + "/review/")
    card = page.locator("article.review-item", has_text=rule)
    card.get_by_role("button", name="Edit").click()
    wait_for_htmx(page)
    box = page.locator(f"#review-{by_text[rule].id}-expiry")
    expect(box.locator("[data-expiry-text]")).to_have_text(
        f"Expires {short(tomorrow)} (Europe/Berlin)"
    )
    box.get_by_role("button", name="Remove expiry").click()
    expect(box).to_contain_text("Never expires.")
    page.get_by_role("button", name="Approve edited").click()
    wait_for_htmx(page)
    [kept] = [m for m in berlin_server.memories().get_all() if m.content.startswith("Never")]
    assert kept.expires_at is None

    later = tomorrow + timedelta(days=9)
    guests = page.locator("article.review-item", has_text="Has guests staying")
    guests.get_by_role("button", name="Edit").click()
    wait_for_htmx(page)
    box = page.locator(f"#review-{by_text['Has guests staying'].id}-expiry")
    box.locator("input[type=date]").fill(later.isoformat())
    box.locator("input[type=date]").dispatch_event("change")
    expect(box.locator("[data-expiry-text]")).to_have_text(
        f"Expires {short(later)} (Europe/Berlin)"
    )
    page.get_by_role("button", name="Approve edited").click()
    wait_for_htmx(page)
    [guests_kept] = [m for m in berlin_server.memories().get_all() if "guests" in m.content]
    assert guests_kept.expires_at == end_of(later)
    assert page.watch.page_errors == []


def test_times_are_shown_in_the_households_zone_and_the_as_of_picker_reads_it(berlin_server, page):
    store = berlin_server.memories()
    memory = store.add("Prefers oolong tea")
    created = memory.created_at.astimezone(BERLIN)
    page.goto(berlin_server.url + f"/memories/{memory.id}/history")
    shown = page.locator("time").first
    expect(shown).to_have_attribute("title", f"{created:%Y-%m-%d %H:%M} Europe/Berlin")

    page.goto(berlin_server.url + "/memories/as-of")
    expect(page.get_by_label("As of (Europe/Berlin)")).to_be_visible()
    # One minute before it was added, on Berlin's clock: it was not there yet; one after: it was.
    before = (created - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%S")
    after = (created + timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%S")
    for typed, count in ((before, 0), (after, 1)):
        page.get_by_label("As of (Europe/Berlin)").fill(typed)
        page.get_by_role("button", name="Show").click()
        page.wait_for_load_state("load")
        expect(page.locator("tr.as-of-memory")).to_have_count(count)
        # Chromium shows a whole minute without its ":00" seconds ("…T18:33")
        shown_as = typed.removesuffix(":00") if typed.endswith(":00") else typed
        expect(page.get_by_label("As of (Europe/Berlin)")).to_have_value(
            re.compile(rf"^{re.escape(shown_as)}(:00)?$")
        )
    assert_accessible(page, "Memories as of, in Europe/Berlin")
    assert page.watch.page_errors == []
