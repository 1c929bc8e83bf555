"""Soak: every kind of client on one data folder at once, then check that nothing was lost.

Runs, for ``--seconds`` (default 60), in separate processes on one fresh data folder:
a dashboard-style ``MemoryStore`` (add / update / delete / restore), the MCP server driven
through the SDK's stdio client (add / update / delete), ``memory-curator extract --all`` in
a loop (alternating manual and auto review mode), a host program calling
``ConversationStore.add_exchange``, a reviewer approving and rejecting queued facts, a
reader that parses every store file as fast as it can, and a careless operator deleting every
``*.lock`` file in the folder every few milliseconds (``--lock-deletion-every``; 0 turns it off).

Then it checks and prints: every file parses and never failed to parse for the reader;
every acknowledged add is in the memory file or has a delete in the history log; replaying
the history log gives exactly the memory file; every acknowledged exchange is in its
thread, in order; no temp files are left behind. Last, the corrupt-then-repair phase: it
damages ``memories.json``, runs ``memory-curator repair`` and checks that every memory is back
as it was (the backup plus the history log's newer changes).

    .venv/bin/python benchmarks/soak_shared_folder.py [--seconds 60] [--keep DIR]
        [--lock-deletion-every 0.002]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for _common, when imported
from _common import lock_deleter  # noqa: E402
from _common import log_line as _log

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

ENV = {
    "MEMORY_MAX_ITEMS": "100000",
    "MEMORY_MAX_CHARS": "10000000",
    "CONVERSATION_MAX_TURNS": "100000",
    "CONVERSATION_MAX_CHARS": "100000000",
    "MEMORY_LOCK_TIMEOUT": "30",
}
FACTS = [
    "I prefer {} units",
    "I always use {} for notes",
    "my editor is {}",
    "記住我喜歡{}",
    "以后都用{}",
    "I never drink {} after 6pm",
]


def _settings(data_dir: Path):
    from webapp.settings import Settings

    return Settings.from_env(
        environ={"MEMORY_DATA_DIR": str(data_dir), **ENV}, options_file=data_dir / "no-options.json"
    )


def dashboard(data_dir: Path, until: float, out: Path) -> None:
    """Adds, edits, deletes and restores memories the way the dashboard does."""
    from webapp.stores import ConflictError, MemoryStore

    store = MemoryStore.from_settings(_settings(data_dir), actor="dashboard")
    rng, n = random.Random(1), 0
    while time.time() < until:
        n += 1
        roll = rng.random()
        memories = store.get_all()
        if roll < 0.5 or not memories:
            memory = store.add(f"dashboard fact {n}", category="general")
            _log(out, {"op": "add", "id": memory.id})
        elif roll < 0.75:
            target = rng.choice(memories)
            try:
                store.update(target.id, f"dashboard edit {n}", expected_updated_at=target.version)
            except ConflictError:
                pass
        elif roll < 0.9:
            store.delete(rng.choice(memories).id)
        else:
            deleted = [e["id"] for e in store.history()[-200:] if e.get("action") == "delete"]
            if deleted:
                try:
                    store.restore(rng.choice(deleted))
                except KeyError:
                    pass


def host(data_dir: Path, until: float, out: Path) -> None:
    """A host bot: add_exchange on a few threads, with facts worth extracting."""
    from webapp.stores import ConversationStore

    store = ConversationStore.from_settings(_settings(data_dir))
    rng, n = random.Random(2), 0
    while time.time() < until:
        n += 1
        thread = f"slack:{rng.randrange(5)}"
        user = rng.choice(FACTS).format(f"thing{n}") + f" (#{n})"
        store.add_exchange(thread, user, f"ok #{n}")
        _log(out, {"op": "exchange", "thread": thread, "user": user})


def extractor(data_dir: Path, until: float, out: Path) -> None:
    """``memory-curator extract --all`` in a loop, alternating manual and auto mode."""
    env = {**os.environ, **ENV, "MEMORY_DATA_DIR": str(data_dir)}
    runs = failures = 0
    while time.time() < until:
        env["MEMORY_REVIEW_MODE"] = "auto" if runs % 2 else "manual"
        done = subprocess.run(
            [sys.executable, "-m", "webapp", "extract", "--all"],
            env=env,
            capture_output=True,
            text=True,
            cwd=REPO,
        )
        runs += 1
        if done.returncode != 0:
            failures += 1
            _log(out, {"op": "extract-failed", "stderr": done.stderr[-500:]})
    _log(out, {"op": "extract-runs", "runs": runs, "failures": failures})


def reviewer(data_dir: Path, until: float, out: Path) -> None:
    """Approves or rejects pending facts as a person in the Review page would."""
    from webapp.stores import ReviewQueue

    settings = _settings(data_dir)
    queue = ReviewQueue.from_settings(settings, actor="review")
    rng = random.Random(3)
    while time.time() < until:
        pending = queue.pending() if settings.review_file.exists() else []
        if not pending:
            time.sleep(0.05)
            continue
        item = rng.choice(pending)
        decided = queue.approve(item.id) if rng.random() < 0.7 else queue.reject(item.id)
        if decided.applied_memory_id and decided.status == "approved":
            _log(out, {"op": "approved", "id": decided.applied_memory_id})


def mcp_client(data_dir: Path, until: float, out: Path) -> None:
    """The assistant: manage_memory over stdio through the SDK's client."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def session_loop() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "webapp", "mcp", "--data-dir", str(data_dir)],
            env={**ENV},
            cwd=str(REPO),
        )
        rng, n, errors = random.Random(4), 0, 0
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    while time.time() < until:
                        n += 1
                        roll = rng.random()
                        if roll < 0.6:
                            result = await session.call_tool(
                                "manage_memory", {"action": "add", "content": f"mcp fact {n}"}
                            )
                            text = result.content[0].text
                            found = re.match(r"Added \[([0-9a-f]+)\]", text)
                            if found:
                                _log(out, {"op": "add", "id": found.group(1)})
                        else:
                            listing = await session.call_tool("manage_memory", {"action": "list"})
                            ids = re.findall(r"^\[([0-9a-f]+)\]", listing.content[0].text, re.M)
                            if not ids:
                                continue
                            action = "delete" if roll < 0.8 else "update"
                            args = {"action": action, "id": rng.choice(ids)}
                            if action == "update":
                                args["content"] = f"mcp edit {n}"
                            result = await session.call_tool("manage_memory", args)
                        if result.is_error and "No memory has the id" not in result.content[0].text:
                            errors += 1
                            _log(out, {"op": "mcp-error", "text": result.content[0].text[:300]})
        _log(out, {"op": "mcp-calls", "calls": n, "errors": errors})

    anyio.run(session_loop)


def reader(data_dir: Path, until: float, out: Path) -> None:
    """Parses every store file over and over; a half-written file would show up here."""
    files = [
        data_dir / "memories.json",
        data_dir / "conversations" / "conversations.json",
        data_dir / "review.json",
        data_dir / "extraction-state.json",
    ]
    reads = bad = 0
    while time.time() < until:
        for path in files:
            try:
                raw = path.read_bytes()
            except FileNotFoundError:
                continue
            reads += 1
            try:
                json.loads(raw)
            except ValueError:
                bad += 1
                _log(out, {"op": "bad-read", "file": path.name, "head": raw[:80].decode("latin-1")})
    _log(out, {"op": "reads", "reads": reads, "bad": bad})


WORKERS = [dashboard, host, extractor, reviewer, mcp_client, reader]


def corrupt_then_repair(data_dir: Path) -> list[str]:
    """Damage memories.json, run ``memory-curator repair``; every memory must come back."""
    memory_file = data_dir / "memories.json"
    before = {r["id"]: r["content"] for r in json.loads(memory_file.read_bytes())}
    memory_file.write_bytes(memory_file.read_bytes()[: memory_file.stat().st_size // 2])
    env = {**os.environ, **ENV, "MEMORY_DATA_DIR": str(data_dir)}
    done = subprocess.run(
        [sys.executable, "-m", "webapp", "repair"],
        env=env,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    print("repair said:", *done.stdout.splitlines()[:1], sep="\n  ")
    if done.returncode != 0:
        return [f"repair failed: {done.stderr[-500:]}"]
    after = {r["id"]: r["content"] for r in json.loads(memory_file.read_bytes())}
    missing = sorted(set(before) - set(after))
    extra = sorted(set(after) - set(before))
    changed = sorted(i for i in set(before) & set(after) if before[i] != after[i])
    print(
        f"corrupt-then-repair: {len(before) - len(missing) - len(changed)} of {len(before)} "
        f"memories back as they were; {len(missing)} missing, {len(changed)} different, "
        f"{len(extra)} extra"
    )
    failures = []
    if missing or changed or extra:
        failures.append(
            f"repair lost changes: missing {missing[:5]}, different {changed[:5]}, extra {extra[:5]}"
        )
    return failures


def check(data_dir: Path, logs: Path) -> list[str]:
    """Every invariant; returns the failures (empty when all hold)."""
    from webapp.stores.atomic import temp_files_of

    failures: list[str] = []
    records = [
        json.loads(line) for p in logs.glob("*.jsonl") for line in p.read_text().splitlines()
    ]
    memory_file = data_dir / "memories.json"
    stored = {r["id"]: r for r in json.loads(memory_file.read_bytes())}
    history = [
        json.loads(line)
        for line in (data_dir / "memories.history.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    replay: dict[str, dict] = {}
    for entry in history:
        if entry["after"] is None:
            replay.pop(entry["id"], None)
        else:
            replay[entry["id"]] = entry["after"]
    deleted = {e["id"] for e in history if e["action"] == "delete"}
    acked = {r["id"] for r in records if r["op"] in ("add", "approved")}
    lost = sorted(i for i in acked if i not in stored and i not in deleted)
    if lost:
        failures.append(f"{len(lost)} acknowledged adds are gone without a delete: {lost[:5]}")
    if set(replay) != set(stored):
        failures.append(
            f"history replay has {len(replay)} ids, file has {len(stored)}: "
            f"only in replay {sorted(set(replay) - set(stored))[:5]}, "
            f"only in file {sorted(set(stored) - set(replay))[:5]}"
        )
    differ = [i for i in stored if i in replay and replay[i].get("content") != stored[i]["content"]]
    if differ:
        failures.append(f"{len(differ)} memories differ from the history replay: {differ[:5]}")
    threads = json.loads((data_dir / "conversations" / "conversations.json").read_bytes())
    for thread in {r["thread"] for r in records if r["op"] == "exchange"}:
        sent = [r["user"] for r in records if r["op"] == "exchange" and r["thread"] == thread]
        kept = [
            t["content"] for t in threads.get(thread, {}).get("turns", []) if t["role"] == "user"
        ]
        if kept != sent:
            failures.append(
                f"thread {thread}: {len(sent)} messages sent, {len(kept)} kept in order"
            )
    for path in [
        memory_file,
        data_dir / "review.json",
        data_dir / "extraction-state.json",
        data_dir / "conversations" / "conversations.json",
    ]:
        try:
            json.loads(path.read_bytes())
        except (OSError, ValueError) as exc:
            failures.append(f"{path.name} does not parse: {exc}")
        if temp_files_of(path):
            failures.append(f"temp files left next to {path.name}: {temp_files_of(path)}")
    failures += [f"reader saw a half-written {r['file']}" for r in records if r["op"] == "bad-read"]
    failures += [f"extract failed: {r['stderr']}" for r in records if r["op"] == "extract-failed"][
        :3
    ]
    failures += [f"MCP error: {r['text']}" for r in records if r["op"] == "mcp-error"][:3]
    _report(records, stored, history)
    return failures


def _report(records: list[dict], stored: dict, history: list[dict]) -> None:
    count = lambda op: sum(1 for r in records if r["op"] == op)  # noqa: E731
    reads = next((r for r in records if r["op"] == "reads"), {})
    mcp = next((r for r in records if r["op"] == "mcp-calls"), {})
    runs = next((r for r in records if r["op"] == "extract-runs"), {})
    print(f"acknowledged adds: {count('add')} (+{count('approved')} approved from review)")
    print(f"memories in the file: {len(stored)}; history entries: {len(history)}")
    print(
        f"exchanges: {count('exchange')}; MCP calls: {mcp.get('calls')}; "
        f"extract runs: {runs.get('runs')} ({runs.get('failures')} failed)"
    )
    print(f"reader parses: {reads.get('reads')} ({reads.get('bad')} failed)")
    deletions = sum(r["count"] for r in records if r["op"] == "lock-deletions")
    print(f"lock files deleted while they ran: {deletions}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--keep", type=Path, default=None, help="Use (and keep) this data folder.")
    parser.add_argument(
        "--lock-deletion-every",
        type=float,
        default=0.002,
        help="Seconds between deletions of every *.lock file (0: never delete them).",
    )
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="soak-"))
    data_dir, logs = root / "data", root / "logs"
    shutil.rmtree(root, ignore_errors=True)
    data_dir.mkdir(parents=True)
    logs.mkdir()
    # Loaded here, before the clock starts: the forked workers inherit the modules, so on a
    # busy machine the run's seconds go to work, not to each worker importing the library.
    import webapp.extraction  # noqa: F401
    from webapp.stores import MemoryStore

    MemoryStore.from_settings(_settings(data_dir)).init()  # the file the checks read exists
    until = time.time() + args.seconds
    processes = [
        mp.Process(target=w, args=(data_dir, until, logs / f"{w.__name__}.jsonl")) for w in WORKERS
    ]
    if args.lock_deletion_every > 0:
        processes.append(
            mp.Process(
                target=lock_deleter,
                args=(data_dir, until, logs / "lock_deleter.jsonl", args.lock_deletion_every),
            )
        )
    for process in processes:
        process.start()
    for process in processes:
        process.join(args.seconds + 120)
    crashed = [(p.name, p.exitcode) for p in processes if p.exitcode != 0]
    failures = check(data_dir, logs)
    failures += [f"worker {name} exited with {code}" for name, code in crashed]
    if not failures:  # only a folder that passed is worth damaging
        failures += corrupt_then_repair(data_dir)
    print(f"data folder: {data_dir}")
    for failure in failures:
        print("FAIL:", failure)
    print("all invariants hold" if not failures else f"{len(failures)} invariant(s) broken")
    if not args.keep and not failures:
        shutil.rmtree(root)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
