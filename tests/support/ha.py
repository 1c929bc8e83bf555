"""Where the real Home Assistant chroot is, and whether its harness can run on this machine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support import REPO
from webapp.curator import Curator
from webapp.settings import Settings

HA_ROOT = Path(os.environ.get("MEMORY_HA_ROOT", "/var/cache/memory-curator/ha-root"))


def ha_ready() -> str | None:
    """Why the harness cannot run here, or None."""
    if not (HA_ROOT / "opt/ha/bin/python").exists():
        return f"no Home Assistant chroot in {HA_ROOT}: run scripts/ha-root.sh {HA_ROOT}"
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("chroot"):
        return "the harness needs root, unshare and chroot (a private network namespace)"
    return None


NAMESPACE = (
    "ip link set lo up && ip link set lo multicast on && "
    'ip route add 224.0.0.0/4 dev lo && exec "$0" -m tests.ha.assist_scenario "$@"'
)
PEANUTS, CELLO, BINS = "Is allergic to peanuts.", "Plays the cello.", "The bins go out on Thursday."


def run_scenario(data: Path, out: Path, bench_turns: int = 0) -> dict[str, Any]:
    """Run the Assist scenario (tests/ha/assist_scenario.py) in its own network namespace; what it wrote to OUT/result.json."""
    run = subprocess.run(
        ["unshare", "--net", "--", "sh", "-c", NAMESPACE, sys.executable]
        + [str(HA_ROOT), str(data), str(out), str(bench_turns)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    result: dict[str, Any] = json.loads((out / "result.json").read_text())
    return result


def seed(data: Path) -> dict[str, str]:
    """Two people with a private memory each, and one of the household's."""
    curator = Curator.from_settings(
        Settings.from_env({"MEMORY_DATA_DIR": str(data)}, options_file=data / "none.json")
    )
    alice = curator.add_person("Alice").id
    bob = curator.add_person("Bob").id
    curator.remember(PEANUTS, person=alice)
    curator.remember(CELLO, person=bob)
    curator.remember(BINS)
    return {"Alice": alice, "Bob": bob}
