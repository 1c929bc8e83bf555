"""Settings: defaults, environment variables, the add-on options file, and the paths of the stores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from webapp.settings import Settings, SettingsError

LIMITS = {
    "MEMORY_MAX_ITEMS": ("memory_max_items", 100),
    "MEMORY_MAX_CHARS": ("memory_max_chars", 10000),
    "CONVERSATION_MAX_TURNS": ("conversation_max_turns", 20),
    "CONVERSATION_MAX_CHARS": ("conversation_max_chars", 8000),
    "CONVERSATION_MAX_AGE_DAYS": ("conversation_max_age_days", 7),
}


def from_env(tmp_path: Path, environ: dict[str, str], options: dict | None = None) -> Settings:
    options_file = tmp_path / "options.json"
    if options is not None:
        options_file.write_text(json.dumps(options), encoding="utf-8")
    return Settings.from_env(environ=environ, options_file=options_file, cwd=tmp_path)


def test_standalone_paths_default_to_data_under_the_working_directory(tmp_path):
    settings = from_env(tmp_path, {})
    assert settings.is_addon is False
    assert settings.data_dir == tmp_path / "data"
    assert settings.memory_file == tmp_path / "data" / "memories.json"
    assert settings.conversation_file == tmp_path / "data" / "conversations" / "conversations.json"


def test_memory_data_dir_moves_every_store(tmp_path):
    settings = from_env(tmp_path, {"MEMORY_DATA_DIR": "/srv/curator"})
    assert settings.memory_file == Path("/srv/curator/memories.json")
    assert settings.conversation_file == Path("/srv/curator/conversations/conversations.json")


@pytest.mark.parametrize("detect", ["token", "options"])
def test_addon_paths(tmp_path, detect):
    environ = {"SUPERVISOR_TOKEN": "abc"} if detect == "token" else {}
    settings = from_env(tmp_path, environ, options={} if detect == "options" else None)
    assert settings.is_addon is True
    assert settings.memory_file == Path("/data/memories/memories.json")
    assert settings.conversation_file == Path("/data/conversations/conversations.json")


def test_defaults(tmp_path):
    settings = from_env(tmp_path, {})
    for field, default in LIMITS.values():
        assert getattr(settings, field) == default


@pytest.mark.parametrize("var", LIMITS)
def test_environment_sets_each_limit(tmp_path, var):
    field, _ = LIMITS[var]
    assert getattr(from_env(tmp_path, {var: "42"}), field) == 42


@pytest.mark.parametrize("var", LIMITS)
@pytest.mark.parametrize("value", ["0", "-5", "abc", "1.5", "10 items", "１０", "true"])
def test_a_limit_that_is_not_a_positive_integer_names_the_variable(tmp_path, var, value):
    with pytest.raises(SettingsError) as caught:
        from_env(tmp_path, {var: value})
    assert var in str(caught.value)
    assert "positive integer" in str(caught.value)


def test_addon_options_are_read_and_the_environment_wins(tmp_path):
    options = {"memory_max_items": 30, "conversation_max_turns": 8}
    settings = from_env(
        tmp_path, {"SUPERVISOR_TOKEN": "x", "CONVERSATION_MAX_TURNS": "12"}, options
    )
    assert settings.memory_max_items == 30
    assert settings.conversation_max_turns == 12


def test_a_bad_addon_option_names_the_option_and_the_file(tmp_path):
    with pytest.raises(SettingsError) as caught:
        from_env(tmp_path, {}, {"memory_max_chars": "lots"})
    assert "memory_max_chars" in str(caught.value)
    assert "options.json" in str(caught.value)


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b"\xff\xfe"])
def test_an_unreadable_options_file_is_a_clear_error(tmp_path, content):
    (tmp_path / "options.json").write_bytes(content)
    with pytest.raises(SettingsError, match="options file"):
        Settings.from_env(environ={}, options_file=tmp_path / "options.json", cwd=tmp_path)


def test_nothing_is_read_at_import_time(tmp_path):
    env = {**os.environ, "MEMORY_MAX_ITEMS": "not a number", "MEMORY_DATA_DIR": str(tmp_path)}
    code = "import webapp.settings, webapp.stores, webapp.prompts"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not any(tmp_path.iterdir())


def test_with_data_dir_keeps_the_limits(tmp_path):
    settings = from_env(tmp_path, {"MEMORY_MAX_ITEMS": "7"}).with_data_dir(tmp_path / "other")
    assert settings.memory_file == tmp_path / "other" / "memories.json"
    assert settings.memory_max_items == 7


def test_stores_built_without_arguments_follow_the_environment(tmp_path, monkeypatch):
    from webapp.stores import ConversationStore, MemoryStore

    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "env-data"))
    monkeypatch.setenv("MEMORY_MAX_ITEMS", "3")
    monkeypatch.setenv("CONVERSATION_MAX_TURNS", "4")
    memories = MemoryStore()
    conversations = ConversationStore()
    assert memories.path == tmp_path / "env-data" / "memories.json"
    assert memories.max_items == 3
    assert conversations.path == tmp_path / "env-data" / "conversations" / "conversations.json"
    assert conversations.max_turns == 4


def test_a_store_given_a_path_ignores_the_environment(tmp_path, monkeypatch):
    from webapp.stores import ConversationStore, MemoryStore, SkillDocumentStore

    for name in ("MEMORY_MAX_ITEMS", "MEMORY_MAX_CHARS", "CONVERSATION_MAX_TURNS"):
        monkeypatch.setenv(name, "3")
    monkeypatch.setenv("MEMORY_LOCK_TIMEOUT", "99")
    memories = MemoryStore(tmp_path / "m.json", max_chars=500)
    conversations = ConversationStore(tmp_path / "c.json")
    skills = SkillDocumentStore(tmp_path / "skills")
    assert (memories.max_items, memories.max_chars) == (100, 500)
    assert memories.lock_timeout == 10
    assert conversations.max_turns == 20
    assert skills.lock_timeout == 10


def test_every_store_is_built_from_settings(tmp_path):
    from webapp.extraction import ExtractionState
    from webapp.stores import ConversationStore, MemoryStore, ReviewQueue, SkillDocumentStore

    settings = from_env(
        tmp_path,
        {
            "MEMORY_DATA_DIR": str(tmp_path / "d"),
            "MEMORY_MAX_ITEMS": "7",
            "MEMORY_LOCK_TIMEOUT": "3",
        },
    )
    memories = MemoryStore.from_settings(settings, actor="host")
    assert (memories.path, memories.max_items, memories.actor) == (settings.memory_file, 7, "host")
    assert memories.lock_timeout == 3
    assert ConversationStore.from_settings(settings).lock_timeout == 3
    skills = SkillDocumentStore.from_settings(settings)
    assert (skills.directory, skills.lock_timeout) == (settings.skills_dir, 3)
    queue = ReviewQueue.from_settings(settings, actor="reviewer")
    assert (queue.path, queue.lock_timeout) == (settings.review_file, 3)
    assert (queue.store.path, queue.store.max_items, queue.store.actor) == (
        settings.memory_file,
        7,
        "reviewer",
    )
    assert ReviewQueue.from_settings(settings, memories).store is memories
    state = ExtractionState.from_settings(settings)
    assert state.path == tmp_path / "d" / "extraction-state.json"
    assert state.lock_timeout == 3
