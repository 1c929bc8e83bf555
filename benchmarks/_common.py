"""Small helpers the benchmark scripts share (run them as ``python benchmarks/<script>.py``:
this folder is then first on ``sys.path``)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from webapp.settings import Settings  # noqa: E402


def settle(path: Path) -> None:
    """Move the mtime into the past so the reader cache trusts it (a just-written file is
    re-checked byte for byte)."""
    past = time.time() - 60
    os.utime(path, (past, past))


def settings_for(data_dir: Path, count: int) -> Settings:
    """Settings for ``data_dir/data`` with caps that hold ``count`` memories twice over."""
    base = Settings.from_env(environ={}, options_file=data_dir / "no-options.json", cwd=data_dir)
    values = {f: getattr(base, f) for f in base.__dataclass_fields__}
    values.update(memory_max_items=count * 2, memory_max_chars=count * 200)
    return Settings(**values).with_data_dir(data_dir / "data")


def log_line(out: Path, record: dict) -> None:
    """Append one JSON line to a worker's log (each process writes its own file)."""
    with open(out, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def lock_deleter(
    data_dir: Path, until: float, out: Path, every: float = 0.002, pattern: str = "*.lock"
) -> None:
    """``rm`` the lock files matching ``pattern`` under ``data_dir`` over and over until
    ``until``; logs how many it deleted (the stores must not lose a change because of it)."""
    deleted = 0
    while time.time() < until:
        for lock in data_dir.rglob(pattern):
            try:
                lock.unlink()
                deleted += 1
            except FileNotFoundError:
                pass
        time.sleep(every)
    log_line(out, {"op": "lock-deletions", "count": deleted})
