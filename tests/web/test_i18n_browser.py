"""Every page in Traditional and Simplified Chinese, in a real browser: no English interface
text left, the switcher works and is remembered, and axe stays clean.

The data folder holds only Chinese memories, turns and skills, so any Latin word on a page is
interface text (apart from the few names below that stay as they are in Chinese interfaces).
Stored text is never translated; templates mark it ``translate="no"``, which the scan skips.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from tests.support.review import approve
from tests.support.web import (
    LiveServer,
    assert_accessible,
    screenshot,
    start_server,
    stop_server,
    wait_for_htmx,
)
from webapp.stores import ConversationStore, MemoryStore, ReviewQueue

pytestmark = pytest.mark.browser

# Names that Chinese interfaces keep in Latin letters (products, formats, keys on a keyboard).
KEPT = {
    "Memory",
    "Curator",
    "Home",
    "Assistant",
    "Assist",  # Home Assistant's voice assistant, by its product name
    "MCP",
    "JSON",
    "LLM",
    "token",  # what Chinese writing about language models calls a token, too
    "API",
    "URL",
    "UTC",
    "ID",
    "CLI",
    "Slack",
    "OpenAI",
    "Claude",
    "Anthropic",
    "SKILL",
    "md",
    "zip",
    "Markdown",
    "YAML",
    "ChatGPT",
    "Letta",
    "mem",  # mem0
    "JSONL",
    "Enter",
    "Ctrl",
    "Cmd",
    "Esc",
    "Tab",
    "Shift",
    "English",
    "AM",
    "PM",
}
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’]+")
# Who made a change and where memories came from are stored as English keys; a page names
# them in its own language, so one of them shown as written (even marked translate="no",
# which is for a person's or a file's name) is English left behind.
STORED_KEYS = {
    "dashboard",
    "mcp",
    "cli",
    "demo",
    "library",
    "extractor",
    "review",
    "import",
    "runtime",
    "the demo data",
    "an uploaded file",
}
KEPT_AS_WRITTEN = """() => [...document.querySelectorAll('[translate="no"]')]
  .map(el => el.textContent.trim())"""

COLLECT = """() => {
  const out = [];
  const skipped = (el) => el.closest('[translate="no"], script, style, noscript, template');
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!node.parentElement || skipped(node.parentElement)) continue;
    const text = node.textContent.trim();
    if (text) out.push(text);
  }
  const attrs = ['aria-label', 'title', 'placeholder', 'alt', 'data-confirm', 'aria-roledescription'];
  for (const el of document.querySelectorAll('*')) {
    if (skipped(el)) continue;
    for (const name of attrs) { const v = el.getAttribute(name); if (v) out.push(v); }
    if (el.matches('input[type=submit], input[type=button]') && el.value) out.push(el.value);
  }
  out.push(document.title);
  return out;
}"""

MEMORIES = [
    ("喜歡喝無糖綠茶，冬天喝熱的。", "preference"),
    ("客廳的燈每天晚上十點後調到三成亮度。", "workflow"),
    ("用户对猫毛过敏，扫地机器人每天下午两点运行一次。", "general"),
    ("每週日晚上提醒倒垃圾和資源回收。", "workflow"),
    # One of each kind of finding on the Needs attention page: a near-duplicate (繁/简), a
    # contradiction, a stale date and a first-person sentence.
    ("喜欢喝无糖绿茶，冬天喝热的。", "preference"),
    ("平日鬧鐘設在 06:45。", "workflow"),
    ("平日鬧鐘設在 07:00。", "workflow"),
    ("2025-10-01 之前要去京都出差。", "project"),
    ("我每天早上喝一杯黑咖啡", "preference"),
]
THREAD = [
    ("我喜歡喝無糖綠茶", "好的，我記住了。"),
    ("以後提醒我每週三澆花", "沒問題，每週三提醒你澆花。"),
    ("我對花生過敏", "了解，推薦餐廳時我會避開花生。"),
    ("我習慣晚上十一點前睡覺", "好的，十一點後我不會再提醒你。"),
    ("我不喜歡吃香菜", "記住了，點餐時幫你備註不要香菜。"),
    ("我住在台北", "好的，我記住了。"),
    ("我對貓毛過敏", "了解，我會記得。"),
]
SKILL_MD = """---
name: 居家氣候
description: 依照季節調整冷氣與除濕機的設定。
---
# 居家氣候

夏天冷氣設定二十六度，濕度超過百分之六十時開除濕機。
"""


def fill_chinese_data(data_dir: Path, settings) -> None:
    memories = MemoryStore.from_settings(settings, actor="測試")
    for content, category in MEMORIES:
        memories.add(content, category=category)
    conversations = ConversationStore.from_settings(settings)
    for user, assistant in THREAD:
        conversations.add_exchange("slack:1731900000.123456", user, assistant)
    conversations.add_exchange("schedule:morning-briefing", "早安摘要", "今天晴，最高二十八度。")
    env_cli = [sys.executable, "-m", "webapp"]
    data = ["--data-dir", str(data_dir)]
    subprocess.run([*env_cli, "extract", *data], check=True, capture_output=True, timeout=120)
    # Something in every list: a deleted memory, decided proposals (and two still pending).
    # Who did it is stored as an English key (dashboard, demo…) that the pages must name in
    # their own language: the dashboard deleted, approved and rejected, the demo imported.
    gone = memories.add("舊家的門禁卡放在玄關抽屜。", category="general")
    MemoryStore.from_settings(settings, actor="dashboard").delete(gone.id)
    queue = ReviewQueue.from_settings(settings)
    approve(queue, queue.pending()[0].id, actor="dashboard")
    queue.reject(queue.pending()[0].id, actor="dashboard")
    demo = [{"content": "週末早上九點前不要開燈。", "category": "general"}]
    MemoryStore.from_settings(settings, actor="demo").import_records(demo, source="the demo data")
    skill = data_dir.parent / "skill" / "home-climate"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    subprocess.run(
        [*env_cli, "skills", "import", str(skill), *data],
        check=True,
        capture_output=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def chinese_server(tmp_path_factory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("zh")
    server = start_server(root / "data")
    fill_chinese_data(root / "data", server.settings)
    yield server
    stop_server(server)


def pages_no_link_reaches(server: LiveServer) -> list[str]:
    """Pages opened by a button or by typing: a memory's history, a search, a review item and
    its edit form, a page that does not exist."""
    memory = MemoryStore.from_settings(server.settings).get_all()[0]
    item = ReviewQueue.from_settings(server.settings).pending()[0]
    return [
        f"/memories/{memory.id}/history",
        "/memories/?q=%E7%B6%A0%E8%8C%B6",
        "/memories/?q=%E6%B2%92%E6%9C%89%E9%80%99%E5%80%8B",
        f"/review/{item.id}",
        f"/review/{item.id}/edit",
        "/conversations/?q=%E8%8A%B1%E7%94%9F",
        "/no-such-page",
    ]


def english_words(texts: list[str]) -> set[str]:
    found = set()
    for text in texts:
        for word in LATIN_WORD.findall(text.replace("Memory Curator", "")):
            if word not in KEPT:
                found.add(word)
    return found


def english_on(page) -> set[str]:
    """English interface text on the page, and stored keys shown as they are stored."""
    kept = {text for text in page.evaluate(KEPT_AS_WRITTEN) if text in STORED_KEYS}
    return english_words(page.evaluate(COLLECT)) | kept


def crawl(page, base: str, limit: int = 40) -> Iterator[str]:
    """Every page of the app reachable by links from the Memories page (GET only)."""
    seen: set[str] = set()
    queue = [base + "/memories/"]
    while queue and len(seen) < limit:
        url = queue.pop(0)
        path = urlsplit(url)._replace(fragment="").geturl()
        if path in seen:
            continue
        seen.add(path)
        response = page.goto(path)
        assert response is not None and response.status < 500, path
        page.wait_for_load_state("load")
        yield path
        for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)"):
            target = urljoin(path, href)
            parts = urlsplit(target)
            if (
                target.startswith(base)
                and not parts.path.endswith((".json", ".zip", ".css", ".js", ".svg", ".png"))
                and "export" not in parts.path
                and "healthz" not in parts.path
                and "/static/" not in parts.path
            ):
                queue.append(parts._replace(fragment="").geturl())


@pytest.mark.parametrize(("accept", "color_scheme"), [("zh-TW", "light"), ("zh-CN", "dark")])
def test_no_english_interface_text_left_and_pages_stay_accessible(
    browser, chinese_server: LiveServer, accept, color_scheme
):
    """One load of each page for both checks: English interface text left (the text is the
    same in either colour scheme) and axe-core's serious or critical findings."""
    context = browser.new_context(
        locale=accept,
        color_scheme=color_scheme,
        extra_http_headers={"Accept-Language": accept},
    )
    page = context.new_page()
    problems = {}
    inaccessible = []
    visited = []

    def check(path: str) -> None:
        visited.append(path)
        words = english_on(page)
        if words:
            problems[path.removeprefix(chinese_server.url)] = sorted(words)
        try:
            assert_accessible(page, f"{path} in {accept} ({color_scheme})")
        except AssertionError as found:
            inaccessible.append(str(found))

    for url in crawl(page, chinese_server.url):
        check(url)
    for path in pages_no_link_reaches(chinese_server):
        page.goto(chinese_server.url + path)
        page.wait_for_load_state("load")
        check(path)
    context.close()
    assert len(visited) >= 8, f"the crawl reached too few pages: {visited}"
    assert not problems, f"English left in the {accept} interface: {problems}"
    assert not inaccessible, "\n".join(inaccessible)


def test_switcher_changes_and_remembers_the_language(browser, chinese_server: LiveServer):
    context = browser.new_context(locale="en-US", extra_http_headers={"Accept-Language": "en-US"})
    page = context.new_page()
    page.goto(chinese_server.url + "/conversations/")
    assert page.locator("html").get_attribute("lang") == "en"
    page.get_by_role("button", name="繁體中文").click()
    page.wait_for_load_state("load")
    assert page.url.endswith("/conversations/"), "the switcher returns to the same page"
    assert page.locator("html").get_attribute("lang") == "zh-Hant"
    assert page.get_by_role("link", name="記憶").is_visible()
    page.goto(chinese_server.url + "/review/")
    assert page.locator("html").get_attribute("lang") == "zh-Hant", "remembered in the session"
    page.get_by_role("button", name="简体中文").click()
    page.wait_for_load_state("load")
    assert page.locator("html").get_attribute("lang") == "zh-Hans"
    assert page.get_by_role("link", name="记忆").is_visible()
    context.close()


@pytest.mark.parametrize(("path", "name"), [("/memories/", "memories"), ("/review/", "review")])
def test_screenshots_in_traditional_chinese(browser, chinese_server: LiveServer, path, name):
    context = browser.new_context(
        locale="zh-TW",
        extra_http_headers={"Accept-Language": "zh-TW"},
        viewport={"width": 1280, "height": 900},
    )
    page = context.new_page()
    page.goto(chinese_server.url + path)
    page.wait_for_load_state("load")
    assert page.locator("html").get_attribute("lang") == "zh-Hant"
    screenshot(page, f"{name}-zh-hant")
    context.close()


@pytest.mark.parametrize("accept", ["zh-TW", "zh-CN"])
def test_notices_after_a_fix_are_in_chinese(browser, chinese_server: LiveServer, accept):
    """What a click answers with (a partial swapped in by htmx, its notice and Undo) speaks the
    language too, not only the pages a crawl reaches."""
    context = browser.new_context(locale=accept, extra_http_headers={"Accept-Language": accept})
    page = context.new_page()
    page.goto(chinese_server.url + "/attention/?kind=hard")
    finding = page.locator(".finding").first
    finding.wait_for()
    finding.locator("button", has_text=re.compile("略過|忽略")).click()
    notice = page.locator("#attention-notice")
    notice.wait_for()
    assert not english_words([notice.inner_text()]), notice.inner_text()
    notice.get_by_role("button", name=re.compile("復原|撤销")).click()
    page.locator(".finding").first.wait_for()
    words = english_words(page.evaluate(COLLECT))
    assert not words, f"English after Undo in {accept}: {sorted(words)}"
    context.close()


def test_what_actions_answer_is_in_chinese(browser, tmp_path):
    """Adding, deleting and undoing a memory, approving and rejecting a proposal, an empty
    add refused: every notice, error and swapped-in part speaks Traditional Chinese."""
    server = start_server(tmp_path / "data")
    try:
        fill_chinese_data(tmp_path / "data", server.settings)
        context = browser.new_context(
            locale="zh-TW", extra_http_headers={"Accept-Language": "zh-TW"}
        )
        page = context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())
        seen: dict[str, set[str]] = {}

        def look(step: str) -> None:
            wait_for_htmx(page)
            words = english_words(page.evaluate(COLLECT))
            if words:
                seen[step] = words

        page.goto(server.url + "/memories/")
        page.get_by_role("button", name="新增記憶").click()
        look("empty add refused")
        page.locator("#add-content").fill("每個月第一個週六幫植物施肥。")
        page.get_by_role("button", name="新增記憶").click()
        page.get_by_text("每個月第一個週六幫植物施肥。").first.wait_for()
        look("added")
        row = page.locator("tr", has_text="每個月第一個週六幫植物施肥。")
        row.get_by_role("button", name=re.compile("刪除")).click()
        look("deleted")
        page.get_by_role("button", name=re.compile("^復原")).first.click()
        look("undone")
        page.goto(server.url + "/review/")
        page.locator("article.review-item").first.get_by_role(
            "button", name=re.compile("核准|取代")
        ).click()
        look("approved")
        page.locator("article.review-item").first.get_by_role("button", name="拒絕").click()
        look("rejected")
        context.close()
    finally:
        stop_server(server)
    assert not seen, f"English after actions: { {k: sorted(v) for k, v in seen.items()} }"


@pytest.mark.parametrize("accept", ["zh-TW", "zh-CN"])
def test_the_character_counter_speaks_chinese_while_typing(
    browser, chinese_server: LiveServer, accept
):
    """The counter under the add box is rewritten by the script at each keystroke: its three
    messages (the count, "more than the store has free", "too long for one memory") come
    from the page's message table, not from the server's first rendering, which the crawl
    above only sees."""
    context = browser.new_context(locale=accept, extra_http_headers={"Accept-Language": accept})
    page = context.new_page()
    page.goto(chinese_server.url + "/memories/")
    box = page.locator("#add-content")
    per = int(box.get_attribute("data-max-chars") or 0)
    free = int(box.get_attribute("data-free-chars") or 0)
    assert 0 < free < per
    counter = page.locator("#add-content-count")
    seen = {}
    for length in (3, free + 1, per + 1):
        box.fill("記" * length)
        counter.locator(".char-count-text").filter(has_text=f"{length:,}").wait_for()
        seen[length] = counter.inner_text()
    context.close()
    assert all(not english_words([text]) for text in seen.values()), seen
    assert len(set(seen.values())) == 3, seen
