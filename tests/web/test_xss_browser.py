"""The XSS battery: hostile text in memories, conversation turns and skill documents is shown as
text on every page that shows it — no dialog, no script, no request anywhere unexpected."""

from __future__ import annotations

from urllib.parse import quote, urlencode

import pytest
from playwright.sync_api import expect

from tests.support.web import LiveServer, start_server, stop_server
from webapp.stores import SkillDocumentStore, cli_session_key, schedule_key

pytestmark = pytest.mark.browser

PROBE = "xss-probe"  # any request whose URL contains this came from a payload that ran
PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    '<a href="javascript:alert(1)">click me</a>',
    "javascript:alert(1)",
    '"><script>window.__xss=1</script>',
    "'><img src=x onerror=window.__xss=1>",
    f'<div hx-get="/{PROBE}" hx-trigger="load">probe</div>',
    f'<button hx-post="/{PROBE}" hx-trigger="load" hx-target="body">x</button>',
    '<iframe srcdoc="<script>parent.__xss=1</script>"></iframe>',
    "{{7*7}} {{ config }} {% print(1) %} ${7*7}",
    "<body onload=alert(1)>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '<a href="#" hx-on:click="alert(1)" hx-on::load="alert(1)">hx-on</a>',
    "<details open ontoggle=alert(1)>",
    "</textarea><script>document.title='xss'</script>",
    "<style>body{display:none}</style>",
    '<meta http-equiv="refresh" content="0;url=http://evil.invalid/">',
    '<object data="javascript:alert(1)"></object>',
    f'<img src="http://evil.invalid/{PROBE}.png">',
    "]]><!-- --></title><script>document.title='xss'</script>",
]


def skill_markdown() -> str:
    """A skill document: every payload raw (Markdown) and once more inside a code block."""
    raw = "\n\n".join(PAYLOADS)
    return f"# Hostile skill\n\n{raw}\n\n```\n" + "\n".join(PAYLOADS) + "\n```\n"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> dict:
    """One server over data full of payloads, and the URLs of every page that shows them."""
    server = start_server(tmp_path_factory.mktemp("xss") / "data")
    memories = server.memories()
    ids = [memories.add(p, category="general", source=p[:40]).id for p in PAYLOADS]
    memories.update(
        ids[0], PAYLOADS[1] + " (edited)"
    )  # a history entry with payloads on both sides
    conversations = server.conversations()
    threads = [cli_session_key(1_700_000_000_000), schedule_key("nightly"), schedule_key("weekly")]
    chunks = [PAYLOADS[i::3] for i in range(3)]  # 7 exchanges each: under the 20-turn trim
    for thread, chunk in zip(threads, chunks, strict=False):
        for payload in chunk:
            conversations.add_exchange(thread, payload, "reply: " + payload)
    skills = SkillDocumentStore(server.settings.skills_dir, lock_timeout=5)
    doc = skills.save(
        {
            "type": "skill",
            "skill": "hostile-skill",
            "content": skill_markdown(),
            "skillDescription": PAYLOADS[1] + " " + PAYLOADS[3],
            "meta": {"name": "hostile", "description": PAYLOADS[0]},
        }
    )
    pages = {
        "memories list": ("/memories/", PAYLOADS[1:]),
        "search highlight (script)": (
            "/memories/?q=script",
            [p for p in PAYLOADS[1:] if "script" in p.lower()],
        ),
        "search highlight (<img)": (
            "/memories/?" + urlencode({"q": "<img"}),
            [p for p in PAYLOADS[1:] if "<img" in p],
        ),
        "edit form": (f"/memories/{ids[15]}/edit", []),
        "history": (f"/memories/{ids[0]}/history", [PAYLOADS[0], PAYLOADS[1] + " (edited)"]),
        "conversations list": ("/conversations/", []),
        **{
            f"conversation thread {i + 1}": ("/conversations/thread/" + quote(t, safe=""), chunk)
            for i, (t, chunk) in enumerate(zip(threads, chunks, strict=False))
        },
        "prompt": (
            "/prompt/?" + urlencode({"conversation": threads[1], "message": PAYLOADS[0]}),
            PAYLOADS[1:] + chunks[1],
        ),
        "skills list": ("/skills/", []),
        "skill document": (f"/skills/{doc.id}", PAYLOADS),
        "skill edit form": (f"/skills/{doc.id}/edit", []),
    }
    yield {"server": server, "pages": pages, "ids": ids}
    stop_server(server)


def watch_requests(page, server: LiveServer) -> list[str]:
    unexpected: list[str] = []

    def on_request(request) -> None:
        url = request.url
        if not url.startswith(server.url + "/") or PROBE in url or "evil.invalid" in url:
            unexpected.append(url)

    page.on("request", on_request)
    return unexpected


def assert_nothing_ran(page, unexpected: list[str]) -> None:
    page.wait_for_timeout(300)  # give hx-trigger="load" and timers a chance to fire, if they could
    assert page.watch.dialogs == []
    assert page.watch.page_errors == []
    assert unexpected == []
    assert page.evaluate("window.__xss") is None
    assert page.evaluate("document.title") != "xss"
    csp = [m for m in page.watch.console_errors if "Content Security Policy" in m]
    assert csp == [], "markup from a payload reached the page and was blocked only by the CSP"
    assert page.watch.console_errors == []
    assert page.locator("iframe, object, svg[onload], body style, body meta").count() == 0


def visible_text(page) -> str:
    return page.evaluate("document.body.innerText")


@pytest.mark.parametrize(
    "name",
    [
        "memories list",
        "search highlight (script)",
        "search highlight (<img)",
        "edit form",
        "history",
        "conversations list",
        "conversation thread 1",
        "conversation thread 2",
        "conversation thread 3",
        "prompt",
        "skills list",
        "skill document",
        "skill edit form",
    ],
)
def test_payloads_are_shown_as_text(seeded, page, name):
    server = seeded["server"]
    path, shown = seeded["pages"][name]
    unexpected = watch_requests(page, server)
    response = page.goto(server.url + path)
    assert response.status == 200, f"{name}: {path} answered {response.status}"
    page.wait_for_function("() => window.htmx !== undefined")
    text = visible_text(page)
    missing = [p for p in shown if p not in text]
    assert missing == [], f"{name}: these payloads are not visible as text"
    assert_nothing_ran(page, unexpected)


def test_search_highlight_marks_only_text(seeded, page):
    server = seeded["server"]
    unexpected = watch_requests(page, server)
    page.goto(server.url + "/memories/")
    page.get_by_role("searchbox", name="Search").press_sequentially("onerror")
    marks = page.locator("#results mark")
    contents = [m.content for m in server.memories().get_all()]
    expect(marks).to_have_count(sum(c.count("onerror") for c in contents))
    assert set(marks.all_inner_texts()) == {"onerror"}
    assert page.locator("#results td.content img, #results td.content script").count() == 0
    assert_nothing_ran(page, unexpected)


def test_inline_edit_and_history_panel_keep_payloads_inert(seeded, page):
    server = seeded["server"]
    ids = seeded["ids"]
    unexpected = watch_requests(page, server)
    page.goto(server.url + "/memories/")
    page.wait_for_function("() => window.htmx !== undefined")
    row = page.locator(f"#memory-{ids[15]}")
    row.get_by_role("button", name="Edit").click()
    assert row.get_by_label("Memory text").input_value() == PAYLOADS[15]
    row.get_by_role("button", name="Cancel").click()
    page.locator(f"#memory-{ids[0]}").get_by_role("button", name="History").click()
    panel = page.locator("#history-panel .history-entry").first
    panel.wait_for()
    assert PAYLOADS[0] in panel.inner_text() and PAYLOADS[1] in panel.inner_text()
    assert_nothing_ran(page, unexpected)


def test_edit_page_textarea_holds_the_payload_verbatim(seeded, page):
    server = seeded["server"]
    page.goto(server.url + f"/memories/{seeded['ids'][15]}/edit")
    assert page.get_by_label("Memory text").input_value() == PAYLOADS[15]
    assert page.evaluate("document.title") != "xss"
