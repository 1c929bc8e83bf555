"""Extractions started from the dashboard against an LLM that answers a byte a second: they
run in a fixed number of workers, never in the threads pages need; the real server process."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import html
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

import pytest

from tests.support.data import make_settings
from tests.support.llm import FakeLlmServer, openai_body
from tests.support.web import CsrfClient, start_server, stop_server
from webapp import create_app
from webapp.settings import Settings
from webapp.stores import ConversationStore, ReviewQueue

THREADS = [f"slack:17319000{n:02d}.000100" for n in range(8)]
TIMEOUT = 10  # MEMORY_LLM_TIMEOUT of the server under test


@dataclass
class Answer:
    status: int
    text: str
    seconds: float


def _timed(opener: urllib.request.OpenerDirector, request: urllib.request.Request) -> Answer:
    started = time.monotonic()
    try:
        with opener.open(request, timeout=120) as response:
            status, text = response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        status, text = exc.code, exc.read().decode("utf-8")
    return Answer(status, text, time.monotonic() - started)


def test_eight_slow_extractions_leave_the_pages_answering(tmp_path):
    data = tmp_path / "data"
    conversations = ConversationStore.from_settings(Settings().with_data_dir(data))
    for thread in THREADS:
        conversations.add_exchange(thread, "Remember that I prefer tea.", "Noted.")
    with FakeLlmServer(openai_body) as llm:
        llm.mode = "trickle"
        server = start_server(
            data,
            {
                "MEMORY_LLM_PROVIDER": "openai",
                "MEMORY_LLM_MODEL": "test-model",
                "MEMORY_LLM_BASE_URL": llm.url + "/v1",
                "MEMORY_LLM_API_KEY": "sk-test",
                "MEMORY_LLM_TIMEOUT": str(TIMEOUT),
            },
        )
        try:
            opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
            page = opener.open(server.url + "/memories/", timeout=10).read().decode()
            token = re.search(r'"X-CSRFToken": "([^"]+)"', page).group(1)

            def extract(thread: str) -> Answer:
                address = f"{server.url}/conversations/extract/{urllib.parse.quote(thread)}"
                headers = {"X-CSRFToken": token, "HX-Request": "true"}
                return _timed(opener, urllib.request.Request(address, data=b"", headers=headers))

            with concurrent.futures.ThreadPoolExecutor(len(THREADS)) as pool:
                started = [pool.submit(extract, thread) for thread in THREADS]
                deadline = time.monotonic() + 15
                while llm.active < 2 and time.monotonic() < deadline:
                    time.sleep(0.05)
                assert llm.active >= 2, "the extractions never reached the LLM"
                pages = [
                    (path, _timed(opener, urllib.request.Request(server.url + path)))
                    for path in ("/healthz", "/memories/", "/conversations/", "/healthz")
                ]
                answers = [future.result(timeout=TIMEOUT + 60) for future in started]
        finally:
            stop_server(server)
        most_at_once = llm.most_active
    assert [(path, a.status) for path, a in pages] == [(path, 200) for path, _ in pages]
    slow = [(path, round(a.seconds, 2)) for path, a in pages if a.seconds > 3]
    assert slow == [], f"pages waited for the extractions: {slow}"
    # A fixed number of workers: the rest are refused at once, with a message that says why.
    assert most_at_once <= 2, most_at_once
    ran = [a for a in answers if a.status == 200]
    refused = [a for a in answers if a.status != 200]
    assert 1 <= len(ran) <= 2 and len(ran) + len(refused) == len(THREADS)
    for answer in ran:
        assert f"The LLM did not answer within {TIMEOUT} s" in answer.text, answer.text
        assert answer.seconds < TIMEOUT + 5, answer.seconds
    for answer in refused:
        assert answer.status == 503, answer.status
        assert "already running" in answer.text, answer.text
        assert answer.seconds < 3, answer.seconds


# ----------------------------------------------------------------- what a run says it cut
def _many_facts(count: int) -> str:
    return json.dumps(
        [
            {"content": f"Keeps spare key {n} in drawer {n * 7919 % 10007}", "confidence": 0.9}
            for n in range(count)
        ]
    )


NOTICES = {
    # page language: (facts left out, the LLM's timeout)
    "en": (
        "10 more facts were left out: one conversation gives at most 20",
        "The LLM did not answer within 1 s (MEMORY_LLM_TIMEOUT)",
    ),
    "zh-TW": ("另有 10 項事實未收錄：一段對話最多提供 20 項", "LLM 未在 1 秒內回應"),
    "zh-CN": ("另有 10 条事实未收录：一段对话最多提供 20 条", "LLM 未在 1 秒内响应"),
}


def _client(settings: Settings) -> CsrfClient:
    app = create_app(settings)
    app.config.update(TESTING=True)
    return CsrfClient(app.test_client())


@pytest.mark.parametrize("language", NOTICES)
def test_the_result_says_what_was_cut_in_the_page_s_language(tmp_path, language):
    cut_text, timeout_text = NOTICES[language]
    headers = {"Accept-Language": language}
    address = f"/conversations/extract/{THREADS[0]}"
    with FakeLlmServer(openai_body, reply=_many_facts(30)) as llm:
        settings = dataclasses.replace(
            make_settings(tmp_path),
            llm_provider="openai",
            llm_model="test-model",
            llm_base_url=llm.url + "/v1",
            llm_api_key="sk-test",
            llm_timeout=30,
        )
        ConversationStore.from_settings(settings).add_exchange(
            THREADS[0], "Remember that I prefer tea.", "Noted."
        )
        cut = _client(settings).post(address, htmx=True, headers=headers).get_data(as_text=True)
        llm.mode = "trickle"
        client = _client(dataclasses.replace(settings, llm_timeout=1))
        late = client.post(address, htmx=True, headers=headers).get_data(as_text=True)
        # The run over every conversation says the same in its summary.
        client.post("/conversations/extract-all", headers=headers)
        summary = client.get("/conversations/", headers=headers).get_data(as_text=True)
    assert cut_text in html.unescape(cut), cut
    assert timeout_text in html.unescape(late), late
    assert timeout_text in html.unescape(summary)
    pending = ReviewQueue.from_settings(settings).pending()
    assert len([item for item in pending if item.extractor == "llm"]) == 20
