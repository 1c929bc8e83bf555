"""Needs attention under load, for real: the dashboard as its own process over a few thousand
memories, another process changing memories all the time, and several tabs polling the page.
The server's thread count (``/proc/<pid>/status``) stays bounded and the Memories page keeps
answering (speed is measured in ``benchmarks/bench_attention_polling.py``)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support import REPO
from tests.support.web import start_server, stop_server
from webapp.stores.timefmt import to_iso

MEMORIES = 3000
POLLERS = 4
SECONDS = 15

WRITER = textwrap.dedent("""
    import random, sys, time
    from pathlib import Path
    from webapp.stores import MemoryStore

    path, stop = Path(sys.argv[1]), Path(sys.argv[2])
    store = MemoryStore(path, max_items=100_000, max_chars=10**7, lock_timeout=30,
                        actor="writer")
    rng, n = random.Random(7), 0
    while not stop.exists():
        memory = rng.choice(store.get_all())
        store.update(memory.id, f"{memory.content.split(' (v')[0]} (v{n})")
        n += 1
        time.sleep(0.05)
    print(n)
""")


def sentence(rng: random.Random, i: int) -> str:
    """Varied facts (names and numbers differ), about one in ten a reworded earlier one, so the
    scan has pairs to compare and findings to report."""
    name = "".join(rng.choice(["ka", "lo", "mi", "ren", "to", "sa", "vi", "du"]) for _ in range(3))
    room = rng.choice(["hallway", "kitchen", "bedroom", "office", "garage", "porch"])
    return rng.choice(
        [
            f"{room.title()} lights at {name}'s at {rng.randint(1, 10) * 10}% after {i % 24}:00",
            f"Prefers {rng.choice(['green tea', 'coffee', 'oat milk'])} from shop {name}",
            f"{name.title()} is the user's {rng.choice(['sister', 'colleague', 'dentist'])}",
            f"客廳冷氣（{name}）晚上{rng.randint(7, 11)}點後調到{rng.randint(20, 28)}度",
            f"Alarm for {name.title()} at {rng.randint(5, 9):02d}:{rng.choice(['00', '30'])}",
        ]
    )


def populate(path: Path, count: int) -> None:
    rng = random.Random(count)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    texts: list[str] = []
    records = []
    for i in range(count):
        reworded = i > 20 and rng.random() < 0.1
        texts.append("The user " + rng.choice(texts).lower() if reworded else sentence(rng, i))
        stamp = to_iso(start + timedelta(minutes=37 * i))
        records.append(
            {"id": f"m{i:06d}", "content": texts[-1], "createdAt": stamp, "updatedAt": stamp}
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")


def threads_of(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    return int(next(line for line in status.splitlines() if line.startswith("Threads:")).split()[1])


def get(url: str, htmx: bool = False) -> int:
    request = urllib.request.Request(url, headers={"HX-Request": "true"} if htmx else {})
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()
        return int(response.status)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc/<pid>/status")
def test_polling_needs_attention_while_memories_change_keeps_one_scan_thread(tmp_path):
    data = tmp_path / "data"
    populate(data / "memories.json", MEMORIES)
    server = start_server(data, {"MEMORY_MAX_ITEMS": "100000", "MEMORY_MAX_CHARS": "10000000"})
    stop = tmp_path / "stop"
    writer = None
    try:
        pid = server.process.pid
        assert get(f"{server.url}/memories/") == 200
        assert get(f"{server.url}/attention/") == 200  # starts the first scan
        baseline = threads_of(pid)
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(data / "memories.json"), str(stop)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        until = time.monotonic() + SECONDS
        failures: list[str] = []

        def poll() -> None:  # a tab with the page open: it reloads its panel again and again
            while time.monotonic() < until:
                try:
                    assert get(f"{server.url}/attention/?kind=duplicate", htmx=True) == 200
                except Exception as exc:  # noqa: BLE001 (reported below)
                    failures.append(f"attention: {exc!r}")
                time.sleep(0.5)

        pollers = [threading.Thread(target=poll) for _ in range(POLLERS)]
        for poller in pollers:
            poller.start()
        most, pages = baseline, 0
        while time.monotonic() < until:
            most = max(most, threads_of(pid))
            try:
                assert get(f"{server.url}/memories/") == 200
                pages += 1
            except Exception as exc:  # noqa: BLE001
                failures.append(f"memories: {exc!r}")
            most = max(most, threads_of(pid))
            time.sleep(0.2)
        for poller in pollers:
            poller.join()
        stop.touch()
        out, err = writer.communicate(timeout=60)
        assert writer.returncode == 0, err
        assert int(out) > 50, "the writer hardly changed anything"
    finally:
        stop.touch()
        if writer is not None and writer.poll() is None:
            writer.kill()
        stop_server(server)
    assert failures == []
    assert pages > 5
    # Waitress's threads and one scan thread, however many versions the polls asked about.
    assert most <= baseline + 1, f"threads grew from {baseline} to {most}"
