"""Issue 35, item 16: what sits in a data folder in place of a file never crashes, hangs or
swallows the machine's memory.

A vector cache whose header claims 2**40 rows raised MemoryError in ``stats``, ``repair`` and
the judge (so ``repair`` could not rebuild it); a cache of 2 MB compressed inflated them to
~2.6 GB; a FIFO in place of the cache, ``people.json`` or ``attention-dismissed.json`` (or any
store, its history log or a key) hung them, waiting for a writer. Every case runs in a real
process with a deadline, and its peak memory is measured."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from webapp.similarity import VectorCache
from webapp.similarity.embedders import LexicalEmbedder
from webapp.stores import MemoryStore

REPO = Path(__file__).resolve().parent.parent
ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "CONVERSATION_"))},
    "MEMORY_EMBEDDER": "lexical",
}
DEADLINE = 60  # seconds; a hang is a test failure, never a stuck run


def _high_water_mb(pid: int, seen: int) -> int:
    """The process's own peak resident memory so far (VmHWM, MB), or ``seen`` once it is gone.

    Not ``wait4``'s ru_maxrss: on Linux a child's starts at its parent's size at the fork,
    and a test worker that loaded the similarity model is some 400 MB."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return seen
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return max(seen, int(line.split()[1]) // 1024)
    return seen


def run(*args: str, data_dir: Path) -> tuple[subprocess.CompletedProcess[str], int]:
    """``memory-curator ARGS --data-dir DATA_DIR`` as a real process, with its peak resident
    memory in MB (sampled from /proc while it runs); killed, and the test failed, if it still
    runs after DEADLINE."""
    command = [sys.executable, "-m", "webapp", *args, "--data-dir", str(data_dir)]
    out_file = data_dir.parent / f"out-{time.monotonic_ns()}.txt"
    err_file = out_file.with_suffix(".err")
    with out_file.open("w") as out, err_file.open("w") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, env=ENV, cwd=REPO)
        deadline = time.monotonic() + DEADLINE
        peak = 0
        while True:
            peak = _high_water_mb(process.pid, peak)
            pid, status, _usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                process.kill()
                os.wait4(process.pid, 0)
                pytest.fail(f"`{' '.join(args)}` still running after {DEADLINE} s (hangs)")
            time.sleep(0.01)
    process.returncode = os.waitstatus_to_exitcode(status)
    result = subprocess.CompletedProcess(
        command, process.returncode, out_file.read_text(), err_file.read_text()
    )
    return result, peak


# ------------------------------------------------------------------ hostile caches
def good_cache(folder: Path) -> Path:
    """A data folder whose memories have a vector cache written by the program itself."""
    store = MemoryStore(folder / "memories.json", lock_timeout=5)
    store.add("Likes green tea")
    store.add("Walks the dog at seven")
    cache = VectorCache(LexicalEmbedder(), folder / "memories.vectors.npz")
    cache.vectors(["Likes green tea", "Walks the dog at seven"])
    cache.save()
    assert VectorCache.inspect(cache.path)[2] is None
    return cache.path


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def npy_header(shape: tuple[int, ...], descr: str = "<f4", version: int = 2) -> bytes:
    buffer = io.BytesIO()
    header = {"descr": descr, "fortran_order": False, "shape": shape}
    if version == 1:
        np.lib.format.write_array_header_1_0(buffer, header)
    else:
        np.lib.format.write_array_header_2_0(buffer, header)
    return buffer.getvalue()


def claims(path: Path, member: str, rows: int) -> None:
    """Rewrite ``member``'s header to claim ``rows`` rows (its data left as it was)."""
    parts = members(path)
    array = np.lib.format.read_array(io.BytesIO(parts[member]))
    descr = np.lib.format.dtype_to_descr(array.dtype)
    parts[member] = npy_header((rows, *array.shape[1:]), descr) + array.tobytes()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)


def bomb(path: Path, megabytes: int, dim: int = 512) -> None:
    """A cache whose vectors (and keys) inflate to ``megabytes`` of zeros, deflated to some
    thousandth of that."""
    parts = members(path)
    rows = megabytes * 1024 * 1024 // (dim * 4)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("meta.npy", parts["meta.npy"])
        keys = io.BytesIO()
        np.lib.format.write_array(keys, np.zeros((rows, 16), np.uint8))
        archive.writestr("keys.npy", keys.getvalue())
        with archive.open("vectors.npy", "w", force_zip64=True) as out:
            out.write(npy_header((rows, dim)))
            block = bytes(1024 * 1024)
            for _ in range(megabytes):
                out.write(block)


def fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


HOSTILE_CACHES = {
    "vectors-claim-2**40-rows": lambda p: claims(p, "vectors.npy", 2**40),
    "vectors-claim-2**31-rows": lambda p: claims(p, "vectors.npy", 2**31),
    "keys-claim-2**40-rows": lambda p: claims(p, "keys.npy", 2**40),
    "meta-claims-a-huge-string": lambda p: claims(p, "meta.npy", 2**40),
    "bomb-40-MB": lambda p: bomb(p, 40),
    "fifo": fifo,
    "folder": lambda p: (p.unlink(), p.mkdir()),
}


@pytest.mark.parametrize("spoil", sorted(HOSTILE_CACHES))
def test_a_hostile_cache_is_reported_unusable_and_never_allocated(data_dir, spoil):
    path = good_cache(data_dir)
    HOSTILE_CACHES[spoil](path)
    found: dict[str, object] = {}

    def read() -> None:
        found["inspected"] = VectorCache.inspect(path)
        found["cache"] = VectorCache(LexicalEmbedder(), path)

    # In a thread of its own: a read that waits on a FIFO fails the test, not hangs it.
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "reading the cache hangs"
    count, _model, problem = found["inspected"]
    assert problem is not None and count == 0
    # The judge starts with no vectors and computes them again.
    cache = found["cache"]
    assert len(cache) == 0 and cache.load_error is not None


def test_the_bounds_leave_the_programs_own_caches_alone(data_dir):
    """A cache of some thousands of vectors, as ``save`` writes it, is read whole."""
    path = good_cache(data_dir)
    cache = VectorCache(LexicalEmbedder(), path)
    texts = [f"Fact number {i}" for i in range(3000)]
    cache.vectors(texts)
    assert cache.save()
    again = VectorCache(LexicalEmbedder(), path)
    assert again.load_error is None and again.loaded == len(cache) >= 3000


@pytest.mark.parametrize(
    "spoil", ["vectors-claim-2**40-rows", "keys-claim-2**40-rows", "fifo", "bomb-300-MB"]
)
def test_stats_repair_and_the_judge_survive_a_hostile_cache_and_repair_rebuilds_it(
    tmp_path, data_dir, spoil
):
    path = good_cache(data_dir)
    if spoil == "bomb-300-MB":
        bomb(path, 300)
        assert path.stat().st_size < 1_000_000  # a third of a MB on disk
    else:
        HOSTILE_CACHES[spoil](path)
    peaks = {}
    stats, peaks["stats"] = run("stats", data_dir=data_dir)
    assert "Traceback" not in stats.stderr, stats.stderr[-2000:]
    assert "cannot be read" in stats.stdout
    repaired, peaks["repair"] = run("repair", data_dir=data_dir)
    assert repaired.returncode == 0, repaired.stderr[-2000:]
    assert "Traceback" not in repaired.stderr
    assert not path.exists(), "repair deletes what cannot be read (it is computed again)"
    # The judge (adding a memory compares it with those kept) computes the vectors again; a
    # cache it saves (when its saver runs before the process ends) is a readable one.
    added, peaks["add"] = run("memories", "add", "Reads at night", data_dir=data_dir)
    assert added.returncode == 0, added.stderr[-2000:]
    assert not path.exists() or VectorCache.inspect(path)[2] is None
    # Peak memory of each process: what starting the program takes, not the file's claim
    # (the 300 MB bomb took 500+ MB before; a 2 GB one 2.6 GB).
    assert max(peaks.values()) < 300, peaks


@pytest.mark.parametrize("spoil", ["vectors-claim-2**40-rows", "fifo"])
def test_the_judge_works_beside_a_hostile_cache(data_dir, spoil):
    path = good_cache(data_dir)
    HOSTILE_CACHES[spoil](path)
    added, peak = run("memories", "add", "Drinks oolong", data_dir=data_dir)
    assert added.returncode == 0 and "Traceback" not in added.stderr, added.stderr[-2000:]
    assert peak < 300


# ------------------------------------------------------------------ FIFOs in place of files
STORE_FILES = [
    "people.json",
    "attention-dismissed.json",
    "memories.json",
    "review.json",
    "memories.tombstones.json",
]


@pytest.mark.parametrize("name", STORE_FILES)
def test_a_fifo_in_place_of_a_store_file_is_reported_and_repair_sets_it_aside(data_dir, name):
    good_cache(data_dir)
    fifo(data_dir / name)
    stats, _ = run("stats", data_dir=data_dir)
    assert "Traceback" not in stats.stderr
    assert "FIFO" in stats.stdout + stats.stderr
    repaired, _ = run("repair", data_dir=data_dir)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert (data_dir / name).is_file() or not (data_dir / name).exists()
    assert list(data_dir.glob(f"{name}.corrupt-*")), "the FIFO is set aside, not deleted"
    again, _ = run("stats", data_dir=data_dir)
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_fifo_in_place_of_the_history_log_is_set_aside_on_the_next_change(data_dir):
    good_cache(data_dir)
    log = data_dir / "memories.history.jsonl"
    fifo(log)
    for args in (("stats",), ("repair",)):
        result, _ = run(*args, data_dir=data_dir)
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
    added, _ = run("memories", "add", "Drinks oolong", data_dir=data_dir)
    assert added.returncode == 0, added.stderr[-2000:]
    assert log.is_file() and "Drinks oolong" in log.read_text("utf-8")
    assert list(data_dir.glob("memories.history.jsonl.corrupt-*"))


def test_a_fifo_in_place_of_the_backup_is_replaced_on_the_next_change(data_dir):
    good_cache(data_dir)
    fifo(data_dir / "memories.json.bak")
    added, _ = run("memories", "add", "Drinks oolong", data_dir=data_dir)
    assert added.returncode == 0, added.stderr[-2000:]
    assert (data_dir / "memories.json.bak").is_file()


def in_a_process(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Python ``code`` run in a real process with ``args``; a hang fails the test."""
    try:
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            capture_output=True,
            text=True,
            env=ENV,
            timeout=DEADLINE,
            cwd=REPO,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {DEADLINE} s (hangs)")


def test_a_fifo_in_place_of_the_fingerprint_key_is_set_aside_for_a_new_key(data_dir):
    fifo(data_dir / "memories.tombstones.key")
    code = (
        "import sys; from webapp.stores.tombstones import fingerprint_key;"
        "print(len(fingerprint_key(sys.argv[1])))"
    )
    result = in_a_process(code, str(data_dir / "memories.json"))
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) > 0 and (data_dir / "memories.tombstones.key").is_file()
    assert list(data_dir.glob("memories.tombstones.key.corrupt-*"))


def test_a_fifo_in_place_of_the_dashboards_secret_key_makes_a_new_key(data_dir):
    fifo(data_dir / ".secret_key")
    code = (
        "import sys; from pathlib import Path; from types import SimpleNamespace;"
        "from webapp.web.plumbing.secret_key import secret_key_for;"
        "print(len(secret_key_for(SimpleNamespace(data_dir=Path(sys.argv[1])))))"
    )
    result = in_a_process(code, str(data_dir))
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) >= 32 and (data_dir / ".secret_key").is_file()
