"""Every setting, with each value it allows, starts the real program: through the environment
and through the add-on's options file (config.yaml's schema says what the add-on may send).

`MEMORY_LANGUAGE=zh-Hant` once stopped the add-on at start (the value was lower-cased before it
was compared with mixed-case choices); these tests start `memory-curator` as a process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml

from tests.support.web import start_server, stop_server
from webapp.settings import LANGUAGES, LLM_PROVIDERS, REVIEW_MODES, SETTING_VARS, THEMES

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "webapp"]
CHOICES = {
    "MEMORY_REVIEW_MODE": REVIEW_MODES,
    "MEMORY_LLM_PROVIDER": LLM_PROVIDERS,
    "MEMORY_THEME": THEMES,
    "MEMORY_LANGUAGE": LANGUAGES,
}
# Values of the other kinds, as the environment spells them and as the options file types them.
OTHER_VALUES: dict[str, list[tuple[str, object, object]]] = {
    # variable: [(environment text, options-file value, value the program uses), ...]
    "MEMORY_LLM_MODEL": [("claude-haiku-4-5", "claude-haiku-4-5", "claude-haiku-4-5")],
    "MEMORY_LLM_BASE_URL": [
        ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1")
    ],
    "MEMORY_LLM_API_KEY": [("sk-test", "sk-test", "(set)")],
    "MEMORY_DASHBOARD_TOKEN": [("a-long-token", "a-long-token", "(set)")],
    "MEMORY_ALLOW_DIRECT_ACCESS": [
        ("true", True, True),
        ("false", False, False),
        ("yes", True, True),
    ],
    "MEMORY_AUTO_EXTRACT": [
        ("false", False, False),
        ("true", True, True),
        ("off", False, False),
    ],
    "MEMORY_ADMINS_SEE_ALL": [
        ("true", True, True),
        ("false", False, False),
        ("on", True, True),
    ],
    "MEMORY_TRUSTED_PROXIES": [
        ("10.0.0.1, 192.168.0.0/24", ["10.0.0.1", "192.168.0.0/24"], ["10.0.0.1", "192.168.0.0/24"])
    ],
    "MEMORY_DATA_DIR": [
        ("/share/memory_curator", "/share/memory_curator", "/share/memory_curator"),
        ("/share/memory", "memory", "/share/memory"),  # an add-on option names a folder in /share
    ],
    "MEMORY_MCP_TRUSTED": [
        (
            "172.30.32.1, 192.168.1.0/24",
            "172.30.32.1, 192.168.1.0/24",
            "172.30.32.1, 192.168.1.0/24",
        )
    ],
    "MEMORY_MCP_TOKEN": [("a-long-mcp-token-0123", "a-long-mcp-token-0123", "(set)")],
    "MEMORY_MCP_TOKEN_FILE": [("/run/secrets/mcp", "/run/secrets/mcp", "/run/secrets/mcp")],
    "MEMORY_MCP_DEFAULT_PERSON": [("Ana", "Ana", "Ana")],
    "MEMORY_MCP_ALLOWED_HOSTS": [
        ("homeassistant.local", "homeassistant.local", "homeassistant.local")
    ],
    "MEMORY_SUPERVISOR_URL": [("http://127.0.0.1:9", "http://127.0.0.1:9", "http://127.0.0.1:9")],
    "MEMORY_HA_AI_TASK_ENTITY": [
        ("ai_task.ollama_ai_task", "ai_task.ollama_ai_task", "ai_task.ollama_ai_task")
    ],
    "MEMORY_TIMEZONE": [
        ("Asia/Taipei", "Asia/Taipei", "Asia/Taipei"),
        ("Europe/Berlin", "Europe/Berlin", "Europe/Berlin"),
        ("UTC", "UTC", "UTC"),
    ],
}
POSITIVE = [("1", 1, 1), ("250", 250, 250)]


def values_of(var: str) -> list[tuple[str, object, object]]:
    if var in CHOICES:
        return [(choice, choice, choice) for choice in CHOICES[var]]
    if var in OTHER_VALUES:
        return OTHER_VALUES[var]
    return POSITIVE  # every other setting is a positive integer


def column(k: int) -> dict[str, tuple[str, object, object]]:
    """The k-th value of every setting (settings with fewer values repeat their last)."""
    return {var: values_of(var)[min(k, len(values_of(var)) - 1)] for var in SETTING_VARS.values()}


COLUMNS = max(len(values_of(var)) for var in SETTING_VARS.values())


def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "CONVERSATION_"))}
    env.pop("SUPERVISOR_TOKEN", None)
    env["MEMORY_DATA_DIR"] = str(tmp_path / "data")
    env["MEMORY_OPTIONS_FILE"] = str(tmp_path / "no-options.json")
    return env


def settings_of(env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [*CLI, "settings", "--json"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"the program refused to start:\n{done.stderr}"
    return json.loads(done.stdout)


def test_every_setting_is_tried():
    assert set(CHOICES) | set(OTHER_VALUES) <= set(SETTING_VARS.values())
    assert {var for var in SETTING_VARS.values() if values_of(var) is POSITIVE} == {
        "MEMORY_MAX_ITEMS",
        "MEMORY_MAX_CHARS",
        "CONVERSATION_MAX_TURNS",
        "CONVERSATION_MAX_CHARS",
        "CONVERSATION_MAX_AGE_DAYS",
        "MEMORY_STALE_DAYS",
        "MEMORY_LLM_TIMEOUT",
        "MEMORY_LLM_MAX_REPLY_BYTES",
        "MEMORY_LLM_PAIRS_PER_SCAN",
        "MEMORY_LLM_TOKENS_PER_SCAN",
        "MEMORY_LLM_SECONDS_PER_SCAN",
        "MEMORY_MAX_FACTS_PER_THREAD",
        "MEMORY_AUTO_EXTRACT_EVERY",
        "MEMORY_LOCK_TIMEOUT",
        "MEMORY_CONTEXT_WINDOW",
        "MEMORY_SERVER_CONNECTIONS",
        "MEMORY_SERVER_CONNECTIONS_PER_CLIENT",
        "MEMORY_SERVER_IDLE_TIMEOUT",
        "MEMORY_SERVER_REQUEST_TIMEOUT",
    }


# Choices the program has that an add-on cannot run: claude-cli needs the `claude` program and
# its login, which no add-on image carries (tests/test_addon_config.py checks the others run).
NOT_IN_THE_ADDON = {"MEMORY_LLM_PROVIDER": {"claude-cli"}}


def test_the_addon_schema_allows_the_same_choices_as_the_program():
    schema = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))["schema"]
    for var, choices in CHOICES.items():
        declared = re.fullmatch(r"list\((.*)\)", schema[var.lower()])
        assert declared, var
        offered = tuple(c for c in choices if c not in NOT_IN_THE_ADDON.get(var, set()))
        assert tuple(declared.group(1).split("|")) == offered, var


@pytest.mark.parametrize("k", range(COLUMNS))
def test_each_value_through_the_environment(tmp_path, k):
    env = clean_env(tmp_path)
    wanted = column(k)
    for var, (text, _option, _used) in wanted.items():
        env[var] = text
    shown = settings_of(env)
    assert {var: shown[var] for var in wanted} == {
        var: used for var, (_, _, used) in wanted.items()
    }
    assert shown["mode"] == "standalone"


@pytest.mark.parametrize("k", range(COLUMNS))
def test_each_value_through_the_addon_options_file(tmp_path, k):
    env = clean_env(tmp_path)
    wanted = column(k)
    options = {var.lower(): option for var, (_text, option, _used) in wanted.items()}
    (tmp_path / "options.json").write_text(json.dumps(options), encoding="utf-8")
    env["MEMORY_OPTIONS_FILE"] = str(tmp_path / "options.json")
    del env["MEMORY_DATA_DIR"]  # the option memory_data_dir names the folder
    shown = settings_of(env)
    assert {var: shown[var] for var in wanted} == {
        var: used for var, (_, _, used) in wanted.items()
    }
    assert shown["mode"] == "addon"


@pytest.mark.parametrize("spelled", ["zh-hant", "ZH-HANT", " zh-Hant "])
def test_choices_ignore_case_and_keep_their_own_spelling(tmp_path, spelled):
    env = clean_env(tmp_path)
    env["MEMORY_LANGUAGE"] = spelled
    assert settings_of(env)["MEMORY_LANGUAGE"] == "zh-Hant"


def test_a_value_outside_the_choices_stops_the_program_with_its_name(tmp_path):
    env = clean_env(tmp_path)
    env["MEMORY_LANGUAGE"] = "klingon"
    done = subprocess.run([*CLI, "settings"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert (
        "MEMORY_LANGUAGE must be one of auto, en, zh-Hant, zh-Hans; got 'klingon'." in done.stderr
    )


@pytest.mark.parametrize("language", ["zh-Hant", "zh-Hans"])
def test_the_addon_serves_in_the_language_its_options_name(tmp_path, language):
    options = tmp_path / "options.json"
    options.write_text(
        json.dumps({"memory_language": language, "memory_allow_direct_access": True}),
        encoding="utf-8",
    )
    server = start_server(tmp_path / "data", {"MEMORY_OPTIONS_FILE": str(options)})
    try:
        with urllib.request.urlopen(f"{server.url}/memories/", timeout=10) as answer:
            page = answer.read().decode("utf-8")
        assert f'<html lang="{language}"' in page
    finally:
        stop_server(server)
