"""Needs attention through the Flask test client: full page and htmx panel, merge and undo,
keep one side, rewrite, delete, dismiss (kept across apps), and bad input."""

from __future__ import annotations

import json
import re
import time
from datetime import date
from html import unescape

import pytest

from tests.support.web import CsrfClient
from webapp import create_app
from webapp.attention.pairs import REASON_TEXTS, reason
from webapp.stores import MemoryStore
from webapp.stores.dismissals import DismissalStore
from webapp.web.blueprints.attention import reason_html


@pytest.fixture
def store(settings) -> MemoryStore:
    return MemoryStore.from_settings(settings, actor="test")


def seed(store, *texts: str) -> list[str]:
    return [store.add(text).id for text in texts]


def text_of(html: str) -> str:
    """The page's text, as a reader sees it (tags dropped, entities decoded)."""
    return unescape(re.sub(r"<[^>]+>", "", html))


def settled(client, url: str, deadline: float = 60.0) -> str:
    """The page once it shows a current scan, reloading as its refresh tag tells a browser to
    (a scan by meaning may still be loading the model when the page is first asked)."""
    stop = time.monotonic() + deadline
    while True:
        html = client.get(url).get_data(as_text=True)
        if 'http-equiv="refresh"' not in html or time.monotonic() > stop:
            return html
        time.sleep(0.2)


def contents(store) -> list[str]:
    return sorted(m.content for m in store.get_all())


def seen(store, *ids: str) -> dict[str, str]:
    """The version fields the page sends with a merge or a move of these memories."""
    return {f"version-{i}": store.get(i).version for i in ids}


def test_full_page_and_partial_show_the_same_findings(client, store):
    seed(store, "Prefers tea", "The user likes tea", "Alarm at 06:45", "Alarm at 07:00")
    full = client.get("/attention/").get_data(as_text=True)
    assert "<!doctype html>" in full and "Near-duplicates (1)" in full
    assert "Contradictions (1)" in full and "Prefers tea" in full
    partial = client.get("/attention/?kind=contradiction", htmx=True).get_data(as_text=True)
    assert "<!doctype html>" not in partial and partial.startswith('<section id="attention-panel"')
    assert "06:45 vs 07:00" in text_of(partial) and "Prefers tea" not in partial


def test_empty_store_says_what_each_tab_is_for(client):
    html = client.get("/attention/?kind=stale").get_data(as_text=True)
    assert "Nothing here." in html and "180 days" in html


def test_an_unknown_tab_falls_back_to_the_first_with_findings(client, store):
    seed(store, "Alarm at 06:45", "Alarm at 07:00")
    html = client.get("/attention/?kind=<script>").get_data(as_text=True)
    assert "Contradictions: 1" in html and "<script>" not in html


def test_merge_keeps_one_with_the_edited_text_and_undo_brings_both_back(client, store):
    keep, drop = seed(store, "Prefers tea", "The user likes tea")
    response = client.post(
        "/attention/merge",
        htmx=True,
        data={
            "keep": keep,
            "drop": drop,
            "content": "Prefers green tea",
            **seen(store, keep, drop),
        },
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and "Kept “Prefers green tea”" in html
    assert contents(store) == ["Prefers green tea"]
    hid = re.search(r'name="hid" value="([0-9a-f]+)"', html).group(1)
    undo = client.post("/attention/undo-merge", htmx=True, data={"dropped": drop, "hid": hid})
    assert "both memories are back" in undo.get_data(as_text=True)
    assert contents(store) == ["Prefers tea", "The user likes tea"]


def test_merge_without_javascript_redirects_with_an_undo(client, store):
    keep, drop = seed(store, "Alarm at 06:45", "Alarm at 07:00")
    response = client.post(
        "/attention/merge",
        data={"keep": drop, "drop": keep, "content": "Alarm at 07:00", **seen(store, keep, drop)},
    )
    assert response.status_code == 303
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Kept “Alarm at 07:00”" in page and 'name="dropped"' in page
    assert contents(store) == ["Alarm at 07:00"]


@pytest.mark.parametrize(
    "content, status, message",
    [("", 422, "cannot be empty"), ("\u200b\u200b", 422, "cannot be empty")],
)
def test_merge_refuses_empty_text_and_changes_nothing(client, store, content, status, message):
    keep, drop = seed(store, "Prefers tea", "The user likes tea")
    response = client.post(
        "/attention/merge",
        htmx=True,
        data={"keep": keep, "drop": drop, "content": content, **seen(store, keep, drop)},
    )
    assert response.status_code == status and message in response.get_data(as_text=True)
    assert contents(store) == ["Prefers tea", "The user likes tea"]


def test_merge_of_a_memory_deleted_elsewhere_is_refused(client, store):
    keep, drop = seed(store, "Prefers tea", "The user likes tea")
    versions = seen(store, keep, drop)
    store.delete(drop)
    response = client.post(
        "/attention/merge",
        htmx=True,
        data={"keep": keep, "drop": drop, "content": "Tea", **versions},
    )
    assert response.status_code == 409 and "deleted elsewhere" in response.get_data(as_text=True)
    assert contents(store) == ["Prefers tea"]


def test_merge_with_itself_or_without_ids_is_refused(client, store):
    [only] = seed(store, "Prefers tea")
    same = client.post(
        "/attention/merge", htmx=True, data={"keep": only, "drop": only, "content": "x"}
    )
    assert same.status_code == 422 and contents(store) == ["Prefers tea"]
    assert client.post("/attention/merge", htmx=True, data={"content": "x"}).status_code == 400


def test_memory_text_is_escaped(client, store):
    seed(store, "Likes <b>tea</b><script>alert(1)</script>", "The user likes <b>tea</b>")
    html = client.get("/attention/").get_data(as_text=True)
    assert "<script>alert(1)" not in html and "&lt;script&gt;" in html


def test_rewrite_applies_the_suggested_fact_unless_changed_meanwhile(client, store):
    [memory_id] = seed(store, "I prefer dark mode")
    page = client.get("/attention/?kind=hard").get_data(as_text=True)
    assert "Rewrite as “Prefers dark mode”" in text_of(page)
    version = re.search(r'name="version" value="([^"]+)"', page).group(1)
    store.update(memory_id, "I prefer dark mode everywhere")
    stale = client.post(
        "/attention/rewrite",
        htmx=True,
        data={"id": memory_id, "version": version, "content": "Prefers dark mode"},
    )
    assert stale.status_code == 409 and contents(store) == ["I prefer dark mode everywhere"]
    fresh = store.get(memory_id).version
    done = client.post(
        "/attention/rewrite",
        htmx=True,
        data={"id": memory_id, "version": fresh, "content": "Prefers dark mode everywhere"},
    )
    assert done.status_code == 200 and contents(store) == ["Prefers dark mode everywhere"]


def rewrite(client, store, memory_id: str, content: str, htmx: bool = True):
    version = store.get(memory_id).version
    data = {"id": memory_id, "version": version, "content": content, "kind": "hard"}
    return client.post("/attention/rewrite", htmx=htmx, data=data)


def test_rewrite_is_undone_without_javascript_too(client, store):
    [memory_id] = seed(store, "I prefer dark mode.")
    response = rewrite(client, store, memory_id, "Prefers dark mode.", htmx=False)
    assert response.status_code == 303
    page = text_of(client.get(response.headers["Location"]).get_data(as_text=True))
    assert "Rewritten as “Prefers dark mode.”" in page and "”." not in page
    assert contents(store) == ["Prefers dark mode."]
    hid = re.search(r"u_hid=([0-9a-f]+)", response.headers["Location"]).group(1)
    undone = client.post("/attention/undo-rewrite", data={"hid": hid, "kind": "hard"})
    assert undone.status_code == 303 and contents(store) == ["I prefer dark mode."]
    again = client.post("/attention/undo-rewrite", htmx=True, data={"hid": hid})
    assert again.status_code == 409 and "reads as before already" in again.get_data(as_text=True)


def test_undoing_a_rewrite_leaves_a_later_edit_alone(client, store):
    [memory_id] = seed(store, "I prefer dark mode")
    html = rewrite(client, store, memory_id, "Prefers dark mode").get_data(as_text=True)
    hid = re.search(r'name="hid" value="([0-9a-f]+)"', html).group(1)
    store.update(memory_id, "Prefers dark mode in every app")
    refused = client.post("/attention/undo-rewrite", htmx=True, data={"hid": hid})
    assert refused.status_code == 409 and "edited again since" in refused.get_data(as_text=True)
    assert contents(store) == ["Prefers dark mode in every app"]


def test_undoing_a_rewrite_leaves_alone_an_edit_made_while_it_checked(
    app, client, store, monkeypatch
):
    [memory_id] = seed(store, "I prefer dark mode")
    html = rewrite(client, store, memory_id, "Prefers dark mode").get_data(as_text=True)
    hid = re.search(r'name="hid" value="([0-9a-f]+)"', html).group(1)
    dashboard = app.extensions["memory_curator"].memories
    real_get = dashboard.get

    def get_then_edited(wanted: str):  # the MCP server edits just after Undo looked
        found = real_get(wanted)
        if wanted == memory_id and contents(store) == ["Prefers dark mode"]:
            store.update(memory_id, "Prefers dark mode in every app")
        return found

    monkeypatch.setattr(dashboard, "get", get_then_edited)
    refused = client.post("/attention/undo-rewrite", htmx=True, data={"hid": hid})
    assert contents(store) == ["Prefers dark mode in every app"]
    assert refused.status_code == 409 and "edited again since" in refused.get_data(as_text=True)


def test_delete_a_stale_memory_and_undo(client, store):
    [memory_id] = seed(store, "Trip to Kyoto until 2025-10-01")
    page = client.get("/attention/?kind=stale").get_data(as_text=True)
    assert "Mentions 2025-10-01, which is past." in text_of(page)
    version = store.get(memory_id).version  # type: ignore[union-attr]
    assert f'name="version" value="{version}"' in page  # the Delete form says what it showed
    client.post(
        "/attention/delete",
        htmx=True,
        data={"id": memory_id, "kind": "stale", "version": version},
    )
    assert contents(store) == []
    client.post("/attention/undelete", htmx=True, data={"id": memory_id})
    assert contents(store) == ["Trip to Kyoto until 2025-10-01"]


def test_delete_from_needs_attention_checks_the_version_the_page_showed(client, store):
    [memory_id] = seed(store, "Trip to Kyoto until 2025-10-01")
    shown = store.get(memory_id).version  # type: ignore[union-attr]
    missing = client.post("/attention/delete", htmx=True, data={"id": memory_id, "kind": "stale"})
    assert missing.status_code == 422 and contents(store) == ["Trip to Kyoto until 2025-10-01"]
    store.update(memory_id, "Trip to Kyoto until 2025-10-01, then Osaka")  # another tab
    stale = client.post(
        "/attention/delete",
        htmx=True,
        data={"id": memory_id, "kind": "stale", "version": shown},
    )
    assert stale.status_code == 409
    assert "edited that memory meanwhile" in stale.get_data(as_text=True)
    assert contents(store) == ["Trip to Kyoto until 2025-10-01, then Osaka"]


def test_a_dismissed_finding_stays_dismissed_in_a_new_app(client, store, settings):
    seed(store, "Alarm at 06:45", "Alarm at 07:00")
    page = client.get("/attention/?kind=contradiction").get_data(as_text=True)
    key = re.search(r'name="key" value="([^"]+)"', page).group(1)
    response = client.post(
        "/attention/dismiss", htmx=True, data={"key": key, "kind": "contradiction"}
    )
    assert "Contradictions: 0" in response.get_data(as_text=True)
    saved = json.loads(settings.memory_file.with_name("attention-dismissed.json").read_text())
    assert list(saved) == [key] and saved[key]["by"] == "dashboard"
    other = CsrfClient(create_app(settings).test_client())
    assert "Contradictions (0)" in other.get("/attention/").get_data(as_text=True)
    client.post("/attention/undismiss", htmx=True, data={"key": key})
    assert "Contradictions (1)" in other.get("/attention/").get_data(as_text=True)


def test_editing_a_memory_brings_a_dismissed_finding_back_only_as_a_new_one(
    client, store, settings
):
    left, _ = seed(store, "Alarm at 06:45", "Alarm at 07:00")
    page = client.get("/attention/?kind=contradiction").get_data(as_text=True)
    client.post(
        "/attention/dismiss", data={"key": re.search(r'name="key" value="([^"]+)"', page).group(1)}
    )
    store.update(left, "Alarm at 06:30")
    assert "Contradictions (1)" in settled(client, "/attention/")


@pytest.mark.parametrize("key", ["", "x" * 1000])
def test_dismiss_refuses_keys_that_name_no_finding(client, key, settings):
    response = client.post("/attention/dismiss", htmx=True, data={"key": key})
    assert response.status_code == 422
    assert DismissalStore.from_settings(settings).keys() == frozenset()


def test_posts_need_the_csrf_token(client, store):
    keep, drop = seed(store, "Prefers tea", "The user likes tea")
    response = client.post(
        "/attention/merge", csrf=False, data={"keep": keep, "drop": drop, "content": "x"}
    )
    assert response.status_code == 400 and len(contents(store)) == 2


def test_a_damaged_dismissal_file_is_reported_not_overwritten(client, store, settings):
    seed(store, "Alarm at 06:45", "Alarm at 07:00")
    path = settings.memory_file.with_name("attention-dismissed.json")
    path.write_text("{not json", encoding="utf-8")
    response = client.get("/attention/")
    assert response.status_code == 503
    assert path.read_text(encoding="utf-8") == "{not json"


def test_every_reason_the_library_gives_has_its_sentence_in_the_dashboard(app):
    """A reason code the web layer does not know would break the page; in English the page's
    sentence is the library's own (what the CLI prints), in Chinese a translated one."""
    samples = {
        "different_values": {"subject": ("alarm",), "left": ("06:45",), "right": ("07:00",)},
        "different_values_same_thing": {"left": ("20%",), "right": ("30%",)},
        "same_terms": {"terms": ("tea", "green")},
        "past_date": {"date": date(2025, 10, 1)},
        "expired_word": {"word": "this week", "written": date(2025, 10, 1)},
        "untouched": {"days": 1234, "threshold": 180},
        "too_long": {"chars": 1234, "max": 300},
        "holds_secret": {"secret": "access_code", "masked": "Door code ••••"},
        "expired_at": {"date": date(2025, 10, 1)},
        "model_same": {"model": "gpt-4o-mini"},
        "model_contradiction": {"model": "gpt-4o-mini"},
        "model_related": {"model": "gpt-4o-mini"},
    }
    for code in REASON_TEXTS:
        why = reason(code, **samples.get(code, {}))
        with app.test_request_context(headers={"Accept-Language": "en"}):
            english = text_of(str(reason_html(why)))
        assert english == str(why), code
        with app.test_request_context(headers={"Accept-Language": "zh-TW"}):
            chinese = text_of(str(reason_html(why)))
        assert chinese != english and not re.search(r"\b(the|is|and|with)\b", chinese), chinese
        if code in ("past_date", "expired_word", "expired_at"):
            assert "2025年10月1日" in chinese, chinese


def test_reason_values_from_memories_are_escaped_and_not_translated(app):
    why = reason("same_terms", terms=("<script>alert(1)</script>", "茶"))
    with app.test_request_context(headers={"Accept-Language": "zh-CN"}):
        html = str(reason_html(why))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert '<span translate="no">&lt;script&gt;alert(1)&lt;/script&gt;、茶</span>' in html


def test_a_notice_and_its_undo_stay_while_the_panel_refreshes_itself(client, store, monkeypatch):
    """While a rescan runs the panel asks again every second; the merge's notice and its Undo
    used to go with the first refresh (gone in about a second on a busy machine)."""
    from webapp.attention.scanner import AttentionScanner

    keep, drop = seed(store, "Prefers tea", "The user likes tea")
    monkeypatch.setattr(AttentionScanner, "report", lambda self, wait=0.0: (None, False))
    merged = client.post(
        "/attention/merge",
        htmx=True,
        data={
            "keep": keep,
            "drop": drop,
            "content": "Prefers green tea",
            **seen(store, keep, drop),
        },
    ).get_data(as_text=True)
    poll = re.search(r'id="attention-progress"[^>]*hx-get="([^"]+)"', merged, re.S)
    assert poll is not None, "the panel does not refresh itself while the scan runs"
    refreshed = client.get(unescape(poll.group(1)), htmx=True).get_data(as_text=True)
    assert "Kept “Prefers green tea”" in refreshed
    hid = re.search(r'name="hid" value="([0-9a-f]+)"', refreshed).group(1)
    assert f'name="dropped" value="{drop}"' in refreshed
    undone = client.post("/attention/undo-merge", htmx=True, data={"dropped": drop, "hid": hid})
    assert "both memories are back" in undone.get_data(as_text=True)
    assert contents(store) == ["Prefers tea", "The user likes tea"]
