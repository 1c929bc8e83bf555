"""Review with curation: each pending fact lists the most similar memories, an update that
would drop information says so and can be added as a new memory, the category can be changed."""

from __future__ import annotations

import re

from webapp.stores import MemoryStore, ReviewQueue
from webapp.stores.review import Proposal


def stores_of(settings):
    memories = MemoryStore.from_settings(settings, actor="test")
    return memories, ReviewQueue(settings.review_file, memories, lock_timeout=5)


def test_each_pending_fact_shows_the_three_most_similar_memories(client, settings):
    memories, queue = stores_of(settings)
    for text in [
        "Prefers green tea in the morning",
        "Drinks black tea after lunch",
        "Tea without sugar",
        "Drinks green tea without sugar",
        "Alarm at 06:45",
        "喜歡喝無糖綠茶",
    ]:
        memories.add(text)
    [item] = queue.submit([Proposal("add", "Likes green tea without sugar", "preference")])
    html = client.get("/review/").get_data(as_text=True)
    block = html[html.index(f'id="item-{item.id}-similar"') :]
    block = block[: block.index("</ol>")]
    listed = re.findall(
        r'<span class="similar-text"[^>]*>([^<]+)</span> <span class="muted">\((\d+)% similar\)',
        block,
    )
    assert len(listed) == 3
    assert {text for text, _ in listed} == {
        "Prefers green tea in the morning",
        "Drinks green tea without sugar",
        "Tea without sugar",
    }
    assert "Alarm at 06:45" not in block and "black tea" not in block
    scores = [int(score) for _, score in listed]
    assert scores == sorted(scores, reverse=True) and 0 < scores[-1] <= 100


def test_a_fact_like_nothing_kept_says_so(client, settings):
    _, queue = stores_of(settings)
    queue.submit([Proposal("add", "Allergic to peanuts", "general")])
    assert "None: nothing kept is close to it." in client.get("/review/").get_data(as_text=True)


def test_memories_that_only_share_a_word_are_not_listed_as_similar(client, settings):
    memories, queue = stores_of(settings)
    memories.add("Works from home on Fridays")
    memories.add("Takes the 8:10 train to work")
    [item] = queue.submit([Proposal("add", "Plays tennis on Fridays", "general")])
    html = client.get("/review/").get_data(as_text=True)
    block = html[html.index(f'id="item-{item.id}-similar"') :]
    block = block[: block.index("</div>")]
    assert "None: nothing kept is close to it." in block
    assert "Works from home" not in block and "% similar" not in block


def test_an_update_that_drops_information_offers_add_as_new(client, settings):
    memories, queue = stores_of(settings)
    alarm = memories.add("Weekday alarm is 06:45; on weekends not before 09:00")
    [item] = queue.submit(
        [Proposal("update", "Alarm at 07:00", "workflow", alarm.id, alarm.content)]
    )
    html = client.get("/review/").get_data(as_text=True)
    assert "Replacing would drop what the memory says now:" in html
    assert "09:00" in html[html.index(f'id="item-{item.id}-drops"') :][:400]
    assert ">Replace</button>" in html and "Add as a new memory" in html
    response = client.post(f"/review/{item.id}/approve", htmx=True, data={"as_new": "1"})
    assert response.status_code == 200
    assert sorted(m.content for m in memories.get_all()) == ["Alarm at 07:00", alarm.content]


def test_an_update_that_loses_nothing_is_a_plain_approve(client, settings):
    memories, queue = stores_of(settings)
    vim = memories.add("Prefers vim")
    queue.submit([Proposal("update", "Prefers neovim instead of vim", "tool", vim.id, vim.content)])
    html = client.get("/review/").get_data(as_text=True)
    assert "Replacing would drop" not in html and "Add as a new memory" not in html


def test_the_category_can_be_changed_when_editing_a_proposal(client, settings):
    memories, queue = stores_of(settings)
    [item] = queue.submit([Proposal("add", "Uses neovim", "general")])
    form = client.get(f"/review/{item.id}/edit", htmx=True).get_data(as_text=True)
    assert f'<select id="category-{item.id}" name="category">' in form
    assert '<option value="general" selected>' in form
    client.post(
        f"/review/{item.id}/approve",
        htmx=True,
        data={"content": "Uses neovim for editing", "category": "tool"},
    )
    assert [(m.content, m.category) for m in memories.get_all()] == [
        ("Uses neovim for editing", "tool")
    ]


def test_an_unknown_category_is_refused_and_the_fact_stays_pending(client, settings):
    _, queue = stores_of(settings)
    [item] = queue.submit([Proposal("add", "Uses neovim", "general")])
    response = client.post(
        f"/review/{item.id}/approve", htmx=True, data={"content": "Uses neovim", "category": "x"}
    )
    assert response.status_code == 422 and "Unknown category" in response.get_data(as_text=True)
    assert queue.get(item.id).status == "pending"
