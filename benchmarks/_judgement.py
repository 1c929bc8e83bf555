"""Scoring the similarity layer on the judgement sets in tests/data/judgement (issue 22).

``load(split, kind)`` reads one file; ``evaluate(judge, split)`` runs the three judgements on it
and returns the counts per language. quality.py prints them; tune_similarity.py and the dev
quality test use them on the dev split only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "judgement"
LANGUAGES = ("en", "zh-Hant", "zh-Hans")
KINDS = ("near_duplicates", "contradictions", "reconcile")


def load(split: str, kind: str) -> list[dict[str, Any]]:
    """The items of ``<kind>.<split>.json`` (split: dev or heldout)."""
    if split not in ("dev", "heldout"):
        raise ValueError(split)
    items: list[dict[str, Any]] = json.loads((DATA / f"{kind}.{split}.json").read_text("utf-8"))[
        "items"
    ]
    return items


@dataclass
class Counts:
    """Binary outcomes: true/false positives and negatives."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, predicted: bool, label: bool, item_id: str = "") -> None:
        if predicted and label:
            self.tp += 1
        elif predicted:
            self.fp += 1
            self.misses.append(f"FP {item_id}")
        elif label:
            self.fn += 1
            self.misses.append(f"FN {item_id}")
        else:
            self.tn += 1

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def correct(self) -> int:
        return self.tp + self.tn

    @property
    def total(self) -> int:
        return self.tp + self.fp + self.fn + self.tn


@dataclass
class ReconcileCounts:
    """Reconcile: right action (and target), and paraphrased known facts kept from ``add``."""

    total: int = 0
    right: int = 0
    known_paraphrases: int = 0
    known_paraphrases_not_added: int = 0
    known: int = 0
    known_not_added: int = 0
    # An automatic update: predicted ``update`` is positive, right when the item expects an
    # update of that very memory (so a wrong target counts against precision).
    updates: Counts = field(default_factory=Counts)
    misses: list[str] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return self.right / self.total if self.total else 1.0

    @property
    def paraphrase_not_add(self) -> float:
        return (
            self.known_paraphrases_not_added / self.known_paraphrases
            if self.known_paraphrases
            else 1.0
        )


@dataclass
class Report:
    """Per kind, per language ("all" for the whole file)."""

    duplicates: dict[str, Counts]
    contradictions: dict[str, Counts]
    reconcile: dict[str, ReconcileCounts]


def _per_language() -> dict[str, Counts]:
    return {lang: Counts() for lang in ("all", *LANGUAGES)}


def evaluate(
    split: str,
    same_fact: Callable[[str, str], bool],
    contradiction: Callable[[str, str], bool],
    reconcile: Callable[[str, list[str]], tuple[str, int | None]],
) -> Report:
    """Run the three judgements over the ``split`` files."""
    duplicates = _per_language()
    for item in load(split, "near_duplicates"):
        predicted = same_fact(item["a"], item["b"])
        for lang in ("all", item["language"]):
            duplicates[lang].add(predicted, item["label"], item["id"])
    contradictions = _per_language()
    for item in load(split, "contradictions"):
        predicted = contradiction(item["a"], item["b"])
        for lang in ("all", item["language"]):
            contradictions[lang].add(predicted, item["label"], item["id"])
    reconciled = {lang: ReconcileCounts() for lang in ("all", *LANGUAGES)}
    for item in load(split, "reconcile"):
        action, target = reconcile(item["fact"], list(item["kept"]))
        expected, expected_target = item["expected"], item.get("target")
        right = action == expected and (expected == "add" or target == expected_target)
        for lang in ("all", item["language"]):
            counts = reconciled[lang]
            counts.total += 1
            counts.right += int(right)
            updated = action == "update" and expected == "update" and target == expected_target
            if action == "update" or expected == "update":
                predicted = action == "update"
                counts.updates.add(
                    predicted, updated if predicted else expected == "update", item["id"]
                )
            if not right:
                counts.misses.append(f"{item['id']}: {action} {target} (want {expected})")
            if expected != "add":
                counts.known += 1
                counts.known_not_added += int(action != "add")
                if item["kind"] == "paraphrase":
                    counts.known_paraphrases += 1
                    counts.known_paraphrases_not_added += int(action != "add")
    return Report(duplicates, contradictions, reconciled)


def judge_callables(
    judge: Any,
) -> tuple[
    Callable[[str, str], bool],
    Callable[[str, str], bool],
    Callable[[str, list[str]], tuple[str, int | None]],
]:
    """The three callables ``evaluate`` wants, from a ``webapp.similarity.Judge``."""

    def same(a: str, b: str) -> bool:
        return bool(judge.same_fact(a, b).verdict)

    def clash(a: str, b: str) -> bool:
        return bool(judge.contradiction(a, b).verdict)

    def rec(fact: str, kept: list[str]) -> tuple[str, int | None]:
        result = judge.reconcile(fact, kept)
        return result.action, result.target

    return same, clash, rec


def all_texts(split: str) -> list[str]:
    """Every text in the split's three files (to embed them in one batch)."""
    texts: list[str] = []
    for item in load(split, "near_duplicates") + load(split, "contradictions"):
        texts += [item["a"], item["b"]]
    for item in load(split, "reconcile"):
        texts += [*item["kept"], item["fact"]]
    return list(dict.fromkeys(texts))


def format_report(title: str, report: Report) -> list[str]:
    """The report as aligned lines: P/R with counts per language, reconcile shares."""
    lines = [title]
    for name, table in (
        ("near-duplicates", report.duplicates),
        ("contradictions", report.contradictions),
    ):
        for lang in ("all", *LANGUAGES):
            c = table[lang]
            lines.append(
                f"  {name:16} {lang:8} precision {c.precision:5.2f} ({c.tp}/{c.tp + c.fp})"
                f"  recall {c.recall:5.2f} ({c.tp}/{c.tp + c.fn})"
                f"  accuracy {c.correct}/{c.total}"
            )
    for lang in ("all", *LANGUAGES):
        r = report.reconcile[lang]
        lines.append(
            f"  {'reconcile':16} {lang:8} paraphrased known → not add {r.paraphrase_not_add:5.2f}"
            f" ({r.known_paraphrases_not_added}/{r.known_paraphrases})"
            f"  all known → not add {r.known_not_added}/{r.known}"
            f"  accuracy {r.accuracy:5.2f} ({r.right}/{r.total})"
        )
    for lang in ("all", *LANGUAGES):
        u = report.reconcile[lang].updates
        lines.append(
            f"  {'auto updates':16} {lang:8} precision {u.precision:5.2f} ({u.tp}/{u.tp + u.fp})"
            f"  recall {u.recall:5.2f} ({u.tp}/{u.tp + u.fn})"
        )
    return lines
