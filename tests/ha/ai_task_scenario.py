"""The real Home Assistant run of tests/ha/test_ai_task_provider.py, inside a private network
namespace: the fake Ollama server (structured output), Home Assistant booted in the chroot
(boot_ai_task.py) with ``http`` on 127.0.0.1, a small proxy standing in for the Supervisor
(``/core/api/*`` → Home Assistant's ``/api/*`` with an administrator's long-lived token, as the
Supervisor does for an add-on with ``homeassistant_api``), then ``memory-curator extract`` with
the provider ``homeassistant``. Writes what each saw to OUT/result.json.

    python -m tests.ha.ai_task_scenario HA_ROOT DATA_DIR OUT THREAD
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.ha.fake_ollama_structured import MODEL, StructuredOllama
from tests.support import REPO
from tests.support.cli import clean_env
from tests.support.mcp_http import free_port

HERE = Path(__file__).resolve().parent
HA_PYTHON = "/opt/ha/bin/python"
HA_TIMEOUT = 240
SUPERVISOR_TOKEN = "the-add-ons-supervisor-token"
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
http:
  server_host: 127.0.0.1
  server_port: {port}
api:
logger:
  default: warning
  logs:
    homeassistant.components.ai_task: debug
    homeassistant.components.ollama: debug
"""


class SupervisorProxy(ThreadingHTTPServer):
    """``/core/api/*`` → ``{ha}/api/*`` with Home Assistant's token; the caller must present
    the add-on's SUPERVISOR_TOKEN. Keeps what it forwarded."""

    daemon_threads = True

    def __init__(self, ha: str, token: str) -> None:
        super().__init__(("127.0.0.1", 0), _Proxy)
        self.ha, self.token = ha, token
        self.forwarded: list[dict[str, Any]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Proxy(BaseHTTPRequestHandler):
    server: SupervisorProxy

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Authorization") != f"Bearer {SUPERVISOR_TOKEN}":
            return self._send(401, b"401: Unauthorized")
        if not self.path.startswith("/core/api/"):
            return self._send(404, b"404: Not Found")
        target = self.server.ha + "/api/" + self.path[len("/core/api/") :]
        request = urllib.request.Request(
            target,
            data=body,
            method="POST",
            headers={
                "Authorization": f"Bearer {self.server.token}",
                "Content-Type": self.headers.get("Content-Type", "application/json"),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as answer:
                status, data = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, data = error.code, error.read()
        self.server.forwarded.append({"path": self.path, "status": status})
        self._send(status, data)

    def _send(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _ready_line(process: subprocess.Popen[str], lines: list[str]) -> dict[str, Any] | None:
    """Read Home Assistant's output until ``READY {json}`` (kept in ``lines``)."""
    assert process.stdout is not None
    for line in process.stdout:
        lines.append(line)
        if line.startswith("READY "):
            found: dict[str, Any] = json.loads(line[len("READY ") :])
            return found
    return None


def main() -> None:
    ha_root, data_dir, out = (Path(arg) for arg in sys.argv[1:4])
    thread = sys.argv[4]
    out.mkdir(parents=True, exist_ok=True)
    model = StructuredOllama().start()
    port = free_port()
    inside = Path(tempfile.mkdtemp(prefix="memory-curator-ai-task-", dir=ha_root / "tmp"))
    (inside / "config").mkdir()
    (inside / "config" / "configuration.yaml").write_text(CONFIGURATION.format(port=port))
    shutil.copy(HERE / "boot_ai_task.py", inside / "boot_ai_task.py")
    there = "/" + str(inside.relative_to(ha_root))
    started = time.monotonic()
    lines: list[str] = []
    result: dict[str, Any] = {}
    ha = subprocess.Popen(
        [
            shutil.which("chroot") or "/usr/sbin/chroot",
            str(ha_root),
            HA_PYTHON,
            f"{there}/boot_ai_task.py",
            f"{there}/config",
            model.url,
            MODEL,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8"},
    )
    killer = threading.Timer(HA_TIMEOUT, ha.kill)
    killer.start()
    try:
        ready = _ready_line(ha, lines)
        result["ready"] = ready
        if ready is not None:
            proxy = SupervisorProxy(f"http://127.0.0.1:{port}", ready["token"])
            threading.Thread(target=proxy.serve_forever, daemon=True).start()
            extract = subprocess.run(
                [sys.executable, "-m", "webapp", "extract", "--conversation", thread],
                cwd=REPO,
                env=clean_env(
                    MEMORY_DATA_DIR=str(data_dir),
                    MEMORY_LLM_PROVIDER="homeassistant",
                    MEMORY_HA_AI_TASK_ENTITY=ready["entity"],
                    MEMORY_SUPERVISOR_URL=proxy.url,
                    SUPERVISOR_TOKEN=SUPERVISOR_TOKEN,
                    MEMORY_LLM_TIMEOUT="60",
                ),
                capture_output=True,
                text=True,
                timeout=180,
            )
            result["extract"] = {
                "returncode": extract.returncode,
                "stdout": extract.stdout,
                "stderr": extract.stderr,
            }
            result["forwarded"] = proxy.forwarded
            proxy.shutdown()
        (inside / "config" / "done").write_text("")
        assert ha.stdout is not None
        lines.extend(ha.stdout)
        ha.wait(timeout=60)
    finally:
        killer.cancel()
        if ha.poll() is None:
            ha.kill()
        model.shutdown()
        shutil.rmtree(inside, ignore_errors=True)  # the chroot keeps nothing of a run
    output = "".join(lines)
    (out / "home-assistant.log").write_text(output)
    done = [line for line in lines if line.startswith("RESULT ")]
    result.update(
        seconds=round(time.monotonic() - started, 1),
        home_assistant=json.loads(done[-1][len("RESULT ") :]) if done else None,
        chat_requests=model.requests,
        unknown_requests=model.unknown,
    )
    (out / "result.json").write_text(json.dumps(result, indent=1))
    os.sync()


if __name__ == "__main__":
    main()
