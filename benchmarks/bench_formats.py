"""What the format sidecar (``webapp/stores/formats.py``) costs a write, against an earlier commit.

    .venv/bin/python benchmarks/bench_formats.py [--base 5346e38] [--rounds 5] [--memories 2000]

For each version (this checkout, and ``--base`` in a temporary git worktree, imported from
there) a worker process makes the same memories file (no sidecar, as every release before
sidecars left it) and times, through ``MemoryStore``:

- first write: the first add (here it also writes ``memories.json.format``),
- add, one after another: the median of 40 adds that follow (here each reads the sidecar
  first, a stat while it is unchanged),
- a start: ``MemoryStore(...).init()`` of the file (here it checks the sidecar).

The workers run round by round, interleaved, so load on a shared machine hits both; the figure
is each one's median over the rounds and the ratio is this checkout / base. Prints figures;
asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORKER = r"""
import json, statistics, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from webapp.stores import MemoryStore
from webapp.stores.jsonbytes import encode

count = int(sys.argv[2])
folder = Path(tempfile.mkdtemp())
path = folder / "memories.json"
stamp = "2026-01-01T00:00:00.000Z"
path.write_bytes(encode([
    {"id": f"m{n:06d}", "content": f"topic {n} coffee", "createdAt": stamp,
     "updatedAt": stamp, "category": "general"}
    for n in range(count)
]))
caps = dict(max_items=10**7, max_chars=10**10, lock_timeout=60)
store = MemoryStore(path, **caps)
store.get_all()
start = time.perf_counter()
store.add("the first write")
first = time.perf_counter() - start
adds = []
for n in range(40):
    start = time.perf_counter()
    store.add(f"fact number {n}")
    adds.append(time.perf_counter() - start)
starts = []
for _ in range(10):
    start = time.perf_counter()
    MemoryStore(path, **caps).init()
    starts.append(time.perf_counter() - start)
print(json.dumps({
    "first write": first * 1000,
    "add, one after another": statistics.median(adds) * 1000,
    "a start (init)": statistics.median(starts) * 1000,
}))
"""


def _worker(tree: Path, memories: int) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(tree), str(memories)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tree,
    )
    return dict(json.loads(done.stdout))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="5346e38")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--memories", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        base = Path(temp) / "base"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.base],
            check=True,
            capture_output=True,
        )
        try:
            runs: dict[str, list[dict[str, float]]] = {"base": [], "this": []}
            for _ in range(args.rounds):
                runs["base"].append(_worker(base, args.memories))
                runs["this"].append(_worker(ROOT, args.memories))
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
                check=False,
                capture_output=True,
            )
    print(
        f"{args.memories} memories, {args.rounds} rounds, median ms "
        f"(base {args.base} / this checkout):"
    )
    for name in runs["base"][0]:
        before = statistics.median(run[name] for run in runs["base"])
        after = statistics.median(run[name] for run in runs["this"])
        print(f"  {name:<24} {before:9.2f} {after:9.2f}   ratio {after / before:5.2f}")


if __name__ == "__main__":
    main()
