"""What the Memory Curator LLM API adds to the first turn of an Assist conversation: the
integration fetches the speaker's memories (``POST /api/assist/v1/prompt``, bounded by 3 s)
before the model is asked. Real Home Assistant 2026.11 (the chroot of tests/ha), the real
``memory-curator serve``, the fake model server (answers at once, so the figures are the
overhead and not a model's time); in one boot, alternating, N first turns with an ollama agent
that has the "Memory Curator" API against N with one that has only "Assist".

    sudo .venv/bin/python benchmarks/bench_assist_first_turn.py [--turns 30] [--memories 48]

Needs root (a private network namespace, as tests/ha). Prints figures only; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.ha import ha_ready, run_scenario, seed  # noqa: E402
from webapp.curator import Curator  # noqa: E402
from webapp.settings import Settings  # noqa: E402

ROOMS = ("kitchen", "hallway", "garage", "attic", "study", "bathroom")
THINGS = (
    "torch",
    "drill",
    "umbrella",
    "spare keys",
    "first-aid kit",
    "sewing box",
    "atlas",
    "kettle",
)


def p95(times: list[float]) -> float:
    return statistics.quantiles(times, n=20)[-1] if len(times) > 1 else times[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30, help="first turns per agent")
    parser.add_argument("--memories", type=int, default=48, help="the household's memories")
    args = parser.parse_args()
    why = ha_ready()
    if why:
        raise SystemExit(why)
    with tempfile.TemporaryDirectory(prefix="bench-assist-") as folder:
        data, out = Path(folder) / "data", Path(folder) / "out"
        seed(data)
        curator = Curator.from_settings(
            Settings.from_env({"MEMORY_DATA_DIR": str(data)}, options_file=data / "none.json")
        )
        facts = [f"The {thing} is kept in the {room}." for room in ROOMS for thing in THINGS]
        for fact in facts[: args.memories]:
            curator.remember(fact)
        kept = len(curator.memories.get_all())
        result = run_scenario(data, out, bench_turns=args.turns)
    bench = result["home_assistant"]["bench"]
    memory, assist = bench["memory_curator"], bench["assist"]
    print(f"first turn of a conversation, {len(memory)} each, alternating, one boot")
    print(f"{kept} memories in the data folder (3 seeded + the household's)")
    for name, times in (("Memory Curator API", memory), ("Assist only (anchor)", assist)):
        print(
            f"  {name:22} median {statistics.median(times) * 1000:7.1f} ms"
            f"   p95 {p95(times) * 1000:7.1f} ms"
        )
    blocks = sum(
        "<long_term_memory>" in str(request["messages"][0]["content"])
        and "[X" in str(request["messages"][-1]["content"])
        for request in result["chat_requests"]
    )
    print(f"  first turns whose system prompt carried the memory block: {blocks}")
    added = statistics.median(memory) - statistics.median(assist)
    print(
        f"  added by the prompt call: median {added * 1000:+.1f} ms "
        f"(ratio {statistics.median(memory) / statistics.median(assist):.2f}x), "
        f"p95 {(p95(memory) - p95(assist)) * 1000:+.1f} ms "
        f"(ratio {p95(memory) / p95(assist):.2f}x)"
    )


if __name__ == "__main__":
    main()
