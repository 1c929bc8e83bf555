"""Forgetting what a conversation left behind (and undoing it, and undoing a deletion) while
someone else edits the same memories: a memory changed since forgetting looked at it is left
alone and the result says which — first with the race made deterministic, then with a real
MCP server process (the SDK's stdio client) editing while another process forgets."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal

import webapp.stores.review.yields as review_module  # where forget_conversation looks it up
from tests.support.mcp_stdio import McpClient, connect
from tests.support.review import approve
from tests.support.stores import memory_store
from webapp.stores import (
    MemoryStore,
    Proposal,
    ReviewQueue,
    derived_from,
    forget_conversation,
    undo_forget,
)

THREAD = "slack:C1:1732240000.000100"
REPO = Path(__file__).resolve().parent.parent


def open_store(data_dir: Path, actor: str = "dashboard") -> MemoryStore:
    return memory_store(
        data_dir / "memories.json", max_items=1000, max_chars=10**6, lock_timeout=10, actor=actor
    )


@pytest.fixture
def store(data_dir: Path) -> MemoryStore:
    return open_store(data_dir)


@pytest.fixture
def queue(data_dir: Path, store: MemoryStore) -> ReviewQueue:
    return ReviewQueue(data_dir / "review.json", store)


def conversation_left(queue: ReviewQueue, added: int, changed: int) -> tuple[list[str], list[str]]:
    """``added`` memories the conversation added and ``changed`` typed ones it changed, all
    approved; returns their ids (added, changed)."""
    typed = [queue.store.add(f"Setting {k} is 0", source="dashboard") for k in range(changed)]
    items = queue.submit(
        [Proposal("add", f"Conversation fact {k}") for k in range(added)]
        + [Proposal("update", f"Setting {k} is 1", memory_id=m.id) for k, m in enumerate(typed)],
        conversation_id=THREAD,
    )
    for item in items:
        approve(queue, item.id, actor="alice")
    found = derived_from(queue, THREAD)
    assert (len(found.memories), len(found.reverted)) == (added, changed)
    return [m.id for m in found.memories], [m.id for m in typed]


def edit_right_after_the_look(monkeypatch, other: MemoryStore, edits: dict[str, str]) -> None:
    """Another process (its own store on the same file) edits ``edits`` just after forgetting
    has looked at what the conversation left behind, before it writes anything."""
    real = review_module.derived_from

    def looked_then_edited(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        for memory_id, text in edits.items():
            assert other.update(memory_id, text) is not None
        return found

    monkeypatch.setattr(review_module, "derived_from", looked_then_edited)


# ------------------------------------------------------------------ deterministic races
def test_forgetting_leaves_alone_the_memories_edited_while_it_ran(
    monkeypatch, queue, store, data_dir
):
    added, changed = conversation_left(queue, added=3, changed=3)
    mcp = open_store(data_dir, actor="mcp")
    edits = {added[0]: "Conversation fact 0, corrected", changed[1]: "Setting 1 is 2"}
    edit_right_after_the_look(monkeypatch, mcp, edits)

    done = forget_conversation(queue, THREAD, actor="alice")

    now = {m.id: m.content for m in store.get_all()}
    assert {i: now.get(i) for i in edits} == edits  # both edits survive
    assert added[1] not in now and added[2] not in now  # the untouched ones are forgotten
    assert now[changed[0]] == "Setting 0 is 0" and now[changed[2]] == "Setting 2 is 0"
    assert sorted(done.memory_ids) == sorted(added[1:])
    assert len(done.reverted_hids) == 2
    assert {m.id: m.content for m in done.left_alone} == edits  # and the result says which


def test_forgetting_does_not_bring_back_a_memory_deleted_while_it_ran(
    monkeypatch, queue, store, data_dir
):
    _, changed = conversation_left(queue, added=0, changed=2)
    real = review_module.derived_from
    other = open_store(data_dir, actor="mcp")

    def looked_then_deleted(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        assert other.delete(changed[0])
        return found

    monkeypatch.setattr(review_module, "derived_from", looked_then_deleted)
    done = forget_conversation(queue, THREAD, actor="alice")
    assert store.get(changed[0]) is None  # the confirmed delete stands
    assert store.get(changed[1]).content == "Setting 1 is 0"
    assert len(done.reverted_hids) == 1


def test_undoing_a_forget_leaves_alone_a_memory_edited_meanwhile(monkeypatch, queue, store):
    _, changed = conversation_left(queue, added=0, changed=1)
    done = forget_conversation(queue, THREAD, actor="alice")
    assert store.get(changed[0]).content == "Setting 0 is 0"
    real_get = store.get
    edited: list[str] = []

    def get_then_edited(memory_id: str) -> Any:  # someone edits right after undo looked
        found = real_get(memory_id)
        if memory_id == changed[0] and not edited:
            edited.append(memory_id)
            open_store(store.path.parent, actor="mcp").update(memory_id, "Setting 0 is 5")
        return found

    monkeypatch.setattr(store, "get", get_then_edited)
    restored, _ = undo_forget(queue, [], [], done.reverted_hids, actor="alice")
    assert edited and restored == 0
    assert real_get(changed[0]).content == "Setting 0 is 5"


def test_undoing_a_deletion_never_overwrites_the_memory_once_it_is_back(store, data_dir):
    """Undo of a delete (Recently deleted, an approved change of mind taken back, a forget
    undone) brings back the memory; if it is back already and edited since, it stays so."""
    memory = store.add("Feeds the cat at 7")
    store.delete(memory.id)
    other = open_store(data_dir, actor="mcp")
    other.restore(memory.id)
    other.update(memory.id, "Feeds the cat at 8")
    assert store.restore(memory.id).content == "Feeds the cat at 8"
    assert store.get(memory.id).content == "Feeds the cat at 8"


def test_restoring_with_the_version_seen_refuses_when_it_changed(store):
    from webapp.stores import ConflictError

    memory = store.add("version 1")
    store.update(memory.id, "version 2")
    change = store.history(memory.id)[-1]
    seen = store.get(memory.id)
    store.update(memory.id, "version 3")
    with pytest.raises(ConflictError) as refused:
        store.restore(change["hid"], expected=seen)
    assert refused.value.current.content == "version 3"
    assert store.get(memory.id).content == "version 3"
    assert store.restore(change["hid"], expected=store.get(memory.id)).content == "version 1"


# ------------------------------------------------------------------ real processes
# Another process looks at what the conversation left behind (as the forget page does), then,
# once told to go, forgets it with the versions it saw.
FORGETTER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from webapp.stores import MemoryStore, ReviewQueue, derived_from, forget_conversation

    folder, thread = Path(sys.argv[1]), sys.argv[2]
    store = MemoryStore(folder / "memories.json", max_items=1000, max_chars=10**6,
                        lock_timeout=30, actor="forgetter")
    queue = ReviewQueue(folder / "review.json", store, lock_timeout=30)
    shown = derived_from(queue, thread)
    print("ready", flush=True)
    sys.stdin.readline()
    try:
        done = forget_conversation(queue, thread, actor="alice", seen=shown.versions())
    except (TypeError, AttributeError):  # a version that cannot be told what was seen
        done = forget_conversation(queue, thread, actor="alice")
    left = [m.id for m in getattr(done, "left_alone", [])]
    print(json.dumps({"deleted": done.memory_ids, "reverted": done.reverted_hids,
                      "left_alone": left}), flush=True)
""")


@pytest.fixture
def mcp(data_dir: Path, tmp_path: Path) -> Iterator[McpClient]:
    env = {"MEMORY_MAX_ITEMS": "1000", "MEMORY_MAX_CHARS": "1000000", "MEMORY_LOCK_TIMEOUT": "10"}
    with open(tmp_path / "mcp-stderr.txt", "w+", encoding="utf-8") as errlog:
        with start_blocking_portal(backend="asyncio") as portal:
            with portal.wrap_async_context_manager(connect(data_dir, errlog, env)) as session:
                yield McpClient(portal, session)
        errlog.seek(0)
        stderr = errlog.read()
    assert "Traceback" not in stderr, stderr


def test_every_confirmed_mcp_edit_survives_a_forget_running_in_another_process(
    queue, store, data_dir, mcp
):
    """60 memories from one conversation (30 it added, 30 it changed); another process shows
    what would go, then forgets it while an MCP client updates those memories one after
    another. Every update the server confirmed is still there afterwards."""
    added, changed = conversation_left(queue, added=30, changed=30)
    ids = [i for pair in zip(added, changed, strict=True) for i in pair]
    forgetter = subprocess.Popen(
        [sys.executable, "-c", FORGETTER, str(data_dir), THREAD],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert forgetter.stdout.readline().strip() == "ready"
    confirmed: dict[str, str] = {}  # the last edit the server said it made, per memory
    refused = 0
    n = 0
    # Ten edits after the page was shown and before Forget is pressed, then more while the
    # other process forgets, until it is done and every memory was tried.
    while n < 10 or forgetter.poll() is None or n < len(ids) + 10:
        if n == 10:
            forgetter.stdin.write("go\n")
            forgetter.stdin.flush()
        memory_id = ids[n % len(ids)]
        text = f"Edited through MCP, round {n}"
        is_error, answer = mcp.call(action="update", id=memory_id, content=text)
        if not is_error and answer.startswith("Updated"):
            confirmed[memory_id] = text
        else:
            refused += 1  # forgotten already (no such memory any more), or the file was busy
        n += 1
        assert n < 20_000, "the forget never finished"
    out, err = forgetter.communicate(timeout=60)
    assert forgetter.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])

    now = {m.id: m.content for m in open_store(data_dir).get_all()}
    lost = {i: (text, now.get(i)) for i, text in confirmed.items() if now.get(i) != text}
    assert lost == {}, f"{len(lost)} of {len(confirmed)} confirmed MCP edits were lost: {lost}"
    # The race was really run: memories changed while forgetting, and it said which.
    assert result["left_alone"], (result, refused, n)
    assert set(result["left_alone"]) <= set(confirmed)
