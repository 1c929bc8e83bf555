"""Issue 35, item 15: JSON nested deeper than the 64 levels an import promises to read. In
``auto`` (and when a format was named) the error path parsed it with no bound, so
``memory-curator import`` exited with a RecursionError traceback and Bring's preview answered
500; now every such file is refused with ``import_too_deep``, and nothing is queued."""

from __future__ import annotations

import pytest

from tests.support.cli import run_cli
from tests.support.imports import SHAPES
from webapp.imports import ImportFormatError, resolve_format


@pytest.mark.parametrize("fmt", ["auto", "mem0", "mcp-jsonl", "letta", "json", "text"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_resolving_a_too_deep_file_refuses_it_with_its_code(shape, fmt):
    with pytest.raises(ImportFormatError) as refused:
        resolve_format(SHAPES[shape], fmt)
    assert refused.value.code == "import_too_deep", refused.value
    assert "at most 64" in str(refused.value)


def test_sixty_four_levels_are_still_read():
    """The promise itself: 64 levels is JSON of an unknown shape, not too deep."""
    with pytest.raises(ImportFormatError) as refused:
        resolve_format("[" * 64 + "]" * 64)
    assert refused.value.code == "import_unknown_json"


@pytest.mark.parametrize("shape", ["arrays", "objects", "mcp-jsonl-line", "letta-block"])
def test_the_import_command_refuses_a_too_deep_file_without_a_traceback(data_dir, tmp_path, shape):
    path = tmp_path / "deep.json"
    path.write_text(SHAPES[shape], "utf-8")
    result = run_cli("import", str(path), "--data-dir", str(data_dir))
    assert result.returncode == 1, result.stdout
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    assert "nests lists and objects" in result.stderr and "at most 64" in result.stderr
    assert not (data_dir / "review.json").exists()
