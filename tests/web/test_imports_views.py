"""Review through a 10,000-line import: pages, the source bar, reject all from one file."""

from __future__ import annotations

import re

from webapp.imports import plan_import, queue_import
from webapp.stores import MemoryStore, ReviewQueue
from webapp.web.plumbing.pagination import PAGE_SIZE


def test_review_pages_through_ten_thousand_imported_facts_and_rejects_them_by_source(
    client, settings
):
    memories = MemoryStore.from_settings(settings)
    queue = ReviewQueue.from_settings(settings, memories)
    pasted = "\n".join(f"- Prefers blend {i} of tea" for i in range(10_000))
    plan = plan_import(memories, queue, pasted, fmt="auto", file_name="paste.txt", day="2026-11-25")
    assert plan.counts == {"add": 10_000, "update": 0, "known": 0, "refused": 0}
    assert len(queue_import(queue, plan)) == 10_000

    last = -(-10_000 // PAGE_SIZE)
    page = client.get(f"/review/?page={last}").get_data(as_text=True)
    assert "10,000 pending facts" in page
    assert page.count('class="review-item') == 10_000 - (last - 1) * PAGE_SIZE
    assert re.search(r"text, paste\.txt, 2026-11-25</span>: 10,000 waiting", page)
    assert 'Imported from <span translate="no">text, paste.txt, 2026-11-25</span>' in page

    answer = client.post(
        "/review/source",
        data={"source": "text, paste.txt, 2026-11-25", "decision": "reject"},
        htmx=True,
    )
    assert answer.status_code == 200
    assert "Rejected 10,000 facts from text, paste.txt, 2026-11-25." in answer.get_data(
        as_text=True
    )
    assert queue.pending_count() == 0
    assert memories.get_all() == []
