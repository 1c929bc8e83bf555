"""Issue 35, item 19: a person named a zero-width space; a Letta block labelled "persona "
imported as facts; "until 24:59" read as a time; a name two people share answered "No person
… is known yet"; the README's Python example composing a prompt without ``person``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from webapp.imports import parse
from webapp.language.clock import clock_times
from webapp.language.validity import expires_at
from webapp.mcp.recall import recall
from webapp.problems import InputError
from webapp.stores import MemoryStore, PeopleStore
from webapp.text import fold

REPO = Path(__file__).resolve().parent.parent

# ------------------------------------------------------------------ names that show nothing
INVISIBLE_NAMES = [
    "\u200b",  # zero-width space
    "\u200b\u200c\u200d",  # with the joiners
    " \u200b ",
    "\u2060",  # word joiner
    "\ufeff",  # byte order mark
    "\u00ad",  # soft hyphen
    "\u200e\u200f",  # direction marks
    "\u3164",  # Hangul filler
    "\u2800",  # blank braille pattern
    "\u034f",  # combining grapheme joiner
    "\ufe0f",  # a variation selector alone
    "\U000e0041\U000e0042",  # tag characters
    "\x00",
    "Ma\x07ya",  # a control inside
]


@pytest.mark.parametrize(
    "name", INVISIBLE_NAMES, ids=[f"n{i}" for i in range(len(INVISIBLE_NAMES))]
)
def test_a_name_that_shows_nothing_is_refused_on_add_and_rename(data_dir, name):
    people = PeopleStore(data_dir / "people.json", lock_timeout=5)
    with pytest.raises(InputError) as refused:
        people.add(name)
    assert refused.value.code == "person_name"
    maya = people.add("Maya")
    with pytest.raises(InputError):
        people.rename(maya.id, name)
    assert [p.name for p in people.people()] == ["Maya"]


def test_invisible_characters_around_a_name_are_dropped_and_real_names_kept(data_dir):
    people = PeopleStore(data_dir / "people.json", lock_timeout=5)
    assert people.add("\u200bMaya\u200b").name == "Maya"
    for kept in ("Zoë", "林小美", "👨\u200d👩\u200d👧", "O'Neil", "Anne-Marie"):
        assert people.add(kept).name == kept


def test_the_people_command_refuses_a_zero_width_name(data_dir):
    done = run_cli("people", "add", "\u200b", data_dir=data_dir)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "name is 1 to" in done.stderr
    assert (
        not (data_dir / "people.json").exists()
        or PeopleStore(data_dir / "people.json").people() == []
    )


# ------------------------------------------------------------------ Letta's persona block
PERSONA_LABELS = [
    "persona ",
    " persona",
    "Persona",
    "PERSONA",
    "persona\n",
    "persona\t",
    "ｐｅｒｓｏｎａ",  # full width
    "per\u200bsona",
    "persona\u200b",
    "\ufeffpersona",
]


def letta_file(label: str) -> str:
    return json.dumps(
        {
            "agents": [{"name": "a"}],
            "blocks": [
                {"label": label, "value": "I am a helpful assistant.\nI speak like a pirate."},
                {"label": "human ", "value": "Name: Sam.\nLikes hiking."},
            ],
        }
    )


@pytest.mark.parametrize("label", PERSONA_LABELS, ids=[repr(x) for x in PERSONA_LABELS])
def test_a_persona_block_however_its_label_is_written_gives_no_fact(label):
    parsed = parse(letta_file(label), "letta")
    texts = [c.text for c in parsed.candidates]
    assert not any("pirate" in t or "assistant" in t for t in texts), texts
    assert [r.reason for r in parsed.refused].count("persona") == 2
    assert any("hiking" in t for t in texts)  # the human block, its label spaced too


# ------------------------------------------------------------------ clock times out of range
NOT_TIMES = [
    "until 24:59",
    "until 24:30",
    "till 24:01",
    "by 25:00",
    "at 24:59 pm",
    "quarter to 25",
    "until 99:99",
]
SENT = datetime(2026, 3, 2, 9, tzinfo=UTC)


@pytest.mark.parametrize("said", NOT_TIMES)
def test_an_impossible_clock_time_is_no_time(said):
    assert clock_times(fold(said))[1] == []
    assert expires_at(f"I'm home {said}", SENT, "UTC") is None


@pytest.mark.parametrize(
    ("said", "hour", "minute"),
    [("until 24:00", 0, 0), ("until 23:59", 23, 59), ("until 7:30 pm", 19, 30)],
)
def test_the_clock_times_next_to_them_still_read(said, hour, minute):
    found = expires_at(f"I'm home {said}", SENT, "UTC")
    assert found is not None and (found.hour, found.minute) == (hour, minute)


# ------------------------------------------------------------------ a name two people share
@pytest.fixture
def two_mayas(data_dir):
    people = PeopleStore(data_dir / "people.json", lock_timeout=5)
    first, second = people.add("Maya"), people.add("maya")
    store = MemoryStore(data_dir / "memories.json", lock_timeout=5)
    store.add("Is allergic to cats.", person=first.id)
    store.add("Our Wi-Fi is called Lighthouse.")
    return first, second


@pytest.mark.parametrize(
    "args",
    [
        ("memories", "add", "Likes jazz.", "--person", "Maya"),
        ("memories", "list", "--person", "MAYA"),
        ("prompt", "hi", "--person", "Maya"),
    ],
    ids=["add", "list", "prompt"],
)
def test_a_shared_name_is_called_ambiguous_and_says_how_to_pick(data_dir, two_mayas, args):
    # Since issue 42 the refusal names none of them (whoever the assistant talks with may be
    # a guest): how many share the name, and to use a whole name or an id (the People page).
    first, second = two_mayas
    before = (data_dir / "memories.json").read_bytes()
    done = run_cli(*args, data_dir=data_dir)
    assert done.returncode != 0, done.stdout
    assert "is known yet" not in done.stderr
    assert '2 people of the household go by "' in done.stderr and "Traceback" not in done.stderr
    assert "by their id" in done.stderr
    assert first.id not in done.stderr and second.id not in done.stderr
    assert (data_dir / "memories.json").read_bytes() == before
    assert PeopleStore(data_dir / "people.json").unlinked() == []  # not a stranger
    # Named by id, each is found.
    assert (
        "Is allergic to cats."
        in run_cli("prompt", "hi", "--person", first.id, data_dir=data_dir).stdout
    )


def test_the_recall_tool_says_the_name_is_shared(data_dir, two_mayas):
    first, second = two_mayas
    store = MemoryStore(data_dir / "memories.json", lock_timeout=5)
    people = PeopleStore(data_dir / "people.json", lock_timeout=5)
    said = recall(store, people, {"person": "Maya"})
    assert "is known yet" not in said and '2 people of the household go by "Maya"' in said
    assert first.id not in said and second.id not in said and "Is allergic to cats." not in said


# ------------------------------------------------------------------ the README's example
def readme_example() -> str:
    readme = (REPO / "README.md").read_text("utf-8")
    section = readme[readme.index("### A host Python program") :]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_the_readme_example_composes_one_persons_prompt(tmp_path):
    """Run as written, in a household where Leo keeps a private fact: the speaker's prompt
    never holds it (the example called compose_prompt without ``person``)."""
    code = readme_example()
    assert re.search(r"= compose_prompt\([^\n]*person=", code), "compose_prompt without person"
    data = tmp_path / "data"
    data.mkdir()
    people = PeopleStore(data / "people.json", lock_timeout=5)
    maya = people.add("Maya", identities=(("slack", "U01"),))
    leo = people.add("Leo")
    store = MemoryStore(data / "memories.json", lock_timeout=5)
    store.add("Is planning a surprise party for Maya.", person=leo.id)
    store.add("Our Wi-Fi is called Lighthouse.")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "CONVERSATION_"))}
    env.update(MEMORY_DATA_DIR=str(data), MEMORY_EMBEDDER="lexical")
    done = subprocess.run(
        [sys.executable, "-c", code + "\nprint(prompt)\n"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Lighthouse" in done.stdout and "Prefers concise answers" in done.stdout
    assert "surprise party" not in done.stdout
    kept = [m for m in store.get_all() if "concise" in m.content]
    assert [m.person for m in kept] == [maya.id]
