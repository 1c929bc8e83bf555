"""A memory's expiry on the dashboard: shown on its row, set and removed from the row's form
(the end of the picked day in MEMORY_TIMEZONE), filtered and sorted by; and in Needs
attention, expired memories under their own kind with Delete and Extend (nothing is deleted
on its own)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html import unescape

import pytest

from tests.support.data import make_settings
from tests.support.web import CsrfClient
from webapp import create_app
from webapp.stores import MemoryStore

PAST = datetime(2020, 1, 1, tzinfo=UTC)
LATER = datetime(2099, 1, 1, tzinfo=UTC)


def text_of(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


@pytest.fixture
def store(settings) -> MemoryStore:
    return MemoryStore.from_settings(settings, actor="test")


def test_rows_say_until_when_and_mark_the_expired(client, store):
    store.add("Is in Tokyo", expires_at=PAST)
    store.add("Works from home", expires_at=LATER)
    store.add("Likes green tea")
    html = client.get("/memories/").get_data(as_text=True)
    text = text_of(html)
    assert "Is in Tokyo expired after 2019-12-31" in text
    assert "Works from home until 2098-12-31" in text
    assert re.search(r'class="expiry is-expired"', html)
    assert "Likes green tea until" not in text and "Likes green tea expired" not in text


def test_filter_and_sort_by_expiry(client, store):
    store.add("Is in Tokyo", expires_at=PAST)
    store.add("Works from home", expires_at=LATER)
    store.add("Likes green tea")

    def shown(query: str) -> list[str]:
        html = client.get(f"/memories/?{query}", htmx=True).get_data(as_text=True)
        return [n for n in ("Is in Tokyo", "Works from home", "Likes green tea") if n in html]

    assert shown("expiry=expired") == ["Is in Tokyo"]
    assert shown("expiry=expiring") == ["Works from home"]
    assert shown("expiry=none") == ["Likes green tea"]
    html = client.get("/memories/?sort=expires", htmx=True).get_data(as_text=True)
    assert html.index("Is in Tokyo") < html.index("Works from home") < html.index("Likes green")


def test_set_an_expiry_from_the_row_in_the_households_timezone(tmp_path):
    settings = make_settings(tmp_path, timezone="Asia/Taipei")
    client = CsrfClient(create_app(settings).test_client())
    store = MemoryStore.from_settings(settings, actor="test")
    memory = store.add("Works from home")
    edit = client.get(f"/memories/{memory.id}/edit", htmx=True).get_data(as_text=True)
    assert 'type="date"' in edit and "Never expires" in edit
    answer = client.post(
        f"/memories/{memory.id}/expiry",
        htmx=True,
        data={"expires_on": "2030-03-06", "version": memory.version},
    )
    assert answer.status_code == 200
    assert "until 2030-03-06" in text_of(answer.get_data(as_text=True))
    # The end of 6 March in Taipei is 16:00 UTC that day.
    saved = store.get(memory.id)
    assert saved is not None and saved.expires_at == datetime(2030, 3, 6, 16, tzinfo=UTC)
    never = client.post(
        f"/memories/{memory.id}/expiry", htmx=True, data={"never": "1", "version": saved.version}
    )
    assert never.status_code == 200
    assert store.get(memory.id).expires_at is None  # type: ignore[union-attr]
    assert "expiresAt" not in store.get(memory.id).to_dict()  # type: ignore[union-attr]


def test_a_bad_date_changes_nothing_and_says_why(client, store):
    memory = store.add("Works from home", expires_at=LATER)
    answer = client.post(
        f"/memories/{memory.id}/expiry", htmx=True, data={"expires_on": "next Friday"}
    )
    assert answer.status_code == 422
    assert "is not a date" in answer.headers["HX-Trigger"]
    assert store.get(memory.id).expires_at == LATER  # type: ignore[union-attr]


def test_expired_memories_wait_in_needs_attention_with_delete_and_extend(client, store):
    tokyo = store.add("Is in Tokyo until Friday", expires_at=PAST)
    store.add("Likes green tea")
    html = client.get("/attention/?kind=expired").get_data(as_text=True)
    text = text_of(html)
    assert "Expired (1)" in text
    assert "Stopped being true on 2020-01-01; it is left out of prompts." in text
    assert "Extend" in text and "Delete" in text and "Dismiss" not in text
    # Nothing was deleted on its own.
    assert store.get(tokyo.id) is not None
    later = (datetime.now(UTC) + timedelta(days=30)).date()
    answer = client.post(
        "/attention/extend",
        htmx=True,
        data={
            "id": tokyo.id,
            "version": tokyo.version,
            "kind": "expired",
            "expires_on": later.isoformat(),
        },
    )
    assert answer.status_code == 200
    assert f"is true until {later.isoformat()}" in text_of(answer.get_data(as_text=True))
    extended = store.get(tokyo.id)
    assert extended is not None and not extended.expired()
    assert "Expired (0)" in text_of(client.get("/attention/?kind=expired").get_data(as_text=True))
    # Undo puts the old expiry back: expired again.
    hid = store.history(tokyo.id)[-1]["hid"]
    client.post("/attention/undo-extend", htmx=True, data={"hid": hid})
    assert store.get(tokyo.id).expired()  # type: ignore[union-attr]


def test_extend_to_never_and_delete_from_needs_attention(client, store):
    one = store.add("Is in Osaka", expires_at=PAST)
    two = store.add("Is in Kyoto", expires_at=PAST)
    client.post(
        "/attention/extend", htmx=True, data={"id": one.id, "version": one.version, "never": "1"}
    )
    assert store.get(one.id).expires_at is None  # type: ignore[union-attr]
    client.post(
        "/attention/delete",
        htmx=True,
        data={"id": two.id, "kind": "expired", "version": two.version},
    )
    assert store.get(two.id) is None


def test_the_prompt_preview_leaves_expired_memories_out_and_says_so(client, store):
    store.add("Is in Tokyo until Friday", expires_at=PAST)
    store.add("Likes green tea")
    html = client.get("/prompt/?message=hello").get_data(as_text=True)
    text = text_of(html)
    assert "Likes green tea" in text and "Is in Tokyo" not in text
    assert "1 expired memory is left out" in text


def test_a_review_item_shows_its_expiry_and_approval_stores_it(client, store, settings):
    from webapp.stores import Proposal, ReviewQueue

    queue = ReviewQueue.from_settings(settings, store)
    [item] = queue.submit(
        [
            Proposal(
                "add",
                "Is working from home this week",
                evidence="This week I'm working from home.",
                expires_at="2099-01-05T00:00:00.000Z",
            )
        ]
    )
    html = client.get("/review/").get_data(as_text=True)
    assert "until 2099-01-04" in text_of(html)
    client.post(f"/review/{item.id}/approve", htmx=True, data={})
    [memory] = store.get_all()
    assert memory.expires_at == datetime(2099, 1, 5, tzinfo=UTC)


def test_needs_attention_names_the_households_day(tmp_path):
    settings = make_settings(tmp_path, timezone="Asia/Taipei")
    client = CsrfClient(create_app(settings).test_client())
    store = MemoryStore.from_settings(settings, actor="test")
    # Midnight of 1 January 2020 in Taipei: the last day it was true is 31 December there.
    store.add("Is in Tainan", expires_at=datetime(2019, 12, 31, 16, tzinfo=UTC))
    text = text_of(client.get("/attention/?kind=expired").get_data(as_text=True))
    assert "Stopped being true on 2020-01-01" in text
    rows = text_of(client.get("/memories/").get_data(as_text=True))
    assert "Is in Tainan expired after 2019-12-31" in rows
