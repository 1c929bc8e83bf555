"""``memory-curator skills import | list | check``, run as a real process."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from tests.support.cli import run_cli

SAMPLES = (
    Path(__file__).resolve().parents[1] / "webapp" / "demo_data" / "skills"
)  # copy of ../shared/samples


@pytest.fixture
def src(tmp_path: Path) -> Path:
    target = tmp_path / "src"
    shutil.copytree(SAMPLES, target)
    return target


def test_import_list_check_round_trip(src, data_dir):
    first = run_cli("skills", "import", str(src), "--data-dir", str(data_dir))
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [
        "home-climate: 2 added, 0 updated, 0 unchanged",
        "poem-writer: 3 added, 0 updated, 0 unchanged",
    ]
    again = run_cli("skills", "import", str(src / "poem-writer"), "--data-dir", str(data_dir))
    assert again.stdout.strip() == "poem-writer: 0 added, 0 updated, 3 unchanged"
    listing = run_cli("skills", "list", "--data-dir", str(data_dir))
    assert listing.returncode == 0
    lines = listing.stdout.splitlines()
    assert lines[0] == "home-climate" and "poem-writer" in lines
    assert any("poem-writer-reference-qijue-" in line and "七言絕句 — " in line for line in lines)
    check = run_cli("skills", "check", "--data-dir", str(data_dir))
    assert check.returncode == 0
    assert "5 document(s), all valid" in check.stdout


def test_check_reports_invalid_files_and_exits_1(src, data_dir):
    run_cli("skills", "import", str(src / "home-climate"), "--data-dir", str(data_dir))
    (data_dir / "skills" / "broken.json").write_text('{"id": "x", "type": "skill"', "utf-8")
    check = run_cli("skills", "check", "--data-dir", str(data_dir))
    assert check.returncode == 1
    assert "2 valid document(s), 1 problem(s)" in check.stdout
    assert "broken.json:" in check.stdout
    listing = run_cli("skills", "list", "--data-dir", str(data_dir))
    assert listing.returncode == 0 and "home-climate" in listing.stdout
    assert "1 file(s) skipped" in listing.stderr


def test_import_a_zip_and_respect_memory_skills_dir(src, tmp_path):
    archive = tmp_path / "poem-writer.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in (src / "poem-writer").rglob("*.md"):
            zf.write(path, "poem-writer/" + path.relative_to(src / "poem-writer").as_posix())
    skills_dir = tmp_path / "my-skills"
    env = {"MEMORY_SKILLS_DIR": str(skills_dir), "MEMORY_DATA_DIR": str(tmp_path / "data")}
    result = run_cli("skills", "import", str(archive), env=env)
    assert result.returncode == 0, result.stderr
    assert "3 added" in result.stdout
    assert len(list(skills_dir.glob("poem-writer-*.json"))) == 3


def test_bad_sources_give_a_message_not_a_traceback(src, data_dir, tmp_path):
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    result = run_cli("skills", "import", str(empty), "--data-dir", str(data_dir))
    assert result.returncode == 2 and "no SKILL.md" in result.stderr
    (src / "poem-writer" / "SKILL.md").write_text("---\nname: ../up\n---\nbody", "utf-8")
    result = run_cli("skills", "import", str(src / "poem-writer"), "--data-dir", str(data_dir))
    assert result.returncode == 1
    assert "path separator" in result.stderr and "Traceback" not in result.stderr
    bogus_zip = tmp_path / "upload.zip"
    bogus_zip.write_bytes(b"not a zip")
    result = run_cli("skills", "import", str(bogus_zip), "--data-dir", str(data_dir))
    assert result.returncode == 1 and "not a readable zip" in result.stderr


def test_list_of_an_empty_folder(data_dir):
    result = run_cli("skills", "list", "--data-dir", str(data_dir))
    assert result.returncode == 0 and "No skill documents" in result.stdout


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _edited_in_the_dashboard(data_dir: Path, reference: str, content: str) -> str:
    """Save a new text for one imported document as the dashboard's edit form does; its id."""
    from webapp.stores.skills import SkillDocumentStore

    store = SkillDocumentStore(data_dir / "skills", lock_timeout=5)
    [doc] = [d for d in store.list() if d.reference == reference]
    store.save({"id": doc.id, "content": content}, actor="dashboard")
    return doc.id


def test_import_refuses_to_replace_edits_made_in_the_dashboard_without_force(src, data_dir):
    from webapp.stores.skills import SkillDocumentStore

    folder = src / "poem-writer"
    assert run_cli("skills", "import", str(folder), "--data-dir", str(data_dir)).returncode == 0
    doc_id = _edited_in_the_dashboard(data_dir, "references/qijue.md", "My own qijue notes.")
    before = _snapshot(data_dir)

    again = run_cli("skills", "import", str(folder), "--data-dir", str(data_dir))
    assert again.returncode == 1
    assert "references/qijue.md" in again.stderr and "--force" in again.stderr
    assert "Traceback" not in again.stderr
    assert _snapshot(data_dir) == before  # nothing of the skill was written

    forced = run_cli("skills", "import", str(folder), "--force", "--data-dir", str(data_dir))
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.splitlines()[0] == "poem-writer: 0 added, 1 updated, 2 unchanged"
    assert "references/qijue.md" in forced.stdout and "history" in forced.stdout
    store = SkillDocumentStore(data_dir / "skills", lock_timeout=5)
    source_text = (folder / "references" / "qijue.md").read_text("utf-8")
    assert store.get(doc_id).content in source_text
    last = store.history(doc_id)[-1]
    assert last["before"]["content"] == "My own qijue notes."  # the edit can be restored
    store.restore_version(last["hid"])
    assert store.get(doc_id).content == "My own qijue notes."


def test_import_dry_run_shows_the_dashboards_preview_and_saves_nothing(src, data_dir):
    from webapp.stores.skills import SkillDocumentStore

    folder = src / "poem-writer"
    assert run_cli("skills", "import", str(src), "--data-dir", str(data_dir)).returncode == 0
    _edited_in_the_dashboard(data_dir, "references/qijue.md", "My own qijue notes.")
    wulv = folder / "references" / "wulv.md"
    wulv.write_text(wulv.read_text("utf-8") + "\nAvoid 孤平.\n", "utf-8")
    (folder / "references" / "jueju.md").write_text("# 絕句\n\nFour lines.\n", "utf-8")
    store = SkillDocumentStore(data_dir / "skills", lock_timeout=5)
    plan = store.plan_import(folder)  # what the dashboard's upload preview shows
    assert sorted((d.kind, d.edited_here) for d in plan.documents) == [
        ("add", False),
        ("same", False),
        ("update", False),
        ("update", True),
    ]
    before = _snapshot(data_dir)

    dry = run_cli("skills", "import", str(src), "--dry-run", "--data-dir", str(data_dir))
    assert dry.returncode == 1  # the real import would refuse poem-writer
    assert _snapshot(data_dir) == before
    assert dry.stdout.splitlines() == [
        "home-climate: would add 0, update 0, leave 2 unchanged",
        "poem-writer: would be refused (edited here since the last import: "
        "references/qijue.md); nothing would be imported without --force",
        "  add        references/jueju.md",
        "  refused    references/qijue.md (七言絕句): edited here since the last import",
        "  update     references/wulv.md (五言律詩)",
    ]

    forced = run_cli(
        "skills", "import", str(folder), "--dry-run", "--force", "--data-dir", str(data_dir)
    )
    assert forced.returncode == 0, forced.stderr
    assert _snapshot(data_dir) == before
    assert forced.stdout.splitlines() == [
        "poem-writer: would add 1, update 2, leave 1 unchanged",
        "  add        references/jueju.md",
        "  update     references/qijue.md (七言絕句): edited here since the last import; "
        "the edited version stays in its history",
        "  update     references/wulv.md (五言律詩)",
    ]
    real = run_cli("skills", "import", str(folder), "--force", "--data-dir", str(data_dir))
    assert real.stdout.splitlines()[0] == "poem-writer: 1 added, 2 updated, 1 unchanged"


def skill_folder(root: Path, front_matter: str) -> Path:
    folder = root / "dated"
    folder.mkdir()
    (folder / "SKILL.md").write_text(f"---\n{front_matter}\n---\nDo the thing.\n", "utf-8")
    return folder


def stored_meta(data_dir: Path) -> list[dict]:
    import json

    return [json.loads(f.read_bytes())["meta"] for f in (data_dir / "skills").glob("*.json")]


# YAML values JSON has no form for, turned into JSON the way JSON itself would write them.
CONVERTED = {
    "a date as a key": ("meta: {2001-01-01: x}", {"meta": {"2001-01-01": "x"}}),
    "a date as a top-level key": ("2001-01-01: x", {"2001-01-01": "x"}),
    "a date as a value": ("released: 2001-01-01", {"released": "2001-01-01"}),
    "a timestamp as a value": (
        "at: 2001-12-14t21:59:43.10-05:00",
        {"at": "2001-12-14T21:59:43.100000-05:00"},
    ),
    "a timestamp as a key": ("2001-12-14 21:59:43: x", {"2001-12-14T21:59:43": "x"}),
    "numbers, booleans and null as keys": (
        "m: {2: a, 1.5: b, true: c, ~: d}",
        {"m": {"2": "a", "1.5": "b", "true": "c", "null": "d"}},
    ),
}


@pytest.mark.parametrize("front_matter, meta", CONVERTED.values(), ids=CONVERTED.keys())
def test_front_matter_yaml_that_json_cannot_hold_is_converted_predictably(
    tmp_path, data_dir, front_matter, meta
):
    folder = skill_folder(tmp_path, f"name: dated\ndescription: x\n{front_matter}")
    done = run_cli("skills", "import", str(folder), "--data-dir", str(data_dir))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert stored_meta(data_dir) == [{"name": "dated", "description": "x", **meta}]


REFUSED = {
    "a set": ("tags: !!set {a: null, b: null}", "tags is !!set"),
    "binary": ("blob: !!binary aGVsbG8=", "blob is !!binary"),
    "not a number": ("v: .nan", "v is .nan"),
    "infinity in a list": ("v: [1, -.inf]", "v[1] is -.inf"),
    "keys the same as text": ('m: {1: a, "1": b}', 'two keys at "m.1"'),
    "a date key beside the same text": (
        'm: {2001-01-01: a, "2001-01-01": b}',
        'two keys at "m.2001-01-01"',
    ),
}


@pytest.mark.parametrize("front_matter, message", REFUSED.values(), ids=REFUSED.keys())
def test_front_matter_yaml_that_json_cannot_hold_is_refused_with_a_message(
    tmp_path, data_dir, front_matter, message
):
    folder = skill_folder(tmp_path, f"name: dated\ndescription: x\n{front_matter}")
    done = run_cli("skills", "import", str(folder), "--data-dir", str(data_dir))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("dated: Error: SKILL.md has front matter"), done.stderr
    assert message in done.stderr
    assert not list((data_dir / "skills").glob("*.json"))
