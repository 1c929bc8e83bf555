"""People through the Flask test client: "You" for the Home Assistant user the trusted proxy
names (and nobody else's forged header), whose a memory added in the dashboard is, the
Memories page's filter with counts, and the People page's forms."""

from __future__ import annotations

import html
import re

import pytest

from tests.support.people import LEO, MAYA, as_user
from webapp.stores import MemoryStore, PeopleStore


@pytest.fixture
def people(settings) -> PeopleStore:
    return PeopleStore.from_settings(settings)


@pytest.fixture
def memories(settings) -> MemoryStore:
    return MemoryStore.from_settings(settings).init()


def whose_cells(body: str) -> dict[str, str]:
    """Each row's memory text → what its Whose cell says."""
    rows = re.findall(
        r'<td class="content"[^>]*>(.*?)</td>.*?class="whose"[^>]*>(.*?)</td>', body, re.S
    )
    return {html.unescape(text.strip()): html.unescape(whose.strip()) for text, whose in rows}


def test_each_ha_user_adds_a_memory_and_sees_you_on_their_own(client, people, memories):
    for user in (MAYA, LEO):
        as_user(client, "get", "/memories/", user)  # first visit: offered on the People page
    assert {i.value for i in people.unlinked()} == {"u-maya", "u-leo"}
    for user in (MAYA, LEO):
        assert as_user(client, "post", "/people/me", user, data={}).status_code == 303
    maya, leo = people.resolve("ha", "u-maya"), people.resolve("ha", "u-leo")
    assert maya.name == "Maya" and leo.name == "Leo"

    as_user(client, "post", "/memories/", MAYA, data={"content": "Likes tea."})
    as_user(client, "post", "/memories/", LEO, data={"content": "Doesn't drink tea."})
    as_user(
        client,
        "post",
        "/memories/",
        LEO,
        data={"content": "Bins go out every Tuesday.", "person": "household"},
    )
    whose = {m.content: m.person for m in memories.get_all()}
    assert whose == {
        "Likes tea.": maya.id,
        "Doesn't drink tea.": leo.id,
        "Bins go out every Tuesday.": None,
    }

    # Each sees their own ("You") and the household's; another person's is not listed.
    seen_by_maya = whose_cells(as_user(client, "get", "/memories/", MAYA).get_data(as_text=True))
    assert seen_by_maya == {"Likes tea.": "You", "Bins go out every Tuesday.": "Household"}
    seen_by_leo = whose_cells(as_user(client, "get", "/memories/", LEO).get_data(as_text=True))
    assert seen_by_leo == {"Doesn't drink tea.": "You", "Bins go out every Tuesday.": "Household"}


def test_a_forged_user_header_from_another_address_is_ignored(client, people, memories):
    maya = people.add("Maya", identities=(("ha", "u-maya"),))
    as_user(client, "post", "/memories/", MAYA, remote="10.0.0.9", data={"content": "Forged."})
    [memory] = memories.get_all()
    assert memory.person is None  # not Maya's: the header did not come from the proxy
    body = as_user(client, "get", "/memories/", MAYA, remote="10.0.0.9").get_data(as_text=True)
    assert whose_cells(body) == {"Forged.": "Household"}
    assert ">You<" not in body and "You (Maya)" not in body
    assert (
        as_user(client, "post", "/people/me", MAYA, remote="10.0.0.9", data={}).status_code == 400
    )
    assert people.people() == [maya]


def test_memories_page_filters_by_person_household_or_everyone_with_counts(
    client, people, memories
):
    ana, leo = people.add("Ana"), people.add("Leo")
    memories.add("Likes tea.", person=ana.id)
    memories.add("Doesn't drink tea.", person=leo.id)
    memories.add("Bins on Tuesday.")
    memories.add("Wi-Fi is Lighthouse.")
    page = client.get("/memories/").get_data(as_text=True)
    assert "Everyone (4)" in page and "Household (2)" in page
    assert "Ana (1)" in page and "Leo (1)" in page
    assert set(whose_cells(client.get(f"/memories/?whose={ana.id}").get_data(as_text=True))) == {
        "Likes tea."
    }
    assert set(whose_cells(client.get("/memories/?whose=household").get_data(as_text=True))) == {
        "Bins on Tuesday.",
        "Wi-Fi is Lighthouse.",
    }
    assert len(whose_cells(client.get("/memories/").get_data(as_text=True))) == 4


def test_people_page_renames_links_unlinks_and_offers_identities_seen(client, people):
    people.seen("slack", "U42", label="leo.w")
    page = client.get("/people/").get_data(as_text=True)
    assert "leo.w" in page and "New person" in page
    assert client.post("/people/new", data={"name": "Leo"}).status_code == 303
    leo = people.find("Leo")
    assert (
        client.post(
            "/people/link", data={"person": leo.id, "kind": "slack", "value": "U42"}
        ).status_code
        == 303
    )
    assert people.resolve("slack", "U42") == people.get(leo.id)
    client.post(f"/people/{leo.id}/rename", data={"name": "Leonardo"})
    assert people.get(leo.id).name == "Leonardo"
    client.post(f"/people/{leo.id}/unlink", data={"kind": "slack", "value": "U42"})
    assert people.resolve("slack", "U42") is None
    client.post("/people/new", data={"kind": "slack", "value": "U42"})
    assert people.resolve("slack", "U42").name == "leo.w"
    refused = client.post("/people/new", data={"name": "   "})
    assert refused.status_code == 422 and "characters" in refused.get_data(as_text=True)


def test_the_usage_meter_shows_each_persons_share(client, people, memories):
    ana = people.add("Ana")
    memories.add("Likes tea.", person=ana.id)
    memories.add("Bins on Tuesday.")
    meter = client.get("/memories/meter").get_data(as_text=True)
    assert "Household 1 (16 characters)" in meter and "Ana 1 (10 characters)" in meter


def test_prompt_preview_builds_the_prompt_of_the_person_chosen(client, people, memories):
    ana, leo = people.add("Ana"), people.add("Leo")
    memories.add("Likes tea.", person=ana.id)
    memories.add("Doesn't drink tea.", person=leo.id)
    memories.add("Bins on Tuesday.")
    anas = html.unescape(client.get(f"/prompt/?person={ana.id}&message=Hi").get_data(as_text=True))
    assert (
        "- Likes tea." in anas and "Doesn't drink tea." not in anas and "- Bins on Tuesday." in anas
    )
    unknown = html.unescape(
        client.get("/prompt/?person=household&message=Hi").get_data(as_text=True)
    )
    assert "- Bins on Tuesday." in unknown and "tea." not in unknown
    everyone = html.unescape(
        client.get("/prompt/?person=everyone&message=Hi").get_data(as_text=True)
    )
    assert "- Likes tea." in everyone and "- Doesn't drink tea." in everyone
    refused = client.get("/prompt/?person=nobody&message=Hi")
    assert refused.status_code == 422


def test_review_shows_whose_a_fact_would_be_and_lets_the_person_change_it(
    client, people, memories, settings
):
    from webapp.stores import Proposal, ReviewQueue

    ana, leo = people.add("Ana"), people.add("Leo")
    queue = ReviewQueue.from_settings(settings, memories)
    [tea, bins] = queue.submit(
        [Proposal("add", "Likes tea", person=ana.id), Proposal("add", "Bins go out on Tuesday")]
    )
    page = html.unescape(client.get("/review/").get_data(as_text=True))
    assert "Would be: Ana" in page and "Would be: Household" in page
    client.post(f"/review/{tea.id}/approve", data={"person": leo.id})
    client.post(f"/review/{bins.id}/approve", data={})
    whose = {m.content: m.person for m in memories.get_all()}
    assert whose == {"Likes tea": leo.id, "Bins go out on Tuesday": None}


def test_move_to_household_keeps_one_shared_copy(client, people, memories):
    ana, leo = people.add("Ana"), people.add("Leo")
    first = memories.add("The bins go out on Tuesday.", person=ana.id)
    second = memories.add("The bins go out on Tuesday.", person=leo.id)
    shown = {f"version-{m.id}": m.version for m in (first, second)}
    answer = client.post("/attention/household", data={"id": [first.id, second.id], **shown})
    assert answer.status_code == 303
    [kept] = memories.get_all()
    assert kept.id == first.id and kept.person is None
    assert memories.deleted(second.id) is not None  # restorable


def test_the_prompt_preview_opens_on_the_signed_in_person_or_the_household(
    client, people, memories
):
    # Issue 36: the preview opened on "Everyone" even for a signed-in Home Assistant user, so
    # the first prompt shown mixed every person's private memories, which no speaker gets.
    maya = people.add("Maya", identities=(("ha", "u-maya"),))
    leo = people.add("Leo")
    memories.add("Is training for a marathon.", person=maya.id)
    memories.add("Is planning a surprise party.", person=leo.id)
    memories.add("Bins go out on Tuesday.")
    mine = html.unescape(as_user(client, "get", "/prompt/?message=Hi", MAYA).get_data(as_text=True))
    assert "- Is training for a marathon." in mine and "surprise party" not in mine
    assert "- Bins go out on Tuesday." in mine
    assert re.search(rf'<option value="{maya.id}"\s+selected', mine)
    nobody = html.unescape(client.get("/prompt/?message=Hi").get_data(as_text=True))
    assert "- Bins go out on Tuesday." in nobody
    assert "marathon" not in nobody and "surprise party" not in nobody
    assert re.search(r'<option value="household"\s+selected', nobody)


# ------------------------------------------------------------------ crafted Needs-attention posts
def _household_post(client, ids, versions):
    data = {"id": list(ids), **{f"version-{i}": v for i, v in versions.items()}}
    return client.post("/attention/household", htmx=True, data=data)


def test_move_to_household_takes_only_copies_of_one_fact_each_a_persons(client, people, memories):
    """A crafted post made Ana's fact the household's and deleted Leo's other one, and the
    same id twice moved a memory to the household and then deleted it."""
    ana, leo = people.add("Ana"), people.add("Leo")
    bins = memories.add("The bins go out on Tuesday.", person=ana.id)
    diet = memories.add("Is diabetic.", person=leo.id)
    again = memories.add("The bins go out on Tuesday.", person=ana.id)
    shared = memories.add("The bins go out on Tuesday.")
    before = sorted((m.id, m.person, m.content) for m in memories.get_all())
    for ids in ([bins.id, diet.id], [bins.id, again.id], [bins.id, shared.id]):
        answer = _household_post(client, ids, {i: memories.get(i).version for i in ids})
        assert answer.status_code == 422
        assert "Only copies of one fact, each kept by a different person" in answer.get_data(
            as_text=True
        )
    twice = _household_post(client, [bins.id, bins.id], {bins.id: bins.version})
    assert twice.status_code == 422 and "two different memories" in twice.get_data(as_text=True)
    assert sorted((m.id, m.person, m.content) for m in memories.get_all()) == before


def test_move_to_household_without_the_versions_is_refused_not_unchecked(client, people, memories):
    ana, leo = people.add("Ana"), people.add("Leo")
    first = memories.add("The bins go out on Tuesday.", person=ana.id)
    second = memories.add("The bins go out on Tuesday.", person=leo.id)
    answer = _household_post(client, [first.id, second.id], {first.id: first.version})
    assert answer.status_code == 422
    assert "as you saw it is missing" in answer.get_data(as_text=True)
    assert {m.id: m.person for m in memories.get_all()} == {first.id: ana.id, second.id: leo.id}


def test_a_merge_of_two_peoples_memories_is_refused(client, people, memories):
    """Needs attention never pairs two people's memories; a crafted merge deleted Leo's."""
    ana, leo = people.add("Ana"), people.add("Leo")
    mine = memories.add("Prefers tea.", person=ana.id)
    theirs = memories.add("Prefers green tea.", person=leo.id)
    data = {
        "keep": mine.id,
        "drop": theirs.id,
        "content": mine.content,
        f"version-{mine.id}": mine.version,
        f"version-{theirs.id}": theirs.version,
    }
    answer = client.post("/attention/merge", htmx=True, data=data)
    assert answer.status_code == 422
    assert "is never merged into another" in answer.get_data(as_text=True)
    assert {m.id: m.person for m in memories.get_all()} == {mine.id: ana.id, theirs.id: leo.id}


@pytest.mark.parametrize("action", ["merge", "rewrite", "extend"])
def test_needs_attention_actions_without_their_version_are_refused(client, memories, action):
    """Without the version fields the merge, Rewrite and Extend skipped the conflict check:
    a memory edited meanwhile was overwritten unseen."""
    one = memories.add("I prefer dark mode")
    two = memories.add("The user prefers dark mode")
    memories.update(one.id, "I prefer dark mode everywhere")  # edited since any page showed it
    data = {
        "merge": {"keep": two.id, "drop": one.id, "content": two.content},
        "rewrite": {"id": one.id, "content": "Prefers dark mode"},
        "extend": {"id": one.id, "never": "1"},
    }[action]
    answer = client.post(f"/attention/{action}", htmx=True, data=data)
    assert answer.status_code == 422
    assert "as you saw it is missing" in answer.get_data(as_text=True)
    assert sorted(m.content for m in memories.get_all()) == [
        "I prefer dark mode everywhere",
        "The user prefers dark mode",
    ]
