"""The public library is the curated one: what the README shows a host program applies the
curator's rules under the seed's names (issue 45, item 2). Before ``webapp.library`` the
README's ``MemoryStore.add`` (the raw store) kept an alarm code and a second copy of a fact."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.data import make_settings, on_disk
from webapp.library import MemoryStore
from webapp.problems import CodedError

REPO = Path(__file__).resolve().parent.parent


def readme_library_example() -> str:
    """The README's library example, as written."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("### A host Python program: the library", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found is not None
    return found.group(1)


def test_the_readme_example_run_twice_refuses_the_secret_and_keeps_the_fact_once(tmp_path):
    data = tmp_path / "data"
    env = {**os.environ, "MEMORY_DATA_DIR": str(data)}
    env.pop("SUPERVISOR_TOKEN", None)
    runs = [
        subprocess.run(
            [sys.executable, "-c", readme_library_example()],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        for _ in range(2)
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith("memory_secret "), run.stdout
    kept = [r["content"] for r in on_disk(data / "memories.json")]
    assert kept == ["Prefers concise answers without emoji."]


@pytest.fixture
def memories(tmp_path: Path) -> MemoryStore:
    return MemoryStore.from_settings(make_settings(tmp_path, memory_max_items=2)).init()


def test_an_ordinary_fact_gets_an_id_and_the_same_fact_returns_it(memories):
    tea = memories.add("Likes green tea", category="preference")
    again = memories.add("likes green tea ")
    assert tea.id and again.id == tea.id
    assert [m.content for m in memories.get_all()] == ["Likes green tea"]


def test_a_full_store_and_a_secret_are_refused_with_codes_nothing_written(memories):
    with pytest.raises(CodedError) as secret:
        memories.add("The garage door code is 4821.")
    assert secret.value.code == "memory_secret"
    memories.add("Likes green tea")
    memories.add("Has a dog named Rex")
    with pytest.raises(CodedError) as full:
        memories.add("Plays the cello on Sundays")
    assert full.value.code == "memory_full"
    assert "full" in str(full.value)
    assert [m.content for m in memories.get_all()] == ["Likes green tea", "Has a dog named Rex"]


def test_a_fact_deleted_forever_is_refused_when_added_again(memories):
    tea = memories.add("Likes green tea")
    assert memories.delete(tea.id, forever=True) is True
    assert memories.delete(tea.id) is False
    with pytest.raises(CodedError) as refused:
        memories.add("Likes green tea")
    assert refused.value.code == "deleted_forever"
    assert memories.get_all() == []
    # A deletion that is not forever leaves the fact free to be told again.
    rex = memories.add("Has a dog named Rex")
    assert memories.delete(rex.id) is True
    assert memories.add("Has a dog named Rex").content == "Has a dog named Rex"


def test_update_refuses_a_secret_and_a_missing_memory_is_none(memories):
    tea = memories.add("Likes green tea")
    with pytest.raises(CodedError) as secret:
        memories.update(tea.id, "The alarm code is 4821.")
    assert secret.value.code == "memory_secret"
    assert memories.get(tea.id).content == "Likes green tea"
    assert memories.update("no-such-id", "x") is None
    assert memories.update(tea.id, "Likes green tea without sugar").content.endswith("sugar")
