"""Issue 12 in a real Chromium: nothing lost on the way, visible feedback, counts that agree.

Each test drives what a person does and checks what they see and what is on disk.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from webapp.stores import SkillDocumentStore

from .conftest import assert_accessible
from .test_skills_browser import SAMPLE, make_zip

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
