"""The real Home Assistant run of tests/ha, started by the test inside a private network
namespace (only the loopback device, so nothing leaves 127.0.0.1): ``memory-curator serve``
on the host's Python, the fake Ollama server, and Home Assistant booted in the chroot with its
own Python (boot_ha.py), all three on 127.0.0.1. Writes what each saw to OUT/result.json.

    python -m tests.ha.scenario HA_ROOT DATA_DIR OUT
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from tests.ha.fake_ollama import MODEL, FakeOllama
from tests.support import REPO
from tests.support.cli import clean_env
from tests.support.mcp_http import free_port

HERE = Path(__file__).resolve().parent
HA_PYTHON = "/opt/ha/bin/python"
HA_TIMEOUT = 240  # seconds for Home Assistant to boot, be configured and answer one turn
CONFIGURATION = """\
homeassistant:
  name: Memory test
  latitude: 52.37
  longitude: 4.89
  elevation: 0
  unit_system: metric
  time_zone: UTC
  country: NL
  currency: EUR
  language: en
logger:
  default: warning
  logs:
    homeassistant.components.mcp: debug
    homeassistant.components.conversation: debug
"""


def serve(
    data_dir: Path, log: Path, port: int | None = None, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """``memory-curator serve`` on ``port`` (a free one when None), once it answers."""
    port = port or free_port()
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "webapp", "serve", "--port", str(port)],
            cwd=REPO,
            env=clean_env(MEMORY_DATA_DIR=str(data_dir), **(env or {})),
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2):
                return process, base
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(
                    f"memory-curator serve did not start:\n{log.read_text()}"
                ) from None
            time.sleep(0.2)


def main() -> None:
    ha_root, data_dir, out = (Path(arg) for arg in sys.argv[1:4])
    out.mkdir(parents=True, exist_ok=True)
    fake = FakeOllama().start()
    server, base = serve(data_dir, out / "serve.log")
    inside = Path(tempfile.mkdtemp(prefix="memory-curator-ha-", dir=ha_root / "tmp"))
    (inside / "config").mkdir()
    (inside / "config" / "configuration.yaml").write_text(CONFIGURATION)
    shutil.copy(HERE / "boot_ha.py", inside / "boot_ha.py")
    there = "/" + str(inside.relative_to(ha_root))
    started = time.monotonic()
    try:
        ha = subprocess.run(
            [
                shutil.which("chroot") or "/usr/sbin/chroot",
                str(ha_root),
                HA_PYTHON,
                f"{there}/boot_ha.py",
                f"{there}/config",
                base + "/mcp",
                fake.url,
                MODEL,
            ],
            capture_output=True,
            text=True,
            timeout=HA_TIMEOUT,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8"},
        )
        output = ha.stdout + ha.stderr
    except subprocess.TimeoutExpired as exc:
        output = f"Home Assistant took over {HA_TIMEOUT} s\n{exc.stdout or ''}{exc.stderr or ''}"
    finally:
        server.terminate()
        server.wait(timeout=20)
        fake.shutdown()
        ha_log = inside / "config" / "home-assistant.log"
        if ha_log.exists():
            shutil.copy(ha_log, out / "home-assistant-file.log")
        shutil.rmtree(inside, ignore_errors=True)  # the chroot keeps nothing of a run
    lines = [line for line in output.splitlines() if line.startswith("RESULT ")]
    (out / "home-assistant.log").write_text(output)
    result = {
        "seconds": round(time.monotonic() - started, 1),
        "home_assistant": json.loads(lines[-1][len("RESULT ") :]) if lines else None,
        "chat_requests": fake.requests,
        "unknown_requests": fake.unknown,
    }
    (out / "result.json").write_text(json.dumps(result, indent=1))
    os.sync()


if __name__ == "__main__":
    main()
