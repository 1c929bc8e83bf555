"""Needs attention polled at 10,000 memories while they change: the dashboard server's threads,
memory and page latency, against the same pages on the same server with nothing going on.

    .venv/bin/python benchmarks/bench_attention_polling.py [--memories 10000] [--seconds 30]
        [--writers 2] [--pollers 4] [--code DIR]

A real ``memory-curator serve`` process (``--code DIR``: the ``webapp`` package of another
checkout, e.g. a ``git worktree`` of main, to measure the code before a change) over a fresh
folder of ``--memories`` memories. After the first Needs attention scan has finished:

1. anchor: for ``--anchor`` seconds nothing else happens; one client reads the Memories page
   and another ``/healthz`` over and over;
2. writes only: ``--writes-only`` seconds of the same with ``--writers`` processes each
   changing one memory after another (every change makes the page render afresh);
3. load: for ``--seconds`` seconds the two clients and the writers, plus ``--pollers`` tabs
   with Needs attention open (each reloads the panel a second after its answer, as the
   page's progress line does);
4. after: ``--rest`` seconds with nothing going on, then the memory is read again.

Every 0.2 s the server's ``Threads`` and ``VmRSS`` are read from ``/proc/<pid>/status``. Prints
the thread count (start, max), RSS (start, max, end), and the Memories page's and ``/healthz``'s
median and p95 with the ratio to the anchor. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # for _common, when imported

from bench_attention import populate  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------ the processes
def writer(path: str, stop: str) -> None:
    """Child process: change one memory after another until ``stop`` exists."""
    from webapp.stores import MemoryStore

    store = MemoryStore(path, max_items=10**6, max_chars=10**9, lock_timeout=60, actor="writer")
    rng, n = random.Random(os.getpid()), 0
    while not os.path.exists(stop):
        memory = rng.choice(store.get_all())
        store.update(memory.id, f"{memory.content.split(' (v')[0]} (v{n})")
        n += 1
    print(n, flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(data_dir: Path, code: Path, count: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "SUPERVISOR"))}
    env.update(
        PYTHONPATH=str(code),
        MEMORY_MAX_ITEMS=str(count * 2),
        MEMORY_MAX_CHARS=str(count * 200),
        MEMORY_LOCK_TIMEOUT="60",
    )
    command = [sys.executable, "-m", "webapp", "serve", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--data-dir", str(data_dir)]
    process = subprocess.Popen(
        command,
        env=env,
        cwd=code,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    os.killpg(process.pid, signal.SIGKILL)
    raise RuntimeError("the dashboard did not start")


def status(pid: int) -> tuple[int, float]:
    """The process's thread count and resident memory in MB."""
    fields = dict(
        line.split(":", 1)
        for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines()
    )
    return int(fields["Threads"]), int(fields["VmRSS"].split()[0]) / 1024


def fetch(url: str, htmx: bool = False) -> str:
    request = urllib.request.Request(url, headers={"HX-Request": "true"} if htmx else {})
    with urllib.request.urlopen(request, timeout=300) as response:
        return str(response.read().decode("utf-8"))


# ------------------------------------------------------------------ measuring
class Loop:
    """A client calling ``url`` over and over until stopped, noting each answer's time."""

    def __init__(self, url: str, pause: float = 0.0, htmx: bool = False) -> None:
        self.url, self.pause, self.htmx = url, pause, htmx
        self.times: list[float] = []
        self.errors = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            try:
                fetch(self.url, self.htmx)
                self.times.append(time.perf_counter() - started)
            except OSError:
                self.errors += 1
            self._stop.wait(self.pause)

    def start(self) -> Loop:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


class Sampler(Loop):
    """Reads the server's threads and memory every 0.2 s."""

    def __init__(self, pid: int) -> None:
        super().__init__("")
        self.pid = pid
        self.samples: list[tuple[int, float]] = []

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append(status(self.pid))
            self._stop.wait(0.2)


def during(seconds: float, *loops: Loop) -> None:
    for loop in loops:
        loop.start()
    time.sleep(seconds)
    for loop in loops:
        loop.stop()


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def wait_for_first_scan(url: str) -> float:
    started = time.perf_counter()
    while 'id="attention-progress"' in fetch(f"{url}/attention/", htmx=True):
        time.sleep(0.5)
    return time.perf_counter() - started


@dataclass
class Phase:
    """One stretch of the run: the two page clients, and what the writers and pollers did."""

    page: Loop
    health: Loop
    writes: int = 0
    polls: int = 0
    errors: int = 0


def phase(url: str, data: Path, seconds: float, writers: int, pollers: int, *extra: Loop) -> Phase:
    """``seconds`` of the two page clients, with ``writers`` processes changing memories and
    ``pollers`` tabs reloading Needs attention (and ``extra`` loops, such as the sampler)."""
    stop = data.parent / f"stop-{time.monotonic_ns()}"
    children = [
        subprocess.Popen(
            [sys.executable, __file__, "--writer", str(data / "memories.json"), str(stop)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(writers)
    ]
    kinds = ("duplicate", "contradiction", "stale", "hard")
    tabs = [
        Loop(f"{url}/attention/?kind={kinds[n % 4]}", pause=1.0, htmx=True) for n in range(pollers)
    ]
    done = Phase(Loop(f"{url}/memories/"), Loop(f"{url}/healthz"))
    try:
        during(seconds, done.page, done.health, *tabs, *extra)
    finally:
        stop.touch()
        for child in children:
            out = child.communicate(timeout=120)[0]
            done.writes += int(out or 0)
    done.polls = sum(len(tab.times) for tab in tabs)
    done.errors = sum(tab.errors for tab in tabs) + done.page.errors + done.health.errors
    return done


def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        populate(data / "memories.json", args.memories)
        load_start = os.getloadavg()[0]  # other programs on the machine skew every figure
        server, url = start_server(data, args.code.resolve(), args.memories)
        try:
            fetch(f"{url}/memories/")
            first_scan = wait_for_first_scan(url)
            threads_start, rss_start = status(server.pid)
            quiet = phase(url, data, args.anchor, 0, 0)
            writes_only = phase(url, data, args.writes_only, args.writers, 0)
            sampler = Sampler(server.pid)
            loud = phase(url, data, args.seconds, args.writers, args.pollers, sampler)
            threads_end, rss_end = status(server.pid)
            time.sleep(args.rest)
            threads_rest, rss_rest = status(server.pid)
            load_end = os.getloadavg()[0]
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)

    print(f"\n{args.memories:,} memories, code from {args.code.resolve()}")
    print(f"  machine: {os.cpu_count()} CPUs, load average {load_start:.1f} → {load_end:.1f}")
    print(f"  first scan finished after {first_scan:.1f} s")
    print(
        f"  load: {args.seconds:g} s, {args.writers} writers ({loud.writes} changes), "
        f"{args.pollers} pollers ({loud.polls} polls), {loud.errors} errors"
    )
    print(
        f"  threads: start {threads_start}, max {max(t for t, _ in sampler.samples)}, "
        f"end of load {threads_end}, {args.rest:g} s later {threads_rest}"
    )
    print(
        f"  RSS MB:  start {rss_start:.0f}, max {max(r for _, r in sampler.samples):.0f}, "
        f"end of load {rss_end:.0f}, {args.rest:g} s later {rss_rest:.0f}"
    )
    rows = [("anchor (nothing else)", quiet)]
    if args.writes_only > 0:
        rows.append((f"{args.writers} writers only ({writes_only.writes} changes)", writes_only))
    rows.append(("writers + pollers", loud))
    for name, pick in (("Memories page", lambda p: p.page), ("/healthz", lambda p: p.health)):
        anchor = pick(quiet).times
        print(f"  {name}:")
        for label, measured in rows:
            times = pick(measured).times
            print(
                f"    {label:34} median {statistics.median(times) * 1000:7.1f} ms "
                f"p95 {p95(times) * 1000:7.1f} ms ({len(times):4} requests)   "
                f"{statistics.median(times) / statistics.median(anchor):6.1f}× / "
                f"{p95(times) / p95(anchor):6.1f}× the anchor"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=30.0, help="length of the load phase")
    parser.add_argument("--anchor", type=float, default=10.0, help="length of the quiet phase")
    parser.add_argument(
        "--writes-only",
        type=float,
        default=15.0,
        help="seconds of writers without pollers (0: none)",
    )
    parser.add_argument("--rest", type=float, default=10.0, help="quiet seconds after the load")
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--pollers", type=int, default=4)
    parser.add_argument("--code", type=Path, default=REPO, help="checkout whose webapp to serve")
    parser.add_argument("--writer", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.writer:
        writer(*args.writer)
    else:
        run(args)


if __name__ == "__main__":
    main()
