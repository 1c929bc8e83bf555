"""Scoring issue 44 ("judgement that is precise when it acts"): auto mode, fact form and
near-duplicates, over ``tests/data/judgement/auto.<split>.json``, ``fact_form.<split>.json``
and ``near_duplicates.heldout-h2.json`` (held-out: ``*.heldout-h1.json``/``-h2``).

- **Auto mode** runs each case through extraction's real auto-mode path, as ``_applying`` does:
  the case's memories in a memory file, a ``MemoryExtractor`` in auto mode with a review
  queue, the statement reconciled as an extracted fact with its evidence, then ``submit``;
  what the files hold afterwards is scored. *Applied*: a memory was added, changed or
  deleted. *Precision*: applied cases that did exactly what the case expects (an ``update``
  of the target and nothing else; an ``add`` with every kept memory intact) over every
  applied case. *True memory overwritten*: a kept memory changed or deleted that the case
  does not expect changed (every memory but an expected update's target). *Held never
  applied*: held (doubt, hearsay, bulk, unreliable) and older statements that changed
  nothing (waiting in Review is allowed). *Applied as it should*: value changes updated and
  new attributes (``other_attribute``, ``lookalike``) added.
- **Fact form**: what the rules propose (``MemoryExtractor.extract`` with no LLM, reconciled
  over an empty memory file) for the one user message. *Acceptable*: at least one fact
  proposed and every proposed fact equal to one of the acceptable forms after the product's
  own folding (``webapp.text.same_fact_key``: case, width, 繁/简, spaces, end punctuation);
  for ``not_a_fact`` messages: nothing proposed.
- **Near-duplicates (h2)**: the product's default judge's ``same_fact`` per pair; precision
  and recall per language.

Only counts are printed for held-out files, never one of their texts.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from _applying import DATA, LANGUAGES, Tally, files, run_auto_mode

FLOORS = {
    "precision": 0.95,
    "overwritten": 0.05,
    "held": 0.95,
    "applies": 0.5,
    "fact_form": 0.9,
    "near_duplicates": 0.95,
}
NEW_ATTRIBUTE = ("other_attribute", "lookalike")


def _items(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text("utf-8"))
    items: list[dict[str, Any]] = data.get("items") or data.get("cases") or []
    return items


def run_auto(case: dict[str, Any], folder: Path) -> dict[str, bool]:
    """One auto-mode case through extraction's reconcile and submit: what happened."""
    run = run_auto_mode(case, folder)
    kept, before, after = run.kept, run.before, run.after
    added = [key for key in after if key not in before]
    touched = [key for key in before if after.get(key) != before[key]]  # changed or deleted
    target = case.get("target")
    wanted = case["expected"]
    target_id = kept[target].id if wanted == "update" and isinstance(target, int) else None
    if wanted == "update":
        right = not added and touched == [target_id] and target_id in after
    elif wanted == "add":
        right = len(added) == 1 and not touched
    else:
        right = not added and not touched
    return {
        "applied": bool(added or touched),
        "right": right,
        "overwritten": any(key != target_id for key in touched),
    }


def auto_lines(split: str) -> list[str]:
    """Auto mode's figures per language over ``auto.<split>`` files."""
    paths = files("auto", split)
    if not paths or not all(path.exists() for path in paths):
        return [f"Auto mode, issue 44: auto.{split}: no file"]
    t: dict[str, Tally] = {}

    def tally(key: str, good: bool) -> None:
        found = t.setdefault(key, Tally())
        found.total += 1
        found.right += int(good)

    for path in paths:
        for case in _items(path):
            with tempfile.TemporaryDirectory(prefix="memory-curator-quality-") as folder:
                got = run_auto(case, Path(folder))
            kind = case["kind"]
            for lang in ("all", case["language"]):
                if got["applied"]:
                    tally(f"{lang}/precision", got["right"])
                tally(f"{lang}/overwritten", got["overwritten"])
                if case["expected"] == "not_applied":
                    tally(f"{lang}/held", not got["applied"])
                    tally(f"{lang}/held:{case.get('why') or kind}", not got["applied"])
                elif kind == "value_change":
                    tally(f"{lang}/value_change", got["right"])
                elif kind in NEW_ATTRIBUTE:
                    tally(f"{lang}/new_attribute", got["right"])
                    tally(f"{lang}/new_attribute:{kind}", got["right"])
    names = " + ".join(path.name for path in paths)
    lines = [f"Auto mode, issue 44 (extraction's reconcile + submit in auto mode): {names}"]
    rows = [
        ("precision", "precision of what it applied", "≥"),
        ("overwritten", "a true memory overwritten", "≤"),
        ("held", "held + older never applied", "≥"),
        *[(f"held:{why}", f"  {why} never applied", "") for why in _whys(t)],
        ("value_change", "value changes applied (update)", ""),
        ("new_attribute", "new attributes applied (add)", ""),
        ("new_attribute:other_attribute", "  other_attribute added", ""),
        ("new_attribute:lookalike", "  lookalike added", ""),
    ]
    for key, label, sign in rows:
        for lang in ("all", *LANGUAGES):
            found = t.get(f"{lang}/{key}", Tally())
            floor = f"  (floor {sign} {FLOORS[key]:.2f})" if sign and lang == "all" else ""
            lines.append(
                f"  {label:34} {lang:8} {found.share:5.2f} ({found.right}/{found.total}){floor}"
            )
    for lang in ("all", *LANGUAGES):
        applied = (
            t.get(f"{lang}/value_change", Tally()).right
            + t.get(f"{lang}/new_attribute", Tally()).right
        )
        should = (
            t.get(f"{lang}/value_change", Tally()).total
            + t.get(f"{lang}/new_attribute", Tally()).total
        )
        share = applied / should if should else 1.0
        floor = "  (floor ≥ 0.50)" if lang == "all" else ""
        lines.append(
            f"  {'value changes + new attrs applied':34} {lang:8} {share:5.2f}"
            f" ({applied}/{should}){floor}"
        )
    return lines


def _whys(t: dict[str, Tally]) -> list[str]:
    return sorted({key.split(":", 1)[1] for key in t if key.startswith("all/held:")})


def proposed(message: str, speaker: str, folder: Path) -> list[str]:
    """What the rules propose for one user message by ``speaker`` (over an empty memory
    file): the contents of the add and update proposals."""
    from webapp.extraction import MemoryExtractor
    from webapp.stores import MemoryStore, ReviewQueue

    store = MemoryStore(folder / "memories.json", max_items=1000, max_chars=10000, lock_timeout=5)
    queue = ReviewQueue(folder / "review.json", store)
    extractor = MemoryExtractor(store, review_queue=queue)
    turn = {"role": "user", "content": message, "name": speaker}
    actions = extractor.reconcile(extractor.extract([turn]).candidates)
    return [a.content for a in actions if a.action in ("add", "update")]


def acceptable(case: dict[str, Any], facts: list[str]) -> bool:
    """The definition above: nothing for ``not_a_fact``, else every fact an acceptable form."""
    from webapp.text import same_fact_key

    if case.get("not_a_fact"):
        return not facts
    forms = {same_fact_key(form) for form in case["acceptable"]}
    return bool(facts) and all(same_fact_key(fact) in forms for fact in facts)


def fact_form_lines(split: str, show_misses: bool = False) -> list[str]:
    """Fact form's figures per language and kind over ``fact_form.<split>`` files."""
    paths = files("fact_form", split)
    if not paths or not all(path.exists() for path in paths):
        return [f"Fact form: fact_form.{split}: no file"]
    t: dict[str, Tally] = {}
    kinds: list[str] = []
    for path in paths:
        for case in _items(path):
            with tempfile.TemporaryDirectory(prefix="memory-curator-quality-") as folder:
                facts = proposed(case["message"], case.get("speaker", ""), Path(folder))
            good = acceptable(case, facts)
            for lang in ("all", case["language"]):
                silent = t.setdefault(f"{lang}/{case['kind']}/none", Tally())
                silent.total += 1
                silent.right += int(not facts)
            if case["kind"] not in kinds:
                kinds.append(case["kind"])
            for lang in ("all", case["language"]):
                for key in (f"{lang}/all", f"{lang}/{case['kind']}"):
                    found = t.setdefault(key, Tally())
                    found.total += 1
                    found.right += int(good)
                    if not good and split == "dev" and key == "all/all":
                        found.misses.append(f"{case['id']} {case['message']!r} → {facts}")
    names = " + ".join(path.name for path in paths)
    lines = [
        f"Fact form (what the rules propose for one user message): {names}",
        "  acceptable = at least one fact proposed and each equal to an acceptable form after"
        " the product's folding (same_fact_key: case, width, 繁/简, spaces, end punctuation);"
        " not_a_fact = nothing proposed",
    ]
    for kind in ("all", *kinds):
        for lang in ("all", *LANGUAGES):
            found = t.get(f"{lang}/{kind}", Tally())
            if not found.total:
                continue
            floor = "  (floor ≥ 0.90)" if kind == "all" and lang == "all" else ""
            silent = t.get(f"{lang}/{kind}/none")
            none = f"  nothing proposed {silent.right}/{silent.total}" if silent else ""
            lines.append(
                f"  {kind:18} {lang:8} acceptable {found.share:5.2f}"
                f" ({found.right}/{found.total}){none}{floor}"
            )
    if show_misses:
        lines += [f"    miss {miss}" for miss in t.get("all/all", Tally()).misses]
    return lines


def near_duplicate_lines(split: str) -> list[str]:
    """Near-duplicate precision and recall of the product's default judge over the issue-44
    near-duplicate set (``near_duplicates.heldout-h2.json``; dev: none of its own)."""
    if split != "heldout":
        return []
    path = DATA / "near_duplicates.heldout-h2.json"
    from webapp.similarity.judge import default_judge

    judge = default_judge()
    counts: dict[str, list[int]] = {}  # lang → [tp, fp, fn]
    for item in _items(path):
        said = bool(judge.same_fact(item["a"], item["b"]).verdict)
        for lang in ("all", item["language"]):
            c = counts.setdefault(lang, [0, 0, 0])
            c[0] += int(said and item["label"])
            c[1] += int(said and not item["label"])
            c[2] += int(not said and item["label"])
    lines = [f"Near-duplicates, issue 44 ({judge.embedder.name}): {path.name}"]
    for lang in ("all", *LANGUAGES):
        tp, fp, fn = counts.get(lang, [0, 0, 0])
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        floor = "  (floor: precision ≥ 0.95)" if lang == "all" else ""
        lines.append(
            f"  near-duplicates  {lang:8} precision {precision:5.2f} ({tp}/{tp + fp})"
            f"  recall {recall:5.2f} ({tp}/{tp + fn}){floor}"
        )
    return lines


def section(split: str, show_misses: bool = False) -> list[str]:
    """Every issue-44 figure of one split."""
    return [
        *auto_lines(split),
        "",
        *fact_form_lines(split, show_misses and split == "dev"),
        *([""] if split == "heldout" else []),
        *near_duplicate_lines(split),
    ]
