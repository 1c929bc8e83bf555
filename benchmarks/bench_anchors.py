"""The stores and the dashboard against anchors measured in the same run, as ratios.

    .venv/bin/python benchmarks/bench_anchors.py [--quick] [--repeat 21] [--no-datasette]

Anchors (each timed interleaved with the contender, round by round; the figure is the median):

- the raw limit: the same records ``json.dumps``-ed, written to a temp file, fsynced, renamed,
  folder fsynced (and the same without either fsync);
- TinyDB 4's ``insert`` (re-reads the file, writes it in place, fsyncs, takes no lock);
- an atomic rewrite of the conversations file's own bytes (for ``add_exchange``);
- a bare Flask route on the same waitress server returning the same bytes as the page;
- Datasette's table page over the same rows (SQLite), in its own process.

TinyDB and Datasette are not dependencies of the project: the script installs them on demand
into ``.bench-venv/`` (git-ignored) beside the checkout and runs them from there, TinyDB in a
worker process driven over a pipe, Datasette as its own server. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import gzip
import html
import http.client
import json
import os
import random
import re
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for _common, when imported
from _common import settle  # noqa: E402

BENCH_VENV = ROOT / ".bench-venv"
WORDS = ["coffee", "tea", "project", "deadline", "Python", "咖啡", "會議", "週末", "vim", "Taipei"]
CATEGORIES = ("preference", "project", "workflow", "tool", "convention", "general")


# ------------------------------------------------------------------------------ data
def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def memory_records(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """``count`` memories in the on-disk form, English and Chinese mixed."""
    rng = random.Random(seed)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    records = []
    for i in range(count):
        stamp = iso(start + timedelta(minutes=i))
        words = " ".join(rng.choice(WORDS) for _ in range(6))
        records.append(
            {
                "id": f"{i:012x}",
                "content": f"Memory {i}: prefers {words} on day {i % 365}",
                "createdAt": stamp,
                "updatedAt": stamp,
                "category": CATEGORIES[i % len(CATEGORIES)],
                "source": "bench",
            }
        )
    return records


def conversation_document(threads: int, seed: int = 11) -> dict[str, Any]:
    """``threads`` recent threads of 20 turns each (about 6.4 kB of JSON per thread)."""
    rng = random.Random(seed)
    now = datetime.now(UTC)
    data: dict[str, Any] = {}
    for t in range(threads):
        when = now - timedelta(hours=rng.randint(1, 100))
        turns = []
        for n in range(20):
            text = " ".join(rng.choice(WORDS) for _ in range(38))
            turns.append(
                {
                    "role": "user" if n % 2 == 0 else "assistant",
                    "content": text,
                    "timestamp": iso(when + timedelta(seconds=n)),
                }
            )
        data[f"slack:{1731900000 + t}.{t:06d}"] = {
            "turns": turns,
            "createdAt": iso(when),
            "trimmed": 0,
        }
    return data


# ------------------------------------------------------------------------------ anchors
def raw_write(path: Path, payload: bytes, *, sync: bool) -> None:
    """Temp file, (fsync), rename, (folder fsync): the least an atomic, durable save does."""
    tmp = path.with_name(path.name + ".rawtmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, payload)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    if sync:
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


class RawStore:
    """The raw limit for a list of records: ``json.dumps`` them all and save atomically."""

    def __init__(self, path: Path, records: list[dict[str, Any]], *, sync: bool) -> None:
        self.path, self.records, self.sync = path, [dict(r) for r in records], sync

    def add(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        raw_write(self.path, json.dumps(self.records).encode("utf-8"), sync=self.sync)


TINYDB_WORKER = r"""
import json, sys, time
from tinydb import TinyDB
path, records = sys.argv[1], json.load(open(sys.argv[2], encoding="utf-8"))
db = TinyDB(path)
db.truncate()
db.insert_multiple(records)
print("ready", flush=True)
for line in sys.stdin:
    record = json.loads(line)
    start = time.perf_counter()
    db.insert(record)
    print(time.perf_counter() - start, flush=True)
"""


def ensure_bench_venv() -> Path | None:
    """``.bench-venv/bin/python`` with TinyDB 4 and Datasette, installed on first use."""
    python = BENCH_VENV / "bin" / "python"
    probe = [str(python), "-c", "import tinydb, datasette"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print("Installing TinyDB 4 and Datasette into .bench-venv/ (once) ...", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(BENCH_VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "tinydb>=4,<5", "datasette>=0.64,<2"],
            check=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"  could not install them ({exc}); those anchors are left out")
        return None
    return python


class TinyDBWorker:
    """TinyDB in its own interpreter; ``insert`` returns the time the worker measured."""

    def __init__(self, python: Path, folder: Path, records: list[dict[str, Any]]) -> None:
        seed = folder / "tinydb-seed.json"
        seed.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
        self.proc = subprocess.Popen(
            [str(python), "-c", TINYDB_WORKER, str(folder / "tinydb.json"), str(seed)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout.readline().strip() == "ready"

    def insert(self, record: dict[str, Any]) -> float:
        self.proc.stdin.write(json.dumps(record) + "\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


# ------------------------------------------------------------------------------ timing
def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleave(contenders: dict[str, Callable[[], float]], rounds: int) -> dict[str, float]:
    """Median seconds per contender; each round runs every contender once, in a new order."""
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    order = list(contenders)
    rng = random.Random(3)
    for _ in range(rounds):
        rng.shuffle(order)
        for name in order:
            samples[name].append(contenders[name]())
    return {name: statistics.median(values) for name, values in samples.items()}


def fmt_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} µs"


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []

    def add(self, measure: str, value: float, anchor_name: str, anchor: float) -> None:
        ratio = f"{value / anchor:.2f}×" if anchor else "n/a"
        self.rows.append((measure, fmt_time(value), ratio, f"{anchor_name} ({fmt_time(anchor)})"))

    def print(self) -> None:
        head = ("measure", "median", "ratio", "against (median)")
        widths = [max(len(r[i]) for r in [head, *self.rows]) for i in range(4)]
        line = "| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |"
        print(line)
        print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        for row in self.rows:
            print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")


# ------------------------------------------------------------------------------ stores
def memory_store(path: Path, records: list[dict[str, Any]]):
    from webapp.stores import MemoryStore

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(json.dumps(records, ensure_ascii=False, indent=2).encode("utf-8") + b"\n")
    settle(path)
    store = MemoryStore(path, max_items=10**7, max_chars=10**9, actor="bench", lock_timeout=30)
    store.get_all()  # warm: the cached parse the store keeps between calls
    return store


def bench_add(
    table: Table, folder: Path, count: int, rounds: int, tinydb_python: Path | None
) -> None:
    records = memory_records(count)
    store = memory_store(folder / f"m{count}" / "memories.json", records)
    raw = RawStore(folder / f"raw{count}" / "m.json", records, sync=True)
    nosync = RawStore(folder / f"raw{count}" / "n.json", records, sync=False)
    (folder / f"raw{count}").mkdir(exist_ok=True)
    text = "A new memory: prefers green tea 綠茶 in the afternoon"
    record = dict(records[0], id="ffffffffffff", content=text)
    contenders: dict[str, Callable[[], float]] = {
        "store": lambda: timed(lambda: store.add(text, category="preference", source="bench")),
        "raw": lambda: timed(lambda: raw.add(dict(record))),
        "nosync": lambda: timed(lambda: nosync.add(dict(record))),
    }
    tiny = None
    if tinydb_python is not None:
        (folder / f"tiny{count}").mkdir(exist_ok=True)
        tiny = TinyDBWorker(tinydb_python, folder / f"tiny{count}", records)
        contenders["tinydb"] = lambda: tiny.insert(record)
    result = interleave(contenders, rounds)
    if tiny is not None:
        tiny.close()
    label = f"MemoryStore.add at {count:,}"
    table.add(label, result["store"], "raw limit", result["raw"])
    table.add(label, result["store"], "raw limit without fsync", result["nosync"])
    if "tinydb" in result:
        table.add(label, result["store"], "TinyDB 4 insert", result["tinydb"])
        table.add(f"  TinyDB 4 insert at {count:,}", result["tinydb"], "raw limit", result["raw"])


def bench_growth(folder: Path, sizes: list[int], rounds: int) -> None:
    print("\nGrowth of MemoryStore.add (median of interleaved rounds with the raw limit):")
    print(
        f"{'memories':>10} {'add':>10} {'µs/memory':>10} {'raw':>10} {'µs/memory':>10} {'ratio':>7}"
    )
    for count in sizes:
        records = memory_records(count)
        store = memory_store(folder / f"g{count}" / "memories.json", records)
        raw = RawStore(folder / f"g{count}" / "raw.json", records, sync=True)
        text = "Growth probe: likes oolong tea 烏龍茶"
        record = dict(records[0], id="eeeeeeeeeeee", content=text)
        result = interleave(
            {
                "store": lambda store=store, text=text: timed(lambda: store.add(text)),
                "raw": lambda raw=raw, record=record: timed(lambda: raw.add(dict(record))),
            },
            rounds,
        )
        s, r = result["store"], result["raw"]
        print(
            f"{count:>10,} {fmt_time(s):>10} {s / count * 1e6:>10.2f} {fmt_time(r):>10} "
            f"{r / count * 1e6:>10.2f} {s / r:>6.2f}×"
        )


class Breakdown:
    """Exclusive time per part of a write, by wrapping the functions that do each part."""

    PARTS = ("read", "encode", "check", "decode", "validate", "fsync", "lock", "history")

    def __init__(self, parts: tuple[str, ...] = PARTS) -> None:
        self.totals = dict.fromkeys(parts, 0.0)
        self.stack: list[list[float]] = []
        self.undo: list[Callable[[], None]] = []

    def wrap(self, owner: Any, name: str, part: str) -> None:
        original = getattr(owner, name, None)
        if original is None:
            return

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            self.stack.append([0.0])
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                children = self.stack.pop()[0]
                self.totals[part] += elapsed - children
                if self.stack:
                    self.stack[-1][0] += elapsed

        setattr(owner, name, wrapper)
        self.undo.append(lambda: setattr(owner, name, original))

    def restore(self) -> None:
        for undo in reversed(self.undo):
            undo()


def bench_breakdown(folder: Path, count: int, rounds: int) -> None:
    from webapp.stores import history, jsonbytes, jsonfile, jsonread, jsonwrite, locking

    records = memory_records(count)
    store = memory_store(folder / f"b{count}" / "memories.json", records)
    store.add("Warm-up: the first write after a parse has nothing to reuse yet")
    breakdown = Breakdown()
    breakdown.wrap(jsonwrite, "encode_spliced", "encode")
    for name in ("encode", "encode_spliced"):
        breakdown.wrap(jsonbytes, name, "encode")
    breakdown.wrap(jsonwrite, "encodes_as", "check")  # no record changed in place
    breakdown.wrap(jsonread, "parse_bytes", "decode")
    breakdown.wrap(jsonfile.JsonFile, "_read_under_lock", "read")  # under the lock: read, compare
    breakdown.wrap(store._file, "_validate", "validate")
    breakdown.wrap(store._file, "_validate_item", "validate")
    breakdown.wrap(os, "fsync", "fsync")
    breakdown.wrap(locking.SidecarLock, "__enter__", "lock")
    breakdown.wrap(locking.SidecarLock, "__exit__", "lock")
    breakdown.wrap(history.HistoryLog, "append", "history")
    total = 0.0
    try:
        for _ in range(rounds):
            total += timed(lambda: store.add("Where the time goes: tea 茶"))
    finally:
        breakdown.restore()
    parts = dict(breakdown.totals)
    parts["other"] = total - sum(parts.values())
    shown = ", ".join(
        f"{name} {value / rounds * 1e3:.2f} ms ({value / total:.0%})"
        for name, value in parts.items()
    )
    print(f"  at {count:>6,}: add {total / rounds * 1e3:.2f} ms = {shown}")


def exchange_store(folder: Path, threads: int):
    """A settled conversations file of ``threads`` threads of 20 turns, its store and keys."""
    from webapp.stores import ConversationStore

    path = folder / "conversations.json"
    path.parent.mkdir(parents=True)
    data = conversation_document(threads)
    path.write_bytes(json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8") + b"\n")
    settle(path)
    store = ConversationStore(
        path, max_turns=20, max_chars=100_000, max_age_days=30, lock_timeout=30
    )
    store.list_conversations()
    return store, list(data)


def bench_exchange_breakdown(folder: Path, threads: int, rounds: int) -> None:
    """Where the time of ``add_exchange`` goes. The shared-items check runs while the temp
    file's fsync waits in a thread of its own, so "write+fsync" is only what is left of that
    wait beyond the check."""
    from webapp.stores import jsonbytes, jsonfile, jsonwrite, locking

    store, keys = exchange_store(folder / f"xb{threads}", threads)
    rng = random.Random(9)
    store.add_exchange(keys[0], "Warm-up", "the first write after a parse reuses nothing")
    parts = ("read", "encode", "check", "validate", "write+fsync", "replace", "lock")
    breakdown = Breakdown(parts)
    breakdown.wrap(jsonfile.JsonFile, "_read_under_lock", "read")
    breakdown.wrap(jsonwrite, "encode_spliced", "encode")
    breakdown.wrap(jsonbytes, "encodes_as", "check")
    breakdown.wrap(store._file, "_validate_item", "validate")
    breakdown.wrap(jsonwrite, "write_temp", "write+fsync")
    breakdown.wrap(jsonwrite, "replace_with", "replace")
    breakdown.wrap(jsonwrite, "sync_folder_after_replace", "write+fsync")
    breakdown.wrap(locking.SidecarLock, "__enter__", "lock")
    breakdown.wrap(locking.SidecarLock, "__exit__", "lock")
    total = 0.0
    try:
        for _ in range(rounds):
            key = rng.choice(keys)
            total += timed(lambda key=key: store.add_exchange(key, "Tea tomorrow?", "Rain."))
    finally:
        breakdown.restore()
    found = dict(breakdown.totals)
    found["other"] = total - sum(found.values())
    shown = ", ".join(
        f"{name} {value / rounds * 1e3:.2f} ms ({value / total:.0%})"
        for name, value in found.items()
    )
    size = store.path.stat().st_size / 1e6
    print(f"  {threads:>5,} threads ({size:.2f} MB): {total / rounds * 1e3:.2f} ms = {shown}")


def bench_add_exchange(table: Table, folder: Path, threads: int, rounds: int) -> None:
    from webapp.stores import ConversationStore

    path = folder / f"conv{threads}" / "conversations.json"
    path.parent.mkdir(parents=True)
    data = conversation_document(threads)
    path.write_bytes(json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8") + b"\n")
    settle(path)
    store = ConversationStore(
        path, max_turns=20, max_chars=100_000, max_age_days=30, lock_timeout=30
    )
    store.list_conversations()
    keys = list(data)
    copy = path.with_name("copy.json")
    rng = random.Random(5)

    def exchange() -> float:
        key = rng.choice(keys)
        return timed(lambda: store.add_exchange(key, "And tomorrow's tea?", "Rain after 15:00."))

    def rewrite() -> float:
        payload = path.read_bytes()
        return timed(lambda: raw_write(copy, payload, sync=True))

    result = interleave({"store": exchange, "raw": rewrite}, rounds)
    size = path.stat().st_size / 1e6
    table.add(
        f"ConversationStore.add_exchange ({size:.1f} MB, {threads:,} threads)",
        result["store"],
        "atomic rewrite of its bytes",
        result["raw"],
    )


# ------------------------------------------------------------------------------ web
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(data_dir: str, port: int) -> None:
    """Child process: the dashboard and a bare Flask app under one waitress server."""
    import waitress
    from flask import Flask, Response
    from werkzeug.middleware.dispatcher import DispatcherMiddleware

    from webapp import create_app
    from webapp.settings import Settings

    base = Settings.from_env(environ={}, options_file=Path(data_dir) / "none.json", cwd=data_dir)
    fields = {f: getattr(base, f) for f in base.__dataclass_fields__}
    fields.update(memory_max_items=10**6, memory_max_chars=10**9)
    settings = Settings(**fields).with_data_dir(Path(data_dir) / "data")
    app = create_app(settings)
    client = app.test_client()
    pages = {}
    for name, url in (("page", "/memories/"), ("search", "/memories/?q=tea")):
        pages[name] = client.get(url, headers={"Accept-Encoding": "identity"}).get_data()
    bare = Flask("bare")

    @bare.get("/<name>")
    def same_bytes(name: str) -> Response:
        return Response(pages[name], mimetype="text/html")

    wsgi = DispatcherMiddleware(app, {"/bare": bare})
    print("ready", flush=True)
    waitress.serve(wsgi, host="127.0.0.1", port=port, threads=4, _quiet=True)


class Http:
    """One keep-alive connection that keeps cookies, like a browser (the dashboard's session
    and CSRF token are made once, not on every request); ``get`` returns (seconds, body bytes,
    headers)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.cookies: dict[str, str] = {}

    def get(self, url: str, headers: dict[str, str] | None = None) -> tuple[float, bytes, Any]:
        sent = dict(headers or {"Accept-Encoding": "identity"})
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        start = time.perf_counter()
        self.conn.request("GET", url, headers=sent)
        response = self.conn.getresponse()
        body = response.read()
        elapsed = time.perf_counter() - start
        for cookie in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = cookie.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        if response.status != 200:
            raise RuntimeError(f"GET {url} answered {response.status}")
        return elapsed, body, response.headers


def wait_for(port: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port}")


def start_datasette(python: Path, folder: Path, records: list[dict[str, Any]]):
    db = folder / "bench.db"
    with sqlite3.connect(db) as conn:
        conn.execute(
            "create table memories (id text primary key, content text, createdAt text, "
            "updatedAt text, category text, source text)"
        )
        conn.executemany(
            "insert into memories values (:id, :content, :createdAt, :updatedAt, :category, :source)",
            records,
        )
        conn.execute("create index by_created on memories (createdAt)")
    port = free_port()
    datasette = python.parent / "datasette"
    proc = subprocess.Popen(
        [str(datasette), "serve", str(db), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for(port)
    return proc, port


def bench_web(
    table: Table, folder: Path, count: int, rounds: int, tools_python: Path | None
) -> None:
    records = memory_records(count)
    data = folder / "web" / "data"
    data.mkdir(parents=True)
    (data / "memories.json").write_bytes(
        json.dumps(records, ensure_ascii=False, indent=2).encode("utf-8") + b"\n"
    )
    settle(data / "memories.json")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(folder / "web"), str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    ds_proc = None
    try:
        assert server.stdout.readline().strip() == "ready"
        wait_for(port)
        client = Http(port)
        contenders: dict[str, Callable[[], float]] = {
            "page": lambda: client.get("/memories/")[0],
            "search": lambda: client.get("/memories/?q=tea")[0],
            "bare page": lambda: client.get("/bare/page")[0],
            "bare search": lambda: client.get("/bare/search")[0],
        }
        if tools_python is not None:
            ds_proc, ds_port = start_datasette(tools_python, folder, records)
            ds = Http(ds_port)
            table_url = "/bench/memories?_size=50&_sort_desc=createdAt"
            contenders["datasette"] = lambda: ds.get(table_url)[0]
            contenders["datasette search"] = lambda: ds.get(table_url + "&content__contains=tea")[0]
        for fn in contenders.values():  # warm every cache once
            fn()
        result = interleave(contenders, rounds)
        label = f"Memories page (50 rows of {count:,})"
        table.add(label, result["page"], "bare Flask route, same bytes", result["bare page"])
        if "datasette" in result:
            table.add(label, result["page"], "Datasette table page", result["datasette"])
        table.add("search page ?q=tea", result["search"], "bare Flask route", result["bare search"])
        if "datasette" in result:
            table.add(
                "search page ?q=tea",
                result["search"],
                "Datasette content__contains=tea",
                result["datasette search"],
            )
        print_sizes(client)
        if tools_python is not None:
            print_weight(client, "/memories/", ds, table_url)
    finally:
        server.terminate()
        server.wait(timeout=30)
        if ds_proc is not None:
            ds_proc.terminate()
            ds_proc.wait(timeout=30)


def print_sizes(client: Http) -> None:
    _, page, _ = client.get("/memories/")
    statics: dict[str, str] = {}
    for chunk in page.decode("utf-8").split('"'):
        if "/static/" in chunk and chunk.split("?")[0].endswith((".css", ".js")):
            statics[chunk] = chunk
    print("\nBytes on the wire (identity / gzip, br accepted) and caching of static files:")
    rows = [("Memories page", "/memories/"), ("search ?q=tea", "/memories/?q=tea")]
    rows += [(url.split("/static/")[1].split("?")[0], url) for url in statics]
    totals = [0, 0]
    for label, url in rows:
        _, plain, _ = client.get(url)
        _, packed, headers = client.get(url, {"Accept-Encoding": "gzip, deflate, br"})
        encoding = headers.get("Content-Encoding") or "none"
        cache = headers.get("Cache-Control") or "-"
        validator = "ETag" if headers.get("ETag") else "-"
        totals[0] += len(plain)
        totals[1] += len(packed)
        print(
            f"  {label:28} {len(plain):>8,} B / {len(packed):>8,} B ({encoding}); "
            f"Cache-Control: {cache}; {validator}"
        )
    print(f"  {'total':28} {totals[0]:>8,} B / {totals[1]:>8,} B")


def static_links(page: bytes) -> list[str]:
    """The stylesheets and scripts a page loads (``href``/``src`` ending in .css or .js)."""
    found = re.findall(r'(?:href|src)="([^"]+)"', page.decode("utf-8"))
    return list(dict.fromkeys(u for u in found if u.split("?")[0].endswith((".css", ".js"))))


def print_weight(client: Http, url: str, ds: Http, ds_url: str) -> None:
    """The CSS and JavaScript each page loads, gzipped at level 6 (what a server sends with
    gzip), the Memories page against Datasette's table page."""
    print("\nCSS + JavaScript a page loads, gzip -6 (bytes):")
    totals = []
    for name, server, page_url in (("Memories page", client, url), ("Datasette table", ds, ds_url)):
        _, page, _ = server.get(page_url)
        total = 0
        for link in static_links(page):
            _, body, _ = server.get(html.unescape(link))
            packed = len(gzip.compress(body, compresslevel=6, mtime=0))
            total += packed
            print(f"  {name:16} {link.split('?')[0]:44} {len(body):>8,} {packed:>8,}")
        totals.append(total)
        print(f"  {name:16} {'total':44} {'':>8} {total:>8,}")
    print(f"  ratio {totals[0] / totals[1]:.2f}× Datasette's")


# ------------------------------------------------------------------------------ main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21, help="rounds per measure (median)")
    parser.add_argument("--quick", action="store_true", help="fewer rounds and sizes")
    parser.add_argument("--no-datasette", action="store_true", help="leave out TinyDB, Datasette")
    parser.add_argument(
        "--only", choices=("add", "exchange", "web", "growth"), help="run one part only"
    )
    parser.add_argument("--serve", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve[0], int(args.serve[1]))
        return
    rounds = 7 if args.quick else args.repeat
    tools = None if args.no_datasette else ensure_bench_venv()
    table = Table()
    with tempfile.TemporaryDirectory(prefix="bench-anchors-") as tmp:
        folder = Path(tmp)
        print(
            f"Python {sys.version.split()[0]}, {os.cpu_count()} cores; medians of {rounds} rounds"
        )
        parts = {args.only} if args.only else {"add", "exchange", "web", "growth"}
        if "add" in parts:
            bench_add(table, folder, 100, rounds, tools)
            bench_add(table, folder, 10_000, rounds, tools)
        if "exchange" in parts:
            bench_add_exchange(table, folder, 1_572, rounds)
            bench_add_exchange(table, folder, 20, rounds * 2)  # a household: 20 threads
        if "web" in parts:
            bench_web(table, folder, 10_000, rounds * 2, tools)
        print()
        table.print()
        if "add" in parts:
            print("\nWhere the time of MemoryStore.add goes (exclusive time per part):")
            bench_breakdown(folder, 100, rounds)
            bench_breakdown(folder, 10_000, rounds)
        if "exchange" in parts:
            print("\nWhere the time of ConversationStore.add_exchange goes (exclusive time):")
            bench_exchange_breakdown(folder, 20, rounds * 2)
            bench_exchange_breakdown(folder, 1_572, rounds)
        if "growth" in parts:
            sizes = [100, 1_000, 10_000, 50_000]
            if not args.quick:
                sizes = [100, 1_000, 5_000, 10_000, 20_000, 50_000]
            bench_growth(folder, sizes, max(5, rounds // 3))


if __name__ == "__main__":
    main()
