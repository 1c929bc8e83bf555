"""The real Home Assistant run of tests/ha/test_assist.py, inside a private network namespace
(only the loopback device): ``memory-curator serve`` (with an MCP token), the fake model
(fake_assist_model.py), a control server for Home Assistant's side to ask the host for what
only the host can do (link a Home Assistant user to a person, choose whose memory a device
answers with, stop and start the memory server), and Home Assistant booted in the chroot with
its own Python (boot_assist.py) and the integration copied into its ``custom_components/``, as a
user installs it. Writes what each saw to OUT/result.json.

    python -m tests.ha.assist_scenario HA_ROOT DATA_DIR OUT [BENCH_TURNS]
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.ha.fake_assist_model import FakeAssistModel
from tests.ha.fake_ollama import MODEL
from tests.ha.scenario import CONFIGURATION, HA_PYTHON, serve
from tests.support import REPO
from tests.support.mcp_http import free_port
from webapp.curator import Curator
from webapp.settings import Settings

HERE = Path(__file__).resolve().parent
HA_TIMEOUT = 420  # seconds for Home Assistant to boot and go through every phase
LOGS = "    custom_components.memory_curator: debug\n"


class Control(ThreadingHTTPServer):
    """What boot_assist.py asks of the host, one POST each: ``/link`` ``{"user_id", "person"}``,
    ``/device`` ``{"device_id", "person"}``, ``/stop`` and ``/start`` (the memory server)."""

    daemon_threads = True

    def __init__(self, data_dir: Path, out: Path, token: str) -> None:
        super().__init__(("127.0.0.1", 0), _ControlHandler)
        self.data_dir, self.out, self.token = data_dir, out, token
        self.port = free_port()
        self.server: Any = None
        self.base = ""
        self.starts = 0
        self.curator = Curator.from_settings(
            Settings.from_env({"MEMORY_DATA_DIR": str(data_dir)}, options_file=out / "none.json")
        )

    def start_serve(self) -> None:
        self.starts += 1
        self.server, self.base = serve(
            self.data_dir,
            self.out / f"serve-{self.starts}.log",
            port=self.port,
            env={"MEMORY_MCP_TOKEN": self.token},
        )

    def stop_serve(self) -> None:
        self.server.kill()  # SIGKILL: the add-on dies mid-conversation
        self.server.wait(timeout=20)

    def person(self, name: str) -> str:
        [person] = [p for p in self.curator.people.people() if p.name == name]
        return person.id


class _ControlHandler(BaseHTTPRequestHandler):
    server: Control

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        control = self.server
        if self.path == "/link":
            control.curator.link_identity(
                control.person(body["person"]), kind="ha", value=body["user_id"]
            )
        elif self.path == "/device":
            control.curator.choose_device(
                body["device_id"], choice="person", person=control.person(body["person"])
            )
        elif self.path == "/stop":
            control.stop_serve()
        elif self.path == "/start":
            control.start_serve()
        data = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main() -> None:
    ha_root, data_dir, out = (Path(arg) for arg in sys.argv[1:4])
    bench_turns = sys.argv[4] if len(sys.argv) > 4 else "0"
    out.mkdir(parents=True, exist_ok=True)
    fake = FakeAssistModel().start()
    control = Control(data_dir, out, secrets.token_urlsafe(32))
    threading.Thread(target=control.serve_forever, daemon=True).start()
    control.start_serve()
    inside = Path(tempfile.mkdtemp(prefix="memory-curator-assist-", dir=ha_root / "tmp"))
    config = inside / "config"
    (config / "custom_components").mkdir(parents=True)
    (config / "configuration.yaml").write_text(CONFIGURATION + LOGS)
    # installed as DOCS.md tells a user: the folder copied into custom_components/
    shutil.copytree(
        REPO / "custom_components" / "memory_curator",
        config / "custom_components" / "memory_curator",
    )
    shutil.copy(HERE / "boot_assist.py", inside / "boot_assist.py")
    there = "/" + str(inside.relative_to(ha_root))
    started = time.monotonic()
    try:
        ha = subprocess.run(
            [
                shutil.which("chroot") or "/usr/sbin/chroot",
                str(ha_root),
                HA_PYTHON,
                f"{there}/boot_assist.py",
                json.dumps(
                    {
                        "config_dir": f"{there}/config",
                        "url": control.base,
                        "token": control.token,
                        "ollama": fake.url,
                        "model": MODEL,
                        "control": f"http://127.0.0.1:{control.server_address[1]}",
                        "bench_turns": int(bench_turns),
                    }
                ),
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
        if control.server.poll() is None:
            control.server.terminate()
            control.server.wait(timeout=20)
        control.shutdown()
        fake.shutdown()
        ha_log = config / "home-assistant.log"
        if ha_log.exists():
            shutil.copy(ha_log, out / "home-assistant-file.log")
        shutil.rmtree(inside, ignore_errors=True)  # the chroot keeps nothing of a run
    lines = [line for line in output.splitlines() if line.startswith("RESULT ")]
    (out / "home-assistant.log").write_text(output)
    result = {
        "seconds": round(time.monotonic() - started, 1),
        "token": control.token,
        "home_assistant": json.loads(lines[-1][len("RESULT ") :]) if lines else None,
        "chat_requests": fake.requests,
        "unknown_requests": fake.unknown,
        "serve_logs": [(out / f"serve-{n}.log").read_text() for n in range(1, control.starts + 1)],
    }
    (out / "result.json").write_text(json.dumps(result, indent=1))
    os.sync()


if __name__ == "__main__":
    main()
