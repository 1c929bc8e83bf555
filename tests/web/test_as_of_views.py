"""Issue 23, "As of" in the dashboard: the Memories page and the prompt preview as they were."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.support.data import an_hour_ago
from webapp.stores import MemoryStore


def test_the_memories_page_and_the_prompt_as_of_a_time_before_an_edit_show_the_old_text(
    client, settings
):
    store = MemoryStore.from_settings(settings)
    alarm = store.add("Weekday alarm is 06:45")
    an_hour_ago(settings.memory_file)
    store.update(alarm.id, "Weekday alarm is 07:00")
    at = (datetime.now(UTC) - timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%S")

    page = client.get(f"/memories/as-of?at={at}").get_data(as_text=True)
    assert "Weekday alarm is 06:45" in page and "Weekday alarm is 07:00" not in page
    prompt = client.get(f"/prompt/?as_of={at}&message=When+is+my+alarm%3F").get_data(as_text=True)
    assert "Weekday alarm is 06:45" in prompt and "Weekday alarm is 07:00" not in prompt
    now = client.get("/prompt/?message=When").get_data(as_text=True)
    assert "Weekday alarm is 07:00" in now


def test_a_moment_that_is_no_time_is_refused_with_a_message(client):
    page = client.get("/memories/as-of?at=next+tuesday")
    assert page.status_code == 422 and "is not a date and time" in page.get_data(as_text=True)
    prompt = client.get("/prompt/?as_of=yesterday-ish")
    assert prompt.status_code == 422
