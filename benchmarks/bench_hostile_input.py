"""How long the text reads every add makes take on long hostile input, this checkout against an
earlier one, beside an ordinary text of the same length (the anchor, measured in the same run).

    .venv/bin/python benchmarks/bench_hostile_input.py                 # against eb46195
    .venv/bin/python benchmarks/bench_hostile_input.py --before HEAD~5

Every add (the dashboard's form and hint, ``manage_memory``, the CLI, ``Curator.remember``)
reads its text for an end (``language.validity``) and for secrets (``sensitive``). A text
that takes seconds is a request that hangs. The earlier checkout is a git worktree of
``--before`` run in its own process; each figure is the best of ``--rounds``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "eb46195"  # main before this change (issue 36, second round)

TEXTS = {
    "ordinary text (anchor)": ("I am in Lisbon and the kids are fine " * 300)[:10_000],
    "10,000 digits": "1" * 10_000,
    "10,000 一": "一" * 10_000,
    "12一 x 3,333": "12一" * 3_333,
    "code 1 x 1,400": "code 1 " * 1_400,
    "door code 12 x 750": "door code 12 " * 750,
}


def measure(rounds: int) -> dict[str, dict[str, float]]:
    """Milliseconds per text for the end reader and the secrets detector of the importing tree."""
    from webapp.language.validity import expires_at
    from webapp.sensitive.secrets import find_secrets

    now = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
    readers = {
        "end": lambda text: expires_at(text, now, "Europe/Berlin"),
        "secrets": find_secrets,
    }
    figures: dict[str, dict[str, float]] = {}
    for name, text in TEXTS.items():
        figures[name] = {}
        for reader_name, read in readers.items():
            best = float("inf")
            for _ in range(rounds):
                started = time.perf_counter()
                read(text)
                best = min(best, time.perf_counter() - started)
            figures[name][reader_name] = best * 1000
    return figures


def in_tree(tree: Path, rounds: int) -> dict[str, dict[str, float]]:
    code = (
        f"import sys, json; sys.path.insert(0, {str(tree)!r}); sys.path.insert(1, {str(ROOT)!r});"
        "import benchmarks.bench_hostile_input as b;"
        f"print(json.dumps(b.measure({rounds})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tree, capture_output=True, text=True, check=True
    )
    figures: dict[str, dict[str, float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help="the earlier git revision")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        old = Path(scratch) / "before"
        subprocess.run(
            ["git", "worktree", "add", "-q", "--detach", str(old), args.before],
            cwd=ROOT,
            check=True,
        )
        try:
            before = in_tree(old, args.rounds)
            now = in_tree(ROOT, args.rounds)
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=False
            )
    anchor = "ordinary text (anchor)"
    print(f"best of {args.rounds}, ms; ratio = this text / the anchor in the same tree")
    print(f"{'text':24} {'reader':8} {'before ' + args.before:>18} {'now':>18}")
    for name in TEXTS:
        for reader in ("end", "secrets"):
            then, current = before[name][reader], now[name][reader]
            then_ratio = then / before[anchor][reader]
            now_ratio = current / now[anchor][reader]
            print(
                f"{name:24} {reader:8} {then:9.1f} (x{then_ratio:6.1f}) {current:9.1f}"
                f" (x{now_ratio:6.1f})"
            )


if __name__ == "__main__":
    main()
