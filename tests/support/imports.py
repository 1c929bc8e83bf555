"""The import fixtures in tests/data/imports (written from each format's public documentation),
what each gives, and files nested far past any parser's depth."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.support import REPO

DEEP = 100_000  # far past the interpreter's recursion limit

FIXTURES = REPO / "tests" / "data" / "imports"


# file → (format auto finds, to add, to update, skipped as known, refused), into an empty store
EXPECTED = {
    "chatgpt_memories_en.txt": ("text", 9, 0, 0, 2),
    "claude_memory_zh_hant.txt": ("text", 5, 0, 0, 2),
    "pasted_zh_hans.txt": ("text", 4, 0, 0, 0),
    "mem0_get_all.json": ("mem0", 3, 0, 0, 2),
    "mem0_platform_list.json": ("mem0", 2, 0, 0, 0),
    "mcp_memory.jsonl": ("mcp-jsonl", 8, 0, 0, 1),
    "letta_agent.af": ("letta", 8, 0, 0, 3),
    "letta_agent_v1.af": ("letta", 3, 0, 0, 1),
}


def today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


# Every place a file may nest: bare arrays and objects, unclosed, inside a mem0 record, inside
# one line of MCP JSONL, inside a Letta block, and just past the promise (65 levels).
SHAPES = {
    "arrays": "[" * DEEP + "]" * DEEP,
    "objects": '{"a":' * DEEP + "1" + "}" * DEEP,
    "unclosed": "[" * DEEP,
    "mem0-metadata": '[{"memory": "Likes tea", "metadata": ' + "[" * DEEP + "]" * DEEP + "}]",
    "mcp-jsonl-line": '{"type": "entity", "name": "user", "entityType": "person", '
    '"observations": [' + "[" * DEEP + "]" * DEEP + "]}\n",
    "letta-block": '{"core_memory": [{"label": "human", "value": '
    + "[" * DEEP
    + "]" * DEEP
    + "}]}",
    "just-past-64": "[" * 65 + "]" * 65,
}
