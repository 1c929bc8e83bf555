"""Delete proposals through the Flask test client: shown plainly, decided without JavaScript."""

from __future__ import annotations

from webapp.stores import MemoryStore, ReviewQueue
from webapp.stores.review import Proposal


def stores_of(settings):
    memories = MemoryStore.from_settings(settings, actor="test")
    return memories, ReviewQueue(settings.review_file, memories, lock_timeout=5)


def queue_delete(settings, content, evidence):
    memories, queue = stores_of(settings)
    memory = memories.add(content)
    proposal = Proposal(
        "delete",
        memory.content,
        memory.category,
        memory_id=memory.id,
        current_content=memory.content,
        confidence=0.85,
        extractor="regex",
        evidence=evidence,
    )
    [item] = queue.submit([proposal], conversation_id="slack:C01:1700")
    return memory, item


def test_delete_proposal_shows_the_memory_struck_through_with_the_evidence(client, settings):
    _, item = queue_delete(
        settings, "Likes <b>green</b> tea.", "Forget that I like green tea <script>x()</script>"
    )
    html = client.get("/review/").get_data(as_text=True)
    card = html[html.index(f'id="item-{item.id}"') :]
    card = card[: card.index("</article>")]
    assert "Delete memory" in card
    assert '<del class="review-content">' in card
    assert "Likes &lt;b&gt;green&lt;/b&gt; tea." in card
    assert "Forget that I like green tea &lt;script&gt;x()&lt;/script&gt;" in card
    assert "<script>x()" not in html
    assert f"/review/{item.id}/edit" not in card  # nothing to edit in a deletion
    assert f"/review/{item.id}/approve" in card and f"/review/{item.id}/reject" in card


def test_delete_approved_and_undone_without_javascript(client, settings):
    memory, item = queue_delete(settings, "我对猫毛过敏", "请忘记我对猫毛过敏这件事")
    response = client.post(f"/review/{item.id}/approve")
    assert response.status_code == 303
    memories, queue = stores_of(settings)
    assert memories.get(memory.id) is None
    assert memories.history(memory.id)[-1]["action"] == "delete"
    decided = client.get("/review/?tab=decided").get_data(as_text=True)
    assert '<del class="review-content">' in decided and "我对猫毛过敏" in decided
    assert client.post(f"/review/{item.id}/undo").status_code == 303
    assert memories.get(memory.id).content == "我对猫毛过敏"
    assert queue.get(item.id).status == "pending"


def test_a_memory_deleted_meanwhile_is_not_brought_back_by_undo(client, settings):
    """Approving a deletion of a memory someone already deleted changes nothing, and undoing
    that approval must not restore what they deleted."""
    memory, item = queue_delete(settings, "Drinks coffee", "I no longer drink coffee")
    memories, queue = stores_of(settings)
    memories.delete(memory.id)
    client.post(f"/review/{item.id}/approve")
    assert queue.get(item.id).status == "approved"
    client.post(f"/review/{item.id}/undo")
    assert memories.get(memory.id) is None


def test_a_deletion_has_no_edit_form(client, settings):
    _, item = queue_delete(settings, "Likes green tea.", "Forget that I like green tea.")
    partial = client.get(f"/review/{item.id}/edit", htmx=True).get_data(as_text=True)
    assert "<textarea" not in partial and '<del class="review-content">' in partial
    response = client.get(f"/review/{item.id}/edit")
    assert response.status_code == 303 and f"#item-{item.id}" in response.headers["Location"]
