"""The docs keep up with the code: the README is a short front page that links every docs page,
and every setting, add-on option, command, dashboard page and MCP tool is documented in exactly
one docs page (docs/*.md, and DOCS.md, the add-on's own page). The lists come from the code
(the settings read, config.yaml's schema, the click command tree, the Flask url_map, the MCP
server's tools/list), so a new one fails here until it is documented.

"Documented" means a definition a reader can find, not a mention:
- a setting or an add-on option: a table row whose first cell is the name (`| `MEMORY_X` |`);
- a command: a table row whose first cell starts with it (`| `memory-curator skills import …`);
- a dashboard page: a heading naming its address (`### Recently deleted (`/memories/deleted`)`);
- an MCP tool: a heading naming the tool (`## The `recall` tool`).
Mentions elsewhere (with a link to the page that documents it) are fine."""

from __future__ import annotations

import ast
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import click
import pytest
import yaml
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.support.data import make_settings
from webapp import create_app
from webapp.cli import main

REPO = Path(__file__).resolve().parents[1]
README_PATH = REPO / "README.md"
README = README_PATH.read_text(encoding="utf-8")
README_LIMIT = 20_000  # bytes
# The docs pages: docs/*.md, and the add-on's DOCS.md (Home Assistant shows it on the add-on's
# Documentation tab, so it stays at the top level).
DOC_PATHS = [*sorted((REPO / "docs").glob("*.md")), REPO / "DOCS.md"]
# Every page whose links are checked.
LINKED_PATHS = [README_PATH, *DOC_PATHS, REPO / "ARCHITECTURE.md"]
# Upper-case MEMORY_*/CONVERSATION_* names in the code that are not settings a person sets.
NOT_SETTINGS = {
    "MEMORY_ALLOWED_HOSTS": "a Flask config key (webapp/web/plumbing/security.py)",
    "MEMORY_SETTINGS": "a Flask config key (webapp/web/__init__.py)",
    "MEMORY_CURATOR_LLM_CALL": "marks the processes of one `claude --print` call",
}
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)


def prose(text: str) -> str:
    """``text`` without its fenced code blocks (a ``# comment`` in code is no heading)."""
    return FENCE.sub("", text)


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def docs_text() -> dict[str, str]:
    """Every place a definition could be: the README and each docs page, as prose."""
    places = [README_PATH, *DOC_PATHS]
    return {rel(path): prose(path.read_text(encoding="utf-8")) for path in places}


def where_defined(pattern: str) -> list[str]:
    """The README and docs pages holding a line that matches ``pattern`` (re.MULTILINE)."""
    found = re.compile(pattern, re.MULTILINE)
    return [name for name, text in docs_text().items() if found.search(text)]


def check_once(names: list[str], definition: Callable[[str], str], kind: str) -> None:
    """Each of ``names`` is defined (``definition(name)`` is a line pattern) in exactly one docs
    page, and not in the README (which links on)."""
    wrong = {}
    for name in names:
        places = where_defined(definition(name))
        if len(places) != 1 or places == [rel(README_PATH)]:
            wrong[name] = places
    assert not wrong, (
        f"each {kind} must be documented in exactly one docs page (not the README); "
        f"found in: {wrong}"
    )


# ------------------------------------------------------------------ what the code has
def settings_in_code() -> list[str]:
    """Every MEMORY_*/CONVERSATION_* name the package's source holds as a string."""
    names = {
        node.value
        for path in (REPO / "webapp").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.fullmatch(r"(MEMORY|CONVERSATION)_[A-Z0-9_]+", node.value)
    }
    return sorted(names - set(NOT_SETTINGS))


def addon_options() -> list[str]:
    config = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    return sorted(config["schema"])


def leaf_commands(group: click.Group, prefix: str = "memory-curator") -> list[str]:
    names = []
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            names.extend(leaf_commands(command, f"{prefix} {name}"))
        else:
            names.append(f"{prefix} {name}")
    return names


def is_page(response: Any) -> bool:
    body = response.get_data(as_text=True)
    return (
        response.status_code == 200
        and response.mimetype == "text/html"
        and "<html" in body
        and "<h1" in body
    )


def dashboard_pages(tmp_path: Path) -> list[str]:
    """The addresses the dashboard answers with a whole page, asked without arguments: with no
    token, and (for the login page) with one."""
    pages = set()
    for token in ("", "a-token-of-thirty-two-characters"):
        settings = make_settings(tmp_path / (token or "open"), dashboard_token=token)
        app = create_app(settings)
        client = app.test_client()
        for rule in app.url_map.iter_rules():
            asked = "GET" in (rule.methods or ()) and not rule.arguments
            if asked and is_page(client.get(rule.rule, headers={"Accept": "text/html"})):
                pages.add(rule.rule)
    return sorted(pages)


def mcp_tools(data_dir: Path) -> list[str]:
    """The tools `memory-curator mcp` lists, asked with the MCP SDK's own client."""

    async def ask() -> list[str]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "webapp", "mcp", "--data-dir", str(data_dir)],
            env={"MEMORY_EMBEDDER": "lexical"},
            cwd=REPO,
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return [tool.name for tool in (await session.list_tools()).tools]

    return sorted(anyio.run(ask))


# ------------------------------------------------------------------ documented once
def test_every_setting_is_documented_in_one_docs_page():
    names = settings_in_code()
    assert "MEMORY_MAX_ITEMS" in names and "MEMORY_EMBEDDER" in names
    check_once(names, lambda name: rf"^\|\s*`{name}`\s*\|", "setting (a table row)")


def test_every_addon_option_is_documented_in_one_docs_page():
    check_once(addon_options(), lambda name: rf"^\|\s*`{name}`\s*\|", "add-on option")


def test_every_command_is_documented_in_one_docs_page():
    commands = leaf_commands(main)
    assert "memory-curator skills import" in commands
    check_once(commands, lambda name: rf"^\|\s*`{re.escape(name)}(?=[ `])", "command")


def test_every_dashboard_page_is_documented_in_one_docs_page(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORY_EMBEDDER", "lexical")  # no page waits for a model to load
    pages = dashboard_pages(tmp_path)
    assert {"/memories/", "/review/", "/people/", "/login"} <= set(pages)
    check_once(pages, lambda path: rf"^#{{1,6}} .*`{re.escape(path)}`", "dashboard page")


def test_every_mcp_tool_is_documented_in_one_docs_page(tmp_path):
    tools = mcp_tools(tmp_path)
    assert {"manage_memory", "recall"} <= set(tools)
    check_once(tools, lambda name: rf"^#{{1,6}} .*`{re.escape(name)}`", "MCP tool")


# ------------------------------------------------------------------ the README and the links
def test_the_readme_stays_short():
    size = len(README.encode("utf-8"))
    assert size < README_LIMIT, f"README.md is {size:,} bytes; keep it under {README_LIMIT:,}"


def test_the_readme_links_every_docs_page():
    assert len(DOC_PATHS) > 1, "the docs pages are under docs/"
    linked = {target.split("#")[0] for target in links(README)}
    missing = [rel(path) for path in DOC_PATHS if rel(path) not in linked]
    assert missing == [], f"README.md does not link {missing}"


def slug(heading: str, seen: dict[str, int]) -> str:
    """GitHub's anchor for a heading (repeated ones get -1, -2, …)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
    count = seen.get(text, 0)
    seen[text] = count + 1
    return text if count == 0 else f"{text}-{count}"


def anchors(path: Path) -> set[str]:
    text = prose(path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found = {slug(m.group(1), seen) for m in re.finditer(r"^#{1,6} (.+?)#*$", text, re.M)}
    found |= set(re.findall(r"<a (?:id|name)=\"([^\"]+)\"", text))
    return found


def links(text: str) -> list[str]:
    """The targets of a page's Markdown links and images that stay in this repository."""
    text = re.sub(r"`[^`\n]*`", "", prose(text))
    targets = re.findall(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", text)
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


@pytest.mark.parametrize("path", LINKED_PATHS, ids=rel)
def test_every_relative_link_and_anchor_resolves(path):
    broken = []
    for target in links(path.read_text(encoding="utf-8")):
        file_part, _, anchor = target.partition("#")
        goal = (path.parent / file_part).resolve() if file_part else path
        if not goal.exists() or (anchor and goal.suffix == ".md" and anchor not in anchors(goal)):
            broken.append(target)
    assert broken == [], f"{rel(path)} links to what is not there: {broken}"


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


# ------------------------------------------------------------------ the add-on's page
def addon_page() -> str:
    return (REPO / "DOCS.md").read_text(encoding="utf-8")


def button_labels(template: str) -> list[str]:
    return re.findall(r"<button[^>]*>\{\{ _\(\"([^\"]+)\"\) \}\}</button>", template)


def test_the_addon_page_shows_a_home_assistant_user_how_to_add_themselves():
    """An unlinked Home Assistant user's additions are the household's until they press the
    People page's button (also on Memories): DOCS.md names the page and the button as the
    template words it."""
    template = (REPO / "templates" / "people" / "page.html").read_text(encoding="utf-8")
    form = template[template.index("url_for('people.me')") :]
    label = button_labels(form)[0]
    page = addon_page()
    assert "**People**" in page and f"**{label}**" in page


def test_the_addon_page_says_how_extraction_runs_in_option_names():
    """DOCS.md tells an add-on user, outside the options table, which Configuration options make
    extraction use a model (the option names, never the environment variables) and what starts
    it: the Conversations page's buttons, or `memory-curator extract`."""
    page = prose(addon_page())
    # Markdown reflows lines: compare with the words one space apart.
    text = " ".join(" ".join(s for s in page.splitlines() if not s.startswith("|")).split())
    options = [o for o in addon_options() if o.startswith("memory_llm_")] + ["memory_review_mode"]
    assert [o for o in options if f"`{o}`" not in text] == []
    assert re.findall(r"`(?:MEMORY_LLM_\w+|MEMORY_REVIEW_MODE)`", page) == []
    folder = REPO / "templates" / "conversations"
    labels = [
        label
        for path in sorted(folder.glob("*.html"))
        for label in button_labels(path.read_text(encoding="utf-8"))
        if label.startswith("Extract")
    ]
    assert len(labels) >= 2 and [label for label in labels if label not in text] == []
    assert "`memory-curator extract" in text
