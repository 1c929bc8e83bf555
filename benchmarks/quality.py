"""Quality figures measured on labelled data, one section per judgement.

    .venv/bin/python benchmarks/quality.py [--show-dev-misses]

Secrets (``webapp.sensitive.find_secrets`` over ``tests/data/secrets``): the held-out file
first (written before the detector and never tuned against), then the development file.
Per file and per language: how many sentences, recall on the secrets (found / secrets) and
the false refusal rate on the look-alikes (flagged / look-alikes). ``--show-dev-misses`` lists
the development sentences it gets wrong; the held-out ones are never printed. Asserts
nothing: ``tests/test_secrets_quality.py`` holds the floors.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from webapp.sensitive import find_secrets  # noqa: E402

SECRETS_DATA = ROOT / "tests" / "data" / "secrets"
LANGUAGES = ("en", "zh-Hant", "zh-Hans")


@dataclass
class Tally:
    """Secrets found and look-alikes flagged, out of how many."""

    secrets: int = 0
    found: int = 0
    lookalikes: int = 0
    flagged: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)

    def add(self, case: dict[str, Any], flagged: bool) -> None:
        if case["secret"]:
            self.secrets += 1
            self.found += flagged
        else:
            self.lookalikes += 1
            self.flagged += flagged
        if flagged != case["secret"]:
            self.misses.append(case)

    @property
    def recall(self) -> float:
        return self.found / self.secrets if self.secrets else 1.0

    @property
    def false_refusals(self) -> float:
        return self.flagged / self.lookalikes if self.lookalikes else 0.0

    def line(self, name: str) -> str:
        return (
            f"  {name:<8} {self.secrets + self.lookalikes:>4} sentences  "
            f"recall {self.recall:6.1%} ({self.found}/{self.secrets})  "
            f"false refusals {self.false_refusals:6.1%} ({self.flagged}/{self.lookalikes})"
        )


def score(cases: list[dict[str, Any]]) -> dict[str, Tally]:
    """Tallies over ``cases``: "all" and one per language."""
    tallies = {"all": Tally(), **{lang: Tally() for lang in LANGUAGES}}
    for case in cases:
        flagged = find_secrets(case["text"]) is not None
        tallies["all"].add(case, flagged)
        tallies[case["lang"]].add(case, flagged)
    return tallies


def load(name: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads((SECRETS_DATA / name).read_text("utf-8"))
    return cases


def secrets_report(show_dev_misses: bool = False) -> list[str]:
    """The secrets section: held-out first, then dev, each overall and per language."""
    lines = ["Secrets are not memories (webapp.sensitive.find_secrets)"]
    for title, name in (("held-out", "secrets.heldout.json"), ("dev", "secrets.dev.json")):
        cases = load(name)
        started = time.perf_counter()
        tallies = score(cases)
        took = (time.perf_counter() - started) / max(1, len(cases)) * 1e6
        lines.append(f"{title} ({name}, {took:.0f} µs per sentence)")
        lines += [tallies[key].line(key) for key in ("all", *LANGUAGES)]
        if show_dev_misses and title == "dev":
            for case in tallies["all"].misses:
                what = "missed" if case["secret"] else "flagged"
                lines.append(f"    {what} [{case['lang']}, {case['kind']}] {case['text']}")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show-dev-misses", action="store_true")
    args = parser.parse_args(argv)
    sections = [secrets_report(args.show_dev_misses)]
    print("\n\n".join("\n".join(section) for section in sections))


if __name__ == "__main__":
    main()
