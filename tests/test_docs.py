"""The README keeps up with the code: every setting, every command, every picture it shows."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import click
import pytest

from webapp.cli import main
from webapp.settings import _SPECS

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _commands(group: click.Group, prefix: str = "memory-curator") -> list[str]:
    names = []
    for name, command in group.commands.items():
        names.append(f"{prefix} {name}")
        if isinstance(command, click.Group):
            names.extend(_commands(command, f"{prefix} {name}"))
    return names


@pytest.mark.parametrize(
    "variable", [env for _, env, _, _ in _SPECS] + ["MEMORY_DATA_DIR", "MEMORY_SKILLS_DIR"]
)
def test_every_setting_is_documented(variable):
    assert f"`{variable}`" in README, f"README.md does not mention the setting {variable}"


@pytest.mark.parametrize("command", _commands(main))
def test_every_command_is_documented(command):
    assert f"`{command}" in README, f"README.md does not mention `{command}`"


def test_every_picture_the_readme_shows_exists():
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README)
    assert pictures, "the README shows the dashboard"
    missing = [p for p in pictures if not (REPO / p).is_file()]
    assert missing == []


def test_quick_start_commands_exist_and_ci_runs_the_same_test_command():
    quick_start = README[
        README.index("## Quick start") : README.index("\n## ", README.index("## Quick start") + 5)
    ]
    assert "./run.sh" in quick_start and "./test.sh" in quick_start
    for script in ("run.sh", "test.sh", ".ci/run"):
        mode = (REPO / script).stat().st_mode
        assert mode & stat.S_IXUSR, f"{script} is not executable"
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^exec \./test\.sh\b", ci, re.MULTILINE), (
        ".ci/run must run the README's test command"
    )
