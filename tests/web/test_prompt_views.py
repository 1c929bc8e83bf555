"""Prompt preview through the Flask test client: the shown text is exactly compose_prompt's."""

from __future__ import annotations

import html as htmlmod
import re

import pytest

from tests.support.web import CsrfClient
from webapp.prompts import compose_prompt, compose_prompt_sections
from webapp.settings import Settings
from webapp.stores import ConversationStore, MemoryStore
from webapp.web.blueprints.prompt import MAX_MESSAGE_CHARS

THREAD = "slack:1731986400.000200"
_PRE = re.compile(r'<pre id="prompt-text" class="prompt-text"[^>]*>(.*?)</pre>', re.S)


def stores(settings: Settings) -> tuple[MemoryStore, ConversationStore]:
    memories = MemoryStore.from_settings(settings)
    conversations = ConversationStore.from_settings(settings)
    return memories, conversations


@pytest.fixture
def data(settings: Settings) -> tuple[MemoryStore, ConversationStore]:
    memories, conversations = stores(settings)
    memories.add(
        "User's name is Mei-Ling; she prefers replies in Traditional Chinese.",
        category="preference",
    )
    memories.add("客廳的吸頂燈叫 light.living_room_main，使用者稱它「大燈」。")
    memories.add("Never show <script>alert('m')</script> raw", category="convention")
    conversations.add_exchange(THREAD, "記住我喜歡喝無糖綠茶。", "好的，我記住了。")
    conversations.add_exchange(THREAD, "今天幾點下雨？ <img src=x onerror=alert(1)>", "下午三點。")
    return memories, conversations


def shown_text(page_html: str) -> str:
    """What a browser shows in the preview block: the pre's text content."""
    match = _PRE.search(page_html)
    assert match, "no preview block in the response"
    return htmlmod.unescape(re.sub(r"</?span[^>]*>", "", match.group(1)))


MESSAGES = [
    "",
    "And tomorrow?",
    "明天呢？請用繁體中文回答。",
    "trailing spaces and newlines   \n\n",
    "\nstarts with a newline",
    "<b>bold</b> & <script>alert('x')</script> {{ 7*7 }}",
]


@pytest.mark.parametrize("message", MESSAGES)
@pytest.mark.parametrize("conversation", [THREAD, ""])
def test_preview_partial_is_exactly_compose_prompt(client: CsrfClient, data, message, conversation):
    memories, conversations = data
    response = client.post(
        "/prompt/preview", htmx=True, data={"conversation": conversation, "message": message}
    )
    assert response.status_code == 200
    body = response.get_data(as_text=True)
    assert "<html" not in body and 'id="prompt-preview"' in body
    history = conversations.get_history(conversation) if conversation else []
    assert shown_text(body) == compose_prompt(memories.get_all(), history, message)


@pytest.mark.parametrize("message", MESSAGES[1:5])
def test_full_page_prefilled_from_the_query_is_exactly_compose_prompt(
    client: CsrfClient, data, message
):
    memories, conversations = data
    response = client.get("/prompt/", query_string={"conversation": THREAD, "message": message})
    assert response.status_code == 200
    body = response.get_data(as_text=True)
    assert "<html" in body and 'id="prompt-form"' in body
    assert shown_text(body) == compose_prompt(
        memories.get_all(), conversations.get_history(THREAD), message
    )
    assert re.search(f'<option value="{re.escape(THREAD)}" title="[^"]+" selected>', body)
    # the textarea gives the message back unchanged (its first newline is eaten by the parser)
    textarea = re.search(r"<textarea[^>]*>\n(.*?)</textarea>", body, re.S).group(1)
    assert htmlmod.unescape(textarea) == message


def test_browser_line_breaks_are_the_typed_ones(client: CsrfClient, data):
    memories, _ = data
    body = client.post(
        "/prompt/preview", htmx=True, data={"message": "line one\r\nline two\r\n"}
    ).get_data(as_text=True)
    assert shown_text(body) == compose_prompt(memories.get_all(), [], "line one\nline two\n")


def test_sections_are_told_apart_with_sizes(client: CsrfClient, data):
    memories, conversations = data
    body = client.post(
        "/prompt/preview", htmx=True, data={"conversation": THREAD, "message": "明天呢？"}
    ).get_data(as_text=True)
    composed = compose_prompt_sections(
        memories.get_all(), conversations.get_history(THREAD), "明天呢？"
    )
    for section in composed.sections:
        item = re.search(rf'data-section="{section.name}">(.*?)</li>', body, re.S).group(1)
        assert f'<span class="legend-chars">{section.chars}</span>' in item
        assert f'<span class="legend-tokens">{section.tokens}</span>' in item
        assert f'class="section section-{section.name}"' in body
    total = re.search(r'data-section="total">(.*?)</li>', body, re.S).group(1)
    assert f'<span class="legend-chars">{composed.chars}</span>' in total
    assert f'<span class="legend-tokens">{composed.tokens}</span>' in total
    order = [body.index(f"section section-{name}") for name in ("history", "memory", "prompt")]
    assert order == sorted(order)
    assert 'data-copy-target="prompt-text"' in body


def test_empty_sections_are_left_out_and_explained(client: CsrfClient):
    body = client.post("/prompt/preview", htmx=True, data={"message": "hi"}).get_data(as_text=True)
    assert shown_text(body) == "hi"
    assert "section-memory" not in body and "no memories yet" in body
    assert "no conversation picked" in body


def test_huge_message_gets_a_message_next_to_the_field(client: CsrfClient, data):
    huge = "長" * (MAX_MESSAGE_CHARS + 1)
    response = client.post("/prompt/preview", htmx=True, data={"message": huge})
    assert response.status_code == 422
    body = response.get_data(as_text=True)
    assert (
        'id="message-error" class="field-error" hx-swap-oob="true">The message is too long' in body
    )
    assert "prompt-text" not in body and "No preview until" in body
    assert (
        client.post(
            "/prompt/preview", htmx=True, data={"message": "x" * MAX_MESSAGE_CHARS}
        ).status_code
        == 200
    )


def test_huge_message_on_the_full_page_keeps_the_form(client: CsrfClient, data):
    response = client.post("/prompt/preview", data={"message": "y" * (MAX_MESSAGE_CHARS + 5)})
    assert response.status_code == 422
    body = response.get_data(as_text=True)
    assert '<p id="message-error" class="field-error">The message is too long' in body
    assert "hx-swap-oob" not in body


def test_unknown_conversation_is_a_field_error(client: CsrfClient, data):
    response = client.post(
        "/prompt/preview", htmx=True, data={"conversation": "slack:gone", "message": "hi"}
    )
    assert response.status_code == 422
    body = response.get_data(as_text=True)
    assert re.search(r'id="conversation-error"[^>]*>There is no conversation', body)
    page = client.get("/prompt/", query_string={"conversation": "slack:<b>gone</b>"})
    assert page.status_code == 422
    assert "&lt;b&gt;gone&lt;/b&gt;" in page.get_data(as_text=True)


def test_preview_without_csrf_token_is_rejected(client: CsrfClient, data):
    response = client.post("/prompt/preview", htmx=True, csrf=False, data={"message": "hi"})
    assert response.status_code == 400
    assert response.headers["HX-Retarget"] == "#banner"


def test_index_partial_pair(client: CsrfClient, data):
    full = client.get("/prompt/").get_data(as_text=True)
    partial = client.get("/prompt/", htmx=True).get_data(as_text=True)
    assert "<html" in full and "<html" not in partial
    assert shown_text(full) == shown_text(partial) == compose_prompt(data[0].get_all(), [], "")
