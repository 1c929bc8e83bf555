"""An LLM's parallel tool calls, as Home Assistant makes them: every call in a session of its
own (initialize, call, close) over a client with Home Assistant's timeouts (httpx's 5 s read
default, errors raised on a failed POST), many at once, against ``memory-curator serve`` as a
real process. Each is answered within the 5 s and the dashboard answers meanwhile."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest

from tests.support.mcp_http import Dashboard, dashboard, home_assistant_call
from webapp.stores import MemoryStore

ROUNDS = 3
READ_TIMEOUT = 5.0  # Home Assistant's client sets none of its own: httpx's default applies


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    data = tmp_path_factory.mktemp("mcp-burst-data")
    memories = MemoryStore(data / "memories.json", lock_timeout=5)
    for n in range(40):
        memories.add(f"Waters plant number {n} on Sundays.")
    with dashboard(data) as running:
        yield running


# A turn's calls: what an assistant asks for at once (reads, a search, a new fact, the queue).
def _calls(count: int, round_no: int) -> list[tuple[str, dict[str, Any]]]:
    kinds: list[tuple[str, dict[str, Any]]] = [
        ("recall", {}),
        ("manage_memory", {"action": "search", "keyword": "plant"}),
        ("recall", {"query": "plant"}),
        ("review_memory", {}),
    ]
    calls = [kinds[n % len(kinds)] for n in range(count)]
    calls[-1] = ("manage_memory", {"action": "add", "content": f"Burst {count} round {round_no}."})
    return calls


@pytest.mark.parametrize("count", [8, 16])
def test_a_burst_of_one_session_calls_is_answered_in_time(served: Dashboard, count: int) -> None:
    results: list[tuple[str, float, str]] = []
    health: list[tuple[int, float]] = []

    async def one(name: str, arguments: dict[str, Any]) -> None:
        started = time.perf_counter()
        try:
            is_error, text = await home_assistant_call(served.mcp_url, name, arguments)
            outcome = "error: " + text if is_error else "ok"
        except Exception as exc:  # what Home Assistant would report as a failed call
            while isinstance(exc, ExceptionGroup):  # the first cause, as Home Assistant takes it
                exc = exc.exceptions[0]
            outcome = f"failed: {type(exc).__name__}: {exc}"
        results.append((name, time.perf_counter() - started, outcome))

    async def probe() -> None:
        await anyio.sleep(0.2)  # while the calls are in flight
        started = time.perf_counter()
        async with httpx2.AsyncClient() as http:
            status = (await http.get(served.base + "/healthz")).status_code
        health.append((status, time.perf_counter() - started))

    async def rounds() -> None:
        for round_no in range(ROUNDS):
            async with anyio.create_task_group() as group:
                for name, arguments in _calls(count, round_no):
                    group.start_soon(one, name, arguments)
                group.start_soon(probe)

    anyio.run(rounds)
    slowest = max(seconds for _, seconds, _ in results)
    print(f"\n{count} calls at once x {ROUNDS}: slowest {slowest:.2f} s, /healthz {health}")
    failed = [r for r in results if r[2] != "ok"]
    assert not failed, f"{len(failed)} of {len(results)} failed: {failed[:3]}"
    assert len(results) == count * ROUNDS
    assert slowest < READ_TIMEOUT, sorted(results, key=lambda r: -r[1])[:3]
    assert [status for status, _ in health] == [200] * ROUNDS
    assert all(seconds < 2.0 for _, seconds in health), health
    added = [m.content for m in MemoryStore(served.data_dir / "memories.json").get_all()]
    assert {f"Burst {count} round {n}." for n in range(ROUNDS)} <= set(added)
