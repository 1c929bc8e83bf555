"""Needs attention's LLM tier at 100 and 1,000 memories: how many requests and pairs one scan
sends to the LLM, how long it takes, and what a rescan after one change sends, against the
offline scan (rules and the embedding model, no LLM) of the same memories in the same run.

    .venv/bin/python benchmarks/bench_llm_tier.py [--sizes 100 1000]

The memories are generated household facts (``bench_attention.populate``: English and Chinese,
about one in twenty a rewording or a changed value of an earlier one). The LLM is a local
HTTP server on 127.0.0.1 speaking OpenAI's chat-completions format that answers at once
("different" for every pair but the ones sharing a number), so the figures are the tier's
own cost and its request counts, not a model's speed. Each scan is what the dashboard's
background scan does (``scan`` by meaning, ``tier_pairs``, ``second_opinion``) with the
default limits (``MEMORY_LLM_PAIRS_PER_SCAN`` and the rest):

- first scan: a store nobody asked the LLM about yet;
- until covered: the scans that follow (the dashboard goes on by itself) until every pair has
  a verdict;
- restart, nothing changed: a new process (a new checker) reads the verdicts from
  ``memories.pair-verdicts.json``;
- one change: one memory edited, then a new scan.

Prints figures and ratios only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for _common and bench_attention
from _common import settings_for  # noqa: E402
from bench_attention import populate  # noqa: E402

from webapp.attention.llm_check import LlmPairChecker, pair_checker_from_settings  # noqa: E402
from webapp.attention.llm_tier import second_opinion, tier_pairs  # noqa: E402
from webapp.attention.pair_verdicts import pair_verdicts  # noqa: E402
from webapp.attention.scanner import scan  # noqa: E402
from webapp.attention.semantic import semantic_index  # noqa: E402
from webapp.settings import Settings  # noqa: E402
from webapp.stores import MemoryStore  # noqa: E402

PAIR = re.compile(r'^\d+\. A: (".*")\n   B: (".*")$', re.M)
NUMBER = re.compile(r"\d+")


class InstantLlm:
    """An OpenAI-format server on 127.0.0.1 that answers every request at once."""

    def __init__(self) -> None:
        self.requests = 0
        self.pairs = 0
        lock = threading.Lock()
        llm = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = body["messages"][0]["content"]
                pairs = [(json.loads(a), json.loads(b)) for a, b in PAIR.findall(prompt)]
                with lock:
                    llm.requests += 1
                    llm.pairs += len(pairs)
                verdicts = [
                    {"pair": n, "verdict": verdict(a, b)} for n, (a, b) in enumerate(pairs, 1)
                ]
                reply = {
                    "id": "bench",
                    "object": "chat.completion",
                    "model": body.get("model", ""),
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": json.dumps(verdicts)},
                        }
                    ],
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def counts(self) -> tuple[int, int]:
        return self.requests, self.pairs

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def verdict(a: str, b: str) -> str:
    shared = set(NUMBER.findall(a)) & set(NUMBER.findall(b))
    return "contradiction" if shared else "different"


def one_scan(settings: Settings, checker: LlmPairChecker | None) -> tuple[float, bool, int]:
    """(seconds, pairs still waiting, findings) of one background scan of the store."""
    started = time.perf_counter()
    memories = MemoryStore.from_settings(settings).get_all()
    index = semantic_index(settings.memory_file)
    found = scan(memories, today=datetime.now(UTC).date(), stale_days=180, semantic=index)
    more = False
    if checker is not None:
        opinion = second_opinion(found, tier_pairs(found, memories, index), checker)
        found, more = opinion.findings, opinion.more
    return time.perf_counter() - started, more, len(found)


def measured(llm: InstantLlm, run) -> tuple[float, int, int, Any]:
    before = llm.counts()
    started = time.perf_counter()
    result = run()
    after = llm.counts()
    return time.perf_counter() - started, after[0] - before[0], after[1] - before[1], result


def bench(count: int, llm: InstantLlm) -> None:
    with tempfile.TemporaryDirectory() as folder:
        base = settings_for(Path(folder), count)
        populate(base.memory_file, count)
        settings = dataclasses.replace(
            base, llm_provider="openai", llm_model="bench-model", llm_base_url=llm.url
        )
        index = semantic_index(settings.memory_file)
        memories = MemoryStore.from_settings(settings).get_all()
        started = time.perf_counter()
        index.vectors([m.content for m in memories])
        embed = time.perf_counter() - started
        offline, _, findings = one_scan(settings, None)
        offline = min(offline, one_scan(settings, None)[0])  # warm, as the LLM scans are
        pairs = tier_pairs([], memories, index).neighbours  # every neighbour pair the tier may ask
        print(
            f"\n{count} memories: embedded in {embed:.1f} s (once); offline scan (anchor) "
            f"{offline * 1000:.0f} ms, {findings} findings; {len(pairs)} neighbour pairs"
        )

        def checker() -> LlmPairChecker:
            made = pair_checker_from_settings(settings, pair_verdicts(settings.memory_file))
            assert made is not None
            return made

        first = checker()
        seconds, requests, sent, (_, more, _) = measured(llm, lambda: one_scan(settings, first))
        row("first scan", seconds, requests, sent, offline)
        scans, total = 1, (seconds, requests, sent)
        while more and scans < 1_000:
            seconds, requests, sent, (_, more, _) = measured(llm, lambda: one_scan(settings, first))
            scans += 1
            total = (total[0] + seconds, total[1] + requests, total[2] + sent)
        row(f"until covered ({scans} scans)", *total, offline)
        restarted = checker()
        row(
            "restart, nothing changed",
            *measured(llm, lambda: one_scan(settings, restarted))[:3],
            offline,
        )
        store = MemoryStore.from_settings(settings)
        changed = store.get_all()[count // 2]
        store.update(changed.id, changed.content + " (since May)")
        index.vectors([m.content for m in store.get_all()])  # (the scan embeds it anyway)
        row("one change", *measured(llm, lambda: one_scan(settings, checker()))[:3], offline)


def row(what: str, seconds: float, requests: int, pairs: int, anchor: float) -> None:
    print(
        f"  {what:<28} {requests:>4} requests {pairs:>5} pairs  {seconds * 1000:>8.0f} ms"
        f"  ({seconds / anchor:.2f}x the offline scan)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    args = parser.parse_args()
    defaults = Settings()
    print(
        f"limits per scan: {defaults.llm_pairs_per_scan} pairs, "
        f"{defaults.llm_tokens_per_scan} tokens, {defaults.llm_seconds_per_scan} s"
    )
    llm = InstantLlm()
    try:
        for count in args.sizes:
            bench(count, llm)
    finally:
        llm.close()


if __name__ == "__main__":
    main()
