"""The package's layout shows its architecture (issue #45): the import graph has no cycle
(type-only imports aside), the root package holds a few modules besides its subpackages, and
no module grows past what a reader takes in at once. The layers themselves (nothing imports a
layer above it) are import-linter's contracts in pyproject.toml, run by test_code_quality."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "webapp"
MOST_ROOT_MODULES = 8

CYCLES = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import grimp

    sys.path.insert(0, sys.argv[1])
    graph = grimp.build_graph(sys.argv[2], exclude_type_checking_imports=True)
    modules = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    index, low, stack, on, found = {}, {}, [], set(), []
    sys.setrecursionlimit(10_000)

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on.add(module)
        for other in edges[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            part = []
            while True:
                other = stack.pop()
                on.discard(other)
                part.append(other)
                if other == module:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for module in modules:
        if module not in index:
            visit(module)
    for part in found:
        print(" <-> ".join(part))
    """
)


def import_cycles(folder: Path, package: str) -> list[str]:
    """Each set of modules of ``package`` (in ``folder``) that import one another in a circle,
    counting every import but those under ``if TYPE_CHECKING:`` (deferred ones too)."""
    done = subprocess.run(
        [sys.executable, "-c", CYCLES, str(folder), package],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return done.stdout.splitlines()


def test_the_import_graph_has_no_cycle() -> None:
    assert import_cycles(ROOT, "webapp") == []


def test_a_cycle_is_found_even_through_a_deferred_import(tmp_path: Path) -> None:
    package = tmp_path / "circle"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "serve.py").write_text("def run():\n    from . import http\n")
    (package / "http.py").write_text("from .serve import run\n")
    (package / "typed.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .serve import run\n"
    )
    (package / "words.py").write_text("from . import typed\n")
    assert import_cycles(tmp_path, "circle") == ["circle.http <-> circle.serve"]


def test_the_root_package_holds_a_few_modules() -> None:
    modules = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(modules) <= MOST_ROOT_MODULES, modules


MOST_LINES = 600


def modules_longer_than(root: Path, most: int) -> list[str]:
    """The modules under ``root`` with more than ``most`` lines, and how many they have."""
    found = []
    for path in sorted(root.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > most:
            found.append(f"{path.relative_to(root.parent)}: {lines}")
    return found


def test_no_module_is_longer_than_a_reader_takes_in_at_once() -> None:
    assert modules_longer_than(PACKAGE, MOST_LINES) == []


def test_a_long_module_is_found(tmp_path: Path) -> None:
    package = tmp_path / "webapp"
    package.mkdir()
    (package / "short.py").write_text("x = 1\n" * MOST_LINES)
    (package / "long.py").write_text("x = 1\n" * (MOST_LINES + 1))
    assert modules_longer_than(package, MOST_LINES) == [f"webapp/long.py: {MOST_LINES + 1}"]
