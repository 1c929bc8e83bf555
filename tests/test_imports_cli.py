"""``memory-curator import`` and ``export --format`` run as real processes over the fixtures in
tests/data/imports (written from each format's public documentation)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.imports import EXPECTED, FIXTURES, today
from tests.support.review import approve
from webapp.stores import MemoryStore, ReviewQueue
from webapp.stores.origin import describe_origin, make_origin
from webapp.stores.people import PeopleStore

FAST = {"MEMORY_EMBEDDER": "lexical"}  # the similarity layer without loading a model


def stores(data_dir: Path) -> tuple[MemoryStore, ReviewQueue]:
    memories = MemoryStore(data_dir / "memories.json", lock_timeout=5)
    return memories, ReviewQueue(data_dir / "review.json", memories)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_fixture_is_previewed_and_queued_in_review_with_its_origin(data_dir, name):
    fmt, add, update, known, refused = EXPECTED[name]
    dry = run_cli(
        "import", str(FIXTURES / name), "--dry-run", "--data-dir", str(data_dir), env=FAST
    )
    assert dry.returncode == 0, dry.stderr
    assert (
        f"{name} ({fmt}): {add} to add, {update} to update, {known} skipped as known, "
        f"{refused} refused" in dry.stdout
    )
    assert dry.stdout.count("refused (") == refused
    assert not (data_dir / "review.json").exists() or not stores(data_dir)[1].pending()

    done = run_cli("import", str(FIXTURES / name), "--data-dir", str(data_dir), env=FAST)
    assert done.returncode == 0, done.stderr
    memories, queue = stores(data_dir)
    pending = queue.pending()
    assert len(pending) == add + update
    assert {item.imported_from for item in pending} == {f"{fmt}, {name}, {today()}"}
    assert memories.get_all() == []  # Review only: nothing is remembered before approval


def test_approving_an_imported_fact_remembers_it_saying_where_it_came_from(data_dir):
    run_cli("import", str(FIXTURES / "mem0_get_all.json"), "--data-dir", str(data_dir), env=FAST)
    memories, queue = stores(data_dir)
    # The file's user (nobody on the People page) stays in the text, as the README promises.
    item = next(i for i in queue.pending() if i.content == "alice: User loves sci-fi movies.")
    approve(queue, item.id, actor="alice")
    [memory] = memories.get_all()
    assert memory.content == "alice: User loves sci-fi movies."
    assert describe_origin(memory.origin) == f"imported from mem0, mem0_get_all.json, {today()}"
    assert memory.origin is not None and memory.origin["approvedBy"] == "alice"


def test_known_facts_are_skipped_and_close_ones_proposed_as_updates(data_dir):
    memories, _ = stores(data_dir)
    memories.add("Likes hiking on weekends", category="preference")
    kept = memories.add("Has a daughter named Maya who is 6.", category="general")
    result = run_cli(
        "import",
        str(FIXTURES / "chatgpt_memories_en.txt"),
        "--data-dir",
        str(data_dir),
        env=FAST,
    )
    assert result.returncode == 0, result.stderr
    assert "7 to add, 1 to update, 1 skipped as known, 2 refused" in result.stdout
    [update] = [i for i in stores(data_dir)[1].pending() if i.action == "update"]
    assert (update.memory_id, update.content) == (kept.id, "Has a daughter named Maya who is 7.")


def test_refusals_name_their_line_and_reason(data_dir):
    result = run_cli(
        "import",
        str(FIXTURES / "chatgpt_memories_en.txt"),
        "--dry-run",
        "--data-dir",
        str(data_dir),
    )
    assert "line 9: refused (empty)" in result.stdout
    assert "line 12: refused (too long): Memory updated: prefers tea" in result.stdout


def test_a_file_in_another_format_is_refused_naming_the_format_it_looks_like(data_dir):
    result = run_cli(
        "import",
        str(FIXTURES / "mcp_memory.jsonl"),
        "--format",
        "mem0",
        "--data-dir",
        str(data_dir),
    )
    assert result.returncode == 1
    assert "This file is not mem0: it looks like MCP memory JSONL" in result.stderr
    assert not (data_dir / "review.json").exists()
    as_text = run_cli(
        "import", str(FIXTURES / "letta_agent.af"), "--format", "text", "--data-dir", str(data_dir)
    )
    assert as_text.returncode == 1
    assert "it looks like Letta agent file" in as_text.stderr


def test_a_binary_file_is_refused_and_nothing_is_queued(data_dir, tmp_path):
    junk = tmp_path / "photo.jpg"
    junk.write_bytes(b"\xff\xd8\xff\xe0" + bytes(range(256)))
    result = run_cli("import", str(junk), "--data-dir", str(data_dir))
    assert result.returncode == 1
    assert "not UTF-8 text" in result.stderr
    assert not (data_dir / "review.json").exists()


def _filled(data_dir: Path) -> list[dict]:
    memories, _ = stores(data_dir)
    memories.add(
        "Prefers tea over coffee",
        category="preference",
        origin=make_origin("dashboard", by="alice", at="2026-11-20T08:00:00.000Z"),
    )
    memories.add("喜歡爬山", category="general")
    memories.add("# Uses tabs, not spaces", category="convention")
    memories.add("Works on the garden project", category="project")
    # Fields another program (or a later version) wrote: kept through the round trip.
    records = json.loads((data_dir / "memories.json").read_text())
    records[0]["person"] = "alice"
    records[1]["tags"] = ["hobby", {"nested": True}]
    (data_dir / "memories.json").write_text(json.dumps(records))
    return json.loads((data_dir / "memories.json").read_text())


def test_own_export_then_import_gives_identical_memories(data_dir, tmp_path):
    before = _filled(data_dir)
    out = tmp_path / "export.json"
    assert run_cli("export", "-o", str(out), "--data-dir", str(data_dir)).returncode == 0
    other = tmp_path / "other"
    other.mkdir()
    result = run_cli("import", str(out), "--data-dir", str(other))
    assert result.returncode == 0, result.stderr
    assert "export.json (json): 4 to add" in result.stdout
    after = json.loads((other / "memories.json").read_text())
    assert len(after) == len(before)
    for old, new in zip(before, after, strict=True):
        # Every field the export held comes back as it was (ids, times, origin, unknown
        # fields); the import only adds that the memory was imported (the file's name, and
        # an origin and source where nothing said them).
        new.get("origin", {}).pop("importedFrom", None)
        assert {key: new[key] for key in old} == old
        assert set(new) - set(old) <= {"source", "origin"}


@pytest.mark.parametrize("fmt", ["mcp-jsonl", "mem0", "markdown"])
def test_export_to_another_format_then_import_gives_the_same_texts(data_dir, tmp_path, fmt):
    before = _filled(data_dir)
    out = tmp_path / f"export.{fmt}"
    exported = run_cli("export", "--format", fmt, "-o", str(out), "--data-dir", str(data_dir))
    assert exported.returncode == 0, exported.stderr
    other = tmp_path / "other"
    other.mkdir()
    result = run_cli("import", str(out), "--data-dir", str(other), env=FAST)
    assert result.returncode == 0, result.stderr
    texts = {item.content for item in stores(other)[1].pending()}
    # A person nobody in the other folder is keeps their name in the text, in every format
    # (mem0's user_id too: issue 35).
    wanted = {("alice: " + r["content"]) if r.get("person") else r["content"] for r in before}
    assert texts == wanted


def test_markdown_export_has_one_heading_per_category(data_dir):
    _filled(data_dir)
    result = run_cli("export", "--format", "markdown", "--data-dir", str(data_dir))
    assert result.returncode == 0
    assert result.stdout.splitlines()[:5] == [
        "# Memories",
        "",
        "## Preference",
        "",
        "- alice: Prefers tea over coffee",
    ]
    assert "## Convention\n\n- \\# Uses tabs, not spaces" in result.stdout
    assert "## General\n\n- 喜歡爬山" in result.stdout


def test_mcp_export_has_an_entity_for_the_household_and_one_per_person(data_dir):
    _filled(data_dir)
    result = run_cli("export", "--format", "mcp-jsonl", "--data-dir", str(data_dir))
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines == [
        {
            "type": "entity",
            "name": "household",
            "entityType": "household",
            "observations": ["喜歡爬山", "# Uses tabs, not spaces", "Works on the garden project"],
        },
        {
            "type": "entity",
            "name": "alice",
            "entityType": "person",
            "observations": ["Prefers tea over coffee"],
        },
    ]


def only_person(data_dir: Path) -> str:
    [person_id] = PeopleStore(data_dir / "people.json").names()
    return person_id


def test_a_persons_memories_travel_under_their_name_and_come_back_as_theirs(tmp_path):
    """Export to MCP JSONL and mem0 names a person's entity / user_id by their display name;
    importing into a household that knows that person makes the statements theirs, in the
    words they were kept in (not "Maya: …"); the household's stay the household's."""
    source, target = tmp_path / "source", tmp_path / "target"
    for folder in (source, target):
        assert run_cli("people", "add", "Maya", "--data-dir", str(folder)).returncode == 0
    memories = MemoryStore(source / "memories.json", lock_timeout=5)
    memories.add("Is allergic to cats", person=only_person(source))
    memories.add("The Wi-Fi password is on the fridge")
    for fmt, suffix in (("mcp-jsonl", "jsonl"), ("mem0", "json")):
        exported = tmp_path / f"out.{suffix}"
        done = run_cli(
            "export", "--format", fmt, "--output", str(exported), "--data-dir", str(source)
        )
        assert done.returncode == 0, done.stderr
        assert '"Maya"' in exported.read_text(encoding="utf-8")
        (target / "review.json").unlink(missing_ok=True)
        queued = run_cli("import", str(exported), "--data-dir", str(target), env=FAST)
        assert queued.returncode == 0, queued.stderr
        pending = {item.content: item.person for item in stores(target)[1].pending()}
        assert pending == {
            "Is allergic to cats": only_person(target),
            "The Wi-Fi password is on the fridge": None,
        }, fmt


def test_a_memory_file_of_one_line_is_imported_as_one(data_dir, tmp_path):
    """memory.jsonl holding one entity is one JSON object too, and still a memory file."""
    lines = (FIXTURES / "mcp_memory.jsonl").read_text(encoding="utf-8").splitlines()
    one = tmp_path / "memory.jsonl"
    one.write_text(next(line for line in lines if '"Rex"' in line) + "\n", encoding="utf-8")
    for wanted in ("auto", "mcp-jsonl"):
        dry = run_cli(
            "import", str(one), "--format", wanted, "--dry-run", "--data-dir", str(data_dir),
            env=FAST,
        )  # fmt: skip
        assert dry.returncode == 0, dry.stderr
        assert "memory.jsonl (mcp-jsonl): 2 to add" in dry.stdout
