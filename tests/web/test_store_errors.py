"""Store errors on the dashboard: a busy lock, a full disk, a damaged file each give a banner
that says what happened and what to do, change nothing, and never replace what was typed."""

from __future__ import annotations

import errno
import multiprocessing
import os
import time

import filelock
import pytest
from playwright.sync_api import expect

from tests.support.data import make_settings
from tests.support.web import CsrfClient, start_server, stop_server
from webapp import create_app
from webapp.stores import MemoryStore


@pytest.fixture
def quick(tmp_path):
    """A client whose stores give up on a held lock after one second."""
    settings = make_settings(tmp_path, lock_timeout=1)
    app = create_app(settings)
    app.config.update(TESTING=True)
    store = MemoryStore.from_settings(settings, actor="other")
    return CsrfClient(app.test_client()), settings, store


def test_a_busy_lock_gives_a_banner_and_changes_nothing(quick):
    client, settings, store = quick
    memory = store.add("Stays as it is")
    before = settings.memory_file.read_bytes()
    with filelock.FileLock(str(settings.memory_file) + ".lock"):
        response = client.post(
            f"/memories/{memory.id}",
            htmx=True,
            data={
                "content": "Typed while another program writes",
                "category": "general",
                "expected_updated_at": memory.version,
            },
        )
    assert response.status_code == 503
    assert response.headers["HX-Retarget"] == "#banner"
    html = response.get_data(as_text=True)
    assert "The store is busy" in html and "try again" in html
    assert "<tr" not in html  # the edit form in the page is left as the person typed it
    assert settings.memory_file.read_bytes() == before


def test_a_full_disk_gives_a_banner_and_changes_nothing(quick, monkeypatch):
    client, settings, store = quick
    store.add("Already remembered")
    before = settings.memory_file.read_bytes()

    def disk_full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("webapp.stores.atomic.os.fsync", disk_full)
    response = client.post(
        "/memories/", htmx=True, data={"content": "One more", "category": "general"}
    )
    monkeypatch.undo()
    assert response.status_code == 507
    assert response.headers["HX-Retarget"] == "#banner"
    html = response.get_data(as_text=True)
    assert "could not be written" in html and "free disk space" in html
    assert "No space left on device" in html and "memories.json" in html
    assert settings.memory_file.read_bytes() == before
    # No temp file is left behind. The similarity index may be writing its key at this very
    # moment in its own thread (a temp file for an instant): left behind means still there
    # after that thread is done.
    deadline = time.monotonic() + 10
    while True:
        left = [p.name for p in settings.memory_file.parent.iterdir() if p.name.endswith(".tmp")]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert left == []


@pytest.mark.parametrize("page", ["/memories/", "/prompt/", "/review/"])
def test_a_damaged_memory_file_is_explained_on_every_page_that_reads_it(client, settings, page):
    settings.memory_file.parent.mkdir(parents=True, exist_ok=True)
    damaged = b'[{"id": "a", "content": "half'
    settings.memory_file.write_bytes(damaged)
    response = client.get(page)
    html = response.get_data(as_text=True)
    assert response.status_code in (200, 503)
    assert "damaged" in html and "memory-curator repair" in html
    assert "Traceback" not in html
    assert settings.memory_file.read_bytes() == damaged


def _hold_lock(path: str, locked, release) -> None:
    with filelock.FileLock(path):
        locked.set()
        release.wait(30)


@pytest.mark.browser
def test_an_edit_saved_while_another_process_holds_the_lock_is_not_lost(tmp_path, page):
    server = start_server(tmp_path / "data", env_extra={"MEMORY_LOCK_TIMEOUT": "1"})
    try:
        memory = server.memories().add("Bedroom at 22°C at night")
        page.goto(server.url + "/memories/")
        row = page.locator(f"#memory-{memory.id}")
        row.get_by_role("button", name="Edit").click()
        row.get_by_label("Memory text").fill("Bedroom at 24°C at night")

        context = multiprocessing.get_context("fork")
        locked, release = context.Event(), context.Event()
        holder = context.Process(
            target=_hold_lock, args=(str(server.settings.memory_file) + ".lock", locked, release)
        )
        holder.start()
        try:
            assert locked.wait(10)
            row.get_by_role("button", name="Save").click()
            banner = page.locator("#banner")
            expect(banner).to_contain_text("The store is busy")
            expect(row.get_by_label("Memory text")).to_have_value("Bedroom at 24°C at night")
            assert server.memories().get(memory.id).content == "Bedroom at 22°C at night"
        finally:
            release.set()
            holder.join(10)

        row.get_by_role("button", name="Save").click()
        expect(row.locator("td.content")).to_have_text("Bedroom at 24°C at night")
        assert server.memories().get(memory.id).content == "Bedroom at 24°C at night"
        assert page.watch.dialogs == [] and page.watch.page_errors == []
    finally:
        stop_server(server)


def test_records_set_aside_are_announced_until_the_file_is_moved(tmp_path):
    """A record nobody can use is set aside (not lost) at the next write; the dashboard says
    where, how many, and what to do, on every page until the person deals with the file."""
    import json

    settings = make_settings(tmp_path)
    settings.memory_file.parent.mkdir(parents=True, exist_ok=True)
    settings.memory_file.write_text(
        json.dumps([{"id": "m1", "content": "Prefers tea"}, {"content": "no id here"}]),
        encoding="utf-8",
    )
    app = create_app(settings)
    app.config.update(TESTING=True)
    client = CsrfClient(app.test_client())
    assert "set aside" not in client.get("/memories/").get_data(as_text=True)
    client.post("/memories/", data={"content": "Walks the dog at 18:00", "category": "general"})
    (aside,) = settings.memory_file.parent.glob("memories.json.rejected-*")
    for path in ("/memories/", "/review/"):
        page = client.get(path).get_data(as_text=True)
        assert "Some records of the memories file could not be used" in page
        assert f'1 record was set aside in <code translate="no">{aside}</code>' in page
    chinese = client.get("/memories/", headers={"Accept-Language": "zh-TW"})
    assert "無法使用" in chinese.get_data(as_text=True)
    aside.unlink()
    assert "set aside" not in client.get("/memories/").get_data(as_text=True)
