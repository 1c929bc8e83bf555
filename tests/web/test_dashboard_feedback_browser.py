"""Issue 12 in a real Chromium: nothing lost on the way, visible feedback, counts that agree.

Each test drives what a person does and checks what they see and what is on disk.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.skills import SAMPLE, make_zip
from tests.support.web import assert_accessible, start_server, stop_server
from webapp.extraction import MemoryExtractor, ReconcileAction
from webapp.prompts import compose_prompt, compose_prompt_sections
from webapp.stores import ReviewQueue, SkillDocumentStore
from webapp.stores.skills import NEEDS_DESCRIPTION

pytestmark = pytest.mark.browser


def skill_store(server) -> SkillDocumentStore:
    return SkillDocumentStore(server.settings.skills_dir, lock_timeout=5)


# ----------------------------------------------------------------- 1. skill re-import
@pytest.mark.parametrize("color_scheme", ["light", "dark"], indirect=True)
def test_skill_reimport_previews_the_overwrite_and_the_edit_can_be_restored(
    live_server, page, tmp_path, color_scheme
):
    folder = Path(shutil.copytree(SAMPLE, tmp_path / "poem-writer"))
    archive = make_zip(folder, tmp_path / "poem-writer.zip")
    page.goto(live_server.url + "/skills/")
    page.get_by_label("Import a skill folder (.zip)").set_input_files(str(archive))
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.locator("#skills-notice")).to_contain_text("3 added")

    # Edit the skill in the dashboard.
    skill = next(d for d in skill_store(live_server).list() if d.type == "skill")
    page.goto(live_server.url + f"/skills/{skill.id}/edit")
    content = page.get_by_label("Content (Markdown)")
    edited = content.input_value() + "\n5. Always sign the poem with 「小詩」."
    content.fill(edited)
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Saved.")).to_be_visible()
    assert skill_store(live_server).get(skill.id).content == edited

    # Re-import the original zip: a preview says what changes and that the skill was edited here.
    page.goto(live_server.url + "/skills/")
    page.get_by_label("Import a skill folder (.zip)").set_input_files(str(archive))
    page.get_by_role("button", name="Import", exact=True).click()
    preview = page.locator(".import-preview")
    expect(preview).to_contain_text("Nothing is saved yet")
    expect(preview).to_contain_text("0 to add · 1 to update · 2 already the same")
    expect(preview.get_by_role("alert")).to_contain_text("Edited here since the last import")
    expect(preview.get_by_role("alert")).to_contain_text("poem-writer")
    expect(page.get_by_role("heading", name="Preview of the import of poem-writer")).to_be_focused()
    preview.get_by_text("What changes").click()
    expect(preview.locator(".diff del")).to_contain_text("小詩")
    assert skill_store(live_server).get(skill.id).content == edited  # nothing written yet
    assert_accessible(page, f"on the skill import preview ({color_scheme})")

    # Cancel leaves everything as it was; the preview again, then apply.
    preview.get_by_role("link", name="Cancel").click()
    expect(page.locator(".import-preview")).to_have_count(0)
    assert skill_store(live_server).get(skill.id).content == edited
    page.get_by_label("Import a skill folder (.zip)").set_input_files(str(archive))
    page.get_by_role("button", name="Import", exact=True).click()
    page.get_by_role("button", name="Apply the import").click()
    expect(page.locator("#skills-notice")).to_contain_text("0 added, 1 updated, 2 unchanged")
    expect(page.locator("#skills-notice")).to_contain_text("kept in each document's history")
    assert "小詩" not in skill_store(live_server).get(skill.id).content

    # The overwritten version is in the document's history; Restore brings it back.
    page.goto(live_server.url + f"/skills/{skill.id}")
    page.get_by_role("link", name="History").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("History of poem-writer")
    entries = page.locator(".history-entry")
    expect(entries.first).to_contain_text("Imported")
    assert_accessible(page, f"on a skill document's history ({color_scheme})")
    entries.first.get_by_role("button", name="Restore this version").click()
    expect(page.locator(".banner-ok")).to_contain_text("Restored the earlier version")
    assert skill_store(live_server).get(skill.id).content == edited
    expect(page.locator(".history-entry").first).to_contain_text("Restored an earlier version")
    assert page.watch.page_errors == []


# ----------------------------------------------------------------- 4. review feedback + undo
def queue_of(server) -> ReviewQueue:
    return ReviewQueue(server.settings.review_file, server.memories(), lock_timeout=5)


def propose(server, *texts: str) -> list:
    extractor = MemoryExtractor(server.memories(), review_queue=queue_of(server), mode="manual")
    facts = [ReconcileAction("add", None, text, "preference") for text in texts]
    return extractor.submit(facts, conversation_id="cli:session-1", evidence="said so").queued


def card(page, text):
    return page.locator("article.review-item", has_text=text)


def test_review_decisions_show_what_happened_with_undo(live_server, page):
    propose(live_server, "User drinks oolong tea", "User cycles to work", "User reads sci-fi")
    page.goto(live_server.url + "/review/")
    notice = page.locator("#review-notice")

    card(page, "oolong").get_by_role("button", name="Approve").click()
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("Approved “User drinks oolong tea”")
    expect(notice).to_have_attribute("role", "status")
    assert [m.content for m in live_server.memories().get_all()] == ["User drinks oolong tea"]
    notice.get_by_role("button", name="Undo").click()
    expect(notice).to_contain_text("Undone: 1 fact pending again")
    expect(card(page, "oolong")).to_be_visible()
    assert live_server.memories().get_all() == []

    card(page, "cycles").get_by_role("button", name="Reject").click()
    expect(notice).to_contain_text("Rejected “User cycles to work”")
    notice.get_by_role("button", name="Undo").click()
    expect(card(page, "cycles")).to_be_visible()

    page.locator("#review-select-all").check()
    page.get_by_role("button", name="Approve selected").click()
    expect(notice).to_contain_text("Approved 3 facts.")
    assert len(live_server.memories().get_all()) == 3
    assert_accessible(page, "with the approve notice and its Undo")
    notice.get_by_role("button", name="Undo").click()
    expect(notice).to_contain_text("Undone: 3 facts pending again")
    expect(page.locator("article.review-item")).to_have_count(3)
    assert live_server.memories().get_all() == []

    # Undo from the Decided tab says so too.
    card(page, "sci-fi").get_by_role("button", name="Reject").click()
    expect(notice).to_contain_text("Rejected “User reads sci-fi”")
    page.get_by_role("link", name="Decided").click()
    expect(page.get_by_role("heading", name="Decided facts")).to_be_visible()
    page.locator("article.review-item", has_text="sci-fi").get_by_role(
        "button", name="Undo"
    ).click()
    expect(notice).to_contain_text("Undone, pending again: “User reads sci-fi”.")
    assert page.watch.page_errors == []


# ----------------------------------------------------------------- 5. too long for one memory
def test_approving_an_edited_fact_over_the_per_memory_limit_says_so(tmp_path, page):
    server = start_server(tmp_path / "data", env_extra={"MEMORY_MAX_CHARS": "40"})
    try:
        propose(server, "User likes tea")
        page.goto(server.url + "/review/")
        card(page, "likes tea").get_by_role("button", name="Edit").click()
        long_text = "User likes tea, especially oolong from Alishan in winter"  # 56 characters
        box = page.get_by_label("Content to remember")
        box.fill(long_text)
        page.get_by_role("button", name="Approve edited").click()
        error = page.locator(".review-edit .field-error")
        expect(error).to_have_text(
            "This is 56 characters; one memory can hold at most 40 (the whole store's limit). "
            "Shorten it."
        )
        expect(page.locator("#review-panel")).not_to_contain_text("Memory is full")
        expect(page.get_by_label("Content to remember")).to_have_value(long_text)
        assert server.memories().get_all() == []
        # The Memories page says the very same for the same text (in another tab: the refused
        # edit still holds unsaved text, so leaving this page would ask first).
        page = page.context.new_page()
        page.goto(server.url + "/memories/")
        page.get_by_label("What should the assistant remember?").fill(long_text)
        page.get_by_role("button", name="Add memory").click()
        expect(page.locator("#add-content-error")).to_have_text(
            "This is 56 characters; one memory can hold at most 40 (the whole store's limit). "
            "Shorten it."
        )
    finally:
        stop_server(server)


# ----------------------------------------------------------------- 3. ask before losing edits
@pytest.fixture
def answering_page(browser):
    """A page whose dialogs are answered from ``page.answers`` (True accepts), in order."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.answers, page.dialogs = [], []

    def on_dialog(dialog):
        page.dialogs.append(dialog.type)
        if page.answers and page.answers.pop(0):
            dialog.accept()
        else:
            dialog.dismiss()

    page.on("dialog", on_dialog)
    page.set_default_timeout(10_000)
    yield page
    context.close()


def test_leaving_the_skill_editor_with_changes_asks_first(live_server, answering_page, tmp_path):
    page = answering_page
    folder = Path(shutil.copytree(SAMPLE, tmp_path / "poem-writer"))
    skill_store(live_server).import_skill(folder)
    skill = next(d for d in skill_store(live_server).list() if d.type == "skill")

    # Unchanged: leaving asks nothing.
    page.goto(live_server.url + f"/skills/{skill.id}/edit")
    page.get_by_role("link", name="Memories").click()
    expect(page).to_have_url(live_server.url + "/memories/")
    assert page.dialogs == []

    # Changed: leaving through the navigation asks; staying keeps the text.
    page.goto(live_server.url + f"/skills/{skill.id}/edit")
    content = page.get_by_label("Content (Markdown)")
    content.click()
    page.keyboard.press("End")
    content.press_sequentially(" More.")
    page.answers.append(False)
    page.get_by_role("link", name="Memories").click(no_wait_after=True)
    expect(content).to_have_value(skill.content + " More.")
    assert page.dialogs == ["beforeunload"]
    expect(page).to_have_url(live_server.url + f"/skills/{skill.id}/edit")
    # The Cancel link asks too; leaving when the person says so.
    page.answers.append(True)
    page.get_by_role("link", name="Cancel").click()
    expect(page).to_have_url(live_server.url + f"/skills/{skill.id}")
    assert page.dialogs == ["beforeunload", "beforeunload"]
    assert skill_store(live_server).get(skill.id).content == skill.content

    # Saving is not leaving: no question.
    page.goto(live_server.url + f"/skills/{skill.id}/edit")
    page.get_by_label("Content (Markdown)").press_sequentially(" Saved.")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Saved.", exact=True)).to_be_visible()
    assert page.dialogs == ["beforeunload", "beforeunload"]


def test_cancelling_a_changed_memory_edit_asks_first(live_server, answering_page):
    page = answering_page
    memory = live_server.memories().add("Takes the 8:15 train")
    page.goto(live_server.url + "/memories/")
    row = page.locator(f"#memory-{memory.id}")

    # Unchanged: Cancel just closes the form.
    row.get_by_role("button", name="Edit").click()
    row.get_by_role("button", name="Cancel").click()
    expect(row.get_by_role("button", name="Edit")).to_be_visible()
    assert page.dialogs == []

    row.get_by_role("button", name="Edit").click()
    text = row.get_by_label("Memory text")
    text.fill("Takes the 8:45 train since March")
    page.answers.append(False)
    row.get_by_role("button", name="Cancel").click()
    expect(text).to_have_value("Takes the 8:45 train since March")
    assert page.dialogs == ["confirm"]
    page.answers.append(False)
    text.press("Escape")  # Esc cancels too, and asks the same
    expect(text).to_have_value("Takes the 8:45 train since March")
    assert page.dialogs == ["confirm", "confirm"]
    page.answers.append(True)
    row.get_by_role("button", name="Cancel").click()
    expect(row).to_contain_text("Takes the 8:15 train")
    expect(row.get_by_label("Memory text")).to_have_count(0)
    assert [m.content for m in live_server.memories().get_all()] == ["Takes the 8:15 train"]


# ----------------------------------------------------------------- 7. counts that agree
def test_counts_agree_after_delete_and_both_sorts_are_labelled(live_server, page, tmp_path):
    store = live_server.memories()
    ids = [store.add(f"Fact number {i}").id for i in range(12)]
    page.goto(live_server.url + "/memories/")
    summary = page.locator("#results-summary")
    expect(summary).to_contain_text("Showing 1–12 of 12 memories")
    page.locator(f"#memory-{ids[3]}").get_by_role("button", name="Delete").click()
    expect(page.locator("#meter")).to_contain_text("11 / 100")
    expect(summary).to_contain_text("Showing 1–11 of 11 memories")
    page.locator(f"#memory-{ids[3]}").get_by_role("button", name="Undo").click()
    expect(summary).to_contain_text("Showing 1–12 of 12 memories")
    expect(page.locator("#meter")).to_contain_text("12 / 100")

    # Both orders are offered and say what they sort by.
    sort = page.get_by_label("Sort")
    options = sort.locator("option").all_inner_texts()
    assert "Newest first (created)" in options and "Recently updated" in options
    store.update(ids[0], "Fact number 0, corrected")  # the oldest one, changed last
    sort.select_option(label="Recently updated")
    expect(page.locator("#memory-rows tr").first).to_contain_text("Fact number 0, corrected")
    sort.select_option(label="Newest first (created)")
    expect(page.locator("#memory-rows tr").first).to_contain_text("Fact number 11")

    # The Skills tab counts skills, not documents.
    folder = Path(shutil.copytree(SAMPLE, tmp_path / "poem-writer"))
    skill_store(live_server).import_skill(folder)
    skill_store(live_server).save(
        {"type": "skill", "skill": "tea-timer", "skillDescription": "Times tea.", "content": "Go."}
    )
    page.goto(live_server.url + "/skills/")
    tab = page.get_by_role("link", name="Skills (2)")
    expect(tab).to_contain_text("4 documents")
    expect(page.locator("section.skill-group")).to_have_count(2)


# ----------------------------------------------------------------- 14. prompt, line for line
def test_prompt_preview_shows_the_lines_sent_and_a_context_window_gauge(tmp_path, page):
    server = start_server(tmp_path / "data", env_extra={"MEMORY_CONTEXT_WINDOW": "40"})
    try:
        memories = server.memories()
        memories.add("Prefers metric units")
        memories.add("住在台北")
        thread = "cli:session-1"
        server.conversations().add_exchange(thread, "Weather?", "Light rain after 15:00.")
        page.goto(server.url + "/prompt/")
        page.get_by_label("Conversation").select_option(thread)
        page.get_by_label("Next message").fill("And tomorrow?")
        history = server.conversations().get_history(thread)
        sent = compose_prompt(memories.get_all(), history, "And tomorrow?")
        expect(page.locator("#prompt-text")).to_contain_text("And tomorrow?")
        # What a person sees (and selects) is the text sent, line for line: no extra blank
        # line between the sections.
        shown = page.locator("#prompt-text").inner_text()
        assert shown.splitlines() == sent.splitlines()
        lines = page.evaluate(
            "() => { const pre = document.getElementById('prompt-text');"
            " return Math.round(pre.getBoundingClientRect().height"
            " / parseFloat(getComputedStyle(pre).lineHeight)); }"
        )
        padding_lines = 1  # the box's own padding (.5rem top and bottom) is about one line
        assert lines - padding_lines <= len(sent.splitlines())

        tokens = compose_prompt_sections(memories.get_all(), history, "And tomorrow?").tokens
        gauge = page.locator(".context-gauge")
        expect(gauge).to_contain_text(f"≈{tokens} of 40 tokens")
        expect(page.locator("#context-meter")).to_have_attribute("max", "40")
        expect(page.get_by_label("Context window")).to_be_visible()
        assert tokens > 40
        expect(gauge).to_contain_text("longer than the context window")
        assert_accessible(page, "on the prompt page with the context gauge")
    finally:
        stop_server(server)


# ----------------------------------------------------------------- 6. same skill rules everywhere
def test_a_skill_without_description_is_refused_by_the_form_and_the_import_alike(
    live_server, page, tmp_path
):
    page.goto(live_server.url + "/skills/new")
    page.get_by_label("Skill name").fill("tea-timer")
    page.get_by_label("Content (Markdown)").fill("Steep green tea for two minutes.")
    page.get_by_role("button", name="Create").click()
    form_error = page.locator("#field-description-error")
    expect(form_error).to_have_text(NEEDS_DESCRIPTION)
    expect(page.get_by_label("Description")).to_be_focused()
    expect(page.get_by_label("Content (Markdown)")).to_have_value(
        "Steep green tea for two minutes."
    )
    assert skill_store(live_server).list() == []

    folder = tmp_path / "tea-timer"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: tea-timer\n---\nSteep for two minutes.\n")
    archive = make_zip(folder, tmp_path / "tea-timer.zip")
    page = page.context.new_page()  # the refused form still holds unsaved text: leave it open
    page.goto(live_server.url + "/skills/")
    page.get_by_label("Import a skill folder (.zip)").set_input_files(str(archive))
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.locator("#skill-zip-error")).to_have_text(
        f"Nothing was imported: SKILL.md: {NEEDS_DESCRIPTION}"
    )
    assert skill_store(live_server).list() == []

    # With a description both accept it.
    page.goto(live_server.url + "/skills/new")
    page.get_by_label("Skill name").fill("tea-timer")
    page.get_by_label("Description").fill("Times tea.")
    page.get_by_label("Content (Markdown)").fill("Steep green tea for two minutes.")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_text("Saved.", exact=True)).to_be_visible()
    assert [d.skill_description for d in skill_store(live_server).list()] == ["Times tea."]


# ----------------------------------------------------------------- 15. polish
def test_memories_polish_empty_bar_full_stop_import_source_and_live_count(tmp_path, page):
    server = start_server(tmp_path / "data", env_extra={"MEMORY_MAX_CHARS": "40"})
    try:
        page.goto(server.url + "/memories/")
        expect(page.get_by_text("Nothing remembered yet")).to_be_visible()
        # Nothing to search, sort or delete yet: the bar is not shown.
        expect(page.locator("#filters")).to_be_hidden()
        expect(page.get_by_role("button", name="Delete selected")).to_be_hidden()

        # A live count against the per-memory and total limits while typing.
        box = page.get_by_label("What should the assistant remember?")
        count = page.locator("#add-content-count")
        expect(count).to_have_text("0 characters · 40 of 40 free in the store")
        box.press_sequentially("我喝咖啡不加糖。")
        expect(count).to_have_text("8 characters · 40 of 40 free in the store")
        page.get_by_role("button", name="Add memory").click()
        # No doubled full stop after Chinese text.
        expect(page.locator("#add-form .ok-text")).to_have_text("Added “我喝咖啡不加糖。”")
        expect(page.locator("#filters")).to_be_visible()  # the bar is back with the first memory
        expect(count).to_have_text("0 characters · 32 of 40 free in the store")
        box.press_sequentially("Prefers trains over planes, always")
        expect(count).to_contain_text("34 characters")
        expect(count).to_contain_text("— more than the store has free")
        box.fill("x" * 41)
        expect(count).to_contain_text("— longer than the whole store may hold")
        box.fill("")
        [memory] = server.memories().get_all()
        row = page.locator(f"#memory-{memory.id}")
        row.get_by_role("button", name="Delete").click()
        expect(row).to_have_text(
            "Deleted “我喝咖啡不加糖。” Undo Don't propose this again Delete forever"
        )

        # Import with no file chosen says so; an imported memory shows where it came from.
        page.get_by_role("button", name="Preview import").click()
        expect(page.locator("#import-error")).to_have_text(
            "No file was chosen: choose a JSON file exported from this page."
        )
        export = tmp_path / "export.json"
        export.write_text('[{"id": "t1", "content": "Likes jasmine tea"}]', encoding="utf-8")
        page.get_by_label("Import a JSON file exported from this page").set_input_files(str(export))
        page.get_by_role("button", name="Preview import").click()
        page.get_by_role("button", name="Apply the import").click()
        imported = page.locator("#memory-t1")
        # The Source column says where it came from (issue 11's provenance names the file).
        expect(imported.locator("td[data-label='Source']")).to_have_text(
            "Imported from export.json"
        )
        assert server.memories().get("t1").source == "import"
        assert_accessible(page, "with the live count and an imported memory")
    finally:
        stop_server(server)


# ----------------------------------------------------------------- axe on the new states
def assert_targets_big_enough(page, selectors: list[str]) -> None:
    """axe-core's WCAG 2.2 target-size rule over the new controls only."""
    from axe_playwright_python.sync_playwright import Axe

    present = [s for s in selectors if page.locator(s).count()]
    assert present, "none of the new controls is on the page"
    results = Axe().run(
        page,
        context={"include": [[s] for s in present]},
        options={"runOnly": {"type": "rule", "values": ["target-size"]}},
    )
    bad = results.response["violations"]
    assert not bad, [n["target"] for v in bad for n in v["nodes"]]


@pytest.mark.parametrize("color_scheme", ["light", "dark"], indirect=True)
def test_the_new_feedback_passes_axe_in_both_themes(live_server, page, color_scheme):
    live_server.memories().add("Prefers metric units")
    propose(live_server, "User drinks oolong tea")

    # The offline banner (a proxy's 502), then the "answers again" one.
    page.goto(live_server.url + "/memories/")
    page.route("**/memories/", lambda route: route.fulfill(status=502, body="Bad Gateway"))
    page.route("**/healthz", lambda route: route.abort())  # the banner stays while axe looks
    page.get_by_label("What should the assistant remember?").fill("Has a cat")
    page.get_by_role("button", name="Add memory").click()
    expect(page.locator("#offline-banner")).to_be_visible()
    assert_accessible(page, f"with the offline banner ({color_scheme})")
    assert_targets_big_enough(page, ["#offline-banner"])
    page.unroute("**/memories/")
    page.unroute("**/healthz")
    expect(page.locator("#online-again")).to_be_visible(timeout=15_000)
    assert_accessible(page, f"with the answers-again banner ({color_scheme})")
    assert_targets_big_enough(page, ["#online-again"])
    page.get_by_label("What should the assistant remember?").fill("Has a cat named Mochi")
    expect(page.locator("#add-content-count")).to_contain_text("21 characters")
    assert_accessible(page, f"with the live character count ({color_scheme})")

    # The Review notice with Undo.
    page.goto(live_server.url + "/review/")
    card(page, "oolong").get_by_role("button", name="Approve").click()
    expect(page.locator("#review-notice")).to_contain_text("Approved")
    assert_accessible(page, f"with the review notice ({color_scheme})")
    assert_targets_big_enough(page, ["#review-notice"])

    # The prompt page's context gauge.
    page.goto(live_server.url + "/prompt/")
    expect(page.locator(".context-gauge")).to_contain_text("of 200,000 tokens")
    assert_accessible(page, f"with the context window gauge ({color_scheme})")
    assert page.watch.page_errors == []
