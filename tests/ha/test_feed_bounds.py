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


SEND_LOOP = """
import asyncio, json, logging, sys
sys.path.insert(0, sys.argv[1])
from custom_components.memory_curator import feed

logged = []
handler = logging.Handler()
handler.emit = lambda record: logged.append(record.getMessage())
feed._LOGGER.addHandler(handler)


class AddOn:  # answers as the add-on's /api/assist/v1/exchanges does
    async def exchange(self, payload):
        if payload["key"] == "late":
            return {"api": 1, "stored": False, "expired": True}
        return {"api": 1, "stored": True}


class Store:
    def async_delay_save(self, data, delay):
        pass


async def main():
    one = feed.ChatLogFeeder.__new__(feed.ChatLogFeeder)
    one._queue = [{"payload": {"key": k, "at": "2026-11-01T08:00:00+00:00"}, "queued": 0}
                  for k in ("late", "fresh")]
    one._client, one._store, one._wake = AddOn(), Store(), asyncio.Event()
    one.dropped = one.rejected = one.sent = one.expired = 0
    one.last_error = None
    one._wake.set()
    loop = asyncio.create_task(one._send_loop())
    while one._queue:
        await asyncio.sleep(0.01)
    loop.cancel()
    print(json.dumps({"sent": one.sent, "expired": one.expired, "logged": logged}))


asyncio.run(main())
"""


def _run_in_home_assistants_python(script: str) -> dict[str, object]:
    inside = Path(tempfile.mkdtemp(prefix="memory-curator-feed-", dir=HA_ROOT / "tmp"))
    try:
        shutil.copytree(
            REPO / "custom_components", inside / "custom_components", dirs_exist_ok=True
        )
        (inside / "script.py").write_text(script)
        there = "/" + str(inside.relative_to(HA_ROOT))
        run = subprocess.run(
            [shutil.which("chroot") or "/usr/sbin/chroot", str(HA_ROOT), "/opt/ha/bin/python"]
            + [f"{there}/script.py", there],
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": "/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8"},
        )
    finally:
        shutil.rmtree(inside, ignore_errors=True)
    assert run.returncode == 0, run.stderr
    seen: dict[str, object] = json.loads(run.stdout.splitlines()[-1])
    return seen


def test_an_exchange_the_add_on_did_not_keep_as_too_old_is_counted_and_logged_not_sent() -> None:
    """The add-on answers ``stored: false, expired: true`` for an exchange older than it keeps
    conversations (a long outage): the feed drops it from the queue, but says so in the log and
    counts it (the diagnostics show ``expired``), never as sent."""
    why = ha_ready()
    assert why is None, why
    seen = _run_in_home_assistants_python(SEND_LOOP)
    assert seen["sent"] == 1
    assert seen["expired"] == 1
    logged = seen["logged"]
    assert isinstance(logged, list) and len(logged) == 1
    assert "did not keep a conversation exchange said at 2026-11-01" in logged[0]
