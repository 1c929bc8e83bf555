"""Several processes (and threads) writing one file at once lose nothing and duplicate nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from collections import Counter

from tests.support.stores import conversation_store, memory_store

PROCESSES = 4
CALLS = 100

WORKER = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from webapp.stores import ConversationStore, MemoryStore

    kind, path, worker, calls, go = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), Path(sys.argv[5])
    if kind == "memories":
        store = MemoryStore(path, max_items=100_000, max_chars=10_000_000, actor=f"w{worker}",
                            lock_timeout=120)
    else:
        store = ConversationStore(path, max_turns=100_000, max_chars=10_000_000, max_age_days=7,
                                  lock_timeout=120)
    while not go.exists():  # start together, after the imports
        time.sleep(0.002)
    done = []
    for n in range(calls):
        if kind == "memories":
            done.append(store.add(f"worker {worker} fact {n}").id)
        else:
            store.add_exchange(f"slack:{worker}", f"question {n}", f"answer {n}")
            done.append(n)
    print(json.dumps(done))
""")


def run_workers(kind: str, path, tmp_path) -> list[list]:
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, kind, str(path), str(w), str(CALLS), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(PROCESSES)
    ]
    go.touch()
    results = []
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
        results.append(json.loads(out))
    return results


def test_processes_adding_memories_at_once(data_dir, tmp_path):
    path = data_dir / "memories.json"
    memory_store(path, max_items=100_000, max_chars=10_000_000).init()

    reported = run_workers("memories", path, tmp_path)

    records = json.loads(path.read_bytes())
    ids = [r["id"] for r in records]
    assert len(records) == PROCESSES * CALLS
    assert len(set(ids)) == len(ids)
    assert set(ids) == {i for ids_of_worker in reported for i in ids_of_worker}
    expected = {f"worker {w} fact {n}" for w in range(PROCESSES) for n in range(CALLS)}
    assert {r["content"] for r in records} == expected
    for w in range(PROCESSES):  # each worker's own adds stay in its order
        mine = [r["content"] for r in records if r["content"].startswith(f"worker {w} ")]
        assert mine == [f"worker {w} fact {n}" for n in range(CALLS)]
    history = memory_store(path, max_items=1, max_chars=1).history()
    assert Counter(e["action"] for e in history) == {"add": PROCESSES * CALLS}
    assert {e["actor"] for e in history} == {f"w{w}" for w in range(PROCESSES)}


def test_processes_adding_exchanges_to_different_conversations_of_one_file(data_dir, tmp_path):
    path = data_dir / "conversations.json"
    conversation_store(path, max_turns=100_000, max_chars=10_000_000).init()

    run_workers("conversations", path, tmp_path)

    data = json.loads(path.read_bytes())
    assert sorted(data) == [f"slack:{w}" for w in range(PROCESSES)]
    for w in range(PROCESSES):
        contents = [t["content"] for t in data[f"slack:{w}"]["turns"]]
        assert contents == [text for n in range(CALLS) for text in (f"question {n}", f"answer {n}")]


def test_threads_sharing_one_store(data_dir):
    """Like waitress threads sharing one MemoryStore: writers and readers at once."""
    store = memory_store(
        data_dir / "memories.json", max_items=100_000, max_chars=10_000_000, lock_timeout=60
    ).init()
    errors: list[BaseException] = []
    writing = threading.Event()

    def writer(w: int) -> None:
        try:
            for n in range(40):
                store.add(f"thread {w} fact {n}")
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    def reader() -> None:
        try:
            seen = 0
            while writing.is_set():
                now = len(store.get_all())
                assert now >= seen  # never goes back to an older version
                seen = now
                store.search("fact 1")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    writing.set()
    writers = [threading.Thread(target=writer, args=(w,)) for w in range(6)]
    readers = [threading.Thread(target=reader) for _ in range(2)]
    for thread in writers + readers:
        thread.start()
    for thread in writers:
        thread.join()
    writing.clear()
    for thread in readers:
        thread.join()

    assert errors == []
    contents = [m.content for m in store.get_all()]
    assert len(contents) == len(set(contents)) == 240
    assert set(contents) == {f"thread {w} fact {n}" for w in range(6) for n in range(40)}


def test_every_kind_of_client_at_once_loses_nothing(tmp_path):
    """A short run of benchmarks/soak_shared_folder.py: dashboard-style store, MCP server,
    `memory-curator extract`, a host's add_exchange, a reviewer and a reader in separate
    processes on one folder; then its checks (files parse, acknowledged adds kept, history
    replays to the file, exchanges in order, no temp files) must hold — and must catch a loss."""
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "benchmarks" / "soak_shared_folder.py"
    done = subprocess.run(
        [sys.executable, str(script), "--seconds", "3", "--keep", str(tmp_path / "soak")],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all invariants hold" in done.stdout
    adds = int(done.stdout.split("acknowledged adds: ")[1].split()[0])
    assert adds > 0 and "MCP calls: None" not in done.stdout

    import importlib.util

    spec = importlib.util.spec_from_file_location("soak", script)
    soak = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(soak)
    data, logs = tmp_path / "soak" / "data", tmp_path / "soak" / "logs"
    memories = json.loads((data / "memories.json").read_text(encoding="utf-8"))
    (data / "memories.json").write_text(json.dumps(memories[1:]), encoding="utf-8")
    assert soak.check(data, logs), "dropping a memory behind the history's back must be caught"
