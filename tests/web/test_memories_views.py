"""The Memories views through Flask's test client: full pages and htmx partials, validation,
404s, 409 conflicts, CSRF, export and import — with the store file checked afterwards."""

from __future__ import annotations

import io
import json
import re

import pytest

from tests.support.data import make_settings, on_disk
from tests.support.web import CsrfClient
from webapp import create_app
from webapp.stores import MemoryStore
from webapp.web.plumbing.memory_listing import PAGE_SIZE, highlight


def store_of(settings) -> MemoryStore:
    """A second MemoryStore on the same file, as another process would have."""
    return MemoryStore.from_settings(settings, actor="other")


@pytest.fixture
def store(settings) -> MemoryStore:
    return store_of(settings)


def small_client(tmp_path, **caps) -> tuple[CsrfClient, object]:
    settings = make_settings(tmp_path, **caps)
    app = create_app(settings)
    app.config.update(TESTING=True)
    return CsrfClient(app.test_client()), settings


def text(response) -> str:
    return response.get_data(as_text=True)


# ------------------------------------------------------------------ the list
def test_empty_page_says_what_it_is_for(client):
    html = text(client.get("/memories/"))
    assert "Nothing remembered yet" in html
    assert "what your assistant remembers" in html
    assert 'id="add-form"' in html and 'id="meter"' in html


def test_full_page_and_partial_render_the_same_rows(client, store):
    memory = store.add("Prefers tea in the afternoon", category="preference")
    full = client.get("/memories/")
    partial = client.get("/memories/", htmx=True)
    assert full.status_code == partial.status_code == 200
    assert "<html" in text(full) and "<html" not in text(partial)
    assert text(partial).lstrip().startswith('<div id="results"')
    for html in (text(full), text(partial)):
        assert f'id="memory-{memory.id}"' in html and "Prefers tea in the afternoon" in html
    assert "HX-Request" in partial.headers["Vary"]


def test_search_partial_returns_only_matching_rows_highlighted(client, store):
    store.add("Drinks COFFEE black")
    store.add("我喜歡喝咖啡，不加糖")
    store.add("Uses vim")
    html = text(client.get("/memories/?q=coffee", htmx=True))
    assert "<mark>COFFEE</mark>" in html and "Uses vim" not in html and "咖啡" not in html
    html = text(client.get("/memories/?q=咖啡", htmx=True))
    assert "<mark>咖啡</mark>" in html and "COFFEE" not in html
    html = text(client.get("/memories/?q=nothing-like-this", htmx=True))
    assert "No memories match" in html and "nothing-like-this" in html


def test_search_escapes_before_highlighting(client, store):
    store.add('<script>alert("x")</script> script')
    html = text(client.get("/memories/?q=script", htmx=True))
    assert "<script>" not in html
    assert "&lt;<mark>script</mark>&gt;" in html


@pytest.mark.parametrize(
    "content, query, expected",
    [
        ("Hello World", "world", "Hello <mark>World</mark>"),
        ("a<b>a", "a", "<mark>a</mark>&lt;b&gt;<mark>a</mark>"),
        ("我喜歡喝咖啡", "咖啡", "我喜歡喝<mark>咖啡</mark>"),
        ("我喜歡喝無糖綠茶", "无糖绿茶", "我喜歡喝<mark>無糖綠茶</mark>"),
        ("Straße", "STRASSE", "<mark>Straße</mark>"),
        ("ＡＢＣ full width", "abc", "<mark>ＡＢＣ</mark> full width"),
        ("no match", "zzz", "no match"),
        ("x & y", "", "x &amp; y"),
    ],
)
def test_highlight_escapes_then_marks(content, query, expected):
    assert str(highlight(content, query)) == expected


def test_filter_by_category(client, store):
    store.add("Project Apollo is due in May", category="project")
    store.add("Likes short answers", category="preference")
    html = text(client.get("/memories/?category=project", htmx=True))
    assert "Apollo" in html and "short answers" not in html


@pytest.mark.parametrize(
    "sort, expected",
    [
        ("newest", ["banana", "apple", "cherry, updated"]),
        ("oldest", ["cherry, updated", "apple", "banana"]),
        ("alpha", ["apple", "banana", "cherry, updated"]),
        ("updated", ["cherry, updated", "banana", "apple"]),
    ],
)
def test_sort_orders(client, store, sort, expected):
    store.import_records(
        [
            {"id": "c", "content": "cherry", "createdAt": "2025-01-01T00:00:00.000Z"},
            {"id": "a", "content": "apple", "createdAt": "2025-01-02T00:00:00.000Z"},
            {"id": "b", "content": "banana", "createdAt": "2025-01-03T00:00:00.000Z"},
        ]
    )
    store.update("c", "cherry, updated")
    html = text(client.get(f"/memories/?sort={sort}", htmx=True))
    assert (
        re.findall(r'<td class="content" data-label="Memory" translate="no">([^<]*)</td>', html)
        == expected
    )


def test_pagination_shows_one_page_and_links_the_next(tmp_path):
    client, settings = small_client(tmp_path, memory_max_items=500, memory_max_chars=100_000)
    store_of(settings).import_records(
        [{"id": f"m{i:03d}", "content": f"memory number {i}"} for i in range(120)]
    )
    html = text(client.get("/memories/?sort=oldest&page=2", htmx=True))
    rows = re.findall(r'<tr id="memory-', html)
    assert len(rows) == PAGE_SIZE
    assert "memory number 50<" in html and "memory number 49<" not in html
    assert f"Showing {PAGE_SIZE + 1}–{2 * PAGE_SIZE} of 120" in html
    assert "page=3" in html and "Page 2 of 3" in html
    last = text(client.get("/memories/?sort=oldest&page=99", htmx=True))
    assert "Page 3 of 3" in last and len(re.findall(r'<tr id="memory-', last)) == 20


# ------------------------------------------------------------------ capacity meter
def test_meter_warns_near_the_cap_and_explains_when_full(tmp_path):
    client, settings = small_client(tmp_path, memory_max_items=10)
    store = store_of(settings)
    for i in range(9):
        store.add(f"fact {i}")
    html = text(client.get("/memories/meter", htmx=True))
    assert "9 / 10" in html and "Nearly full" in html
    store.add("fact 9")
    html = text(client.get("/memories/"))
    assert "Memory is full" in html and "cannot be added" in html


# ------------------------------------------------------------------ add
def test_add_without_htmx_redirects_303(client, settings):
    response = client.post(
        "/memories/", data={"content": "  Lives in Taipei  ", "category": "general"}
    )
    assert response.status_code == 303
    assert response.headers["Location"].startswith("/memories/")
    assert [(r["content"], r["category"]) for r in on_disk(settings.memory_file)] == [
        ("Lives in Taipei", "general")
    ]


def test_add_with_htmx_returns_fresh_form_and_triggers_reload(client, settings):
    response = client.post("/memories/", htmx=True, data={"content": "Uses uv", "category": "tool"})
    assert response.status_code == 200
    html = text(response)
    assert 'id="add-form"' in html and "Added “Uses uv”" in html
    trigger = json.loads(response.headers["HX-Trigger"])
    assert "memories-changed" in trigger and trigger["announce"]
    assert on_disk(settings.memory_file)[0]["category"] == "tool"


@pytest.mark.parametrize("htmx", [True, False])
def test_the_same_memory_submitted_twice_is_added_once(client, settings, htmx):
    form = {"content": "Prefers metric units", "category": "preference"}
    first = client.post("/memories/", htmx=htmx, data=form)
    assert first.status_code in (200, 303)
    again = client.post(
        "/memories/", htmx=htmx, data={**form, "content": "  prefers METRIC units "}
    )
    assert again.status_code == 409
    assert "Already remembered: “Prefers metric units” (preference)" in text(again)
    assert 'aria-invalid="true"' in text(again)
    assert [r["content"] for r in on_disk(settings.memory_file)] == ["Prefers metric units"]


@pytest.mark.parametrize(
    "data, message",
    [
        ({"content": "   ", "category": "general"}, "cannot be empty"),
        ({"content": "\u200b\u200b", "category": "general"}, "cannot be empty"),
        ({"content": " \ufeff\u2060\u200d ", "category": "general"}, "cannot be empty"),
        ({"content": "x" * 10_001, "category": "general"}, "10,001 characters"),
        ({"content": "fine", "category": "gossip"}, "Unknown category"),
    ],
)
@pytest.mark.parametrize("htmx", [True, False])
def test_add_validation_is_shown_next_to_the_field(client, settings, data, message, htmx):
    response = client.post("/memories/", htmx=htmx, data=data)
    assert response.status_code == 422
    html = text(response)
    assert 'class="field-error"' in html and message in html
    assert 'aria-invalid="true"' in html
    assert on_disk(settings.memory_file) == []


def test_add_trims_invisible_characters_at_the_ends_but_keeps_emoji_joiners(client, settings):
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    response = client.post(
        "/memories/",
        htmx=True,
        data={"content": f"\u200b Family emoji {family}\ufeff ", "category": "general"},
    )
    assert response.status_code == 200
    assert [r["content"] for r in on_disk(settings.memory_file)] == [f"Family emoji {family}"]


def test_add_to_a_full_store_is_explained(tmp_path):
    client, settings = small_client(tmp_path, memory_max_items=1)
    store_of(settings).add("the only one")
    response = client.post("/memories/", htmx=True, data={"content": "one more"})
    assert response.status_code == 409
    assert "full" in text(response) and 'class="field-error"' in text(response)
    assert [r["content"] for r in on_disk(settings.memory_file)] == ["the only one"]


# ------------------------------------------------------------------ edit
def test_edit_partial_and_full_page(client, store):
    memory = store.add("Editable")
    partial = client.get(f"/memories/{memory.id}/edit", htmx=True)
    assert partial.status_code == 200 and "<html" not in text(partial)
    assert f'name="expected_updated_at" value="{memory.version}"' in text(partial)
    assert "data-cancel" in text(partial) and "data-autofocus" in text(partial)
    full = client.get(f"/memories/{memory.id}/edit")
    assert full.status_code == 200 and "<html" in text(full) and "Editable" in text(full)


def test_save_returns_the_row_with_focus_on_edit(client, store, settings):
    memory = store.add("Old text", category="general")
    response = client.post(
        f"/memories/{memory.id}",
        htmx=True,
        data={"content": "New text", "category": "project", "expected_updated_at": memory.version},
    )
    assert response.status_code == 200
    html = text(response)
    assert html.lstrip().startswith(f'<tr id="memory-{memory.id}"') and "New text" in html
    assert "data-edit-button data-autofocus" in html
    assert [(r["content"], r["category"]) for r in on_disk(settings.memory_file)] == [
        ("New text", "project")
    ]


def test_save_without_htmx_redirects(client, store, settings):
    memory = store.add("Old")
    response = client.post(
        f"/memories/{memory.id}",
        data={"content": "New", "category": "general", "expected_updated_at": memory.version},
    )
    assert response.status_code == 303
    assert on_disk(settings.memory_file)[0]["content"] == "New"


def test_both_wrong_fields_are_told_next_to_each_on_add_and_save(client, store, settings):
    """The curator checks the form once; its refusal names each field, and both are shown."""
    memory = store.add("Original")
    before = settings.memory_file.read_bytes()
    data = {"content": " ", "category": "gossip", "expected_updated_at": memory.version}
    for url in ("/memories/", f"/memories/{memory.id}"):
        response = client.post(url, htmx=True, data=data)
        html = text(response)
        assert response.status_code == 422
        assert html.count('class="field-error"') == 2
        assert "cannot be empty" in html and "Unknown category" in html
    assert settings.memory_file.read_bytes() == before


def test_cancel_returns_the_unchanged_row(client, store):
    memory = store.add("Stays")
    response = client.get(f"/memories/{memory.id}/row", htmx=True)
    assert response.status_code == 200 and "Stays" in text(response)
    assert "data-autofocus" in text(response)


@pytest.mark.parametrize(
    "data, status, message",
    [
        ({"content": "", "category": "general"}, 422, "cannot be empty"),
        ({"content": "\u200b", "category": "general"}, 422, "cannot be empty"),
        ({"content": "ok", "category": "nope"}, 422, "Unknown category"),
        ({"content": "ok", "category": "general", "expected_updated_at": ""}, 422, "version token"),
    ],
)
def test_save_validation(client, store, settings, data, status, message):
    memory = store.add("Original")
    data = {"expected_updated_at": memory.version, **data}
    response = client.post(f"/memories/{memory.id}", htmx=True, data=data)
    assert response.status_code == status and message in text(response)
    assert "<textarea" in text(response)
    assert on_disk(settings.memory_file)[0]["content"] == "Original"


@pytest.mark.parametrize("htmx", [True, False])
def test_save_after_a_change_elsewhere_is_refused_with_both_versions(client, store, settings, htmx):
    memory = store.add("Meeting on Monday")
    store.update(memory.id, "Meeting moved to Tuesday")  # another process, after the page loaded
    response = client.post(
        f"/memories/{memory.id}",
        htmx=htmx,
        data={
            "content": "Meeting on Wednesday",
            "category": "general",
            "expected_updated_at": memory.version,
        },
    )
    assert response.status_code == 409
    html = text(response)
    assert "Changed elsewhere" in html and 'by <span translate="no">other</span>' in html
    assert "Meeting on Wednesday" in html and "Meeting moved to Tuesday" in html
    assert on_disk(settings.memory_file)[0]["content"] == "Meeting moved to Tuesday"
    current = store.get(memory.id)
    assert f'name="expected_updated_at" value="{current.version}"' in html


@pytest.mark.parametrize(
    "method, url",
    [
        ("get", "/memories/nope/edit"),
        ("get", "/memories/nope/row"),
        ("get", "/memories/nope/history"),
        ("post", "/memories/nope"),
        ("post", "/memories/nope/delete"),
    ],
)
def test_unknown_memory_is_404(client, method, url):
    data = {"content": "x", "expected_updated_at": "2020-01-01T00:00:00.000Z"}
    response = client.get(url) if method == "get" else client.post(url, data=data)
    assert response.status_code == 404
    htmx = client.get(url, htmx=True) if method == "get" else client.post(url, htmx=True, data=data)
    assert htmx.status_code == 404 and htmx.headers["HX-Retarget"] == "#banner"


@pytest.mark.parametrize("htmx", [True, False])
def test_saving_a_memory_deleted_elsewhere_keeps_the_text_and_says_so(
    client, store, settings, htmx
):
    memory = store.add("Old wording", category="workflow")
    store.delete(memory.id)
    response = client.post(
        f"/memories/{memory.id}",
        htmx=htmx,
        data={
            "content": "My careful new wording",
            "category": "workflow",
            "expected_updated_at": memory.version,
        },
    )
    assert response.status_code == 409 and "HX-Retarget" not in response.headers
    html = text(response)
    assert "deleted elsewhere" in html and "My careful new wording" in html
    assert 'class="field-error"' in html
    assert on_disk(settings.memory_file) == []


def test_cancel_of_a_memory_deleted_elsewhere_offers_undo(client, store, settings):
    memory = store.add("Deleted by another tab")
    store.delete(memory.id)
    response = client.get(f"/memories/{memory.id}/row", htmx=True)
    assert response.status_code == 200 and "HX-Retarget" not in response.headers
    html = text(response)
    assert f'id="memory-{memory.id}"' in html and "Deleted “Deleted by another tab”" in html
    assert f'name="ref" value="{memory.id}"' in html


# ------------------------------------------------------------------ delete / undo
def test_delete_offers_undo_that_restores(client, store, settings):
    memory = store.add("Temporary fact", category="workflow")
    response = client.post(f"/memories/{memory.id}/delete", htmx=True)
    assert response.status_code == 200 and "Undo" in text(response)
    assert "memories-usage-changed" in response.headers["HX-Trigger"]
    assert on_disk(settings.memory_file) == []
    undo = client.post("/memories/restore", htmx=True, data={"ref": memory.id, "return": "row"})
    assert undo.status_code == 200 and "Temporary fact" in text(undo)
    assert [(r["id"], r["content"], r["category"]) for r in on_disk(settings.memory_file)] == [
        (memory.id, "Temporary fact", "workflow")
    ]


def test_delete_without_htmx_redirects_with_undo_notice(client, store, settings):
    memory = store.add("Gone soon")
    response = client.post(f"/memories/{memory.id}/delete")
    assert response.status_code == 303 and f"undo={memory.id}" in response.headers["Location"]
    page = text(client.get(response.headers["Location"]))
    assert "Deleted 1 memory" in page and f'name="ref" value="{memory.id}"' in page
    restored = client.post("/memories/restore", data={"ref": memory.id})
    assert restored.status_code == 303
    assert [r["content"] for r in on_disk(settings.memory_file)] == ["Gone soon"]


def test_bulk_delete_and_undo_all(client, store, settings):
    keep = store.add("keep me")
    gone = [store.add(f"bulk {i}") for i in range(3)]
    response = client.post(
        "/memories/delete-many", htmx=True, data={"ids": [m.id for m in gone], "q": ""}
    )
    assert response.status_code == 200
    html = text(response)
    assert "Deleted 3 memories." in html and html.lstrip().startswith('<div id="results"')
    assert [r["id"] for r in on_disk(settings.memory_file)] == [keep.id]
    undo = client.post(
        "/memories/restore", htmx=True, data={"ref": [m.id for m in gone], "return": "results"}
    )
    assert undo.status_code == 200 and "Restored 3 memories." in text(undo)
    assert sorted(r["id"] for r in on_disk(settings.memory_file)) == sorted(
        [keep.id] + [m.id for m in gone]
    )


def test_bulk_delete_without_selection_is_422(client, store, settings):
    store.add("untouched")
    response = client.post("/memories/delete-many", htmx=True, data={})
    assert response.status_code == 422 and "Select at least one" in text(response)
    assert len(on_disk(settings.memory_file)) == 1


def test_bulk_delete_without_selection_and_without_javascript_says_why(client, store, settings):
    store.add("untouched")
    response = client.post("/memories/delete-many", data={})
    assert response.status_code == 422
    html = text(response)
    assert "<html" in html and "Select at least one memory" in html
    assert len(on_disk(settings.memory_file)) == 1


def test_bulk_delete_without_htmx_redirects(client, store, settings):
    ids = [store.add(f"n{i}").id for i in range(2)]
    response = client.post("/memories/delete-many", data={"ids": ids})
    assert response.status_code == 303 and on_disk(settings.memory_file) == []


def test_restore_of_nothing_is_404(client):
    assert client.post("/memories/restore", data={"ref": "never-existed"}).status_code == 404


# ------------------------------------------------------------------ history
def test_history_shows_who_what_when_and_restores(client, store, settings):
    memory = store.add("Version one")
    store.update(memory.id, "Version two")
    partial = client.get(f"/memories/{memory.id}/history", htmx=True)
    html = text(partial)
    assert partial.status_code == 200 and "<html" not in html
    assert (
        "Changed" in html
        and 'by <span translate="no">other</span>' in html
        and "Version one" in html
        and "Version two" in html
    )
    hid = store.history(memory.id)[-1]["hid"]
    assert f'value="{hid}"' in html
    full = client.get(f"/memories/{memory.id}/history")
    assert full.status_code == 200 and "<html" in text(full)
    restored = client.post("/memories/restore", htmx=True, data={"ref": hid, "return": "history"})
    assert restored.status_code == 200 and "Restored" in text(restored)
    assert "memories-changed" in restored.headers["HX-Trigger"]
    assert on_disk(settings.memory_file)[0]["content"] == "Version one"


def test_history_of_a_deleted_memory_can_bring_it_back(client, store, settings):
    memory = store.add("Deleted but remembered")
    store.delete(memory.id)
    html = text(client.get(f"/memories/{memory.id}/history", htmx=True))
    assert "This memory is deleted" in html and "Restore this memory" in html


# ------------------------------------------------------------------ export / import
def test_export_downloads_every_memory_as_json(client, store):
    store.add("Exported one", category="tool")
    store.add("導出二")
    response = client.get("/memories/export")
    assert response.status_code == 200 and response.mimetype == "application/json"
    assert "attachment" in response.headers["Content-Disposition"]
    records = json.loads(response.get_data(as_text=True))
    assert [r["content"] for r in records] == ["Exported one", "導出二"]
    assert {"id", "createdAt", "updatedAt", "category"} <= set(records[0])


def upload(client, payload: bytes, htmx=True, url="/memories/import"):
    return client.post(
        url,
        htmx=htmx,
        content_type="multipart/form-data",
        data={"file": (io.BytesIO(payload), "memories.json")},
    )


# Times another program wrote that no calendar holds: read as unknown, never as 1970.
UNREADABLE_TIMES = ["0001-01-01T00:00:00+14:00", 10**20, "not a time", {"at": 1}, True, ""]


def test_an_exported_unreadable_time_is_imported_back_as_it_was(client, settings):
    records = [
        {"id": f"odd{i}", "content": f"Odd time {i}", "createdAt": value, "updatedAt": value}
        for i, value in enumerate(UNREADABLE_TIMES)
    ]
    records.append({"id": "noupdate", "content": "No updatedAt", "createdAt": "2026-02-30"})
    settings.memory_file.write_text(json.dumps(records), encoding="utf-8")

    exported = client.get("/memories/export").get_data()
    times = {r["id"]: (r["createdAt"], r["updatedAt"]) for r in json.loads(exported)}
    assert times == {
        **{r["id"]: (r["createdAt"], r["updatedAt"]) for r in records[:-1]},
        "noupdate": ("2026-02-30", "2026-02-30"),
    }

    settings.memory_file.write_text("[]", encoding="utf-8")
    preview = upload(client, exported)
    assert preview.status_code == 200 and "1970" not in text(preview)
    payload = re.search(r'name="payload" value="([^"]*)"', text(preview)).group(1)
    import html as htmlmod

    confirm = client.post(
        "/memories/import/confirm", htmx=True, data={"payload": htmlmod.unescape(payload)}
    )
    assert confirm.status_code == 200, text(confirm)
    imported = {r["id"]: r for r in on_disk(settings.memory_file)}
    assert {i: imported[i]["createdAt"] for i in times} == {i: t[0] for i, t in times.items()}
    assert {i: imported[i]["updatedAt"] for i in times} == {i: t[1] for i, t in times.items()}


def test_import_previews_then_applies(client, store, settings):
    same = store.add("Unchanged")
    changed = store.add("Will change")
    records = [
        same.to_dict(),
        {**changed.to_dict(), "content": "Changed by import"},
        {"id": "newone", "content": "Brand new", "category": "project"},
    ]
    preview = upload(client, json.dumps(records).encode())
    html = text(preview)
    assert preview.status_code == 200
    assert "<strong>1</strong> to add" in html and "<strong>1</strong> to update" in html
    assert "<strong>1</strong> already the same" in html
    assert "Changed by import" in html and "Will change" in html and "Brand new" in html
    assert len(on_disk(settings.memory_file)) == 2  # a preview writes nothing
    payload = re.search(r'name="payload" value="([^"]*)"', html).group(1)
    import html as htmlmod

    confirm = client.post(
        "/memories/import/confirm", htmx=True, data={"payload": htmlmod.unescape(payload)}
    )
    assert confirm.status_code == 200 and "1 added, 1 updated, 1 already the same" in text(confirm)
    assert {r["id"]: r["content"] for r in on_disk(settings.memory_file)} == {
        same.id: "Unchanged",
        changed.id: "Changed by import",
        "newone": "Brand new",
    }


@pytest.mark.parametrize(
    "payload, message",
    [
        (b"", "empty"),
        (b'[{"id": "a", "content": "x"},', "not valid JSON"),
        (b"\xff\xfe[]", "not valid UTF-8"),
        (b'{"id": "a"}', "JSON array"),
        (b'[{"id": "a", "content": ""}]', "cannot be empty"),
        (b'[{"id": "a", "content": "x", "category": "bogus"}]', "Unknown category"),
        (b"[" + b'"x",' * (3 * 1024 * 1024) + b'"x"]', "larger than"),
    ],
)
def test_bad_import_files_change_nothing(client, store, settings, payload, message):
    store.add("Safe")
    before = settings.memory_file.read_bytes()
    response = upload(client, payload)
    assert response.status_code == 422
    assert message in text(response) and 'class="field-error"' in text(response)
    assert settings.memory_file.read_bytes() == before


def test_import_that_would_overflow_is_refused_in_preview(tmp_path):
    client, settings = small_client(tmp_path, memory_max_items=2)
    records = [{"id": f"x{i}", "content": f"fact {i}"} for i in range(3)]
    html = text(upload(client, json.dumps(records).encode()))
    assert "more than the store can hold" in html and "Apply the import" not in html
    confirm = client.post(
        "/memories/import/confirm", htmx=True, data={"payload": json.dumps(records)}
    )
    assert confirm.status_code == 409 and on_disk(settings.memory_file) == []


def test_import_without_htmx_renders_a_page(client):
    response = upload(client, b"not json", htmx=False)
    assert response.status_code == 422 and "<html" in text(response)


# ------------------------------------------------------------------ CSRF
@pytest.mark.parametrize(
    "url, data",
    [
        ("/memories/", {"content": "sneaky"}),
        ("/memories/{id}", {"content": "sneaky", "expected_updated_at": "{version}"}),
        ("/memories/{id}/delete", {}),
        ("/memories/delete-many", {"ids": "{id}"}),
        ("/memories/restore", {"ref": "{id}"}),
        ("/memories/import/confirm", {"payload": '[{"id": "zz", "content": "sneaky"}]'}),
    ],
)
def test_state_changes_without_csrf_token_are_rejected(client, store, settings, url, data):
    memory = store.add("Protected")
    before = settings.memory_file.read_bytes()

    def fill(value: str) -> str:
        return value.replace("{id}", memory.id).replace("{version}", memory.version)

    data = {k: fill(v) for k, v in data.items()}
    response = client.post(fill(url), csrf=False, data=data)
    assert response.status_code == 400 and "expired" in text(response)
    assert settings.memory_file.read_bytes() == before
