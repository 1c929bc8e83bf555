"""Needs attention's LLM tier in a real browser against a running dashboard (its own process)
whose LLM is a real HTTP server on 127.0.0.1 speaking OpenAI's chat format: a pair that only
world knowledge links, which the rules did not flag, shows as a contradiction checked by the
model."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.attention import (
    MODEL,
    OTHERS,
    TEETOTAL,
    WINE,
    answering,
    wine_contradicts_teetotal,
)
from tests.support.llm import FakeLlmServer, openai_body
from tests.support.web import start_server, stop_server

pytestmark = pytest.mark.browser


def test_the_models_verdict_on_a_near_neighbour_shows_in_needs_attention(tmp_path, page):
    with FakeLlmServer(openai_body) as llm:
        llm.reply_for = answering(wine_contradicts_teetotal)
        server = start_server(
            tmp_path / "data",
            {
                "MEMORY_LLM_PROVIDER": "openai",
                "MEMORY_LLM_MODEL": MODEL,
                "MEMORY_LLM_BASE_URL": llm.url + "/v1",
            },
        )
        try:
            store = server.memories()
            for text in (TEETOTAL, WINE, *OTHERS):
                store.add(text)
            page.goto(server.url + "/attention/?kind=contradiction")
            card = page.locator("article.finding", has_text=TEETOTAL)
            expect(card).to_contain_text(WINE, timeout=60_000)
            expect(card).to_contain_text(f"checked by {MODEL}; the rules did not flag it")
            expect(card).to_contain_text(f"{MODEL} reads these as contradicting each other.")
            expect(page.get_by_role("link", name="Contradictions (1)")).to_be_visible()
            assert any(
                {TEETOTAL, WINE} <= set(payload["messages"][0]["content"].split('"'))
                for _, _, payload in llm.requests
            )
            assert page.watch.page_errors == [] and page.watch.console_errors == []
        finally:
            stop_server(server)
