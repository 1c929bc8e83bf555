"""Issue 35, item 15, in the dashboard: Bring's preview and confirm of a file nested far past
64 levels answered 500 (RecursionError); now a 422 that says so, in the page's language."""

from __future__ import annotations

import io

import pytest

from tests.support.imports import SHAPES


@pytest.mark.parametrize("step", ["preview", "confirm"])
@pytest.mark.parametrize("shape", ["arrays", "objects", "mcp-jsonl-line", "letta-block"])
def test_bring_refuses_a_too_deep_file_with_a_message(client, settings, shape, step):
    upload = (io.BytesIO(SHAPES[shape].encode("utf-8")), "deep.json")
    answer = client.post(
        f"/memories/bring/{step}", data={"file": upload, "format": "auto"}, htmx=True
    )
    assert answer.status_code == 422
    assert "nests lists and objects" in answer.get_data(as_text=True)
    assert not settings.review_file.exists()


def test_the_pasted_form_too_and_in_chinese(client):
    answer = client.post(
        "/memories/bring/preview",
        data={"pasted": SHAPES["arrays"], "format": "auto"},
        headers={"Accept-Language": "zh-Hant"},
        htmx=True,
    )
    assert answer.status_code == 422
    assert "nests lists and objects" not in answer.get_data(as_text=True)
