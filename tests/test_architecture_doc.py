"""ARCHITECTURE.md is the map of the package and stays true to it (issue #45): every module,
package or file it names exists, and every package of ``webapp`` (and every module at its root)
is named in it, so a part added, moved or renamed fails here until the map says where it sits.

What counts as naming something:
- a dotted name anywhere, ``webapp.stores.jsonwrite``; a name past the module must be defined
  in it (``webapp.library.MemoryStore.add``: ``MemoryStore`` in ``webapp/library.py``);
- a path anywhere that starts with ``webapp/`` (``webapp/web/plumbing/htmx.py``, ``webapp/llm/``);
- in a code span, a path from the repository or from ``webapp/`` (``stores/jsonwrite.py``,
  ``web/blueprints/``, ``tests/test_docs.py``, ``templates/``), a bare file name
  (``jsonwrite.py``: some module of ``webapp`` has it), or a dotted name that starts with a part
  of ``webapp`` (``stores.records``)."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE = ROOT / "ARCHITECTURE.md"

DOTTED = re.compile(r"\bwebapp(?:\.[A-Za-z_]\w*)*")
SLASHED = re.compile(r"\bwebapp(?:/[A-Za-z_][\w.-]*)*/?")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
# a path-like word in a code span: no leading slash (`/data/options.json` is not the repository's)
WORD = re.compile(r"(?<![\w./<-])[A-Za-z_][\w.-]*(?:/[\w.-]+)*/?")
FILE_ENDINGS = (".json", ".jsonl", ".lock", ".bak", ".html", ".md", ".css", ".js", ".format")


def _clean(name: str) -> str:
    """``name`` without the full stop or comma of the sentence it ends."""
    return name.rstrip(".,;:")


def _top_names(module: Path) -> set[str]:
    """The names a module defines or imports at its top level."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def dotted_exists(name: str, root: Path) -> bool:
    """``name`` (``webapp.x.y``) is a module or package of ``root``, or a name defined in one."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        path = root.joinpath(*parts[:end])
        module = (
            path.with_suffix(".py") if path.with_suffix(".py").is_file() else path / "__init__.py"
        )
        if module.is_file():
            return end == len(parts) or parts[end] in _top_names(module)
    return False


def path_of(word: str, root: Path) -> Path | None:
    """Where a path named in a code span is: from the repository, or from ``webapp/``."""
    for base in (root, root / "webapp"):
        if (base / word.rstrip("/")).exists():
            return base / word.rstrip("/")
    return None


@cache
def _module_files(root: Path) -> frozenset[str]:
    return frozenset(path.name for path in (root / "webapp").rglob("*.py"))


def parts_of(root: Path) -> set[str]:
    """The top-level parts of ``webapp``: its packages and root modules (``stores``, ``text``)."""
    package = root / "webapp"
    return {path.stem for path in package.glob("*.py")} | {
        path.parent.name for path in package.glob("*/__init__.py")
    }


def named(text: str, root: Path) -> tuple[set[str], set[str]]:
    """(the dotted names, the paths) ``text`` names, as they are written."""
    dotted = {_clean(name) for name in DOTTED.findall(text)}
    paths = {_clean(name) for name in SLASHED.findall(text)}
    parts = parts_of(root)
    for span in CODE_SPAN.findall(text):
        for word in map(_clean, WORD.findall(span)):
            if "/" in word or word.endswith(".py"):
                paths.add(word)
            elif "." in word and word.split(".")[0] in parts and not word.endswith(FILE_ENDINGS):
                dotted.add("webapp." + word)
    return dotted, paths


def missing(text: str, root: Path) -> list[str]:
    """What ``text`` names that does not exist in ``root``."""
    dotted, paths = named(text, root)
    gone = [name for name in sorted(dotted) if not dotted_exists(name, root)]
    for word in sorted(paths):
        bare_module = "/" not in word and word in _module_files(root)
        if path_of(word, root) is None and not bare_module:
            gone.append(word)
    return gone


def packages(root: Path) -> list[str]:
    """Every package under root/webapp, and every module at its root, dotted."""
    package = root / "webapp"
    found = {".".join(init.parent.relative_to(root).parts) for init in package.rglob("__init__.py")}
    found |= {
        f"webapp.{path.stem}" for path in package.glob("*.py") if not path.stem.startswith("__")
    }
    return sorted(found)


def unnamed(text: str, root: Path) -> list[str]:
    """The packages (and root modules) of ``root`` that ``text`` does not name."""
    dotted, paths = named(text, root)
    said = set(dotted)
    for word in paths:
        path = path_of(word, root)
        if path is not None and (root / "webapp") in (path, *path.parents):
            relative = (
                path.relative_to(root).with_suffix("")
                if path.suffix == ".py"
                else path.relative_to(root)
            )
            said.add(".".join(relative.parts))
    return [package for package in packages(root) if package not in said]


def test_every_module_the_architecture_names_exists() -> None:
    assert missing(ARCHITECTURE.read_text(encoding="utf-8"), ROOT) == []


def test_the_architecture_names_every_package() -> None:
    assert unnamed(ARCHITECTURE.read_text(encoding="utf-8"), ROOT) == []


def _package(root: Path, *names: str) -> None:
    for name in names:
        folder = root.joinpath(*name.split("."))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text("")
    (root / "webapp" / "stores" / "jsonfile.py").write_text("class JsonFile:\n    pass\n")
    (root / "webapp" / "library.py").write_text("from .stores import jsonfile\n")
    (root / "webapp" / "text.py").write_text("")


def test_a_module_gone_or_a_package_unnamed_is_found(tmp_path: Path) -> None:
    _package(
        tmp_path, "webapp", "webapp.stores", "webapp.mcp", "webapp.web", "webapp.web.blueprints"
    )
    text = (
        "`webapp.stores.jsonfile.JsonFile.update` writes; `webapp/stores/` and `jsonfile.py` and"
        " `stores/jsonfile.py` and `webapp.library.jsonfile` and `web/blueprints/` are kept;"
        " `webapp.mcp_server`, `webapp/web/memories.py`, `web/memories.py`, `curation/`,"
        " `stores.jsonfile.Gone` and `webapp.library.MemoryStore` are gone; `/data/options.json`"
        " is not the repository's; `webapp` is the package and `webapp/library.py` a module."
    )
    assert missing(text, tmp_path) == [
        "webapp.library.MemoryStore",
        "webapp.mcp_server",
        "webapp.stores.jsonfile.Gone",
        "curation/",
        "web/memories.py",
        "webapp/web/memories.py",
    ]
    assert unnamed(text, tmp_path) == ["webapp.mcp", "webapp.text", "webapp.web"]
