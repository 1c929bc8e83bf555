"""The bar-level figures of issue 32 for this checkout against an earlier commit, in one run.

    .venv/bin/python benchmarks/bench_before_after.py [--base 3add4d8] [--rounds 7] [--memories 2000]
    .venv/bin/python benchmarks/bench_before_after.py --stores [--base main] [--rounds 9]

With ``--stores`` (issue 46) the workers time the stores' hot paths instead, each against the
raw atomic write of the same bytes measured in the same worker, round by round
(``bench_anchors.raw_write``): ``ConversationStore.add_exchange`` on a 10 MB file (1,572
threads) and at household size (20 threads of 20 turns; both trim, so turns are kept aside),
``MemoryStore.add`` and the curator's ``remember`` (the curated add: caps, secrets, the check
by meaning) at 100, 1,000, 10,000 and 50,000 memories, each against the raw write of as many,
and the similarity model embedding one text alone (what ``remember``'s check by meaning cannot
skip), against the raw write at 10,000. The figure per version is the ratio of medians
(store / raw), which load on the machine moves far less than either.

For each version (this checkout, and ``--base`` checked out in a temporary git worktree and
imported from there) a worker process builds the same data folder and times, through the
dashboard (Flask's test client, no network):

- add: POST /memories/ with a new fact (the dashboard's add, duplicates checked),
- list page: GET /memories/ (the full page),
- search page: GET /memories/?q=coffee (the htmx partial),
- extraction of one thread: POST /conversations/extract/<id> (the rules, no LLM).

The similarity model is loaded before the first round in both (as on a dashboard that has run
a while), so a round never pays for loading it.

The two workers run round by round, interleaved, so load on a shared machine hits both; the
figure is each one's median over the rounds and the ratio is this checkout / base. Prints
figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORKER = r"""
import json, sys, time, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from webapp import create_app
from webapp.settings import Settings
from webapp.stores import ConversationStore, MemoryStore

count = int(sys.argv[2])
folder = Path(tempfile.mkdtemp()) / "data"
base = Settings.from_env(environ={}, options_file=folder / "none.json", cwd=folder.parent)
values = {f: getattr(base, f) for f in base.__dataclass_fields__}
values.update(memory_max_items=count * 4, memory_max_chars=count * 400)
settings = Settings(**values).with_data_dir(folder)
folder.mkdir(parents=True)
store = MemoryStore.from_settings(settings).init()
topics = ["coffee", "tea", "the garden", "the car", "school", "the dog", "music", "Wi-Fi"]
store.import_records([
    {"id": f"m{i:06d}", "content": f"Fact number {i} is about {topics[i % 8]} and item {i * 7}.",
     "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z"}
    for i in range(count)
], actor="bench")
conversations = ConversationStore.from_settings(settings)
app = create_app(settings)
app.config.update(TESTING=True, WTF_CSRF_ENABLED=False)
client = app.test_client()
client.get("/memories/")
# The similarity model loads in the background on first use: load it now in both versions, so
# no round pays for it (the figures are of the model in use, as on a dashboard running a while).
try:
    from webapp.attention.semantic import semantic_index
except ImportError:  # a version before issue 45's layout (webapp.curation)
    from webapp.curation.semantic import semantic_index
semantic_index(settings.memory_file).judge()
n = 0
for line in sys.stdin:
    n += 1
    timings = {}
    start = time.perf_counter()
    answer = client.post("/memories/", data={"content": f"Likes blend {n} of oolong {n * 13}.",
                                              "category": "preference", "person": "household"},
                         headers={"HX-Request": "true"})
    timings["add"] = time.perf_counter() - start
    assert answer.status_code < 400, answer.status_code
    start = time.perf_counter()
    assert client.get("/memories/").status_code == 200
    timings["list page"] = time.perf_counter() - start
    start = time.perf_counter()
    assert client.get("/memories/?q=coffee", headers={"HX-Request": "true"}).status_code == 200
    timings["search page"] = time.perf_counter() - start
    thread = f"cli:bench-{n}"
    conversations.add_exchange(thread, f"Remember that I water the plants every {n} days.", "Ok.")
    start = time.perf_counter()
    answer = client.post(f"/conversations/extract/{thread}", headers={"HX-Request": "true"})
    timings["extract one thread"] = time.perf_counter() - start
    assert answer.status_code < 400, answer.status_code
    print(json.dumps(timings), flush=True)
"""


STORES_WORKER = r"""
import json, random, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import webapp  # this version's, before the helpers below put this checkout on the path
sys.path.insert(1, sys.argv[3])
from bench_anchors import RawStore, conversation_document, memory_records, memory_store, raw_write
from _common import settings_for, settle
from webapp.curator import Curator
from webapp.stores import ConversationStore

folder = Path(tempfile.mkdtemp())
probes = {}

def exchange_probe(name, threads):
    path = folder / name / "conversations.json"
    path.parent.mkdir()
    data = conversation_document(threads)
    path.write_bytes(json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8") + b"\n")
    settle(path)
    store = ConversationStore(path, max_turns=20, max_chars=100_000, max_age_days=30,
                              lock_timeout=30)
    store.list_conversations()
    keys, rng, copy = list(data), random.Random(5), path.with_name("copy.json")
    def exchange():
        store.add_exchange(rng.choice(keys), "And tomorrow's tea?", "Rain after 15:00.")
    def rewrite():
        payload = path.read_bytes()
        start = time.perf_counter()
        raw_write(copy, payload, sync=True)
        return time.perf_counter() - start
    return exchange, rewrite

def add_probe(count):
    records = memory_records(count)
    store = memory_store(folder / f"m{count}" / "memories.json", records)
    raw = RawStore(folder / f"m{count}" / "raw.json", records, sync=True)
    record = dict(records[0], id="ffffffffffff")
    n = iter(range(10**9))
    def add():
        store.add(f"Probe {next(n)}: likes oolong tea 烏龍茶", category="preference")
    def rewrite():
        start = time.perf_counter()
        raw.add(dict(record))
        return time.perf_counter() - start
    return add, rewrite

def remember_probe(count):
    data = folder / f"curated{count}"
    settings = settings_for(data, count * 4)
    memory_store(settings.memory_file, memory_records(count))
    curator = Curator.from_settings(settings, actor="bench")
    curator.semantic.judge()  # the similarity model loaded, as on a door running a while
    n = iter(range(10**9))
    def remember():
        curator.remember(f"Probe {next(n)}: likes oolong tea 烏龍茶 number {next(n) * 7}")
    return remember, None

def embed_probe(curator):
    # What remember cannot skip: its new text embedded by the model (the check by meaning)
    n = iter(range(10**9))
    def embed():
        curator.semantic.embed_one(f"Alone {next(n)}: likes oolong tea 烏龍茶 number {next(n)}")
    return embed, None

probes["add_exchange 10 MB"] = exchange_probe("big", 1572)
probes["add_exchange household"] = exchange_probe("home", 20)
for count in (100, 1_000, 10_000, 50_000):
    probes[f"MemoryStore.add {count:,}"] = add_probe(count)
for count in (100, 1_000, 10_000, 50_000):
    probes[f"Curator.remember {count:,}"] = remember_probe(count)
probes["embed one text (model)"] = embed_probe(Curator.from_settings(
    settings_for(folder / "curated10000", 40_000), actor="bench"))
print("ready", flush=True)
for line in sys.stdin:
    timings = {}
    for name, (run, raw) in probes.items():
        start = time.perf_counter()
        run()
        timings[name] = time.perf_counter() - start
        if raw is not None:
            timings[name + " (raw)"] = raw()
    print(json.dumps(timings), flush=True)
"""


def start(code_root: Path, count: int, stores: bool = False) -> subprocess.Popen[str]:
    code = STORES_WORKER if stores else WORKER
    return subprocess.Popen(
        [sys.executable, "-c", code, str(code_root), str(count), str(ROOT / "benchmarks")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=code_root,
    )


def round_of(worker: subprocess.Popen[str]) -> dict[str, float]:
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.write("go\n")
    worker.stdin.flush()
    line = worker.stdout.readline()
    if not line:
        raise SystemExit("a worker stopped; run it by hand to see why")
    found: dict[str, float] = json.loads(line)
    return found


def ready(worker: subprocess.Popen[str]) -> None:
    assert worker.stdout is not None
    if worker.stdout.readline().strip() != "ready":
        raise SystemExit("a worker stopped; run it by hand to see why")


def print_pages(figures: dict[str, dict[str, list[float]]]) -> None:
    for what in figures["now"]:
        before = statistics.median(figures["base"][what]) * 1000
        after = statistics.median(figures["now"][what]) * 1000
        print(f"  {what:<20} {before:9.2f} {after:9.2f}   ratio {after / before:5.2f}")


def print_stores(figures: dict[str, dict[str, list[float]]]) -> None:
    """Each probe's median, its raw anchor's and their ratio, base then this checkout."""
    print(
        f"  {'':<28} {'base ms':>9} {'raw':>7} {'ratio':>6}   {'now ms':>8} {'raw':>7} {'ratio':>6}"
    )
    for what in figures["now"]:
        if what.endswith(" (raw)"):
            continue
        cells = []
        for name in ("base", "now"):
            own = statistics.median(figures[name][what]) * 1000
            raw_times = figures[name].get(what + " (raw)")
            if raw_times is None and what.startswith("Curator.remember"):
                # the raw write of as many memories (the add's own anchor)
                count = what.rsplit(" ", 1)[1]
                raw_times = figures[name].get(f"MemoryStore.add {count} (raw)")
            if raw_times is None and what.startswith("embed one"):
                raw_times = figures[name].get("MemoryStore.add 10,000 (raw)")
            raw = statistics.median(raw_times) * 1000 if raw_times else float("nan")
            cells.append(f"{own:9.2f} {raw:7.2f} {own / raw:5.2f}×")
        print(f"  {what:<28} {cells[0]}   {cells[1]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="3add4d8", help="the earlier commit (before issue 32)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--stores", action="store_true", help="the stores' hot paths (issue 46)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp())
    base_tree = scratch / "base"
    subprocess.run(
        ["git", "worktree", "add", "--detach", "-q", str(base_tree), args.base],
        cwd=ROOT,
        check=True,
    )
    try:
        workers = {
            "base": start(base_tree, args.memories, args.stores),
            "now": start(ROOT, args.memories, args.stores),
        }
        if args.stores:
            for worker in workers.values():
                ready(worker)
        figures: dict[str, dict[str, list[float]]] = {name: {} for name in workers}
        for _ in range(args.rounds):
            for name, worker in workers.items():
                for what, seconds in round_of(worker).items():
                    figures[name].setdefault(what, []).append(seconds)
        for worker in workers.values():
            assert worker.stdin is not None
            worker.stdin.close()
            worker.wait(timeout=60)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base_tree)], cwd=ROOT)
        shutil.rmtree(scratch, ignore_errors=True)
    if args.stores:
        print(
            f"{args.rounds} rounds, median ms and its raw anchor's (base {args.base} / this checkout):"
        )
        print_stores(figures)
        return
    print(
        f"{args.memories} memories, {args.rounds} rounds, median ms "
        f"(base {args.base} / this checkout):"
    )
    print_pages(figures)


if __name__ == "__main__":
    main()
