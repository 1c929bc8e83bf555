"""The project's own checks, run by the test command so CI enforces them: ruff (lint and
format), mypy (strict for the library), the import-linter layer contracts in pyproject.toml and
vulture (no dead code)."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = Path(sysconfig.get_path("scripts"))


# Dead code: vulture over the package, at 60% confidence (unused functions, methods, classes,
# attributes and variables). Functions a framework registers by decorator count as used; the
# few names only templates, frameworks, host programs or tests use are in vulture_whitelist.py.
REGISTRATIONS = (
    "@bp.get",
    "@bp.post",
    "@bp.put",
    "@bp.patch",
    "@bp.delete",
    "@bp.route",
    "@*.app_template_filter",
    "@*.app_template_global",
    "@*.context_processor",
    "@*.app_context_processor",
    "@*.before_app_request",
    "@*.errorhandler",
    "@*.app_errorhandler",
    "@*.command",
    "@*.group",
    "@*.tool",
)
VULTURE_ARGS = (
    "webapp",
    "tests/vulture_whitelist.py",
    "--min-confidence",
    "60",
    "--ignore-decorators",
    ",".join(REGISTRATIONS),
)


def run_tool(name: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    tool = TOOLS / name
    assert tool.exists(), f"{name} is not installed in {TOOLS}: pip install -e '.[test]'"
    return subprocess.run(
        [str(tool), *args], cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(("ruff", "check", "."), id="ruff-check"),
        pytest.param(("ruff", "format", "--check", "."), id="ruff-format"),
        pytest.param(("mypy",), id="mypy"),
        pytest.param(("lint-imports", "--no-logo"), id="layer-contracts"),
        pytest.param(("vulture", *VULTURE_ARGS), id="dead-code"),
    ],
)
def test_check_passes(command: tuple[str, ...]) -> None:
    done = run_tool(*command)
    assert done.returncode == 0, (
        f"`{' '.join(command)}` found problems:\n{done.stdout}{done.stderr}"
    )


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        ("webapp/stores/review/queue.py", "from ...extraction import run", "webapp.extraction"),
        ("webapp/stores/review/queue.py", "from ...attention import pairs", "webapp.attention"),
        # no store imports another
        ("webapp/stores/tombstones.py", "from .memories import Memory", "webapp.stores.memories"),
        (
            "webapp/stores/review/queue.py",
            "from ..memories import MemoryStore",
            "webapp.stores.memories",
        ),
        ("webapp/stores/memories/writing.py", "from .. import people", "webapp.stores.people"),
        ("webapp/stores/conversations.py", "from .review import yields", "webapp.stores.review"),
        ("webapp/attention/pairs.py", "from ..extraction import run", "webapp.extraction"),
        ("webapp/attention/scanner.py", "from ..web import attention", "webapp.web"),
        ("webapp/text.py", "import flask", "flask"),
        ("webapp/prompts.py", "from .web import htmx", "webapp.web"),
        ("webapp/extraction/run.py", "import click", "click"),
        ("webapp/settings.py", "from . import stores", "webapp.stores"),
        (
            "webapp/web/blueprints/memories.py",
            "from ...stores.jsonfile import JsonFile",
            "webapp.stores.jsonfile",
        ),
        ("webapp/extraction/state.py", "from ..stores import locking", "webapp.stores.locking"),
        ("webapp/cli/upkeep.py", "from ..stores.jsonfile import encode", "webapp.stores.jsonfile"),
        (
            "webapp/cli/transfer.py",
            "from ..stores.atomic import write_atomic",
            "webapp.stores.atomic",
        ),
        (
            "webapp/extraction/batch.py",
            "from ..stores.changes import Changed",
            "webapp.stores.changes",
        ),
        ("webapp/cli/upkeep.py", "from ..web.blueprints.auth import SESSIONS_FILE", "webapp.web"),
        # the layers: nothing imports a layer above it
        ("webapp/assist/http.py", "from ..mcp import http", "webapp.mcp"),
        ("webapp/text.py", "from .language import terms", "webapp.language"),
        ("webapp/imports/base.py", "from ..curator import Curator", "webapp.curator"),
        ("webapp/attention/pairs.py", "from ..imports import detect", "webapp.imports"),
    ],
)
def test_layer_contracts_refuse_a_crossing(
    tmp_path: Path, module: str, line: str, broken: str
) -> None:
    """A copy of the package with one forbidden import added fails lint-imports, naming it."""
    shutil.copytree(
        ROOT / "webapp", tmp_path / "webapp", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with open(tmp_path / module, "a", encoding="utf-8") as handle:
        handle.write(f"\n{line}  # noqa\n")
    done = run_tool("lint-imports", "--no-logo", "--no-cache", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "BROKEN" in done.stdout
    assert (
        f"is not allowed to import {broken}" in done.stdout  # a forbidden or layers contract
        or f"Illegal imports of protected package {broken}" in done.stdout  # a private module
    ), done.stdout


# Names only the file layer makes: a backup, a lock, records or a damaged file set aside, a temp
# file, a history log. The stores list them (``own_files``); the command line never spells them.
FILE_LAYER_NAMES = re.compile(r"""\.bak\b|\.lock\b|rejected-|corrupt-|\.tmp\b|\.history\.jsonl""")


def test_the_command_line_spells_no_name_of_the_file_layer() -> None:
    sources = sorted((ROOT / "webapp" / "cli").rglob("*.py"))
    assert sources
    found = [
        f"{source.relative_to(ROOT)}:{number}: {line.strip()}"
        for source in sources
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1)
        if FILE_LAYER_NAMES.search(line)
    ]
    assert found == [], "\n".join(found)


def test_templates_are_pages_or_partials() -> None:
    """One naming pattern in every area: full pages end in ``page.html``, partials start with
    ``_``; ``base.html`` is the layout they extend."""
    names = sorted(p.relative_to(ROOT / "templates") for p in (ROOT / "templates").rglob("*.html"))
    assert names
    odd = [
        str(name)
        for name in names
        if str(name) != "base.html"
        and not name.name.startswith("_")
        and not (name.name == "page.html" or name.name.endswith("_page.html"))
    ]
    assert odd == [], f"templates named neither page nor partial: {odd}"


def test_every_template_the_code_names_exists() -> None:
    named = set()
    for source in [*(ROOT / "webapp").rglob("*.py"), *(ROOT / "templates").rglob("*.html")]:
        text = source.read_text(encoding="utf-8")
        named.update(re.findall(r"""["']((?:[\w-]+/)*[\w-]+\.html)["']""", text))
    missing = sorted(name for name in named if not (ROOT / "templates" / name).is_file())
    assert len(named) > 20 and missing == []


# A door (the dashboard, the command line, the MCP server, Assist, the demo, the public library) writes
# the stores only through the curator (webapp/curator): the stores it is given are read-only
# views (webapp/stores/readers.py, typing Protocols with no write method), so a write is a
# strict-mypy error; the curator's writable stores (``Curator._memory_store``, ...) are
# private (ruff's SLF001 outside webapp/curator and webapp/stores).
DOOR_WRITES = """
from webapp.curator import Curator
from webapp.library import MemoryStore
from webapp.web.plumbing.context import Stores


def dashboard_view(stores: Stores) -> None:
    stores.memories.add("x")
    held = stores.review
    held.approve("item-id")
    stores.people.link("person-id", "slack", "U1")


def cli_command(curator: Curator) -> None:
    store = curator.tombstones
    store.record_many([], by="cli")
    curator.memories.delete("id")
    curator.conversations.add_exchange("t", "hi", "hello")
    curator.skills.save({})
    curator.dismissals.dismiss("key")


def host_program(memories: MemoryStore) -> None:
    memories.curator.memories.update("id", "x")


def demo(curator: Curator) -> None:
    curator.memories.import_records([], allow_secrets=True)
    curator.conversations.clear("slack:1")
    curator.review.submit([])
    curator.people.add("Ana")
"""

DOOR_READS = """
from webapp.curator import Curator


def recall(curator: Curator) -> list[str]:
    kept = [m.content for m in curator.memories.get_all()]
    waiting = [item.id for item in curator.review.pending()]
    return kept + waiting + list(curator.people.names())
"""


def _mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    door = tmp_path / "door_example.py"
    door.write_text(source, encoding="utf-8")
    return run_tool("mypy", "--config-file", str(ROOT / "pyproject.toml"), str(door))


def test_strict_mypy_refuses_a_door_that_writes_a_store(tmp_path: Path) -> None:
    done = _mypy(tmp_path, DOOR_WRITES)
    assert done.returncode == 1, done.stdout + done.stderr
    refused = re.findall(
        r'door_example\.py:(\d+): error: "(\w+)" has no attribute "(\w+)"', done.stdout
    )
    assert sorted((reader, write) for _, reader, write in refused) == [
        ("ConversationReader", "add_exchange"),
        ("ConversationReader", "clear"),
        ("DismissalReader", "dismiss"),
        ("MemoryReader", "add"),
        ("MemoryReader", "delete"),
        ("MemoryReader", "import_records"),
        ("MemoryReader", "update"),
        ("PeopleReader", "add"),
        ("PeopleReader", "link"),
        ("ReviewReader", "approve"),
        ("ReviewReader", "submit"),
        ("SkillReader", "save"),
        ("TombstoneReader", "record_many"),
    ], done.stdout
    assert done.stdout.count("error:") == 13, done.stdout


def test_strict_mypy_lets_a_door_read_the_stores(tmp_path: Path) -> None:
    done = _mypy(tmp_path, DOOR_READS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_door_reaching_the_curators_writable_stores_is_refused(tmp_path: Path) -> None:
    door = tmp_path / "webapp" / "web" / "door_example.py"
    door.parent.mkdir(parents=True)
    door.write_text("def view(curator):\n    curator._memory_store.add('x')\n", encoding="utf-8")
    done = run_tool("ruff", "check", "--config", str(ROOT / "pyproject.toml"), str(door))
    assert done.returncode == 1 and "SLF001" in done.stdout, done.stdout


def imported_test_modules(source: str, module: str) -> list[str]:
    """The test modules and conftests that ``source`` (the module named ``module``) imports."""
    package = module.split(".")
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            names = [target, *(f"{target}.{alias.name}" for alias in node.names)]
        else:
            continue
        found += [
            name for name in names if re.fullmatch(r"test_\w+|conftest", name.rsplit(".", 1)[-1])
        ]
    return found


def test_no_test_module_imports_another_or_a_conftest() -> None:
    """What tests share lives in tests/support/; a test module imported by another runs its
    tests' module code twice and ties a behaviour's tests to another's, and a conftest is
    pytest's to load (its fixtures are found by name)."""
    sources = sorted((ROOT / "tests").rglob("*.py"))
    assert len(sources) > 100
    found = [
        f"{source.relative_to(ROOT)}: {name}"
        for source in sources
        for name in imported_test_modules(
            source.read_text(encoding="utf-8"),
            ".".join(source.relative_to(ROOT).with_suffix("").parts),
        )
    ]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    ("source", "module"),
    [
        ("from tests.test_cli import run_cli", "tests.test_imports_cli"),
        ("from .test_mcp_server import connect", "tests.test_expiry"),
        ("from ..test_as_of import an_hour_ago", "tests.web.test_as_of_views"),
        ("from . import test_auth", "tests.web.test_hardening"),
        ("import tests.ha.test_home_assistant as ha", "tests.ha.test_assist"),
        ("def later():\n    from ..conftest import on_disk", "tests.web.test_x"),
        ("from tests.web.conftest import start_server", "tests.test_wheel"),
    ],
)
def test_an_import_of_a_test_module_is_found(source: str, module: str) -> None:
    assert imported_test_modules(source, module) != []
