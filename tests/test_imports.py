"""The importers' edges, in process: what auto detection takes for text or JSON, broken and
unknown JSON, an agent file saved as a JSON string, the statement limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webapp.imports import (
    MAX_STATEMENTS,
    ImportFormatError,
    detect,
    parse,
    resolve_format,
)

FIXTURES = Path(__file__).parent / "data" / "imports"


def test_a_pasted_line_that_starts_with_a_bracket_is_text():
    pasted = "[Work] Prefers short stand-ups\n- Likes jazz"
    assert detect(pasted) == "text"
    assert [c.text for c in parse(pasted, "text").candidates] == [
        "[Work] Prefers short stand-ups",
        "Likes jazz",
    ]


def test_broken_json_is_refused_saying_where_it_breaks():
    with pytest.raises(ImportFormatError) as caught:
        resolve_format('{"results": [{"memory": "Likes tea"},\n', "auto")
    assert caught.value.code == "import_bad_json"
    assert "is not valid JSON" in str(caught.value)
    assert caught.value.values["line"] == 2


def test_json_of_another_shape_is_refused_naming_what_is_read():
    with pytest.raises(ImportFormatError) as caught:
        resolve_format('{"settings": {"theme": "dark"}}', "auto")
    assert caught.value.code == "import_unknown_json"


def test_an_agent_file_saved_as_a_json_string_is_read_like_the_file():
    text = (FIXTURES / "letta_agent.af").read_text(encoding="utf-8")
    wrapped = json.dumps(text)
    assert detect(wrapped) == "letta"
    assert [c.text for c in parse(wrapped, "letta").candidates] == [
        c.text for c in parse(text, "letta").candidates
    ]


def test_statements_beyond_the_limit_are_refused_and_counted():
    parsed = parse("\n".join(f"Fact {i}" for i in range(MAX_STATEMENTS + 3)), "text")
    assert len(parsed.candidates) == MAX_STATEMENTS
    assert [r.reason for r in parsed.refused] == ["over_limit"] * 3


def test_letta_tools_and_messages_are_never_read():
    parsed = parse((FIXTURES / "letta_agent.af").read_text(encoding="utf-8"), "letta")
    said = " ".join(c.text for c in parsed.candidates)
    assert "Kaohsiung" not in said  # a message of the conversation
    assert "os.system" not in said  # a tool's source code


# A memory file of one entity: one line of JSONL, which is also one JSON object.
ONE_LINE = (
    '{"type":"entity","name":"Rex","entityType":"pet",'
    '"observations":["Is a golden retriever","Needs a walk at 7 pm"]}\n'
)


@pytest.mark.parametrize(
    "content",
    [
        ONE_LINE,
        ONE_LINE.strip(),
        '{"type":"relation","from":"John_Smith","to":"Rex","relationType":"owns"}',
        json.dumps(json.loads(ONE_LINE), indent=2),  # the same record spread over lines
    ],
    ids=["one-line", "no-newline", "one-relation", "pretty-printed"],
)
def test_a_memory_file_of_one_record_is_read_as_one(content):
    assert detect(content) == "mcp-jsonl"
    assert resolve_format(content, "auto") == "mcp-jsonl"
    assert resolve_format(content, "mcp-jsonl") == "mcp-jsonl"
    assert parse(content, "mcp-jsonl").candidates


def test_a_one_line_memory_file_gives_what_that_line_gives_in_a_longer_file():
    lines = (FIXTURES / "mcp_memory.jsonl").read_text(encoding="utf-8").splitlines()
    rex = next(line for line in lines if '"Rex"' in line)
    alone = [c.text for c in parse(rex, "mcp-jsonl").candidates]
    within = [c.text for c in parse("\n".join(lines), "mcp-jsonl").candidates]
    assert alone == [text for text in within if text.startswith("Rex:")]
    assert alone  # "Rex: Is a golden retriever", …


def test_one_json_object_of_another_shape_is_still_refused_as_mcp_jsonl():
    with pytest.raises(ImportFormatError) as caught:
        resolve_format('{"type": "note", "text": "Likes tea"}', "mcp-jsonl")
    assert "is not MCP memory JSONL" in str(caught.value)
