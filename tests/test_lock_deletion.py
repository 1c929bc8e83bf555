"""The lock file deleted over and over while the real dashboard and writer processes change
memories: every acknowledged add, edit and delete is in the file afterwards."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "lock_deletion.py"


def test_deleting_the_lock_file_repeatedly_loses_no_acknowledged_change(tmp_path):
    root = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--seconds", "3", "--writers", "3", "--keep", str(root)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every acknowledged change is in the file" in done.stdout
    figures = dict(
        part.rsplit(" ", 1)
        for part in done.stdout.split("checked: ")[1].splitlines()[0].split(", ")
    )
    assert int(figures["adds"]) > 0 and int(figures["lock deletions"]) > 0
    assert figures["lost"] == figures["reverted"] == figures["undone"] == "0"

    spec = importlib.util.spec_from_file_location("lock_deletion", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    data, logs = root / "data", root / "logs"
    memories = json.loads((data / "memories.json").read_text(encoding="utf-8"))
    (data / "memories.json").write_text(json.dumps(memories[1:]), encoding="utf-8")
    _, failures = module.check(data, logs)
    assert failures, "a memory dropped behind the writers' back must be caught"
