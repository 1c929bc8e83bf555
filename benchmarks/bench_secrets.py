"""How long ``find_secrets`` takes per sentence, this detector against an earlier one, in one run.

    .venv/bin/python benchmarks/bench_secrets.py                 # against 0f7033b (before issue 35)
    .venv/bin/python benchmarks/bench_secrets.py --before HEAD~3 --rounds 50

The detector runs on every add, edit and import line, so it must stay fast. Both versions
read the same sentences (``tests/data/secrets/secrets.dev.json``, the development file only)
in alternating rounds, so a busy machine slows both alike; the figure is the median round.
The earlier version is read from git (``webapp/sensitive/secrets*.py`` at ``--before``) and loaded
beside this one. Also prints what each finds on the file (recall and false refusals, dev).
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import webapp  # noqa: E402
from webapp.sensitive.secrets import find_secrets  # noqa: E402

DEV = ROOT / "tests" / "data" / "secrets" / "secrets.dev.json"
BEFORE = "0f7033b"  # the commit before issue 35's detector change


def earlier_detector(rev: str) -> Callable[[str], Any]:
    """``find_secrets`` of ``webapp/sensitive/secrets.py`` at git revision ``rev``, with the
    ``webapp/sensitive_*.py`` modules it imports at that revision too (not today's)."""
    names = subprocess.run(
        ["git", "ls-tree", "--name-only", rev, "webapp/"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    modules = [
        Path(name).stem for name in names if re.fullmatch(r"webapp/sensitive/secrets\w*\.py", name)
    ]
    folder = Path(tempfile.mkdtemp(prefix="sensitive-before-"))
    for module in modules:
        source = subprocess.run(
            ["git", "show", f"{rev}:webapp/{module}.py"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for other in modules:  # its sibling modules as they were at ``rev``
            source = re.sub(rf"from \.{other}\b", f"from .{other}_before", source)
        (folder / f"{module}_before.py").write_text(source, "utf-8")
    # Modules of the webapp package, so their relative imports (``.text``) resolve.
    webapp.__path__.append(str(folder))
    earlier = importlib.import_module("webapp.sensitive_before")
    found: Callable[[str], Any] = earlier.find_secrets
    return found


def one_round(detect: Callable[[str], Any], texts: list[str]) -> float:
    started = time.perf_counter()
    for text in texts:
        detect(text)
    return (time.perf_counter() - started) / len(texts) * 1e6


def figures(detect: Callable[[str], Any], cases: list[dict[str, Any]]) -> str:
    secrets = [c for c in cases if c["secret"]]
    others = [c for c in cases if not c["secret"]]
    found = sum(detect(c["text"]) is not None for c in secrets)
    flagged = sum(detect(c["text"]) is not None for c in others)
    return f"recall {found}/{len(secrets)}, false refusals {flagged}/{len(others)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help="git revision of the earlier detector")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args(argv)
    cases: list[dict[str, Any]] = json.loads(DEV.read_text("utf-8"))
    texts = [c["text"] for c in cases]
    before = earlier_detector(args.before)
    detectors = {f"before ({args.before})": before, "now": find_secrets}
    times: dict[str, list[float]] = {name: [] for name in detectors}
    for detect in detectors.values():
        one_round(detect, texts)  # warm the regex caches
    for _ in range(args.rounds):
        for name, detect in detectors.items():
            times[name].append(one_round(detect, texts))
    print(f"find_secrets over {DEV.name} ({len(texts)} sentences), median of {args.rounds} rounds")
    for name, detect in detectors.items():
        median = statistics.median(times[name])
        print(f"  {name:<20} {median:7.1f} µs per sentence   {figures(detect, cases)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
