"""A secret that leaves its memory leaves the history log too (issue 35, item 13).

"Rewrite as … (not kept in memory)" replaced a memory's text, but the history log kept the
secret: the History page showed it in plain text with a one-click Restore, and the backup
file held it. Whatever takes the secret out of a memory — a rewrite without it, an edit to
another value, a merge, a deletion — its words go from every file of the store (read as
bytes), and no restore brings them back. A secret the memory still holds stays restorable.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.stores import memory_store
from webapp.sensitive.secrets import find_secrets
from webapp.stores import MemoryStore

# (the memory, the secret's words as written) in each language and shape.
SECRETS = [
    ("The garage door code is 4821", "4821"),
    ("Front door keypad: four eight two one", "four eight two one"),
    ("Guest Wi-Fi password: tulip-Rocket-88; the network is HomeNet-Guest.", "tulip-Rocket-88"),
    ("My Visa is 4539 1488 0343 6467", "4539 1488 0343 6467"),
    ("大門密碼是 2580，信箱在大門左邊", "2580"),
    ("家里无线是 woaini2024!", "woaini2024!"),
]


def store_in(folder: Path) -> MemoryStore:
    return memory_store(folder / "memories.json", max_items=50, max_chars=5000).init()


def files_holding(folder: Path, words: str) -> list[str]:
    """Every file under ``folder`` whose bytes hold ``words``."""
    needle = words.encode("utf-8")
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and needle in p.read_bytes()
    )


def every_restore(store: MemoryStore, memory_id: str) -> list[str]:
    """What each Restore the history offers would bring back (each tried on its own)."""
    brought = []
    for entry in store.history(memory_id):
        if isinstance(entry.get("before"), dict):
            brought.append(store.restore(entry["hid"]).content)
    if store.get(memory_id) is None:
        brought.append(store.restore(memory_id).content)
    return brought


@pytest.mark.parametrize(("content", "secret"), SECRETS)
def test_rewriting_a_memory_without_its_secret_takes_the_secret_out_of_every_file(
    tmp_path: Path, content: str, secret: str
) -> None:
    store = store_in(tmp_path)
    memory = store.add(content)
    store.add("Likes jazz")  # another memory, another write: the backup is a later file
    finding = find_secrets(content)
    assert finding is not None
    assert files_holding(tmp_path, secret)  # the memory holds it, as confirmed
    store.update(memory.id, finding.fact)
    assert files_holding(tmp_path, secret) == []
    for entry in store.history(memory.id):
        for side in ("before", "after"):
            if isinstance(entry.get(side), dict):
                assert secret not in entry[side]["content"]
    assert all(secret not in text for text in every_restore(store, memory.id))
    assert files_holding(tmp_path, secret) == []


@pytest.mark.parametrize(("content", "secret"), SECRETS)
def test_deleting_a_memory_with_a_secret_leaves_no_secret_to_restore(
    tmp_path: Path, content: str, secret: str
) -> None:
    store = store_in(tmp_path)
    memory = store.add(content)
    store.update(memory.id, content + " ")  # an earlier version in the log, as well
    assert store.delete(memory.id)
    assert files_holding(tmp_path, secret) == []
    [deleted] = store.recently_deleted()
    assert secret not in deleted.memory.content
    restored = store.restore(memory.id)
    assert secret not in restored.content and "••••" in restored.content


def test_an_edit_to_another_value_takes_the_old_value_out(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    memory = store.add("The alarm code is 9157")
    store.update(memory.id, "The alarm code is 3302")
    assert files_holding(tmp_path, "9157") == []
    assert files_holding(tmp_path, "3302")  # the value the memory holds now


def test_a_merge_that_drops_the_secret_takes_it_out(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    keep = store.add("Has a garage door code (not kept in memory).")
    drop = store.add("The garage door code is 4821")
    store.merge(keep.id, drop.id, keep.content)
    assert files_holding(tmp_path, "4821") == []
    assert "4821" not in store.restore(drop.id).content


def test_a_secret_the_memory_still_holds_stays_restorable(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    memory = store.add("The garage door code is 4821")
    store.update(memory.id, "The garage door code is 4821, the side gate has none")
    assert files_holding(tmp_path, "4821")
    [change] = [e for e in store.history(memory.id) if e["action"] == "update"]
    assert store.restore(change["hid"]).content == "The garage door code is 4821"


def test_an_old_log_that_still_holds_a_secret_restores_it_masked(tmp_path: Path) -> None:
    # A log written before this fix: the secret is in an entry, the memory no longer has it.
    store = store_in(tmp_path)
    memory = store.add("The garage door code is 4821")
    store.update(memory.id, "Has a garage door code (not kept in memory).")
    log = store.history_path
    log.write_text(log.read_text("utf-8").replace("••••", "4821"), "utf-8")
    [change] = [e for e in store.history(memory.id) if e["action"] == "update"]
    assert "4821" in change["before"]["content"]
    assert store.restore(change["hid"]).content == "The garage door code is ••••"
