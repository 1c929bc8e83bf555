"""Lock deletion: writers keep every acknowledged change while someone deletes the lock file.

Starts, on one fresh data folder, a real ``memory-curator serve`` process (the dashboard) with
a client adding and deleting memories through its forms, ``--writers`` processes that add,
edit and delete their own memories through ``MemoryStore``, and a process that deletes
``memories.json.lock`` every ``--every`` seconds (as ``rm data/*.lock`` or a sync tool does).
Then it checks every acknowledged add, edit and delete against the file, and prints what it
checked. Exit status 1 when anything acknowledged was lost.

    .venv/bin/python benchmarks/lock_deletion.py [--seconds 30] [--writers 4] [--every 0.002]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for _common, when imported
from _common import lock_deleter  # noqa: E402
from _common import log_line as _log

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

ENV = {"MEMORY_MAX_ITEMS": "1000000", "MEMORY_MAX_CHARS": "100000000", "MEMORY_LOCK_TIMEOUT": "30"}
CSRF = re.compile(r'"X-CSRFToken": "([^"]+)"')


def writer(data_dir: Path, worker: int, until: float, out: Path) -> None:
    """Adds, edits and deletes its own memories; logs each change the store acknowledged."""
    from webapp.settings import Settings
    from webapp.stores import MemoryStore, StoreError

    settings = Settings.from_env(
        environ={"MEMORY_DATA_DIR": str(data_dir), **ENV}, options_file=data_dir / "none.json"
    )
    store = MemoryStore.from_settings(settings, actor=f"writer{worker}")
    rng, mine, n = random.Random(worker), [], 0
    while time.time() < until:
        n += 1
        roll = rng.random()
        try:
            if roll < 0.6 or not mine:
                memory = store.add(f"writer {worker} fact {n}")
                mine.append(memory.id)
                _log(out, {"op": "add", "id": memory.id, "content": memory.content})
            elif roll < 0.85:
                target = rng.choice(mine)
                content = f"writer {worker} fact {n}, edited"
                if store.update(target, content) is not None:
                    _log(out, {"op": "edit", "id": target, "content": content})
            else:
                target = mine.pop(rng.randrange(len(mine)))
                if store.delete(target):
                    _log(out, {"op": "delete", "id": target})
        except StoreError as exc:  # busy: not acknowledged, nothing to check
            _log(out, {"op": "refused", "error": str(exc)[:200]})


class Dashboard:
    """A browser-like client of the real server: a session cookie and the page's CSRF token."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookie = ""
        page = self.request("GET", "/memories/")
        found = CSRF.search(page.read().decode("utf-8"))
        if not found:
            raise RuntimeError("no CSRF token on the memories page")
        self.token = found.group(1)

    def request(self, method: str, path: str, form: dict | None = None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"Host": f"127.0.0.1:{self.port}"}
        if self.cookie:
            headers["Cookie"] = self.cookie
        body = None
        if form is not None:
            body = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["X-CSRFToken"] = getattr(self, "token", "")
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        cookie = response.getheader("Set-Cookie")
        if cookie:
            self.cookie = cookie.split(";", 1)[0]
        return response


def dashboard_client(port: int, until: float, out: Path) -> None:
    """Adds memories through the dashboard's form and deletes some of them again."""
    client, rng, mine, n = Dashboard(port), random.Random(99), [], 0
    while time.time() < until:
        n += 1
        if rng.random() < 0.8 or not mine:
            content = f"dashboard fact {n}"
            response = client.request("POST", "/memories/", {"content": content, "category": ""})
            response.read()
            location = response.getheader("Location") or ""
            added = re.search(r"added=([0-9a-f]+)", location)
            if response.status == 303 and added:
                mine.append(added.group(1))
                _log(out, {"op": "add", "id": added.group(1), "content": content})
            else:
                _log(out, {"op": "refused", "error": f"HTTP {response.status}"})
        else:
            target = mine.pop(rng.randrange(len(mine)))
            response = client.request("POST", f"/memories/{target}/delete", {})
            response.read()
            if response.status == 303:
                _log(out, {"op": "delete", "id": target})
            else:
                _log(out, {"op": "refused", "error": f"HTTP {response.status}"})


def check(data_dir: Path, logs: Path) -> tuple[dict[str, int], list[str]]:
    """(what was checked, failures) for every acknowledged add, edit and delete."""
    records = [
        json.loads(line) for p in logs.glob("*.jsonl") for line in p.read_text().splitlines()
    ]
    stored = {r["id"]: r["content"] for r in json.loads((data_dir / "memories.json").read_bytes())}
    expected: dict[str, str | None] = {}
    for record in records:  # each id is changed by one process only, in its log's order
        if record["op"] in ("add", "edit"):
            expected[record["id"]] = record["content"]
        elif record["op"] == "delete":
            expected[record["id"]] = None
    failures = []
    lost = [i for i, c in expected.items() if c is not None and i not in stored]
    reverted = [i for i, c in expected.items() if c is not None and i in stored and stored[i] != c]
    undone = [i for i, c in expected.items() if c is None and i in stored]
    if lost:
        failures.append(f"{len(lost)} acknowledged memories are missing: {lost[:5]}")
    if reverted:
        failures.append(f"{len(reverted)} acknowledged edits were reverted: {reverted[:5]}")
    if undone:
        failures.append(f"{len(undone)} acknowledged deletes were undone: {undone[:5]}")
    count = lambda op: sum(1 for r in records if r["op"] == op)  # noqa: E731
    deletions = sum(r["count"] for r in records if r["op"] == "lock-deletions")
    checked = {
        "adds": count("add"),
        "edits": count("edit"),
        "deletes": count("delete"),
        "refused": count("refused"),
        "lock deletions": deletions,
        "memories in the file": len(stored),
        "lost": len(lost),
        "reverted": len(reverted),
        "undone": len(undone),
    }
    return checked, failures


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_dashboard(data_dir: Path) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "SUPERVISOR"))}
    env.update(ENV)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "webapp",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--data-dir",
            str(data_dir),
        ],  # fmt: skip
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process, port
        except OSError:
            time.sleep(0.1)
    os.killpg(process.pid, signal.SIGKILL)
    raise RuntimeError("the dashboard did not start")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--every", type=float, default=0.002, help="Seconds between deletions.")
    parser.add_argument("--keep", type=Path, default=None, help="Use (and keep) this folder.")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="lock-deletion-"))
    shutil.rmtree(root, ignore_errors=True)
    data_dir, logs = root / "data", root / "logs"
    data_dir.mkdir(parents=True)
    logs.mkdir()
    server, port = start_dashboard(data_dir)
    try:
        until = time.time() + args.seconds
        workers = [
            mp.Process(target=writer, args=(data_dir, w, until, logs / f"writer{w}.jsonl"))
            for w in range(args.writers)
        ]
        workers.append(mp.Process(target=dashboard_client, args=(port, until, logs / "dash.jsonl")))
        workers.append(
            mp.Process(
                target=lock_deleter,
                args=(data_dir, until, logs / "rm.jsonl", args.every, "memories.json.lock"),
            )
        )
        for process in workers:
            process.start()
        for process in workers:
            process.join(args.seconds + 120)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)
    checked, failures = check(data_dir, logs)
    failures += [f"worker {p.name} exited with {p.exitcode}" for p in workers if p.exitcode]
    print("checked: " + ", ".join(f"{k} {v}" for k, v in checked.items()))
    for failure in failures:
        print("FAIL:", failure)
    print("every acknowledged change is in the file" if not failures else "CHANGES WERE LOST")
    if not args.keep and not failures:
        shutil.rmtree(root)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
