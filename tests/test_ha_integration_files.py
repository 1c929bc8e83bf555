"""The Home Assistant integration's files hold together (custom_components/memory_curator; its
behaviour is tested in real Home Assistant by tests/ha/test_assist.py): every form, error and
repair issue its code names has words in English, 繁體中文 and 简体中文, the translations
keep the same keys and placeholders, and the manifest says what Home Assistant and HACS read."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from opencc_purepy import OpenCC

REPO = Path(__file__).resolve().parent.parent
INTEGRATION = REPO / "custom_components" / "memory_curator"
STRINGS = json.loads((INTEGRATION / "strings.json").read_text(encoding="utf-8"))
LANGUAGES = ("en", "zh-Hant", "zh-Hans")
PLACEHOLDER = re.compile(r"\{[a-z_]+\}")


def leaves(node: Any, path: str = "") -> dict[str, str]:
    if isinstance(node, dict):
        found: dict[str, str] = {}
        for key, value in node.items():
            found |= leaves(value, f"{path}.{key}" if path else key)
        return found
    return {path: node}


def translation(language: str) -> dict[str, str]:
    return leaves(
        json.loads((INTEGRATION / "translations" / f"{language}.json").read_text("utf-8"))
    )


def strings_in(module: str, call: str, keyword: str) -> set[str]:
    """The string values of ``keyword`` in every call of ``call`` in the module."""
    tree = ast.parse((INTEGRATION / module).read_text(encoding="utf-8"))
    return {
        kw.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == call
        for kw in node.keywords
        if kw.arg == keyword and isinstance(kw.value, ast.Constant)
    }


def test_every_language_has_every_string_with_its_placeholders() -> None:
    english = leaves(STRINGS)
    assert translation("en") == english
    for language in ("zh-Hant", "zh-Hans"):
        words = translation(language)
        assert words.keys() == english.keys(), language
        for key, text in english.items():
            assert set(PLACEHOLDER.findall(words[key])) == set(PLACEHOLDER.findall(text)), key
            if re.search(r"[a-z]{3}", PLACEHOLDER.sub("", text).replace("Memory Curator", "")):
                assert words[key] != text, f"{language} {key} is not translated"
    # 简体 is simplified: OpenCC's 繁 -> 简 changes nothing in it
    to_simplified = OpenCC("t2s")
    for key, text in translation("zh-Hans").items():
        assert to_simplified.convert(text) == text, key


def test_every_form_error_and_issue_the_code_names_has_words() -> None:
    flow = (INTEGRATION / "config_flow.py").read_text(encoding="utf-8")
    for step in strings_in("config_flow.py", "async_show_form", "step_id") - {"init"}:
        assert f"config.step.{step}.title" in leaves(STRINGS), step
    assert "options.step.init.title" in leaves(STRINGS)
    returned = set(re.findall(r'return "([a-z_]+)"', flow)) - {"http", "https"}
    codes = returned | {"addon_outdated", "integration_outdated"}
    assert codes <= STRINGS["config"]["error"].keys()
    for reason in strings_in("config_flow.py", "async_abort", "reason"):
        assert reason in STRINGS["config"]["abort"], reason
    issues = ast.literal_eval(
        re.search(r"OUTDATED_ISSUES = (\(.*?\))", (INTEGRATION / "__init__.py").read_text())[1]
    )
    assert set(issues) == STRINGS["issues"].keys()
    for key in strings_in("__init__.py", "ConfigEntryError", "translation_key"):
        assert key in STRINGS["exceptions"], key


def test_the_manifest_says_what_home_assistant_and_hacs_read() -> None:
    manifest = json.loads((INTEGRATION / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["domain"] == "memory_curator" == INTEGRATION.name
    assert manifest["name"] == "Memory Curator"
    assert manifest["config_flow"] is True
    assert manifest["iot_class"] == "local_push"
    assert manifest["requirements"] == []  # aiohttp is Home Assistant's own
    assert re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"])
    assert "conversation" in manifest["dependencies"]
    hacs = json.loads((REPO / "hacs.json").read_text(encoding="utf-8"))
    assert hacs["name"] == manifest["name"]
