"""``--person`` and ``memory-curator people`` through the real ``memory-curator`` process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from webapp.stores import ConversationStore, MemoryStore, PeopleStore

from .conftest import on_disk

REPO = Path(__file__).resolve().parent.parent


def run(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    return subprocess.run(
        [sys.executable, "-m", "webapp", *args, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        cwd=REPO,
        timeout=120,
    )


def ok(data_dir: Path, *args: str) -> str:
    done = run(data_dir, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_person_on_add_list_search_and_prompt(data_dir):
    ana = ok(data_dir, "people", "add", "Ana", "--identity", "slack:U1")
    ana_id = ana.split("[")[1].split("]")[0]
    ok(data_dir, "people", "add", "Leo")
    ok(data_dir, "memories", "add", "Our Wi-Fi is called Lighthouse.")
    assert ok(data_dir, "memories", "add", "Likes tea.", "--person", "ana").endswith(
        "Likes tea. — Ana\n"
    )
    ok(data_dir, "memories", "add", "Doesn't drink tea.", "--person", "Leo")
    assert {r["content"]: r.get("person") for r in on_disk(data_dir / "memories.json")} == {
        "Our Wi-Fi is called Lighthouse.": None,
        "Likes tea.": ana_id,
        "Doesn't drink tea.": PeopleStore(data_dir / "people.json").find("Leo").id,
    }
    listed = ok(data_dir, "memories", "list", "--person", "Ana").splitlines()
    assert [line.split(") ", 1)[1] for line in listed] == [
        "Our Wi-Fi is called Lighthouse. — household",
        "Likes tea. — Ana",
    ]
    assert len(ok(data_dir, "memories", "list").splitlines()) == 3  # everyone, as before
    assert ok(data_dir, "memories", "search", "tea", "--person", "Leo").count("\n") == 1

    conversations = ConversationStore(
        data_dir / "conversations" / "conversations.json", lock_timeout=5
    ).init()
    conversations.add_exchange("cli:1", "Hello", "Hi!", person=ana_id)
    text = ok(
        data_dir, "prompt", "What should I drink?", "--person", ana_id, "--conversation", "cli:1"
    )
    assert "- Likes tea." in text and "Doesn't drink tea." not in text
    assert "- Our Wi-Fi is called Lighthouse." in text and "[User]: Hello" in text
    everyone = ok(data_dir, "prompt", "Hi")
    assert "Likes tea." in everyone and "Doesn't drink tea." in everyone


def test_an_unknown_person_is_a_clear_error_and_nothing_is_written(data_dir):
    MemoryStore(data_dir / "memories.json", lock_timeout=5).init()
    done = run(data_dir, "memories", "add", "Is allergic to cats.", "--person", "Maya")
    assert done.returncode == 2
    assert 'person "Maya" is known' in done.stderr
    assert on_disk(data_dir / "memories.json") == []


def test_people_commands_link_unlink_rename_and_offer_unlinked_identities(data_dir):
    people = PeopleStore(data_dir / "people.json", lock_timeout=5)
    people.seen("ha", "u-9", label="Maya Lin")
    assert "unlinked ha:u-9 (Maya Lin)" in ok(data_dir, "people", "list")
    made = ok(data_dir, "people", "new", "ha", "u-9")
    maya = people.resolve("ha", "u-9")
    assert maya is not None and made == f"Added [{maya.id}] Maya Lin\n"
    ok(data_dir, "people", "rename", maya.id, "Maya")
    ok(data_dir, "people", "link", maya.id, "name", "May")
    assert people.find("may") == people.get(maya.id)
    ok(data_dir, "people", "unlink", maya.id, "name", "May")
    assert f"[{maya.id}] Maya  (ha:u-9)" in ok(data_dir, "people", "list")
    bad = run(data_dir, "people", "link", maya.id, "email", "m@x")
    assert bad.returncode == 2 and "Unknown kind of identity" in bad.stderr


def test_stats_lists_people_json_with_the_stores(data_dir):
    MemoryStore(data_dir / "memories.json", lock_timeout=5).init()
    PeopleStore(data_dir / "people.json", lock_timeout=5).add("Ana")
    out = ok(data_dir, "stats")
    assert f"People: {data_dir / 'people.json'} [ok]" in out
    assert "not written by Memory Curator" not in out  # people.history.jsonl is known too


def test_a_damaged_people_json_is_reported_and_repair_sets_it_aside(data_dir):
    MemoryStore(data_dir / "memories.json", lock_timeout=5).init()
    people = data_dir / "people.json"
    people.write_bytes(b'{"people": {"p1": {"name": "Ana"}, ')
    stats = run(data_dir, "stats")
    assert stats.returncode == 1 and "people.json" in stats.stderr
    done = run(data_dir, "repair")
    assert done.returncode == 0, done.stderr
    assert any(p.name.startswith("people.json.corrupt-") for p in data_dir.iterdir())
    listed = run(data_dir, "people", "list")
    assert listed.returncode == 0 and "No people yet" in listed.stdout
