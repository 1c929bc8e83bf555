"""Fit the calibrated "same fact" model on the DEV judgement sets (never the held-out ones).

    .venv/bin/python benchmarks/fit_calibration.py [e5 use lexical]   # writes calibration.json

For each embedder family, every dev pair that says whether two facts are one becomes a row of
``decisions.pair_features``: the near-duplicate pairs (their label), the contradiction pairs (the
same fact said twice is one; everything else is not) and the reconcile items (the new fact and
the kept memory it restates are one; against the memory it updates, or the closest memory when
it is new, not). A logistic model (L2 penalty, Newton steps) is fitted on the standardised rows.
Its threshold is chosen from five-fold cross-validation over the dev rows: the lowest score at
which the near-duplicate pairs' out-of-fold precision is at least 0.94. The script prints those
cross-validated figures (the honest in-sample estimate) and writes
``webapp/similarity/calibration.json``.
"""

from __future__ import annotations

import itertools
import json
import sys
from datetime import date
from pathlib import Path
from typing import Any

import _judgement as J
import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from webapp.similarity import VectorCache, load_embedder  # noqa: E402
from webapp.similarity.calibrated import CALIBRATION_FILE, FEATURES  # noqa: E402
from webapp.similarity.decisions import pair_features  # noqa: E402
from webapp.similarity.facts import analyse  # noqa: E402
from webapp.similarity.pair_parts import compare_parts  # noqa: E402

SPLIT = "dev"  # the only split this script reads
PENALTY = 1.0  # L2 on the standardised weights (chosen on dev: 0.3-3 give the same picture)
FOLDS = 5
PRECISION = 0.94  # a pair a person confirms: a little recall is worth 1 point of precision
Array = npt.NDArray[np.float64]


def pairs() -> list[tuple[str, str, bool, bool]]:
    """(a, b, same fact?, a near-duplicate item?) for every dev pair that says so, and the
    memories each reconcile item keeps, two by two: different memories of one household, the
    unrelated pairs a store is mostly made of (without them the labelled pairs, chosen to be
    hard, teach that sharing few words means the same fact)."""
    rows = [(i["a"], i["b"], bool(i["label"]), True) for i in J.load(SPLIT, "near_duplicates")]
    rows += [
        (i["a"], i["b"], i["kind"] == "same-value", False) for i in J.load(SPLIT, "contradictions")
    ]
    for item in J.load(SPLIT, "reconcile"):
        if item["expected"] in ("skip", "update"):
            target = item["kept"][item["target"]]
            rows.append((target, item["fact"], item["expected"] == "skip", False))
    seen: set[tuple[str, str]] = set()
    for item in J.load(SPLIT, "reconcile"):
        for a, b in itertools.combinations(item["kept"], 2):
            if (a, b) not in seen and a != b:
                seen.add((a, b))
                rows.append((a, b, False, False))
    return rows


def fit(x: Array, y: Array, penalty: float = PENALTY) -> Array:
    return _newton(x, y, penalty)


def _newton(x: Array, y: Array, penalty: float) -> Array:
    """Logistic regression by Newton steps; the last weight is the bias (not penalised)."""
    x = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(x.shape[1])
    ridge = penalty * np.eye(x.shape[1])
    ridge[-1, -1] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        gradient = x.T @ (p - y) + ridge @ w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + ridge + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w


def scores(w: Array, x: Array) -> Array:
    out: Array = 1.0 / (1.0 + np.exp(-(np.hstack([x, np.ones((len(x), 1))]) @ w)))
    return out


def counts(p: Array, y: Array, threshold: float) -> tuple[int, int, int]:
    said = p >= threshold
    return int((said & (y > 0)).sum()), int((said & (y == 0)).sum()), int((~said & (y > 0)).sum())


def fit_family(family: str) -> dict[str, Any]:
    cache = VectorCache(load_embedder(family))
    rows = pairs()
    cache.vectors(list(dict.fromkeys(t for a, b, _, _ in rows for t in (a, b))))
    x = np.array(
        [
            pair_features(fa, fb, compare_parts(fa, fb), float(v[0] @ v[1]))
            for a, b, _, _ in rows
            for fa, fb, v in [(analyse(a), analyse(b), cache.vectors([a, b]))]
        ]
    )
    y = np.array([float(label) for _, _, label, _ in rows])
    nd = np.array([is_nd for _, _, _, is_nd in rows])
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = (x - mean) / scale
    # out-of-fold scores: every row scored by a model fitted without it
    folds = np.arange(len(rows)) % FOLDS
    oof = np.zeros(len(rows))
    for k in range(FOLDS):
        w = fit(z[folds != k], y[folds != k])
        oof[folds == k] = scores(w, z[folds == k])
    threshold = 0.5
    for t in np.round(np.arange(0.30, 0.96, 0.01), 2):
        tp, fp, _ = counts(oof[nd], y[nd], float(t))
        if tp and tp / (tp + fp) >= PRECISION:
            threshold = float(t)
            break
    for t in (0.55, 0.6, 0.65, 0.7):
        a, b, c = counts(oof[nd], y[nd], t)
        print(f"  cv at {t:.2f}: precision {a / max(1, a + b):.2f} recall {a / max(1, a + c):.2f}")
    tp, fp, fn = counts(oof[nd], y[nd], threshold)
    print(
        f"{cache.embedder.name}: {len(rows)} dev pairs ({int(nd.sum())} near-duplicate items);"
        f" threshold {threshold:.2f}; near-duplicates cross-validated on dev:"
        f" precision {tp / max(1, tp + fp):.2f} ({tp}/{tp + fp}),"
        f" recall {tp / max(1, tp + fn):.2f} ({tp}/{tp + fn})"
    )
    w = fit(z, y)
    return {
        "mean": [round(float(v), 6) for v in mean],
        "scale": [round(float(v), 6) for v in scale],
        "weights": [round(float(v), 6) for v in w[:-1]],
        "bias": round(float(w[-1]), 6),
        "threshold": threshold,
    }


def main(argv: list[str]) -> int:
    families = argv or ["e5", "use", "lexical"]
    same = {family: fit_family(family) for family in families}
    previous: dict[str, Any] = {}
    if CALIBRATION_FILE.exists():
        previous = json.loads(CALIBRATION_FILE.read_text("utf-8")).get("same", {})
    document = {
        "about": "Fitted by benchmarks/fit_calibration.py on the dev judgement sets only.",
        "written": date.today().isoformat(),
        "features": list(FEATURES),
        "same": {**previous, **same},
    }
    CALIBRATION_FILE.write_text(json.dumps(document, indent=1) + "\n", "utf-8")
    print(
        f"wrote {CALIBRATION_FILE.relative_to(Path.cwd()) if CALIBRATION_FILE.is_relative_to(Path.cwd()) else CALIBRATION_FILE}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
