"""The Assist API's exchanges (``POST /api/assist/v1/exchanges``, what the Home Assistant
integration sends after every turn) against a bare route serving the same bytes, in one run,
with the ratio.

    .venv/bin/python benchmarks/bench_assist_exchange.py [--calls 300] [--changes 500]

Each exchange has its own key and was said a minute ago, through a satellite whose choice
changed ``--changes`` times (the people history log the speaker as of then is rebuilt from),
by one of three people linked to Home Assistant users, into one of 50 threads. The API is a
real ``memory-curator serve`` on 127.0.0.1; the anchor a WSGI app on waitress in a process of
its own answering the very bytes the API answered, called by the same HTTP client. Prints
figures only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks._common import settings_for  # noqa: E402
from benchmarks.bench_assist_prompt import BARE  # noqa: E402
from benchmarks.bench_mcp_http import free_port, start_dashboard, summary  # noqa: E402
from webapp.curator import Curator  # noqa: E402

EXCHANGES = "/api/assist/v1/exchanges"


def household(folder: Path, changes: int) -> list[str]:
    """Three people linked to Home Assistant users, a satellite chosen ``changes`` times."""
    curator = Curator.from_settings(settings_for(folder, 0))
    people = [
        curator.people.add(name, identities=(("ha", f"u-{name.lower()}"),))
        for name in ("Ana", "Ben", "Chloe")
    ]
    curator.people.seen_device("d-kitchen", label="Kitchen")
    for number in range(changes):
        if number % 2:
            curator.choose_device("d-kitchen", choice="person", person=people[number % 3].id)
        else:
            curator.choose_device("d-kitchen", choice="speaker")
    return [f"u-{p.name.lower()}" for p in people]


def body(number: int, users: list[str], said: datetime) -> dict[str, object]:
    return {
        "key": f"bench-{number}",
        "conversation_id": f"thread-{number % 50}",
        "user_text": f"Message {number}: I prefer tea number {number}.",
        "reply": "Noted.",
        "at": said.isoformat(),
        "context": {"user_id": users[number % 3], "device_id": "d-kitchen"},
    }


def timed(client: httpx.Client, url: str, bodies: list[dict[str, object]]) -> list[float]:
    seconds = []
    for sent in bodies:
        start = time.perf_counter()
        client.post(url, json=sent).raise_for_status()
        seconds.append(time.perf_counter() - start)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--changes", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        users = household(Path(folder), args.changes)
        said = datetime.now(UTC) - timedelta(minutes=1)
        bodies = [body(n, users, said) for n in range(args.calls + 20)]
        port, bare_port = free_port(), free_port()
        server = start_dashboard(Path(folder) / "data", port)
        bare = None
        try:
            base = f"http://127.0.0.1:{port}"
            with httpx.Client(timeout=30) as client:
                first = client.post(base + EXCHANGES, json=bodies[0])
                first.raise_for_status()
                answer = Path(folder) / "answer.json"
                answer.write_bytes(first.content)
                bare = subprocess.Popen([sys.executable, "-c", BARE, str(bare_port), str(answer)])
                deadline = time.monotonic() + 30
                while True:
                    try:
                        client.post(f"http://127.0.0.1:{bare_port}/", json={})
                        break
                    except httpx.HTTPError:
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(0.1)
                timed(client, base + EXCHANGES, bodies[1:20])  # warm both up
                timed(client, f"http://127.0.0.1:{bare_port}/", bodies[1:20])
                api = timed(client, base + EXCHANGES, bodies[20:])
                anchor = timed(client, f"http://127.0.0.1:{bare_port}/", bodies[20:])
            print(f"{args.calls} exchanges, 50 threads, {args.changes} device choice changes")
            line, api_median = summary("POST /api/assist/v1/exchanges", api)
            print(line)
            line, bare_median = summary("bare route, same bytes", anchor)
            print(line)
            print(f"ratio (median): {api_median / bare_median:.2f}x the bare route")
        finally:
            server.terminate()
            server.wait(timeout=20)
            if bare is not None:
                bare.terminate()
                bare.wait(timeout=20)


if __name__ == "__main__":
    main()
