"""``--person`` and ``memory-curator people`` through the real ``memory-curator`` process."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_cli
from tests.support.data import on_disk
from webapp.stores import ConversationStore, MemoryStore, PeopleStore

REPO = Path(__file__).resolve().parent.parent


def test_person_on_add_list_search_and_prompt(data_dir):
    ana = run_cli(
        "people", "add", "Ana", "--identity", "slack:U1", data_dir=data_dir, ok=True
    ).stdout
    ana_id = ana.split("[")[1].split("]")[0]
    run_cli("people", "add", "Leo", data_dir=data_dir, ok=True)
    run_cli("memories", "add", "Our Wi-Fi is called Lighthouse.", data_dir=data_dir, ok=True)
    assert run_cli(
        "memories", "add", "Likes tea.", "--person", "ana", data_dir=data_dir, ok=True
    ).stdout.endswith("Likes tea. — Ana\n")
    run_cli("memories", "add", "Doesn't drink tea.", "--person", "Leo", data_dir=data_dir, ok=True)
    assert {r["content"]: r.get("person") for r in on_disk(data_dir / "memories.json")} == {
        "Our Wi-Fi is called Lighthouse.": None,
        "Likes tea.": ana_id,
        "Doesn't drink tea.": PeopleStore(data_dir / "people.json").find("Leo").id,
    }
    listed = run_cli(
        "memories", "list", "--person", "Ana", data_dir=data_dir, ok=True
    ).stdout.splitlines()
    assert [line.split(") ", 1)[1] for line in listed] == [
        "Our Wi-Fi is called Lighthouse. — household",
        "Likes tea. — Ana",
    ]
    assert (
        len(run_cli("memories", "list", data_dir=data_dir, ok=True).stdout.splitlines()) == 3
    )  # everyone, as before
    assert (
        run_cli(
            "memories", "search", "tea", "--person", "Leo", data_dir=data_dir, ok=True
        ).stdout.count("\n")
        == 1
    )

    conversations = ConversationStore(
        data_dir / "conversations" / "conversations.json", lock_timeout=5
    ).init()
    conversations.add_exchange("cli:1", "Hello", "Hi!", person=ana_id)
    text = run_cli(
        "prompt",
        "What should I drink?",
        "--person",
        ana_id,
        "--conversation",
        "cli:1",
        data_dir=data_dir,
        ok=True,
    ).stdout
    assert "- Likes tea." in text and "Doesn't drink tea." not in text
    assert "- Our Wi-Fi is called Lighthouse." in text and "[User]: Hello" in text
    everyone = run_cli("prompt", "Hi", data_dir=data_dir, ok=True).stdout
    assert "Likes tea." in everyone and "Doesn't drink tea." in everyone


def test_an_unknown_person_is_a_clear_error_and_nothing_is_written(data_dir):
    MemoryStore(data_dir / "memories.json", lock_timeout=5).init()
    done = run_cli("memories", "add", "Is allergic to cats.", "--person", "Maya", data_dir=data_dir)
    assert done.returncode == 2
    assert 'person "Maya" is known' in done.stderr
    assert on_disk(data_dir / "memories.json") == []


def test_people_commands_link_unlink_rename_and_offer_unlinked_identities(data_dir):
    people = PeopleStore(data_dir / "people.json", lock_timeout=5)
    people.seen("ha", "u-9", label="Maya Lin")
    assert (
        "unlinked ha:u-9 (Maya Lin)" in run_cli("people", "list", data_dir=data_dir, ok=True).stdout
    )
    made = run_cli("people", "new", "ha", "u-9", data_dir=data_dir, ok=True).stdout
    maya = people.resolve("ha", "u-9")
    assert maya is not None and made == f"Added [{maya.id}] Maya Lin\n"
    run_cli("people", "rename", maya.id, "Maya", data_dir=data_dir, ok=True)
    run_cli("people", "link", maya.id, "name", "May", data_dir=data_dir, ok=True)
    assert people.find("may") == people.get(maya.id)
    run_cli("people", "unlink", maya.id, "name", "May", data_dir=data_dir, ok=True)
    assert (
        f"[{maya.id}] Maya  (ha:u-9)"
        in run_cli("people", "list", data_dir=data_dir, ok=True).stdout
    )
    bad = run_cli("people", "link", maya.id, "email", "m@x", data_dir=data_dir)
    assert bad.returncode == 2 and "Unknown kind of identity" in bad.stderr


def test_stats_lists_people_json_with_the_stores(data_dir):
    MemoryStore(data_dir / "memories.json", lock_timeout=5).init()
    PeopleStore(data_dir / "people.json", lock_timeout=5).add("Ana")
    out = run_cli("stats", data_dir=data_dir, ok=True).stdout
    assert f"People: {data_dir / 'people.json'} [ok]" in out
    assert "not written by Memory Curator" not in out  # people.history.jsonl is known too


def test_a_damaged_people_json_is_reported_and_repair_sets_it_aside(data_dir):
    MemoryStore(data_dir / "memories.json", lock_timeout=5).init()
    people = data_dir / "people.json"
    people.write_bytes(b'{"people": {"p1": {"name": "Ana"}, ')
    stats = run_cli("stats", data_dir=data_dir)
    assert stats.returncode == 1 and "people.json" in stats.stderr
    done = run_cli("repair", data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    assert any(p.name.startswith("people.json.corrupt-") for p in data_dir.iterdir())
    listed = run_cli("people", "list", data_dir=data_dir)
    assert listed.returncode == 0 and "No people yet" in listed.stdout
