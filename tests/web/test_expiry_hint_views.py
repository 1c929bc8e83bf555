"""The Add and Edit forms' expiry as the server reads it (issue 36): without JavaScript the
end a typed fact states is saved; a hint a keystroke behind never wins over the words saved;
a removed expiry saves none; a day set by hand wins; the hint names the household's zone."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.support.web import CsrfClient
from webapp import create_app
from webapp.stores import MemoryStore

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture
def berlin(settings) -> CsrfClient:
    app = create_app(replace(settings, timezone="Europe/Berlin"))
    app.config.update(TESTING=True)
    return CsrfClient(app.test_client())


def today() -> date:
    return datetime.now(UTC).astimezone(BERLIN).date()


def friday() -> date:
    return today() + timedelta(days=(4 - today().weekday()) % 7)


def end_of(day: date) -> datetime:
    return datetime.combine(day + timedelta(days=1), time(0), tzinfo=BERLIN).astimezone(UTC)


def stored(settings) -> dict[str, object]:
    return {m.content: m.expires_at for m in MemoryStore(settings.memory_file).get_all()}


def test_without_javascript_the_end_the_text_states_is_saved(berlin, settings) -> None:
    berlin.post("/memories/", data={"content": "Is in Tokyo until Friday.", "person": ""})
    berlin.post("/memories/", data={"content": "Prefers oolong tea.", "person": ""})
    assert stored(settings) == {
        "Is in Tokyo until Friday.": end_of(friday()),
        "Prefers oolong tea.": None,
    }


def test_removed_saves_none_and_a_day_set_by_hand_wins(berlin, settings) -> None:
    later = today() + timedelta(days=20)
    berlin.post("/memories/", data={"content": "Is in Lisbon until Friday.", "no_expiry": "1"})
    berlin.post(
        "/memories/",
        data={"content": "Is in Porto until Friday.", "expires_on": later.isoformat()},
    )
    assert stored(settings) == {
        "Is in Lisbon until Friday.": None,
        "Is in Porto until Friday.": end_of(later),
    }


def test_a_stale_hint_never_wins_over_the_words_saved(berlin, settings) -> None:
    memory = MemoryStore(settings.memory_file).add("Dentist on Monday at 9")
    stale = (today() + timedelta(days=3)).isoformat()  # the hint of an older text
    berlin.post(
        f"/memories/{memory.id}",
        data={
            "content": "Is in Tokyo until Friday.",
            "category": "general",
            "expected_updated_at": memory.version,
            "expires_on": stale,
            "said": "1",
        },
    )
    assert stored(settings) == {"Is in Tokyo until Friday.": end_of(friday())}


def test_the_hint_names_the_day_and_the_zone(berlin) -> None:
    answer = berlin.get(
        "/expiry-hint/add?text_id=add-content&content=I%27m+in+Lisbon+until+Friday", htmx=True
    )
    day = friday()
    assert f"Expires {day:%a} {day.day} {day:%b}" in answer.get_data(as_text=True)
    assert "(Europe/Berlin)" in answer.get_data(as_text=True)
    chinese = berlin.get(
        "/expiry-hint/add?text_id=add-content&content=這週都在台中",
        htmx=True,
        headers={"Accept-Language": "zh-TW"},
    )
    assert "Europe/Berlin" in chinese.get_data(as_text=True)
    assert "失效" in chinese.get_data(as_text=True)
