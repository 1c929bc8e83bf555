"""The bar-level figures of issue 32 for this checkout against an earlier commit, in one run.

    .venv/bin/python benchmarks/bench_before_after.py [--base 3add4d8] [--rounds 7] [--memories 2000]

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


def start(code_root: Path, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, str(code_root), str(count)],
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="3add4d8", help="the earlier commit (before issue 32)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--memories", type=int, default=2000)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp())
    base_tree = scratch / "base"
    subprocess.run(
        ["git", "worktree", "add", "--detach", "-q", str(base_tree), args.base],
        cwd=ROOT,
        check=True,
    )
    try:
        workers = {"base": start(base_tree, args.memories), "now": start(ROOT, args.memories)}
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
    print(
        f"{args.memories} memories, {args.rounds} rounds, median ms "
        f"(base {args.base} / this checkout):"
    )
    for what in figures["now"]:
        before = statistics.median(figures["base"][what]) * 1000
        after = statistics.median(figures["now"][what]) * 1000
        print(f"  {what:<20} {before:9.2f} {after:9.2f}   ratio {after / before:5.2f}")


if __name__ == "__main__":
    main()
