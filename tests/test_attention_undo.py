"""Undoing a fix of Needs attention (a Rewrite, an Extend) is the curator's rule
(``Curator.undoable_edit``, ``undo_rewrite``, ``undo_extend``), decided from the memory's history
log there and not in the dashboard's view: what may be undone, and what is refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.data import make_settings
from webapp.curator import Curator
from webapp.stores import ConflictError, NotFoundError
from webapp.stores.memories import KEEP


@pytest.fixture
def curator(tmp_path: Path) -> Curator:
    return Curator.from_settings(make_settings(tmp_path), actor="alice")


def test_a_rewrite_is_undone_once_and_not_over_a_later_edit(curator):
    memory = curator.remember("likes tea lots")
    curator.revise(memory.id, content="Likes tea", expires_at=KEEP)
    hid = curator.undoable_edit(memory.id)
    assert hid is not None
    assert curator.undo_rewrite(hid).content == "likes tea lots"
    assert curator.undo_rewrite(hid) is None  # reads as before already: nothing to undo
    curator.revise(memory.id, content="Likes green tea", expires_at=KEEP)
    later = curator.undoable_edit(memory.id)
    curator.revise(memory.id, content="Likes green tea a lot", expires_at=KEEP)
    with pytest.raises(ConflictError):  # edited again since: that edit stays
        curator.undo_rewrite(later)
    assert curator.memory(memory.id).content == "Likes green tea a lot"


def test_a_rewrite_that_took_a_secret_out_offers_no_undo(curator):
    memory = curator.remember("Garage door code is 4821, opens slowly", confirm_secret=True)
    curator.revise(memory.id, content="Garage door opens slowly", expires_at=KEEP)
    assert curator.undoable_edit(memory.id) is None


def test_an_undo_names_an_edit_of_a_memory_that_is_still_there(curator):
    memory = curator.remember("Likes tea")
    assert curator.undoable_edit(memory.id) is None  # never edited
    with pytest.raises(KeyError):
        curator.undo_rewrite("not-a-history-id")
    curator.revise(memory.id, content="Likes oolong tea", expires_at=KEEP)
    hid = curator.undoable_edit(memory.id)
    curator.forget(memory.id)
    with pytest.raises(NotFoundError) as gone:
        curator.undo_rewrite(hid)
    assert gone.value.code == "memory_gone"


def test_an_extend_is_undone_back_to_the_earlier_expiry(curator):
    ended = datetime.now(UTC) - timedelta(days=1)
    memory = curator.remember("Visiting grandma this week", expires_at=ended)
    curator.set_expiry(memory.id, expires=None)
    hid = curator.undoable_edit(memory.id)
    assert curator.undo_extend(hid).expires_at is not None
    with pytest.raises(ConflictError):  # changed since the extend: not overwritten
        curator.undo_extend(hid)
