"""Library errors carry a code and their values; the dashboard words them from the code.

Two checks: nothing in ``webapp/web/`` reads a library message (no regular expression, no
comparison, ``in`` test or lookup on an exception's text), and every exception a person can
meet has a code with a message in ``webapp/web/plumbing/messages.py``, translated in both catalogs
with the same placeholders.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

import webapp
from webapp.problems import CodedError
from webapp.web.plumbing.messages import MESSAGES

ROOT = Path(webapp.__file__).parent
LOCALES = ROOT / "locales"

# ------------------------------------------------------------------ no parsing of messages
# What an exception's text is: str(exc), repr(exc), exc.args, exc.message, exc.msg,
# exc.strerror, an f-string holding exc, and any name assigned from one of these.
TEXT_ATTRIBUTES = {"args", "message", "msg", "strerror"}
PATTERN_METHODS = {"match", "search", "fullmatch", "sub", "subn", "findall", "finditer", "split"}
STRING_TESTS = {"startswith", "endswith", "find", "index", "count", "partition", "rpartition"}
EXCEPTION_ANNOTATION = re.compile(r"(Error|Exception|Exc)\b")


class _MessageReading(ast.NodeVisitor):
    """Finds, per function, code that reads an exception's text."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.found: list[str] = []
        self.exceptions: set[str] = set()
        self.texts: set[str] = set()

    # the names that hold an exception, and those that hold its text
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        saved = self.exceptions, self.texts
        self.exceptions, self.texts = set(saved[0]), set(saved[1])
        for arg in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs]:
            if arg.annotation is not None and EXCEPTION_ANNOTATION.search(
                ast.unparse(arg.annotation)
            ):
                self.exceptions.add(arg.arg)
        self.generic_visit(node)
        self.exceptions, self.texts = saved

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.exceptions.add(node.name)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        if self._is_text(node.value):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        self.texts.add(name.id)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        if self._is_text(node.value):
            self.texts.add(node.target.id)
        self.generic_visit(node)

    def _is_exception(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and node.id in self.exceptions

    def _is_text(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.texts
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("str", "repr")
            and node.args
        ):
            return self._is_exception(node.args[0]) or self._is_text(node.args[0])
        if isinstance(node, ast.Attribute) and node.attr in TEXT_ATTRIBUTES:
            return self._is_exception(node.value)
        if isinstance(node, ast.Subscript):
            return self._is_text(node.value)
        if isinstance(node, ast.JoinedStr):
            return any(
                isinstance(part, ast.FormattedValue)
                and (self._is_exception(part.value) or self._is_text(part.value))
                for part in node.values
            )
        if isinstance(node, ast.NamedExpr):
            return self._is_text(node.value)
        if isinstance(node, ast.BoolOp):
            return any(self._is_text(value) for value in node.values)
        return False

    def _report(self, node: ast.AST, what: str) -> None:
        self.found.append(f"{self.path.name}:{node.lineno}: {what}: {ast.unparse(node)}")

    # what reading the text looks like
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if isinstance(func, ast.Attribute):
            if func.attr in PATTERN_METHODS and any(self._is_text(a) for a in arguments):
                self._report(node, "a regular expression reads an exception's text")
            elif func.attr in STRING_TESTS and self._is_text(func.value):
                self._report(node, "a string test on an exception's text")
            elif func.attr == "get" and node.args and self._is_text(node.args[0]):
                self._report(node, "a lookup keyed by an exception's text")
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        if any(self._is_text(side) for side in [node.left, *node.comparators]):
            self._report(node, "a comparison with an exception's text")
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if self._is_text(node.slice):
            self._report(node, "a lookup keyed by an exception's text")
        self.generic_visit(node)


def message_readings(folder: Path) -> list[str]:
    """Every place under ``folder`` that reads an exception's text."""
    found: list[str] = []
    for path in sorted(folder.rglob("*.py")):
        checker = _MessageReading(path)
        checker.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        found.extend(checker.found)
    return found


def test_the_web_never_reads_an_exception_s_text():
    assert message_readings(ROOT / "web") == []


def test_the_reading_check_catches_what_it_should(tmp_path):
    (tmp_path / "views.py").write_text(
        "import re\n"
        "FULL = re.compile('^Importing')\n"
        "def full(exc: MemoryFullError):\n"
        "    message = str(exc)\n"
        "    if FULL.match(message):\n"
        "        return 1\n"
        "def view():\n"
        "    try:\n"
        "        pass\n"
        "    except ValueError as exc:\n"
        "        if 'too long' in str(exc):\n"
        "            return KNOWN.get(str(exc), str(exc))\n"
        "        if re.search('x', exc.args[0]):\n"
        "            return 2\n"
        "        if (text := str(exc)).startswith('Item'):\n"
        "            return 3\n"
        "        return str(exc)\n",  # showing the text is fine: it is not read
        encoding="utf-8",
    )
    found = message_readings(tmp_path)
    assert [line.split(": ")[0] for line in found] == [
        "views.py:5",
        "views.py:11",
        "views.py:12",
        "views.py:13",
        "views.py:15",
    ], found


# ------------------------------------------------------------------ every error has a code
# Exception classes of the library that never reach a person, each with the reason.
NOT_SHOWN = {
    "webapp.stores.jsonread._FileChanged": (
        "signals JsonFile.update to apply a change again; it never leaves that method"
    ),
    "webapp.stores.jsonread._SharedChanged": (
        "signals JsonFile.update to encode every item anew; it never leaves that method"
    ),
    "webapp.stores.errors.StoreError": "the base class of store errors; never raised itself",
    "webapp.llm.backends._ReplyTooLarge": (
        "signals the SDK callers' request to stop reading; it becomes an LlmCallError"
    ),
    "webapp.llm.backends._HttpError": (
        "carries an HTTP error out of the SDK's request; it becomes an LlmCallError"
    ),
    "webapp.stores.skills.errors.SkillDocumentError": (
        "the base class of skill document errors; never raised itself"
    ),
}
LIBRARY = ["webapp.stores", "webapp.llm", "webapp.extraction", "webapp.attention"]


def library_exceptions() -> list[type[BaseException]]:
    """Every exception class defined in the stores, the LLM callers, extraction, curation and
    settings."""
    modules = [importlib.import_module("webapp.settings")]
    for name in LIBRARY:
        package = importlib.import_module(name)
        modules.append(package)
        for info in pkgutil.walk_packages(package.__path__, f"{name}."):
            modules.append(importlib.import_module(info.name))
    found: dict[str, type[BaseException]] = {}
    for module in modules:
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__ == module.__name__:
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return [found[key] for key in sorted(found)]


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def test_the_library_s_exceptions_are_all_found():
    names = {_name(cls) for cls in library_exceptions()}
    assert {"webapp.stores.errors.MemoryFullError", "webapp.settings.SettingsError"} <= names
    assert set(NOT_SHOWN) <= names, "an exempted class no longer exists"


@pytest.mark.parametrize("cls", library_exceptions(), ids=_name)
def test_every_library_error_has_a_code_with_a_message(cls):
    if _name(cls) in NOT_SHOWN:
        return
    assert issubclass(cls, CodedError), f"{_name(cls)} carries no code"
    assert "code" in vars(cls), f"{_name(cls)} has no code of its own"
    for code in cls.all_codes():
        assert code in MESSAGES, f"web/messages.py has no message for {code!r}"


def test_codes_are_stable_names():
    assert webapp.stores.MemoryFullError.code == "memory_full"
    for code in MESSAGES:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", code), code


def _codes_raised() -> set[str]:
    """The literal ``code="…"`` each raise in the library passes."""
    found: set[str] = set()
    paths = [ROOT / "settings.py"]
    for name in ("stores", "extraction", "curation"):
        paths.extend((ROOT / name).rglob("*.py"))
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.keyword)
                and node.arg == "code"
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                found.add(node.value.value)
    return found


def test_every_code_the_library_raises_has_a_message():
    """Codes given per raise (an InputError's, or one of a class's ``codes``) included."""
    raised = _codes_raised()
    assert {"content_empty", "memory_full_chars", "zip_twice"} <= raised
    assert raised - set(MESSAGES) == set()
    for cls in library_exceptions():
        if issubclass(cls, CodedError) and cls.codes:
            assert cls.code in cls.codes, f"{_name(cls)}: its code is not one of its codes"


PLACEHOLDER = re.compile(r"%\((\w+)\)s")


@pytest.mark.parametrize("language", ["zh_Hant", "zh_Hans"])
def test_every_code_s_message_is_translated_with_its_placeholders(language):
    with open(LOCALES / language / "LC_MESSAGES" / "messages.po", "rb") as po:
        catalog = read_po(po)
    for code, message in MESSAGES.items():
        entry = catalog.get(message)
        assert entry is not None, f"{code}: not in the {language} catalog (scripts/i18n.sh)"
        assert entry.string and not entry.fuzzy, f"{code}: not translated in {language}"
        assert sorted(PLACEHOLDER.findall(entry.string)) == sorted(PLACEHOLDER.findall(message)), (
            f"{code}: the {language} translation has other placeholders"
        )
