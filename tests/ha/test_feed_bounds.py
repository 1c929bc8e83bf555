"""The integration's queue bound (custom_components/memory_curator/feed.py, ``_trim``): at most
1,000 exchanges and 7 days; beyond, the oldest go, with a log line and a count that the
diagnostics show. A unit test of that one function, run in Home Assistant's own Python (the
chroot of tests/ha; the module imports Home Assistant), on a feeder built without a Home
Assistant: filling a real queue to 1,000 would take a thousand real turns."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.support import REPO
from tests.support.ha import HA_ROOT, ha_ready

SCRIPT = """
import json, logging, sys, time
sys.path.insert(0, sys.argv[1])
from custom_components.memory_curator import feed

logged = []
handler = logging.Handler()
handler.emit = lambda record: logged.append(record.getMessage())
feed._LOGGER.addHandler(handler)

def feeder(items):
    one = feed.ChatLogFeeder.__new__(feed.ChatLogFeeder)
    one._queue, one.dropped = items, 0
    return one

now = time.time()
full = feeder([{"payload": {"key": str(n)}, "queued": now} for n in range(1005)])
full._trim()
week = feed.QUEUE_MAX_AGE
old = feeder([{"payload": {"key": "old"}, "queued": now - week - 60},
              {"payload": {"key": "new"}, "queued": now - week + 60}])
old._trim()
print(json.dumps({
    "full": {"kept": len(full._queue), "first": full._queue[0]["payload"]["key"],
             "dropped": full.dropped},
    "old": {"kept": [i["payload"]["key"] for i in old._queue], "dropped": old.dropped},
    "logged": logged,
}))
"""


def test_the_queue_keeps_1000_exchanges_or_7_days_and_counts_what_it_drops() -> None:
    why = ha_ready()
    assert why is None, why
    inside = Path(tempfile.mkdtemp(prefix="memory-curator-feed-", dir=HA_ROOT / "tmp"))
    try:
        shutil.copytree(
            REPO / "custom_components", inside / "custom_components", dirs_exist_ok=True
        )
        (inside / "bounds.py").write_text(SCRIPT)
        there = "/" + str(inside.relative_to(HA_ROOT))
        run = subprocess.run(
            [
                shutil.which("chroot") or "/usr/sbin/chroot",
                str(HA_ROOT),
                "/opt/ha/bin/python",
                f"{there}/bounds.py",
                there,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": "/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8"},
        )
    finally:
        shutil.rmtree(inside, ignore_errors=True)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout.splitlines()[-1])
    assert seen["full"] == {"kept": 1000, "first": "5", "dropped": 5}  # the oldest five went
    assert seen["old"] == {"kept": ["new"], "dropped": 1}
    assert len(seen["logged"]) == 2
    assert "dropped the 5 oldest unsent" in seen["logged"][0]
