"""Conversations pages through the Flask test client: list, thread, clear, extract."""

from __future__ import annotations

import json
import re
import time
from dataclasses import replace

import pytest

from tests.support.web import CsrfClient
from webapp import create_app
from webapp.settings import Settings
from webapp.stores import ConversationStore, MemoryStore
from webapp.stores.review import ReviewQueue

SLACK = "slack:1731900000.123456"
CLI = "cli:session-1731990000000"
SCHEDULE = "schedule:morning-briefing"


def conversations(settings: Settings) -> ConversationStore:
    return ConversationStore.from_settings(settings)


def review_queue(settings: Settings) -> ReviewQueue:
    return ReviewQueue(settings.review_file, MemoryStore.from_settings(settings), lock_timeout=5)


@pytest.fixture
def threads(settings: Settings) -> ConversationStore:
    store = conversations(settings)
    # Turns are stamped to the millisecond; a pause between threads keeps their order of last
    # activity strict (on a fast machine two exchanges could share a millisecond).
    store.add_exchange(SCHEDULE, "Run the morning briefing.", "Good morning! 12°C and clear.")
    time.sleep(0.005)
    store.add_exchange(CLI, "我习惯用 VS Code 编辑配置文件。", "好的。")
    time.sleep(0.005)
    store.add_exchange(
        SLACK, "Remember that I prefer the hallway lights at 30% after 22:00.", "Got it."
    )
    return store


def test_empty_state_says_what_the_page_is_for(client: CsrfClient):
    html = client.get("/conversations/").get_data(as_text=True)
    assert "No conversations yet" in html
    assert "Slack" in html and "memory-curator demo" in html
    assert "<table" not in html


def test_list_full_page_shows_each_thread_newest_first(client: CsrfClient, threads, settings):
    response = client.get("/conversations/")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "<html" in html and 'id="conversation-list"' in html
    positions = [html.index(f"<code>{key}</code>") for key in (SLACK, CLI, SCHEDULE)]
    assert positions == sorted(positions), "threads are not sorted by last activity"
    for label in ("Slack", "CLI", "Schedule"):
        assert f">{label}</span>" in html
    slack = next(s for s in threads.list_conversations() if s.id == SLACK)
    assert f"{slack.chars} / {settings.conversation_max_chars}" in html
    assert "in 6 days" in html  # expires after CONVERSATION_MAX_AGE_DAYS = 7 of idleness


def test_list_partial_is_the_same_list_without_the_page(client: CsrfClient, threads):
    response = client.get("/conversations/", htmx=True)
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "<html" not in html and html.lstrip().startswith('<div id="conversation-list">')
    assert f"<code>{SLACK}</code>" in html
    assert "HX-Request" in response.headers["Vary"]


def test_thread_links_round_trip_ids_with_colons_dots_and_slashes(client: CsrfClient, settings):
    odd = "schedule:reports/weekly.summary?x=1#top"
    conversations(settings).add_exchange(odd, "Weekly report please.", "Here it is.")
    html = client.get("/conversations/").get_data(as_text=True)
    href = re.search(
        r'<a [^>]*href="([^"]+)"[^>]*>(?:(?!</a>).)*<code>schedule:reports', html
    ).group(1)
    page = client.get(href.replace("&amp;", "&"))
    assert page.status_code == 200
    assert "Weekly report please." in page.get_data(as_text=True)


def test_thread_full_page_and_partial_show_the_turns_and_trimmed_count(
    client: CsrfClient, settings
):
    store = conversations(settings)
    for n in range(12):  # 24 turns against a cap of 20: the 4 oldest are trimmed
        store.add_exchange(SLACK, f"question {n} <script>alert({n})</script>", f"answer {n}")
    full = client.get(f"/conversations/thread/{SLACK}")
    assert full.status_code == 200
    html = full.get_data(as_text=True)
    assert "<html" in html
    assert "4 older turns trimmed" in html
    assert "question 0 " not in html and "question 1 " not in html
    assert "question 2 &lt;script&gt;alert(2)&lt;/script&gt;" in html
    assert "<script>alert" not in html
    assert html.count('class="turn turn-') == len(store.get_history(SLACK)) == 20
    assert f'href="/prompt/?conversation={SLACK}"' in html
    partial = client.get(f"/conversations/thread/{SLACK}", htmx=True).get_data(as_text=True)
    assert "<html" not in partial and "4 older turns trimmed" in partial


def test_thread_without_trimming_says_so(client: CsrfClient, threads):
    html = client.get(f"/conversations/thread/{CLI}").get_data(as_text=True)
    assert "No turns trimmed" in html
    assert "我习惯用 VS Code 编辑配置文件。" in html


def test_thread_tab_is_named_by_its_first_message(client: CsrfClient, threads):
    html = client.get(f"/conversations/thread/{CLI}").get_data(as_text=True)
    assert "<title>我习惯用 VS Code 编辑配置文件。 · Memory Curator</title>" in html


def test_schedule_threads_say_where_they_came_from_in_the_language(client: CsrfClient, threads):
    english = client.get("/conversations/").get_data(as_text=True)
    chinese = client.get("/conversations/", headers={"Accept-Language": "zh-TW"})
    assert ">Schedule</span>" in english
    assert ">Schedule<" not in chinese.get_data(as_text=True)


@pytest.mark.parametrize(
    "method, url",
    [
        ("get", "/conversations/thread/slack:nope"),
        ("post", "/conversations/clear/slack:nope"),
        ("post", "/conversations/extract/slack:nope"),
    ],
)
def test_unknown_conversation_is_404(client: CsrfClient, threads, method, url):
    response = getattr(client, method)(url)
    assert response.status_code == 404
    assert "Not found" in response.get_data(as_text=True)


def test_clear_without_csrf_token_is_rejected_and_changes_nothing(
    client: CsrfClient, threads, settings
):
    before = settings.conversation_file.read_bytes()
    response = client.post(f"/conversations/clear/{SLACK}", csrf=False)
    assert response.status_code == 400
    assert "expired" in response.get_data(as_text=True)
    assert settings.conversation_file.read_bytes() == before


def test_clear_forgets_the_thread_and_returns_to_the_list(client: CsrfClient, threads, settings):
    response = client.post(f"/conversations/clear/{SLACK}")
    assert response.status_code == 303
    assert "/conversations/?cleared=" in response.headers["Location"]
    on_disk = json.loads(settings.conversation_file.read_text(encoding="utf-8"))
    assert SLACK not in on_disk and CLI in on_disk
    listing = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Cleared conversation" in listing and f"<code>{SLACK}</code>" in listing
    assert f'href="/conversations/thread/{SLACK}"' not in listing


def test_clear_over_htmx_redirects_the_browser(client: CsrfClient, threads, settings):
    response = client.post(f"/conversations/clear/{CLI}", htmx=True)
    assert response.status_code == 200
    assert response.headers["HX-Redirect"].startswith("/conversations/?cleared=cli")
    assert CLI not in json.loads(settings.conversation_file.read_text(encoding="utf-8"))


def test_extract_without_csrf_token_is_rejected(client: CsrfClient, threads, settings):
    response = client.post(f"/conversations/extract/{SLACK}", htmx=True, csrf=False)
    assert response.status_code == 400
    assert response.headers["HX-Retarget"] == "#banner"
    assert review_queue(settings).pending() == []


def test_extract_partial_queues_facts_for_review(client: CsrfClient, threads, settings):
    response = client.post(f"/conversations/extract/{SLACK}", htmx=True)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    pending = review_queue(settings).pending()
    assert pending, "the regex extractor found nothing in an explicit 'Remember that…'"
    assert any("hallway lights" in item.content for item in pending)
    assert all(item.conversation_id == SLACK for item in pending)
    noun = "fact" if len(pending) == 1 else "facts"
    assert f"{len(pending)} {noun} landed in Review" in html
    assert 'href="/review/"' in html
    assert "<html" not in html
    assert "landed in Review" in json.loads(response.headers["HX-Trigger"])["announce"]
    # The navigation's Review badge is refreshed out of band with the new count.
    assert f'<span id="review-badge" hx-swap-oob="true"><span class="badge">{len(pending)}<' in html


def test_extract_full_page_shows_the_result_on_the_thread(client: CsrfClient, threads, settings):
    response = client.post(f"/conversations/extract/{CLI}")
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and "<html" in html
    assert 'class="extract-result extract-ok"' in html
    assert "我习惯用 VS Code" in html  # the thread is still shown around the result


def test_extract_twice_does_not_queue_the_same_facts_again(client: CsrfClient, threads, settings):
    client.post(f"/conversations/extract/{SLACK}", htmx=True)
    count = len(review_queue(settings).pending())
    again = client.post(f"/conversations/extract/{SLACK}", htmx=True).get_data(as_text=True)
    assert len(review_queue(settings).pending()) == count
    assert "already been proposed" in again


def test_extract_with_a_misconfigured_llm_says_what_to_fix(tmp_path, settings: Settings):
    broken = replace(settings, llm_provider="openai", llm_model="")
    app = create_app(broken)
    app.config.update(TESTING=True)
    client = CsrfClient(app.test_client())
    conversations(broken).add_exchange(SLACK, "Remember that I like tea.", "OK")
    html = client.post(f"/conversations/extract/{SLACK}", htmx=True).get_data(as_text=True)
    assert "not set up correctly" in html and "MEMORY_LLM_MODEL" in html
    assert review_queue(broken).pending() == []


def test_expired_thread_is_marked_and_shows_no_turns(client: CsrfClient, settings):
    settings.conversation_file.parent.mkdir(parents=True, exist_ok=True)
    old = "2020-01-01T00:00:00.000Z"
    settings.conversation_file.write_text(
        json.dumps(
            {
                "slack:old": {
                    "turns": [{"role": "user", "content": "ancient words", "timestamp": old}],
                    "createdAt": old,
                    "trimmed": 0,
                }
            }
        ),
        encoding="utf-8",
    )
    listing = client.get("/conversations/").get_data(as_text=True)
    assert "expired" in listing
    page = client.get("/conversations/thread/slack:old").get_data(as_text=True)
    assert "no longer sees it" in page and "ancient words" not in page


@pytest.mark.parametrize("url", ["/conversations/", "/conversations/thread/slack:x", "/prompt/"])
def test_damaged_conversations_file_is_a_banner_and_stays_untouched(
    client: CsrfClient, settings, url
):
    settings.conversation_file.parent.mkdir(parents=True, exist_ok=True)
    damaged = b'{"slack:x": [{"role": "user", "content": "half'
    settings.conversation_file.write_bytes(damaged)
    response = client.get(url)
    assert response.status_code == 503
    assert "memory-curator repair" in response.get_data(as_text=True)
    assert settings.conversation_file.read_bytes() == damaged


def test_serve_demo_leaves_a_folder_with_data_alone(tmp_path):
    import urllib.request

    from tests.support.web import start_server, stop_server

    data = tmp_path / "data"
    conversations(
        replace(Settings(), conversation_file=data / "conversations" / "conversations.json")
    ).add_exchange("cli:session-1", "my own thread", "kept")
    before = (data / "conversations" / "conversations.json").read_bytes()
    server = start_server(data, args=["--demo"])
    try:
        with urllib.request.urlopen(server.url + "/conversations/") as response:
            listing = response.read().decode("utf-8")
    finally:
        stop_server(server)
    assert "cli:session-1" in listing and SLACK not in listing
    assert (data / "conversations" / "conversations.json").read_bytes() == before
    assert (
        not (data / "memories.json").exists()
        or json.loads((data / "memories.json").read_text(encoding="utf-8")) == []
    )
