"""Data folders for the tests: settings pointing at a throw-away folder, the stores' files read
straight from the disk, zips of folders, and stores seeded the way a host program fills them."""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from webapp.settings import Settings
from webapp.stores import MemoryStore, ReviewQueue
from webapp.stores.timefmt import parse_ts, to_iso


def make_settings(folder: Path, **changes: Any) -> Settings:
    """Standalone settings for tests: the defaults (nothing from the real environment) with
    ``changes``, every store under ``folder / "data"``."""
    base = Settings.from_env(environ={}, options_file=folder / "no-options.json", cwd=folder)
    return replace(base, **changes).with_data_dir(folder / "data")


def on_disk(memory_file: Path) -> list[dict[str, Any]]:
    """The memories file as parsed JSON, read straight from the disk ([] when it is missing)."""
    if not memory_file.exists():
        return []
    return json.loads(memory_file.read_bytes().decode("utf-8"))


def zip_of(folder: Path, prefix: str = "") -> bytes:
    """A .zip of ``folder``'s files (as a person would upload a skill folder), names under ``prefix``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, prefix + path.relative_to(folder).as_posix())
    return buffer.getvalue()


def write_thread(data_dir: Path, said_at: datetime, *messages: str) -> None:
    """Write the conversations file with one thread, ``cli:one``: each of ``messages`` said by
    the user at ``said_at`` and answered "Noted."."""
    turns = []
    for text in messages:
        turns.append({"role": "user", "content": text, "timestamp": to_iso(said_at)})
        turns.append({"role": "assistant", "content": "Noted.", "timestamp": to_iso(said_at)})
    folder = data_dir / "conversations"
    folder.mkdir(exist_ok=True)
    thread = {"turns": turns, "createdAt": to_iso(said_at), "trimmed": False}
    (folder / "conversations.json").write_text(json.dumps({"cli:one": thread}), "utf-8")


def memories_and_review(data_dir: Path) -> tuple[MemoryStore, ReviewQueue]:
    """The memory store and the Review queue of ``data_dir``, as the extraction reads them."""
    memories = MemoryStore(data_dir / "memories.json")
    return memories, ReviewQueue(data_dir / "review.json", memories)


def an_hour_ago(memory_file: Path) -> None:
    """Move every time in the memory file and its history log an hour back (as if what is
    there now was written an hour ago)."""

    def back(value: str) -> str:
        return to_iso(parse_ts(value) - timedelta(hours=1))

    records = json.loads(memory_file.read_text("utf-8"))
    for record in records:
        record.update(createdAt=back(record["createdAt"]), updatedAt=back(record["updatedAt"]))
    memory_file.write_text(json.dumps(records), "utf-8")
    log = memory_file.with_name("memories.history.jsonl")
    entries = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    for entry in entries:
        entry["ts"] = back(entry["ts"])
        for side in ("before", "after"):
            if isinstance(entry.get(side), dict):
                entry[side].update(
                    createdAt=back(entry[side]["createdAt"]),
                    updatedAt=back(entry[side]["updatedAt"]),
                )
    log.write_text("".join(json.dumps(e) + "\n" for e in entries), "utf-8")
