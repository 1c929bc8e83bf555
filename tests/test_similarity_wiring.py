"""The similarity layer in the product (issue 22): vectors computed once per memory version and
kept in the data folder, a damaged vector file rebuilt, reconcile by meaning (known → no
proposal, changed → update, new → add) and Needs attention's pairs by meaning."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from tests.support.cli import run_cli
from tests.support.data import make_settings
from tests.support.stores import memory_store
from webapp.attention.scanner import scan
from webapp.attention.semantic import SemanticIndex
from webapp.extraction import MemoryExtractor
from webapp.similarity import LexicalEmbedder, cache_path_for
from webapp.similarity.embedders import Vectors
from webapp.stores import MemoryStore

REPO = Path(__file__).resolve().parent.parent


class CountingEmbedder(LexicalEmbedder):
    """The lexical embedder, noting every text it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.embedded.extend(texts)
        return super().embed(texts)


def test_an_unchanged_memory_is_never_embedded_again(tmp_path: Path) -> None:
    store_path = tmp_path / "memories.json"
    embedder = CountingEmbedder()
    index = SemanticIndex(store_path, embedder=lambda: embedder)
    texts = ["Is vegetarian", "Commutes by train", "Weekday alarm is 06:45"]
    index.pairs(texts)
    assert len(embedder.embedded) == 3

    index.pairs([*texts[:2], "Weekday alarm is 07:00"])  # one memory edited
    assert embedder.embedded[3:] == ["Weekday alarm is 07:00"]

    index.pairs([*texts[:2], "Weekday alarm is 07:00"])  # nothing changed
    assert len(embedder.embedded) == 4

    restarted = CountingEmbedder()  # another process: the vectors come from the file
    SemanticIndex(store_path, embedder=lambda: restarted).pairs(
        [*texts[:2], "Weekday alarm is 07:00"]
    )
    assert restarted.embedded == []
    assert cache_path_for(store_path).exists()


def test_a_damaged_vector_file_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    store_path = tmp_path / "memories.json"
    cache_path_for(store_path).write_bytes(b"PK\x03\x04 cut short")
    embedder = CountingEmbedder()
    index = SemanticIndex(store_path, embedder=lambda: embedder)
    index.pairs(["Is vegetarian", "Commutes by train"])
    assert len(embedder.embedded) == 2
    with np.load(cache_path_for(store_path), allow_pickle=False) as data:
        assert data["vectors"].shape[0] == 2


def test_stats_and_repair_know_the_vector_file_and_repair_drops_a_damaged_one(
    tmp_path: Path,
) -> None:
    settings = make_settings(tmp_path)
    MemoryStore.from_settings(settings).add("Is vegetarian")
    vectors = cache_path_for(settings.memory_file)
    vectors.write_bytes(b"not a zip file")

    stats = run_cli("stats", data_dir=settings.data_dir)
    assert stats.returncode == 0, stats.stderr  # it only holds what can be computed again
    assert f"Vectors:       {vectors} [cannot be read" in stats.stdout
    assert "not written by Memory Curator" not in stats.stdout

    repair = run_cli("repair", data_dir=settings.data_dir)
    assert repair.returncode == 0, repair.stderr
    assert f"{vectors}: cannot be read" in repair.stdout and "deleted" in repair.stdout
    assert not vectors.exists()


# ------------------------------------------------------------------ with the model
@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return memory_store(tmp_path / "memories.json", lock_timeout=10)


def test_reconcile_by_meaning_known_close_and_new(store: MemoryStore) -> None:
    """A fact kept in other words is not proposed; a changed value updates its memory; a new
    fact is added."""
    store.add("Doesn't eat meat")
    alarm = store.add("Weekday alarm is 06:45")
    store.add("Commutes by train")

    actions = MemoryExtractor(store).reconcile(
        ["Is vegetarian", "Weekday alarm is 07:00", "Has a cat named Pepper"]
    )

    assert [(a.action, a.id, a.content) for a in actions] == [
        ("update", alarm.id, "Weekday alarm is 07:00"),
        ("add", None, "Has a cat named Pepper"),
    ]


def test_needs_attention_finds_a_paraphrased_duplicate(store: MemoryStore, tmp_path: Path) -> None:
    meat = store.add("Doesn't eat meat")
    vegetarian = store.add("Is vegetarian")
    store.add("Takes the bus to the office on Mondays")
    index = SemanticIndex(store.path)

    findings = scan(store.get_all(), today=date(2026, 11, 25), stale_days=180, semantic=index)

    [pair] = [f for f in findings if f.kind == "duplicate"]
    assert {m.id for m in pair.memories} == {meat.id, vegetarian.id}
    assert pair.reason.code in ("same_meaning", "same_values")  # (a diet, said twice)
    assert pair.suggestion in ("Doesn't eat meat", "Is vegetarian")
