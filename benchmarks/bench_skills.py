"""How long SkillDocumentStore.list() takes over 2,000 documents: cold, unchanged, after one change.

Run: .venv/bin/python benchmarks/bench_skills.py [--documents N]
Prints figures only; the machine is shared, so nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from webapp.stores import SkillDocumentStore
from webapp.stores.jsonbytes import encode
from webapp.stores.jsonread import RACY_NS
from webapp.stores.skills import document_file_name


def populate(folder: Path, count: int) -> None:
    """Write ``count`` valid documents directly (faster than save(), same files)."""
    folder.mkdir(parents=True)
    for i in range(count):
        skill = f"skill-{i // 10:04d}"
        record = {
            "id": f"doc-{i}",
            "type": "reference" if i % 10 else "skill",
            "skill": skill,
            "skillDescription": "Benchmark skill 基準測試",
            "snippet": f"document {i}",
            "content": f"# Document {i}\n" + "七言絕句 tonal patterns and rhyme. " * 20,
            "meta": {"name": f"Doc {i}"},
            "createdAt": 1,
            "updatedAt": 1,
        }
        if i % 10:
            record["reference"] = f"references/ref-{i}.md"
        (folder / document_file_name(record)).write_bytes(encode(record))


def timed(call, repeat: int = 1) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "skills"
        populate(folder, args.documents)
        store = SkillDocumentStore(folder, lock_timeout=10)
        racy = timed(store.list)[0]
        # Files written less than RACY_NS ago are compared byte for byte; wait that out so
        # the next figures show a folder nobody touched recently (the normal case).
        time.sleep(RACY_NS / 1e9 + 0.1)
        cold_store = SkillDocumentStore(folder, lock_timeout=10)
        cold = timed(cold_store.list)[0]
        warm = timed(cold_store.list, repeat=50)
        one = cold_store.list()[5]
        cold_store.save({"id": one.id, "content": one.content + " changed"})
        after_change = timed(cold_store.list)[0]
        search = timed(lambda: cold_store.search("七言絕句 rhyme"), repeat=5)
        count = len(cold_store.list())
    print(f"{count} documents in {folder.name}/")
    print(f"list() cold (new store, every file parsed):        {cold * 1000:8.1f} ms")
    print(
        f"list() unchanged (median of 50):                   {statistics.median(warm) * 1000:8.2f} ms"
    )
    print(f"list() unchanged (worst of 50):                    {max(warm) * 1000:8.2f} ms")
    print(f"list() after one save (one file re-read):          {after_change * 1000:8.1f} ms")
    print(f"list() right after writing all files (bytes compared): {racy * 1000:5.1f} ms")
    print(
        f"search('七言絕句 rhyme') over all (median of 5):      {statistics.median(search) * 1000:8.1f} ms"
    )
    print(f"(files per second cold: {count / cold:,.0f}; os.cpu_count()={os.cpu_count()})")


if __name__ == "__main__":
    main()
