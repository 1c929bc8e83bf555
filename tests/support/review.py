"""Review items made the way extraction makes them, through the stores (views) or a running
server (browser tests)."""

from __future__ import annotations

from dataclasses import replace

from webapp.curator import Curator
from webapp.extraction import MemoryExtractor
from webapp.settings import Settings
from webapp.stores import MemoryStore, ReviewItem, ReviewQueue
from webapp.stores.review import Proposal


def queue_fact(settings, content="User prefers tabs over spaces", **kw):
    """Queue one proposal the way the extractor does and return the review item."""
    _, queue = stores_of(settings)
    conversation_id = kw.pop("conversation_id", "slack:C01:1700")
    proposal = Proposal(
        kw.pop("action", "add"),
        content,
        kw.pop("category", "convention"),
        confidence=kw.pop("confidence", 0.9),
        extractor=kw.pop("extractor", "llm"),
        evidence=kw.pop("evidence", "I always use tabs, never spaces."),
        **kw,
    )
    [item] = queue.submit([proposal], conversation_id=conversation_id)
    return item


def propose(
    server,
    facts,
    conversation_id="slack:C0TEAM:1732240000.000100",
    evidence="I always use tabs. 我住在台北。",
):
    """Queue facts the way extraction does (MemoryExtractor.submit in manual mode)."""
    extractor = MemoryExtractor(server.memories(), review_queue=queue_of(server), mode="manual")
    return extractor.submit(facts, conversation_id=conversation_id, evidence=evidence).queued


def stores_of(settings):
    """A memory store and review queue on the app's files, as another process would open them."""
    memories = MemoryStore.from_settings(settings, actor="test")
    return memories, ReviewQueue(settings.review_file, memories, lock_timeout=5)


def queue_of(server) -> ReviewQueue:
    """The live server's review file, opened by this test process through the real library."""
    return ReviewQueue(server.settings.review_file, server.memories(), lock_timeout=5)


def curator_over(queue: ReviewQueue, *, actor: str = "review") -> Curator:
    """The curator of the queue's folder, deciding on this very queue and its memory store (with
    the caps the test gave them): how a test of the queue approves, since approving writes
    memory and is the curator's alone (``Curator.approve``)."""
    folder = queue.path.parent
    base = Settings.from_env(environ={}, options_file=folder / "no-options.json", cwd=folder)
    settings = replace(
        base.with_data_dir(folder), memory_file=queue.store.path, review_file=queue.path
    )
    curator = Curator(settings, actor=actor)
    curator.__dict__.update(_memory_store=queue.store, _review_queue=queue)
    return curator


def approve(queue: ReviewQueue, item_id: str, **kw) -> ReviewItem:
    """Approve ``item_id`` through the curator's one approve, on ``queue`` and its memory store
    (``curator_over``); ``actor`` defaults to "review", as the queue's own decisions do."""
    return curator_over(queue, actor=kw.pop("actor", "review")).approve(item_id, **kw)
