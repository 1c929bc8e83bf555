"""The Assist API's prompt (``POST /api/assist/v1/prompt``, what the Home Assistant
integration asks before every request) against a bare route serving the same bytes, in one
run, with the ratio.

    .venv/bin/python benchmarks/bench_assist_prompt.py [--calls 300] [--memories 100]

A household's size: ``--memories`` memories (a third the household's, the rest shared by
three people, each linked to a Home Assistant user), three people. The API is a real
``memory-curator serve`` on 127.0.0.1; the anchor is a WSGI app that answers the very bytes
the API answered, on waitress in a process of its own on 127.0.0.1, called by the same HTTP
client. The three speakers are asked in turn. Prints figures only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks._common import settings_for  # noqa: E402
from benchmarks.bench_mcp_http import free_port, start_dashboard, summary  # noqa: E402
from webapp.curator import Curator  # noqa: E402

PROMPT = "/api/assist/v1/prompt"
BARE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import waitress
    bodies = [Path(p).read_bytes() for p in sys.argv[2:]]
    turn = [0]
    def app(environ, start_response):
        environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        body = bodies[turn[0] % len(bodies)]
        turn[0] += 1
        start_response("200 OK", [("Content-Type", "application/json"),
                                  ("Content-Length", str(len(body)))])
        return [body]
    waitress.serve(app, host="127.0.0.1", port=int(sys.argv[1]), threads=8, _quiet=True)
    """
)


def household(folder: Path, memories: int) -> list[dict[str, object]]:
    """Fill ``folder/data`` with three people and ``memories`` memories; the three speakers'
    contexts."""
    curator = Curator.from_settings(settings_for(folder, memories))
    people = [
        curator.people.add(name, identities=(("ha", f"u-{name.lower()}"),))
        for name in ("Ana", "Ben", "Chloe")
    ]
    for number in range(memories):
        owner = None if number % 4 == 0 else people[number % 3].id
        curator.memories.add(
            f"Fact number {number}: likes item {number * 7919 % 1000} in the season {number % 4}.",
            person=owner,
        )
    return [{"context": {"user_id": f"u-{p.name.lower()}", "device_id": None}} for p in people]


def timed(
    client: httpx.Client, url: str, bodies: list[dict[str, object]], calls: int
) -> list[float]:
    seconds = []
    for call in range(calls):
        start = time.perf_counter()
        answer = client.post(url, json=bodies[call % len(bodies)])
        answer.raise_for_status()
        seconds.append(time.perf_counter() - start)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--memories", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        contexts = household(Path(folder), args.memories)
        port, bare_port = free_port(), free_port()
        server = start_dashboard(Path(folder) / "data", port)
        bare = None
        try:
            base = f"http://127.0.0.1:{port}"
            with httpx.Client(timeout=30) as client:
                answers = []
                for number, body in enumerate(contexts):
                    answer = client.post(base + PROMPT, json=body)
                    answer.raise_for_status()
                    path = Path(folder) / f"answer-{number}.json"
                    path.write_bytes(answer.content)
                    answers.append(str(path))
                command = [sys.executable, "-c", BARE, str(bare_port), *answers]
                bare = subprocess.Popen(command, cwd=REPO)
                deadline = time.monotonic() + 30
                while True:
                    try:
                        client.post(f"http://127.0.0.1:{bare_port}/", json={})
                        break
                    except httpx.HTTPError:
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(0.1)
                timed(client, base + PROMPT, contexts, 20)  # warm both up
                timed(client, f"http://127.0.0.1:{bare_port}/", contexts, 20)
                api = timed(client, base + PROMPT, contexts, args.calls)
                anchor = timed(client, f"http://127.0.0.1:{bare_port}/", contexts, args.calls)
            size = sum(Path(p).stat().st_size for p in answers) // len(answers)
            print(f"{args.memories} memories, 3 people; each answer {size} bytes on average")
            line, api_median = summary("POST /api/assist/v1/prompt", api)
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
