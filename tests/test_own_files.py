"""Each store names its own files (``own_files``), and the curator checks and repairs the data
folder with them (``Curator.folder_files``, ``stats``, ``repair``): the library's door to what
``memory-curator stats`` and ``repair`` print."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from tests.support.data import make_settings
from webapp.curator import Curator
from webapp.settings import Settings
from webapp.stores import MemoryStore, RepairReport, SkillDocumentStore
from webapp.stores.owned import (
    BACKUP,
    DAMAGED,
    DATA,
    FORMAT,
    HISTORY,
    KEY,
    LOCK,
    SET_ASIDE,
    SKILL,
    UNFINISHED,
    UPLOAD,
)
from webapp.stores.tombstones import TombstoneStore, fingerprint_key


def _kinds(files: list) -> dict[str, str]:
    return {owned.path.name: owned.kind for owned in files}


def test_a_memory_store_lists_its_file_backup_lock_history_and_what_was_set_aside(
    tmp_path: Path,
) -> None:
    settings = make_settings(tmp_path)
    store = MemoryStore.from_settings(settings)
    first = store.add("The cat is called Momo")
    store.update(first.id, "The cat is called Momo-chan")
    folder = settings.memory_file.parent
    records = json.loads(settings.memory_file.read_bytes())
    settings.memory_file.write_text(json.dumps([*records, {"id": 5}]))  # an unusable record
    store.repair_report()
    (folder / ".memories.json.k1ll3dwr.tmp").write_bytes(b"[")  # a killed write
    (folder / ".memories.json.bak.abcd1234.tmp").write_bytes(b"[")  # a killed backup copy
    (folder / "memories.json.notes").write_text("mine")  # not the store's
    (folder / ".memories.json.toolongname.tmp").write_text("mine")  # not a temp name it makes

    kinds = _kinds(store.own_files())

    rejected = [name for name, kind in kinds.items() if kind == SET_ASIDE]
    assert rejected and all(name.startswith("memories.json.rejected-") for name in rejected)
    assert {name: kind for name, kind in kinds.items() if kind != SET_ASIDE} == {
        "memories.json": DATA,
        "memories.json.bak": BACKUP,
        "memories.json.lock": LOCK,
        "memories.json.format": FORMAT,
        "memories.history.jsonl": HISTORY,
        ".memories.json.k1ll3dwr.tmp": UNFINISHED,
        ".memories.json.bak.abcd1234.tmp": UNFINISHED,
    }


def test_a_store_without_a_history_log_lists_none_and_a_damaged_file_set_aside(
    tmp_path: Path,
) -> None:
    settings = make_settings(tmp_path)
    settings.data_dir.mkdir(parents=True)
    tombstones = TombstoneStore.from_settings(settings)
    tombstones.path.write_bytes(b"[{")
    tombstones.repair_report()
    fingerprint_key(settings.memory_file)

    kinds = _kinds(tombstones.own_files())

    assert tombstones.history_path is None
    assert kinds.pop("memories.tombstones.key") == KEY
    [aside] = [name for name, kind in kinds.items() if kind == DAMAGED]
    assert aside.startswith("memories.tombstones.json.corrupt-")
    assert HISTORY not in kinds.values()


def _skill_zip(body: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("tea/SKILL.md", f"---\nname: tea\ndescription: Tea.\n---\n{body}\n")
    return buffer.getvalue()


def test_the_skills_folder_lists_documents_lock_history_temps_and_kept_uploads(
    tmp_path: Path,
) -> None:
    settings = make_settings(tmp_path)
    store = SkillDocumentStore.from_settings(settings)
    store.import_skill_zip(_skill_zip("Brew tea."))
    staged = store.preview_import_zip(_skill_zip("Brew green tea."))
    skills = Path(settings.skills_dir)
    (skills / ".tea-skill.json.abcd1234.tmp").write_text("{")
    (skills / "notes.txt").write_text("mine")

    kinds = _kinds(store.own_files())

    assert kinds.pop(f"{staged.token}.zip") == UPLOAD
    assert kinds.pop(".tea-skill.json.abcd1234.tmp") == UNFINISHED
    assert kinds.pop(".lock") == LOCK
    assert kinds.pop(".skills.history.jsonl") == HISTORY
    assert "notes.txt" not in kinds
    assert kinds and set(kinds.values()) == {SKILL}


def test_the_curator_knows_every_file_and_names_the_strangers(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    curator = Curator.from_settings(settings)
    memory = curator.remember("The cat is called Momo")
    curator.forget(memory.id, forever=True)
    curator.conversations.add_exchange("cli:session-1", "Hi", "Hello")
    stranger = settings.data_dir / "notes.txt"
    stranger.write_text("mine")

    found = curator.folder_files()

    assert found.pop(stranger) == ""
    assert found and all(found.values()), found
    assert sorted([*found, stranger]) == sorted(
        p for p in settings.data_dir.rglob("*") if p.is_file()
    )
    summary = curator.stats().folder
    assert summary.strangers == [stranger]
    assert DATA not in summary.kinds and summary.kinds[LOCK] >= 2


def _damaged_memories(settings: Settings) -> Curator:
    curator = Curator.from_settings(settings)
    curator.remember("The cat is called Momo")
    curator.remember("Tea without sugar")
    settings.memory_file.write_bytes(b'[{"cut')
    return Curator.from_settings(settings)


def test_stats_names_a_damaged_file_and_repair_sets_it_aside(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    curator = _damaged_memories(settings)

    found = curator.stats()

    assert found.memories.status == "corrupt" and found.usage is None
    assert found.problems and found.problems[0] is found.memories.problem
    steps = list(curator.repair())
    [report] = [s for s in steps if isinstance(s, RepairReport) and s.quarantine is not None]
    assert report.path == settings.memory_file
    assert report.quarantine is not None and report.quarantine.read_bytes() == b'[{"cut'
    again = Curator.from_settings(settings).stats()
    assert again.problems == [] and again.memories.status == "ok"
    assert again.usage is not None and again.usage.items == 2
    assert again.folder.kinds[DAMAGED] == 1
