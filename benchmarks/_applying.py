"""Scoring what auto mode does with one extracted fact (issue 34): the attribute and the doubt
sets in tests/data/judgement (``attributes.<split>.json``, ``hedged.<split>.json``).

Each case runs the real path an extraction run takes in auto mode: a memory file holding the
case's memories, a ``MemoryExtractor`` in auto mode with a review queue, the statement handed
to ``reconcile`` as an extracted fact with the sentence it came from (``evidence``; the
statement itself when the case gives none), then ``submit``. What is scored is what the files
hold afterwards, never what reconcile said it would do:

- ``value_change``: memory ``target`` now says something else, nothing was added, every other
  memory intact;
- ``other_attribute``: one memory added, every kept memory intact;
- ``hedged``/``hearsay``/``bulk``: memory exactly as it was (nothing added, changed or deleted);
- ``plain``: applied as labelled: ``update`` of ``target`` (the rest intact, nothing added) or
  ``add`` (every kept memory intact).

quality.py prints the counts per language and kind; the held-out files are only counted, never
printed (the dev misses are, with ``--show-dev-misses``).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "judgement"
LANGUAGES = ("en", "zh-Hant", "zh-Hans")
FILES = {
    "attributes": ("value_change", "other_attribute"),
    "hedged": ("hedged", "hearsay", "bulk", "plain"),
}
# The floors issue 34 sets, per kind (printed beside the figures; tests hold them for dev).
FLOORS = {
    "value_change": 0.9,
    "other_attribute": 0.9,
    "hedged": 0.95,
    "hearsay": 0.95,
    "bulk": 0.95,
    "plain": 0.9,
}


def files(name: str, split: str) -> list[Path]:
    """Every dev file of ``name`` (``<name>.dev.json``, ``<name>.dev2.json``…), or every
    held-out file (``<name>.heldout-h1.json``…)."""
    if split == "dev":
        return sorted(DATA.glob(f"{name}.dev*.json")) or [DATA / f"{name}.dev.json"]
    return sorted(DATA.glob(f"{name}.heldout*.json"))


def load(path: Path) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(path.read_text("utf-8"))["cases"]
    return cases


@dataclass
class Tally:
    right: int = 0
    total: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def share(self) -> float:
        return self.right / self.total if self.total else 1.0


@dataclass
class AutoRun:
    """One case run through auto mode: the memories kept first, their words before and after,
    and the Review queue."""

    kept: list[Any]
    before: dict[str, str]
    after: dict[str, str]
    queue: Any


def run_auto_mode(case: dict[str, Any], folder: Path) -> AutoRun:
    """Keep ``case["memories"]`` in ``folder``, then run its statement (with its evidence)
    through extraction's real auto-mode path: reconcile, then submit."""
    from webapp.extraction import MemoryExtractor, StructuredFact
    from webapp.stores import MemoryStore, ReviewQueue

    store = MemoryStore(folder / "memories.json", max_items=1000, max_chars=10000, lock_timeout=5)
    queue = ReviewQueue(folder / "review.json", store)
    kept = [store.add(text, source="manual") for text in case["memories"]]
    before = {memory.id: memory.content for memory in kept}
    extractor = MemoryExtractor(store, review_queue=queue, mode="auto")
    fact = StructuredFact(
        case["statement"],
        "general",
        0.9,
        evidence=case.get("evidence") or case["statement"],
        extractor="llm",
    )
    extractor.submit(extractor.reconcile([fact]))
    after = {memory.id: memory.content for memory in store.get_all()}
    return AutoRun(kept, before, after, queue)


def run_case(case: dict[str, Any], folder: Path) -> tuple[bool, str]:
    """Run one case through auto mode in ``folder``; (right, what happened)."""
    run = run_auto_mode(case, folder)
    kept, before, after, queue = run.kept, run.before, run.after, run.queue
    added = [text for key, text in after.items() if key not in before]
    gone = [key for key in before if key not in after]
    changed = [key for key in before if key in after and after[key] != before[key]]
    target = case.get("target")
    target_id = kept[target].id if isinstance(target, int) and target < len(kept) else None
    kind = case["kind"]
    wanted = case.get("action") or case.get("expected")
    if kind in ("hedged", "hearsay", "bulk"):
        right = not added and not gone and not changed
    elif wanted == "update":
        right = not added and not gone and changed == [target_id]
    else:  # add
        right = len(added) == 1 and not gone and not changed
    happened = f"added {len(added)}, changed {len(changed)}, deleted {len(gone)}"
    if changed:
        happened += f" (now: {after[changed[0]]!r})"
    if len(queue.pending()):
        reasons = [item.doubt for item in queue.pending()]
        happened += f"; {len(queue.pending())} waiting in Review {reasons}"
    return right, happened


def evaluate(name: str, split: str) -> dict[tuple[str, str], Tally]:
    """Counts per (language, kind) and per ("all", kind) over the split's files of ``name``."""
    tallies: dict[tuple[str, str], Tally] = {}
    for path in files(name, split):
        for case in load(path):
            with tempfile.TemporaryDirectory(prefix="memory-curator-quality-") as folder:
                right, happened = run_case(case, Path(folder))
            for lang in ("all", case["language"]):
                tally = tallies.setdefault((lang, case["kind"]), Tally())
                tally.total += 1
                tally.right += int(right)
                if not right and split == "dev" and lang == "all":
                    tally.misses.append(
                        f"{case['id']} [{case['kind']}] {case['statement']!r}"
                        f" (evidence {case.get('evidence')!r}): {happened}"
                    )
    return tallies


def section(split: str, title: str, show_misses: bool = False) -> list[str]:
    """The lines quality.py prints for one split: per file, kind and language."""
    lines: list[str] = []
    for name, kinds in FILES.items():
        paths = files(name, split)
        if not paths or not all(path.exists() for path in paths):
            lines.append(f"Auto mode: {name} ({title}): no file")
            continue
        tallies = evaluate(name, split)
        names = " + ".join(path.name for path in paths)
        lines.append(f"Auto mode, one extracted fact at a time: {names}")
        for kind in kinds:
            for lang in ("all", *LANGUAGES):
                tally = tallies.get((lang, kind), Tally())
                floor = f"  (floor {FLOORS[kind]:.2f})" if lang == "all" else ""
                lines.append(
                    f"  {kind:16} {lang:8} {_goal(kind):34} {tally.share:5.2f}"
                    f" ({tally.right}/{tally.total}){floor}"
                )
            if show_misses and split == "dev":
                lines += [f"    miss {miss}" for miss in tallies.get(("all", kind), Tally()).misses]
    return lines


def _goal(kind: str) -> str:
    return {
        "value_change": "→ update of the target",
        "other_attribute": "→ add, every memory intact",
        "plain": "→ applied (action, target)",
    }.get(kind, "→ not applied in auto mode")


def auto_updates(split: str) -> dict[str, Tally]:
    """Automatic updates through the real auto-mode path, over ``reconcile.<split>.json``: each
    item's kept memories in a fresh file, its fact extracted (evidence: the fact itself) and
    submitted. An applied update is a kept memory changed; it is right when the item expects an
    update of that very memory and nothing else moved. ``precision`` tallies (right / applied)
    and ``recall`` tallies (right / expected updates) per language."""
    from webapp.extraction import MemoryExtractor, StructuredFact
    from webapp.stores import MemoryStore, ReviewQueue

    path = DATA / f"reconcile.{split}.json"
    items: list[dict[str, Any]] = json.loads(path.read_text("utf-8"))["items"]
    tallies: dict[str, Tally] = {}
    for item in items:
        with tempfile.TemporaryDirectory(prefix="memory-curator-quality-") as name:
            folder = Path(name)
            store = MemoryStore(
                folder / "memories.json", max_items=1000, max_chars=10000, lock_timeout=5
            )
            queue = ReviewQueue(folder / "review.json", store)
            kept = [store.add(text, source="manual") for text in item["kept"]]
            before = {memory.id: memory.content for memory in kept}
            extractor = MemoryExtractor(store, review_queue=queue, mode="auto")
            fact = StructuredFact(item["fact"], "general", 0.9, evidence=item["fact"])
            extractor.submit(extractor.reconcile([fact]))
            after = {memory.id: memory.content for memory in store.get_all()}
        changed = [key for key in before if after.get(key, before[key]) != before[key]]
        gone = [key for key in before if key not in after]
        added = [key for key in after if key not in before]
        target = item.get("target")
        wanted = item["expected"] == "update"
        right = wanted and changed == [kept[target].id] and not gone and not added
        for lang in ("all", item["language"]):
            applied = tallies.setdefault(f"{lang}/applied", Tally())
            expected = tallies.setdefault(f"{lang}/expected", Tally())
            if changed or gone:
                applied.total += 1
                applied.right += int(right)
            if wanted:
                expected.total += 1
                expected.right += int(right)
    return tallies


def auto_update_lines(split: str) -> list[str]:
    """The automatic-update figures of one split, per language."""
    tallies = auto_updates(split)
    lines = [
        f"Auto mode, automatic updates: reconcile.{split}.json (through extraction's reconcile)"
    ]
    for lang in ("all", *LANGUAGES):
        applied = tallies.get(f"{lang}/applied", Tally())
        expected = tallies.get(f"{lang}/expected", Tally())
        lines.append(
            f"  auto updates     {lang:8} precision {applied.share:5.2f}"
            f" ({applied.right}/{applied.total})  recall {expected.share:5.2f}"
            f" ({expected.right}/{expected.total})" + ("  (floor 0.95)" if lang == "all" else "")
        )
    return lines
