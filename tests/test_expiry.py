"""Facts that know their time: ``expiresAt`` on the memory record, what is active, and what the
prompt and the MCP tool's ``list`` leave out once a fact has stopped being true."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from anyio.from_thread import start_blocking_portal

from tests.support.mcp_stdio import McpClient, connect
from webapp.prompts import compose_prompt
from webapp.stores import MemoryStore

PAST = "2020-01-01T00:00:00.000Z"
FUTURE = "2099-01-01T00:00:00.000Z"


def write_records(path: Path, records: list[dict[str, object]]) -> None:
    """Records as another program writes them (no store involved)."""
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")


def record(memory_id: str, content: str, **more: object) -> dict[str, object]:
    stamp = "2026-01-01T00:00:00.000Z"
    return {"id": memory_id, "content": content, "createdAt": stamp, "updatedAt": stamp, **more}


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    path = tmp_path / "memories.json"
    write_records(
        path,
        [
            record("tokyo", "Is in Tokyo until Friday", expiresAt=PAST),
            record("tea", "Likes green tea without sugar"),
            record("home", "Works from home this week", expiresAt=FUTURE),
            record("odd", "Wrote by a program with its own idea of time", expiresAt="soon"),
        ],
    )
    return MemoryStore(path)


def test_compose_prompt_leaves_out_a_memory_whose_expiry_has_passed(store: MemoryStore) -> None:
    prompt = compose_prompt(store.get_all(), [], "Where am I this week?")
    assert "Tokyo" not in prompt
    assert "- Likes green tea without sugar" in prompt
    assert "- Works from home this week" in prompt
    # Records read from the file as plain dicts are treated alike.
    from_dicts = compose_prompt([m.to_dict() for m in store.get_all()], [], "?")
    assert "Tokyo" not in from_dicts and "green tea" in from_dicts


def test_the_prompt_is_judged_at_its_own_time(store: MemoryStore) -> None:
    before = datetime(2019, 12, 31, tzinfo=UTC)
    assert "Tokyo" in compose_prompt(store.get_all(), [], "?", now=before)
    assert "Tokyo" not in compose_prompt(store.get_all(), [], "?", now=before + timedelta(days=1))


def test_active_keeps_memories_without_an_expiry_or_with_an_unreadable_one(
    store: MemoryStore,
) -> None:
    assert [m.id for m in store.active()] == ["tea", "home", "odd"]
    assert [m.id for m in store.expired()] == ["tokyo"]
    assert [m.id for m in store.active(now=datetime(2100, 1, 1, tzinfo=UTC))] == ["tea", "odd"]
    # Expired memories stay in the file: nothing is deleted on its own.
    assert len(store.get_all()) == 4


def test_expires_at_is_kept_beside_the_times_through_rewrites_export_and_import(
    store: MemoryStore, tmp_path: Path
) -> None:
    store.update("tea", "Likes green tea, no sugar")  # a rewrite of the file
    on_disk = {r["id"]: r for r in json.loads(store.path.read_text("utf-8"))}
    assert on_disk["tokyo"]["expiresAt"] == PAST
    assert on_disk["odd"]["expiresAt"] == "soon"  # another program's value, kept as it was
    assert "expiresAt" not in on_disk["tea"]
    other = MemoryStore(tmp_path / "other.json")
    other.import_records(json.loads(store.export()))
    assert {m.id: m.extra.get("expiresAt") for m in other.get_all()} == {
        "tokyo": PAST,
        "tea": None,
        "home": FUTURE,
        "odd": "soon",
    }


def test_set_expiry_and_never_are_logged_changes(store: MemoryStore) -> None:
    until = datetime(2030, 5, 1, 16, 0, tzinfo=UTC)
    changed = store.set_expiry("tea", until, actor="dashboard")
    assert changed is not None and changed.expires_at == until
    assert changed.updated_at > datetime(2026, 1, 1, tzinfo=UTC)
    stored = next(r for r in json.loads(store.path.read_text("utf-8")) if r["id"] == "tea")
    assert stored["expiresAt"] == "2030-05-01T16:00:00.000Z"
    never = store.set_expiry("tokyo", None, actor="dashboard")
    assert never is not None and never.expires_at is None and not never.expired()
    assert "expiresAt" not in next(
        r for r in json.loads(store.path.read_text("utf-8")) if r["id"] == "tokyo"
    )
    last = store.history("tokyo")[-1]
    assert last["before"]["expiresAt"] == PAST and "expiresAt" not in last["after"]
    assert store.set_expiry("nobody", None) is None


def test_add_with_an_expiry(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memories.json")
    memory = store.add("Is in Osaka until Sunday", expires_at=datetime(2026, 3, 9, tzinfo=UTC))
    assert memory.to_dict()["expiresAt"] == "2026-03-09T00:00:00.000Z"


def test_query_filters_and_sorts_by_expiry(store: MemoryStore) -> None:
    def ids(**kwargs: object) -> list[str]:
        return [m.id for m in store.query(per_page=None, **kwargs).items]  # type: ignore[arg-type]

    assert ids(expiry="expired") == ["tokyo"]
    assert ids(expiry="expiring") == ["home"]
    assert sorted(ids(expiry="none")) == ["odd", "tea"]
    assert ids(sort="expires")[:2] == ["tokyo", "home"]
    with pytest.raises(ValueError, match="expiry"):
        store.query(expiry="someday")


@pytest.fixture
def mcp_client(tmp_path: Path) -> Iterator[McpClient]:
    with open(tmp_path / "stderr.txt", "w+", encoding="utf-8") as errlog:
        with start_blocking_portal(backend="asyncio") as portal:
            with portal.wrap_async_context_manager(connect(tmp_path, errlog)) as session:
                yield McpClient(portal, session)


def test_mcp_list_leaves_out_expired_memories_and_says_so(
    mcp_client: McpClient, tmp_path: Path
) -> None:
    write_records(
        tmp_path / "memories.json",
        [
            record("a1", "Is in Tokyo until Friday", expiresAt=PAST),
            record("b2", "Likes green tea without sugar"),
            record("c3", "Works from home this week", expiresAt=FUTURE),
        ],
    )
    lines = mcp_client.ok(action="list").splitlines()
    assert lines[0] == "2 memories:"
    assert not any("Tokyo" in line for line in lines)
    assert lines[1].startswith("[b2] (general) Likes green tea without sugar")
    assert lines[2].endswith("— until 2099-01-01T00:00:00.000Z")
    assert lines[3].startswith("1 expired memory left out")
