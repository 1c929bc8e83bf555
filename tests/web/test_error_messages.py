"""The web layer's names for stored keys and its messages for library errors: English pages
show exactly what the library says (the CLI and MCP show the same words)."""

from __future__ import annotations

import errno
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from flask import render_template_string
from flask_wtf.csrf import CSRFError

from tests.support.data import make_settings
from webapp import create_app
from webapp.curator import Curator
from webapp.problems import CodedError, Problem
from webapp.stores import (
    ConflictError,
    DuplicateMemoryError,
    MemoryFullError,
    MemoryStore,
    StoreBusyError,
    StoreCorruptError,
    StoreWriteError,
)
from webapp.stores.memories import CATEGORIES
from webapp.web.plumbing.errors import describe_error
from webapp.web.plumbing.formatting import category_label, interface_label
from webapp.web.plumbing.messages import describe as describe_message

ERRORS = [
    StoreCorruptError(Path("/data/memories.json"), "Expecting value", line=3, column=7),
    StoreCorruptError(Path("/data/review.json"), "not an object", offset=12),
    StoreCorruptError(Path("/data/review.json"), "expected a JSON list"),
    StoreBusyError(Path("/data/memories.json"), 2.5),
    StoreWriteError(Path("/data/memories.json"), OSError(errno.ENOSPC, "No space left on device")),
    MemoryFullError(
        "The memory store is full: 3 of 3 memories are used.",
        items=3,
        max_items=3,
        chars=10,
        max_chars=100,
    ),
    DuplicateMemoryError(SimpleNamespace(id="m-1")),
    ConflictError(None),
    ValueError("Unknown category 'x'; use one of: general."),
]


@pytest.mark.parametrize("exc", ERRORS, ids=lambda e: type(e).__name__)
def test_english_pages_show_the_library_message(app, exc):
    with app.test_request_context("/", headers={"Accept-Language": "en-US"}):
        assert describe_error(exc) == str(exc)


def test_english_csrf_reason_is_flask_wtf_s(app):
    with app.test_request_context("/", headers={"Accept-Language": "en-US"}):
        assert describe_error(CSRFError("The CSRF token is missing.")) == (
            "The CSRF token is missing."
        )


def test_outside_a_request_the_message_is_the_library_s():
    exc = StoreBusyError(Path("/data/memories.json"), 1)
    assert describe_error(exc) == str(exc)


def test_every_category_has_a_label_and_unknown_keys_stay(app):
    with app.test_request_context("/", headers={"Accept-Language": "en-US"}):
        assert [category_label(c) for c in CATEGORIES] == list(CATEGORIES)
        assert category_label("made-up") == "made-up"
        assert [interface_label(k) for k in ("slack", "cli", "schedule", "other", "irc")] == [
            "Slack",
            "CLI",
            "Schedule",
            "Other",
            "irc",
        ]


def test_labels_are_template_filters(app):
    with app.test_request_context("/", headers={"Accept-Language": "en-US"}):
        html = render_template_string(
            "{{ 'preference' | category_label }}|{{ '<b>' | category_label }}"
            "|{{ 'schedule' | interface_label }}"
        )
    assert html == "preference|&lt;b&gt;|Schedule"


# The rest needs the catalogs filled (scripts/i18n.sh; tests/web/test_i18n.py checks they are).


def in_language(app, language: str):
    context = app.test_request_context("/")
    context.push()
    from flask import session

    session["language"] = language
    return context


def test_errors_are_told_in_the_page_s_language_from_their_fields(app):
    context = in_language(app, "zh_Hant")
    try:
        busy = describe_error(StoreBusyError(Path("/data/memories.json"), 2.5))
        assert "/data/memories.json" in busy and "2.5 秒" in busy and "busy" not in busy
        full = describe_error(
            StoreWriteError(Path("/d/m.json"), OSError(errno.ENOSPC, "No space left on device"))
        )
        assert "沒有剩餘空間" in full and "No space" not in full
        capped = describe_error(
            MemoryFullError("full", items=2000, max_items=2000, chars=10, max_chars=10**5)
        )
        assert "2,000／2,000" in capped
        assert "第 3 行第 7 欄" in describe_error(ERRORS[0])
    finally:
        context.pop()
    context = in_language(app, "zh_Hans")
    try:
        chars = describe_error(
            MemoryFullError("full", items=1, max_items=9, chars=99_990, max_chars=100_000)
        )
        assert "99,990/100,000 个字符" in chars
        assert "CSRF" in describe_error(CSRFError("The CSRF token is missing."))
        assert "缺少" in describe_error(CSRFError("The CSRF token is missing."))
    finally:
        context.pop()


@pytest.mark.parametrize("language", ["zh_Hant", "zh_Hans"])
def test_categories_and_interfaces_have_chinese_labels(app, language):
    context = in_language(app, language)
    try:
        labels = [category_label(c) for c in CATEGORIES]
        assert len(set(labels)) == len(CATEGORIES)
        assert not any(re.search("[A-Za-z]", label) for label in labels), labels
        assert interface_label("schedule") != "Schedule" and interface_label("slack") == "Slack"
    finally:
        context.pop()


@pytest.mark.parametrize(
    ("header", "title", "advice"),
    [("zh-TW", "找不到", "請回到列表並重新載入。"), ("zh-CN", "未找到", "请返回列表并刷新。")],
)
def test_the_not_found_page_speaks_the_language(client, header, title, advice):
    response = client.get("/no-such-page", headers={"Accept-Language": header})
    html = response.get_data(as_text=True)
    assert response.status_code == 404
    assert f"<strong>{title}</strong>" in html and advice in html
    shown = html[html.index("<body") :]  # the JavaScript's messages (data-messages) aside
    assert "Not found" not in shown and "Dismiss" not in shown


def test_the_login_page_and_its_refusal_speak_the_language(tmp_path):
    app = create_app(make_settings(tmp_path, dashboard_token="a-long-enough-secret-token"))
    app.config.update(TESTING=True)
    client = app.test_client()
    page = client.get("/login", headers={"Accept-Language": "zh-CN"}).get_data(as_text=True)
    assert "<title>登录 ·" in page and '<label for="token">访问令牌</label>' in page
    assert '<code translate="no">MEMORY_DASHBOARD_TOKEN</code>' in page
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    refused = client.post(
        "/login",
        data={"token": "wrong", "csrf_token": csrf},
        headers={"Accept-Language": "zh-TW"},
    )
    assert refused.status_code == 401
    assert "存取權杖不正確。" in refused.get_data(as_text=True)


def test_the_prompt_page_and_its_form_errors_speak_the_language(client):
    response = client.get("/prompt/?conversation=gone", headers={"Accept-Language": "zh-TW"})
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert "<h1>提示詞預覽</h1>" in html and "找不到對話 &#39;gone&#39;" in html
    assert "最多 100,000 個字元" in html


def test_a_damaged_file_s_banner_names_the_store_in_the_language(client, settings):
    settings.review_file.parent.mkdir(parents=True, exist_ok=True)
    settings.review_file.write_text("{", encoding="utf-8")
    html = client.get("/conversations/", headers={"Accept-Language": "zh-CN"}).get_data(
        as_text=True
    )
    assert "<strong>审核队列文件已损坏</strong>" in html
    assert '<code translate="no">memory-curator repair</code>' in html


def test_the_library_s_form_messages_are_told_in_the_language(app, settings):
    store = MemoryStore.from_settings(settings)
    curator = Curator.from_settings(settings)
    errors, blank = {}, {}
    for found, content, category in (
        (errors, "x" * (settings.memory_max_chars + 1), "moods"),
        (blank, " \u200b ", "general"),
    ):
        with pytest.raises(CodedError) as refused:
            curator.remember(content, category=category)
        found.update({e.field: Problem(e) for e in (refused.value, *refused.value.also)})
    context = in_language(app, "zh_Hant")
    try:
        assert "一條記憶最多只能有" in describe_message(errors["content"])
        category = describe_message(errors["category"])
        assert "'moods'" in category and "偏好" in category and "use one of" not in category
        assert describe_message(blank["content"]) == "記憶內容不能是空白。"
        with pytest.raises(ValueError) as refused:
            store.add("\x00")
        assert "NUL 字元" in describe_error(refused.value)
        assert describe_message("Something new.") == "Something new."
    finally:
        context.pop()
    with app.test_request_context("/", headers={"Accept-Language": "en"}):
        assert describe_message(errors["category"]) == errors["category"]
