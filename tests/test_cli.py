"""The stats, repair and export commands, run as real processes (``python -m webapp``)."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.cli import run_cli
from tests.support.stores import conversation_store, memory_store
from webapp.stores import MemoryStore
from webapp.stores.timefmt import to_iso


@pytest.fixture
def filled(data_dir):
    memories = memory_store(data_dir / "memories.json").init()
    memories.add("Prefers tea", category="preference")
    memories.add("喜欢喝咖啡")
    conversations = conversation_store(data_dir / "conversations" / "conversations.json").init()
    conversations.add_exchange("slack:1", "hi", "hello")
    return data_dir


def test_stats_shows_paths_and_fill(filled):
    done = run_cli("stats", "--data-dir", str(filled))
    assert done.returncode == 0, done.stderr
    assert f"Memories:      {filled / 'memories.json'} [ok]" in done.stdout
    assert "2 of 100 memories, 16 of 10000 characters" in done.stdout
    assert "1 threads, 2 turns" in done.stdout
    assert "standalone" in done.stdout


def test_stats_follows_the_environment(filled):
    done = run_cli("stats", env={"MEMORY_DATA_DIR": str(filled), "MEMORY_MAX_ITEMS": "5"})
    assert done.returncode == 0, done.stderr
    assert "2 of 5 memories" in done.stdout


def test_stats_on_an_empty_folder_creates_nothing(data_dir):
    done = run_cli("stats", "--data-dir", str(data_dir))
    assert done.returncode == 0, done.stderr
    assert "[missing]" in done.stdout and "0 of 100 memories" in done.stdout
    assert list(data_dir.iterdir()) == []


def test_a_bad_setting_is_one_clear_line(data_dir):
    done = run_cli("stats", "--data-dir", str(data_dir), env={"MEMORY_MAX_CHARS": "lots"})
    assert done.returncode == 2
    assert "MEMORY_MAX_CHARS" in done.stderr and "Traceback" not in done.stderr


def test_export_to_stdout_is_the_on_disk_form(filled):
    done = run_cli("export", "--data-dir", str(filled))
    assert done.returncode == 0, done.stderr
    exported = json.loads(done.stdout)
    assert exported == json.loads((filled / "memories.json").read_bytes())
    assert [m["content"] for m in exported] == ["Prefers tea", "喜欢喝咖啡"]


def test_export_to_a_file(filled, tmp_path):
    target = tmp_path / "backup.json"
    done = run_cli("export", "--data-dir", str(filled), "-o", str(target))
    assert done.returncode == 0, done.stderr
    assert json.loads(target.read_bytes())[1]["content"] == "喜欢喝咖啡"


def test_export_to_an_impossible_place_is_a_clear_error(filled, tmp_path):
    done = run_cli(
        "export", "--data-dir", str(filled), "-o", str(tmp_path / "no" / "such" / "x.json")
    )
    assert done.returncode == 1
    assert "Could not write" in done.stderr and "Traceback" not in done.stderr


def test_export_of_a_damaged_store_is_refused(filled):
    (filled / "memories.json").write_bytes(b"[{]")
    done = run_cli("export", "--data-dir", str(filled))
    assert done.returncode == 2
    assert "damaged" in done.stderr and done.stdout == ""


def test_repair_of_healthy_stores_changes_nothing(filled):
    before = (filled / "memories.json").read_bytes()
    done = run_cli("repair", "--data-dir", str(filled))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(": ok") == 2
    assert (filled / "memories.json").read_bytes() == before


def test_repair_without_a_backup_starts_an_empty_store(filled):
    path = filled / "conversations" / "conversations.json"
    path.write_bytes(b'["not", "an", "object"]')
    path.with_name("conversations.json.bak").unlink()
    done = run_cli("repair", "--data-dir", str(filled))
    assert done.returncode == 0, done.stderr
    assert f"{path}: damaged; moved to" in done.stdout and "an empty store" in done.stdout
    [moved] = [p for p in path.parent.iterdir() if ".corrupt-" in p.name]
    assert moved.read_bytes() == b'["not", "an", "object"]'
    assert json.loads(path.read_bytes()) == {}


@pytest.mark.parametrize("command", [["stats"], ["export"], ["repair"], ["demo"]])
def test_an_unreadable_memory_file_is_one_clear_line_not_a_traceback(data_dir, command):
    # A folder where the file belongs cannot be read even by root (unlike chmod 000).
    (data_dir / "memories.json").mkdir()
    done = run_cli(*command, "--data-dir", str(data_dir))
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()[-1:]
    assert line.startswith("Error: ") and "memories.json" in line
    assert (data_dir / "memories.json").is_dir()


def test_stats_names_the_unreadable_file_and_still_reports_the_others(filled):
    path = filled / "memories.json"
    path.unlink()
    path.mkdir()
    done = run_cli("stats", "--data-dir", str(filled))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"Memories:      {path} [unreadable]" in done.stdout
    assert "1 threads, 2 turns" in done.stdout
    assert "Is a directory" in done.stderr


def test_a_data_dir_setting_that_is_a_file_is_one_clear_line(tmp_path):
    (tmp_path / "afile").write_text("x")
    done = run_cli("stats", env={"MEMORY_DATA_DIR": str(tmp_path / "afile")})
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("Error: ")


def test_repair_also_mends_the_review_queue_and_the_extraction_state(filled):
    """The error for a damaged review file says to run `repair`; repair must then fix it."""
    review, state = filled / "review.json", filled / "extraction-state.json"
    review.write_bytes(b'[{"broken')
    state.write_bytes(b"\x00\x00")
    first = run_cli("repair", "--data-dir", str(filled))
    assert first.returncode == 0, first.stderr
    assert f"{review}: damaged; moved to" in first.stdout
    assert f"{state}: damaged; moved to" in first.stdout
    assert json.loads(review.read_bytes()) == [] and json.loads(state.read_bytes()) == {}
    kept = sorted(p.read_bytes() for p in filled.iterdir() if ".corrupt-" in p.name)
    assert kept == [b"\x00\x00", b'[{"broken']
    second = run_cli("repair", "--data-dir", str(filled))
    assert second.returncode == 0 and second.stdout.count(": ok") == 4


def test_stats_reports_a_damaged_review_queue(filled):
    (filled / "review.json").write_bytes(b"{")
    done = run_cli("stats", "--data-dir", str(filled))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"Review queue:  {filled / 'review.json'} [corrupt]" in done.stdout
    assert "review.json is damaged" in done.stderr


def test_export_writes_a_lone_surrogate_as_a_replacement_character(data_dir, tmp_path):
    """Another program wrote a lone surrogate (the JSON escape \\ud800) into the file: the
    export is still valid UTF-8, with U+FFFD in its place, to standard output and to a file."""
    (data_dir / "memories.json").write_text(
        '[{"id": "bad000000001", "content": "Likes tea \\ud800 a lot", '
        '"createdAt": "2024-01-01T00:00:00.000Z", "updatedAt": "2024-01-01T00:00:00.000Z"}]\n',
        encoding="ascii",
    )
    done = run_cli("export", "--data-dir", str(data_dir))
    assert done.returncode == 0, done.stderr
    assert [m["content"] for m in json.loads(done.stdout)] == ["Likes tea \ufffd a lot"]
    target = tmp_path / "export.json"
    done = run_cli("export", "--data-dir", str(data_dir), "-o", str(target))
    assert done.returncode == 0, done.stderr
    assert json.loads(target.read_bytes())[0]["content"] == "Likes tea \ufffd a lot"


def test_list_versions_gives_the_version_update_checks(filled):
    # `memories update --help` named `memories list --versions`, which did not exist.
    listed = run_cli("memories", "list", "--versions", "--data-dir", str(filled))
    assert listed.returncode == 0, listed.stderr
    line = next(row for row in listed.stdout.splitlines() if "Prefers tea" in row)
    memory_id, version = re.match(r"\[(\w+)\] version (\S+) ", line).groups()  # type: ignore[union-attr]
    found = run_cli("memories", "search", "tea", "--versions", "--data-dir", str(filled))
    assert f"[{memory_id}] version {version} " in found.stdout
    updated = run_cli(
        "memories",
        "update",
        memory_id,
        "Prefers green tea",
        "--version",
        version,
        "--data-dir",
        str(filled),
    )
    assert updated.returncode == 0, updated.stderr
    stale = run_cli(
        "memories",
        "update",
        memory_id,
        "Prefers black tea",
        "--version",
        version,
        "--data-dir",
        str(filled),
    )
    assert stale.returncode != 0 and "[conflict]" in stale.stderr


@pytest.mark.parametrize("flag", [False, True])
def test_memories_add_reads_a_stated_end_unless_told_not_to(data_dir, flag):
    args = ["memories", "add", "Is in Tokyo until Friday.", "--data-dir", str(data_dir)]
    done = run_cli(*args, *(["--no-expiry"] if flag else []), env={"MEMORY_TIMEZONE": "UTC"})
    assert done.returncode == 0, done.stderr
    [memory] = MemoryStore(data_dir / "memories.json").get_all()
    if flag:
        assert memory.expires_at is None
        assert "until" not in done.stdout.split("Friday.", 1)[1]
    else:
        assert memory.expires_at is not None
        assert done.stdout.rstrip().endswith(f"— until {to_iso(memory.expires_at)}")
