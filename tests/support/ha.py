"""Where the real Home Assistant chroot is, and whether its harness can run on this machine."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

HA_ROOT = Path(os.environ.get("MEMORY_HA_ROOT", "/var/cache/memory-curator/ha-root"))


def ha_ready() -> str | None:
    """Why the harness cannot run here, or None."""
    if not (HA_ROOT / "opt/ha/bin/python").exists():
        return f"no Home Assistant chroot in {HA_ROOT}: run scripts/ha-root.sh {HA_ROOT}"
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("chroot"):
        return "the harness needs root, unshare and chroot (a private network namespace)"
    return None
