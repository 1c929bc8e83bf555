"""The Memories page in a real Chromium: what a person does, what they see, and what is on disk."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from tests.support.data import on_disk
from tests.support.web import assert_accessible, screenshot, wait_for_htmx

pytestmark = pytest.mark.browser


def is_focused(locator) -> bool:
    return locator.evaluate("el => el === document.activeElement")


def open_page(page, server):
    page.goto(server.url + "/memories/")
    page.wait_for_function("() => window.htmx !== undefined")


def row_of(page, memory_id: str):
    return page.locator(f"#memory-{memory_id}")


def clean(page, *expected_statuses: int) -> None:
    """No dialog, no script error, no console error but the HTTP statuses this journey expects."""
    assert page.watch.dialogs == []
    assert page.watch.page_errors == []
    expected = tuple(f"status of {code} " for code in expected_statuses)
    assert [
        m for m in page.watch.console_errors if not (expected and any(e in m for e in expected))
    ] == []


def test_add_search_edit_and_cancel(live_server, page):
    open_page(page, live_server)
    expect(page.get_by_text("Nothing remembered yet")).to_be_visible()
    assert_accessible(page, "on the empty memories page")

    content = page.get_by_label("What should the assistant remember?")
    page.get_by_role("button", name="Add memory").click()
    expect(page.locator("#add-content-error")).to_contain_text("cannot be empty")
    assert on_disk(live_server.settings.memory_file) == []

    content.fill("Drinks coffee black, no sugar")
    page.get_by_label("Category", exact=True).first.select_option("preference")
    page.get_by_role("button", name="Add memory").click()
    expect(page.locator("#results")).to_contain_text("Drinks coffee black, no sugar")
    expect(page.locator("#meter")).to_contain_text("1 / 100")
    page.get_by_label("What should the assistant remember?").fill("我喜歡喝咖啡，也喜歡烏龍茶")
    page.get_by_role("button", name="Add memory").click()
    expect(page.locator("#results")).to_contain_text("烏龍茶")
    records = on_disk(live_server.settings.memory_file)
    assert [(r["content"], r["category"]) for r in records] == [
        ("Drinks coffee black, no sugar", "preference"),
        ("我喜歡喝咖啡，也喜歡烏龍茶", "general"),
    ]
    assert_accessible(page, "on the memories page with data")

    search = page.get_by_role("searchbox", name="Search")
    search.press_sequentially("咖啡", delay=30)
    expect(page.locator("#results mark")).to_have_text(["咖啡"])
    expect(page.locator("#results")).not_to_contain_text("coffee black")
    search.fill("")
    search.press_sequentially("COFFEE")
    expect(page.locator("#results mark")).to_have_text(["coffee"])
    expect(page.locator("#results")).not_to_contain_text("烏龍茶")
    assert "q=COFFEE" in page.url
    # Straight from the search box to Edit: leaving the box must not re-run the search
    # and swap the row away while its edit form is on the way.
    found = row_of(page, records[0]["id"])
    found.get_by_role("button", name="Edit").click()
    expect(found.get_by_label("Memory text")).to_be_focused()
    found.get_by_label("Memory text").press("Escape")
    expect(found.get_by_role("button", name="Edit")).to_be_focused()
    search.fill("")
    search.press("Enter")
    expect(page.locator("#memory-rows tr")).to_have_count(2)

    first = records[0]["id"]
    row = row_of(page, first)
    row.get_by_role("button", name="Edit").click()
    editor = row.get_by_label("Memory text")
    expect(editor).to_be_focused()
    assert_accessible(page, "while editing a memory")
    editor.fill("Something I will throw away")
    editor.press("Escape")
    expect(row.get_by_role("button", name="Edit")).to_be_focused()
    expect(row).to_contain_text("Drinks coffee black, no sugar")
    # Throwing away a changed edit asks first (issue 12); the page fixture accepts.
    assert page.watch.dialogs == [
        "confirm: Discard your changes to this memory? They have not been saved."
    ]
    page.watch.dialogs.clear()

    row.get_by_role("button", name="Edit").click()
    row.get_by_role("button", name="Cancel").click()
    expect(row.get_by_role("button", name="Edit")).to_be_focused()

    row.get_by_role("button", name="Edit").click()
    row.get_by_label("Memory text").fill("Drinks coffee with oat milk")
    row.get_by_label("Category").select_option("workflow")
    row.get_by_role("button", name="Save").click()
    expect(row.locator("td.content")).to_have_text("Drinks coffee with oat milk")
    expect(row.get_by_role("button", name="Edit")).to_be_focused()
    saved = {r["id"]: r for r in on_disk(live_server.settings.memory_file)}[first]
    assert (saved["content"], saved["category"]) == ("Drinks coffee with oat milk", "workflow")
    clean(page, 422)


def test_delete_undo_and_bulk_delete(live_server, page):
    store = live_server.memories()
    ids = [store.add(text).id for text in ("Alpha fact", "Beta fact", "Gamma fact", "Delta fact")]
    open_page(page, live_server)

    row = row_of(page, ids[0])
    row.get_by_role("button", name="Delete").click()
    expect(row).to_contain_text("Deleted “Alpha fact”")
    undo = row.get_by_role("button", name="Undo")
    expect(undo).to_be_focused()
    expect(page.locator("#meter")).to_contain_text("3 / 100")
    assert ids[0] not in [r["id"] for r in on_disk(live_server.settings.memory_file)]
    undo.click()
    expect(row.get_by_role("button", name="Edit")).to_be_visible()
    expect(row).to_contain_text("Alpha fact")
    assert [
        r["id"] for r in on_disk(live_server.settings.memory_file)
    ] == ids  # back in its original place

    for memory_id in ids[1:3]:
        row_of(page, memory_id).get_by_role("checkbox").check()
    page.get_by_role("button", name="Delete selected").click()
    notice = page.locator("#results .notice")
    expect(notice).to_contain_text("Deleted 2 memories.")
    expect(page.locator("#memory-rows tr")).to_have_count(2)
    assert [r["id"] for r in on_disk(live_server.settings.memory_file)] == [ids[0], ids[3]]
    notice.get_by_role("button", name="Undo").click()
    expect(page.locator("#results .notice")).to_contain_text("Restored 2 memories.")
    expect(page.locator("#memory-rows tr")).to_have_count(4)
    assert sorted(r["id"] for r in on_disk(live_server.settings.memory_file)) == sorted(ids)

    page.locator("#select-all").check()
    page.get_by_role("button", name="Delete selected").click()
    expect(page.get_by_text("Nothing remembered yet")).to_be_visible()
    assert on_disk(live_server.settings.memory_file) == []
    clean(page)


def test_edit_after_a_change_elsewhere_shows_both_versions(live_server, page):
    store = live_server.memories()
    memory = store.add("Dentist on Monday at 9")
    open_page(page, live_server)
    row = row_of(page, memory.id)
    row.get_by_role("button", name="Edit").click()
    row.get_by_label("Memory text").fill("Dentist this Friday at 9")
    store.update(memory.id, "Dentist moved to Tuesday at 10")  # someone else, meanwhile
    row.get_by_role("button", name="Save").click()

    alert = row.get_by_role("alert")
    expect(alert).to_contain_text("Changed elsewhere")
    expect(row.locator("blockquote.mine")).to_have_text("Dentist this Friday at 9")
    expect(row.locator("blockquote.theirs")).to_have_text("Dentist moved to Tuesday at 10")
    assert (
        on_disk(live_server.settings.memory_file)[0]["content"] == "Dentist moved to Tuesday at 10"
    )

    row.get_by_role("button", name="Replace it with my version").click()
    # "this Friday" ends the fact after that Friday (shown in the edit form, then kept); a bare
    # "on Friday" typed in a form is read as a habit and sets no end (validity.stated_end).
    today = datetime.now(UTC).date()
    friday = today + timedelta(days=(4 - today.weekday()) % 7)
    expect(row.locator("td.content")).to_have_text(f"Dentist this Friday at 9 until {friday}")
    assert on_disk(live_server.settings.memory_file)[0]["content"] == "Dentist this Friday at 9"
    clean(page, 409)


def test_history_and_restore(live_server, page):
    store = live_server.memories()
    memory = store.add("Works on project Apollo", category="project")
    store.update(memory.id, "Works on project Zeus")
    open_page(page, live_server)
    row_of(page, memory.id).get_by_role("button", name="History").click()
    panel = page.locator("#history-panel")
    heading = panel.get_by_role("heading", level=2)
    expect(heading).to_be_focused()
    entries = panel.locator(".history-entry")
    expect(entries).to_have_count(2)
    expect(entries.first).to_contain_text("Changed by test")
    expect(entries.first.locator(".before")).to_contain_text("Works on project Apollo")
    expect(entries.first.locator(".after")).to_contain_text("Works on project Zeus")
    assert_accessible(page, "with a memory's history open")

    entries.first.get_by_role("button", name="Restore the version before this change").click()
    expect(panel).to_contain_text("Restored.")
    expect(row_of(page, memory.id)).to_contain_text("Works on project Apollo")
    assert on_disk(live_server.settings.memory_file)[0]["content"] == "Works on project Apollo"
    assert store.history(memory.id)[-1]["action"] == "restore"

    panel.get_by_role("button", name="Close history").click()
    expect(panel.locator("section")).to_have_count(0)
    expect(row_of(page, memory.id).get_by_role("button", name="History")).to_be_focused()
    clean(page)


def test_export_then_import_with_preview(live_server, page, tmp_path):
    store = live_server.memories()
    kept = store.add("Kept as is")
    changed = store.add("Old wording")
    open_page(page, live_server)
    with page.expect_download() as download_info:
        page.get_by_role("link", name="Export all memories as JSON").click()
    exported = json.loads(download_info.value.path().read_text(encoding="utf-8"))
    assert [r["id"] for r in exported] == [kept.id, changed.id]

    exported[1]["content"] = "New wording"
    exported.append({"id": "imported1", "content": "Imported fact 匯入", "category": "tool"})
    upload = tmp_path / "edited.json"
    upload.write_text(json.dumps(exported, ensure_ascii=False), encoding="utf-8")
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe not json")

    page.get_by_label("Import a JSON file exported from this page").set_input_files(str(bad))
    page.get_by_role("button", name="Preview import").click()
    expect(page.locator("#import-error")).to_contain_text("not valid UTF-8")
    page.get_by_label("Import a JSON file exported from this page").set_input_files(str(upload))
    page.get_by_role("button", name="Preview import").click()
    preview = page.locator(".import-preview")
    expect(preview).to_contain_text("1 to add · 1 to update · 1 already the same")
    expect(preview.locator("tr.import-update")).to_contain_text("Old wording")
    assert [r["content"] for r in on_disk(live_server.settings.memory_file)] == [
        "Kept as is",
        "Old wording",
    ]

    page.get_by_role("button", name="Apply the import").click()
    expect(page.locator("#import-panel")).to_contain_text("1 added, 1 updated, 1 already the same")
    expect(page.locator("#results")).to_contain_text("Imported fact 匯入")
    assert {r["id"]: r["content"] for r in on_disk(live_server.settings.memory_file)} == {
        kept.id: "Kept as is",
        changed.id: "New wording",
        "imported1": "Imported fact 匯入",
    }
    clean(page, 422)


def test_add_and_delete_work_without_javascript(live_server, browser):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(live_server.url + "/memories/")
        page.get_by_label("What should the assistant remember?").fill("Added without JavaScript")
        page.get_by_role("button", name="Add memory").click()
        expect(page.locator("#results")).to_contain_text("Added without JavaScript")
        assert [r["content"] for r in on_disk(live_server.settings.memory_file)] == [
            "Added without JavaScript"
        ]
        page.get_by_role("button", name="Delete", exact=True).click()
        expect(page.get_by_text("Deleted 1 memory.")).to_be_visible()
        assert on_disk(live_server.settings.memory_file) == []
        page.get_by_role("button", name="Undo").click()
        expect(page.locator("#results")).to_contain_text("Added without JavaScript")
        assert [r["content"] for r in on_disk(live_server.settings.memory_file)] == [
            "Added without JavaScript"
        ]
    finally:
        context.close()


SAMPLE = [
    ("Prefers concise answers with code examples first", "preference", "slack"),
    ("Main project: home-assistant add-on 'memory-curator', Python 3.11", "project", "cli"),
    ("使用繁體中文回覆家人相關的提醒", "preference", "slack"),
    ("Runs tests with pytest -n 2 before every commit", "workflow", "extractor"),
    ("Editor: Neovim with the ruff language server", "tool", None),
    ("Commit messages in the imperative mood, under 72 characters", "convention", "dashboard"),
    ("Lives in Taipei (UTC+8); schedule reminders in local time", "general", "schedule"),
]


@pytest.mark.parametrize("color_scheme", ["light", "dark"], indirect=True)
def test_screenshots(live_server, page, color_scheme):
    store = live_server.memories()
    for text, category, source in SAMPLE:
        store.add(text, category=category, source=source)
    open_page(page, live_server)
    page.get_by_role("searchbox", name="Search").press_sequentially("pre")
    expect(page.locator("#results mark").first).to_be_visible()
    page.get_by_role("searchbox", name="Search").fill("")
    page.get_by_role("searchbox", name="Search").press("Enter")
    expect(page.locator("#memory-rows tr")).to_have_count(len(SAMPLE))
    page.get_by_role("searchbox", name="Search").blur()
    screenshot(page, f"memories-{color_scheme}-desktop", doc_name=f"memories-{color_scheme}")
    page.set_viewport_size({"width": 360, "height": 800})
    screenshot(page, f"memories-{color_scheme}-360")
    assert_accessible(page, f"at 360 px in the {color_scheme} theme")
    clean(page)


def test_an_open_edit_survives_list_reloads_and_a_deletion_elsewhere(live_server, page):
    first = live_server.memories().add("Waters the plants on Sundays", category="workflow")
    open_page(page, live_server)
    row_of(page, first.id).get_by_role("button", name="Edit").click()
    box = row_of(page, first.id).get_by_label("Memory text")
    box.fill("Waters the plants on Sundays and Wednesdays")

    # Adding another memory reloads the list; the half-typed edit stays as it was.
    page.get_by_label("What should the assistant remember?").fill("Keeps basil on the balcony")
    page.get_by_role("button", name="Add memory").click()
    expect(page.locator("#results")).to_contain_text("Keeps basil on the balcony")
    expect(box).to_have_value("Waters the plants on Sundays and Wednesdays")

    # Deleted in another tab meanwhile: Save keeps the text and says why next to the field.
    live_server.memories().delete(first.id)
    row_of(page, first.id).get_by_role("button", name="Save").click()
    expect(row_of(page, first.id).locator(".field-error")).to_contain_text("deleted elsewhere")
    expect(box).to_have_value("Waters the plants on Sundays and Wednesdays")
    expect(box).to_be_focused()
    page.keyboard.press("Escape")
    # The text was never saved, so Escape asks before throwing it away (issue 12; accepted).
    assert page.watch.dialogs == [
        "confirm: Discard your changes to this memory? They have not been saved."
    ]
    page.watch.dialogs.clear()
    row_of(page, first.id).get_by_role("button", name="Undo").click()
    expect(row_of(page, first.id).get_by_role("button", name="Edit")).to_be_visible()
    expect(row_of(page, first.id)).to_contain_text("Waters the plants on Sundays")
    assert first.id in [r["id"] for r in on_disk(live_server.settings.memory_file)]

    # Paging: the address names each filter once, so it can be copied and reloaded as is.
    live_server.memories().import_records(
        [{"id": f"p{i:03d}", "content": f"Paged fact {i}"} for i in range(55)]
    )
    open_page(page, live_server)
    page.get_by_role("link", name="Next →").click()
    expect(page.locator("#results-summary")).to_contain_text("Showing 51–")
    query = page.url.split("?", 1)[1].split("&")
    assert sorted(query) == sorted(set(query)) and query.count("page=2") == 1, page.url
    assert not any(part.startswith("page=") and part != "page=2" for part in query), page.url
    page.reload()
    expect(page.locator("#results-summary")).to_contain_text("Showing 51–")
    clean(page, 409)


def test_the_same_fact_in_the_other_script_is_refused_with_a_link_to_edit_it(live_server, page):
    kept = live_server.memories().add("用戶喜歡喝無糖綠茶。", category="preference")
    open_page(page, live_server)
    page.get_by_label("What should the assistant remember?").fill("用户喜欢喝无糖绿茶")
    page.get_by_role("button", name="Add memory").click()
    error = page.locator("#add-content-error")
    expect(error).to_contain_text("Already remembered: “用戶喜歡喝無糖綠茶。”")
    assert [r["content"] for r in on_disk(live_server.settings.memory_file)] == [
        "用戶喜歡喝無糖綠茶。"
    ]
    # The message leads to that memory, where it can be changed.
    error.get_by_role("link", name="Edit that one").click()
    expect(page).to_have_url(f"{live_server.url}/memories/{kept.id}/edit")
    text = page.get_by_label("Memory text")
    expect(text).to_have_value("用戶喜歡喝無糖綠茶。")
    text.fill("用戶喜歡喝無糖綠茶，不加冰。")
    # Changed elsewhere meanwhile: the page shows both versions, and mine can still win.
    live_server.memories().update(kept.id, "用戶喜歡喝綠茶。")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".conflict-box")).to_contain_text("用戶喜歡喝綠茶。")
    page.get_by_role("button", name="Replace it with my version").click()
    expect(page).to_have_url(f"{live_server.url}/memories/")
    expect(row_of(page, kept.id)).to_contain_text("用戶喜歡喝無糖綠茶，不加冰。")
    assert [r["content"] for r in on_disk(live_server.settings.memory_file)] == [
        "用戶喜歡喝無糖綠茶，不加冰。"
    ]
    clean(page, 409)


def test_the_date_column_is_the_date_the_list_is_sorted_by(live_server, page):
    live_server.settings.memory_file.parent.mkdir(parents=True, exist_ok=True)
    live_server.settings.memory_file.write_text(
        json.dumps(
            [
                {
                    "id": "old1",
                    "content": "Waters the ferns on Mondays",
                    "createdAt": "2025-03-01T09:00:00.000Z",
                    "updatedAt": "2026-02-01T18:30:00.000Z",
                },
                {
                    "id": "new1",
                    "content": "Keeps basil on the balcony",
                    "createdAt": "2025-06-01T10:00:00.000Z",
                    "updatedAt": "2025-06-01T10:00:00.000Z",
                },
            ]
        ),
        encoding="utf-8",
    )
    open_page(page, live_server)
    header = page.locator(".memories-table thead th").nth(4)
    date = row_of(page, "old1").locator("td").nth(4)
    # Sorted by creation (the default): the column says when each memory was made.
    expect(page.get_by_label("Sort")).to_have_value("newest")
    expect(header).to_have_text("Created")
    expect(date).to_have_text("2025-03-01 09:00 UTC")
    expect(date).to_have_attribute("data-label", "Created")
    # A row drawn again on its own (Cancel of an edit) keeps to the list's column.
    row_of(page, "old1").get_by_role("button", name="Edit").click()
    row_of(page, "old1").get_by_role("button", name="Cancel").click()
    expect(row_of(page, "old1").get_by_role("button", name="Edit")).to_be_visible()
    wait_for_htmx(page)  # the row drawn again must land before the sort changes, not after
    expect(date).to_have_text("2025-03-01 09:00 UTC")

    page.get_by_label("Sort").select_option("updated")
    wait_for_htmx(page)
    expect(header).to_have_text("Last updated")
    expect(date).to_have_text("2026-02-01 18:30 UTC")
    expect(date).to_have_attribute("data-label", "Last updated")
    row_of(page, "old1").get_by_role("button", name="Edit").click()
    row_of(page, "old1").get_by_role("button", name="Cancel").click()
    expect(date).to_have_text("2026-02-01 18:30 UTC")
    clean(page)


def test_added_and_already_remembered_go_once_the_person_does_something_else(live_server, page):
    basil = live_server.memories().add("Keeps basil on the balcony")
    ferns = live_server.memories().add("Waters the ferns on Mondays")
    open_page(page, live_server)
    box = page.get_by_label("What should the assistant remember?")
    box.fill("Prefers tea")
    page.get_by_role("button", name="Add memory").click()
    added = page.locator("#add-form").get_by_role("status")
    expect(added).to_contain_text("Added “Prefers tea”")
    expect(page.locator("#results")).to_contain_text("Prefers tea")  # the list reloaded itself
    wait_for_htmx(page)
    expect(added).to_contain_text("Added “Prefers tea”")  # …and the message is still there
    # Searching is something else: the message about the last add goes.
    page.get_by_role("searchbox", name="Search").fill("basil")
    expect(page.locator("#memory-rows tr")).to_have_count(1)
    expect(added).to_have_count(0)

    box.fill("prefers TEA.")
    page.get_by_role("button", name="Add memory").click()
    error = page.locator("#add-content-error")
    expect(error).to_contain_text("Already remembered: “Prefers tea”")
    expect(box).to_have_attribute("aria-invalid", "true")
    # Deleting another memory is something else too; what was typed stays.
    row_of(page, basil.id).get_by_role("button", name="Delete").click()
    expect(row_of(page, basil.id)).to_contain_text("Deleted “Keeps basil on the balcony”")
    expect(error).to_have_count(0)
    expect(box).to_have_value("prefers TEA.")
    expect(box).not_to_have_attribute("aria-invalid", "true")
    assert_accessible(page, "after the message about the last add went")
    assert [r["content"] for r in on_disk(live_server.settings.memory_file)] == [
        ferns.content,
        "Prefers tea",
    ]
    clean(page, 409)


def test_a_search_for_wifi_finds_wi_fi_however_it_is_written(live_server, page):
    # Issue 36: "wifi" did not find "Wi-Fi".
    for text in (
        "The guest Wi-Fi is called Harbour",
        "The Wi Fi router is in the hallway",
        "家裡的無線網路叫 Lighthouse",
        "Prefers the hallway lights dim",
    ):
        live_server.memories().add(text)
    open_page(page, live_server)
    page.get_by_role("searchbox", name="Search").press_sequentially("wifi", delay=30)
    expect(page.locator("#results mark")).to_have_count(3)
    expect(page.locator("#results")).not_to_contain_text("hallway lights")
    marks = page.locator("#results mark").all_text_contents()
    assert sorted(marks) == sorted(["Wi-Fi", "Wi Fi", "無線網路"])
    clean(page)
