"""Issue 35, item 14, in the dashboard: "As of" and the prompt preview at a moment that falls
outside the calendar once in UTC answered 500."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from webapp.stores import MemoryStore

# Moments a person can type that are times, but fall outside the calendar once in UTC, or sit
# at its very ends.
EDGE_MOMENTS = [
    "0001-01-01T00:00+14:00",
    "0001-01-01T00:00:00+23:59",
    "0001-01-01T00:00",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59-14:00",
    "9999-12-31T23:59:59.999999-23:59",
    "9999-12-31T23:59:59",
    "9999-12-31T23:59:59Z",
]


@pytest.mark.parametrize("at", EDGE_MOMENTS)
def test_as_of_and_the_prompt_preview_at_the_calendars_ends_answer(client, settings, at):
    store = MemoryStore.from_settings(settings)
    store.add("Weekday alarm is 06:45")
    page = client.get(f"/memories/as-of?at={quote(at)}")
    assert page.status_code == 200, page.get_data(as_text=True)[-400:]
    text = page.get_data(as_text=True)
    # Before anything was written nothing is known; at the end, what is known now.
    assert ("Weekday alarm is 06:45" in text) == at.startswith("9999")
    prompt = client.get(f"/prompt/?as_of={quote(at)}&message=When+is+my+alarm%3F")
    assert prompt.status_code == 200, prompt.get_data(as_text=True)[-400:]
    assert ("Weekday alarm is 06:45" in prompt.get_data(as_text=True)) == at.startswith("9999")
