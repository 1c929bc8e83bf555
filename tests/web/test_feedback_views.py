"""Issue 12 through Flask's test client: the import preview's staged upload, skill history
routes, and the review notice without JavaScript."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest

from tests.support.data import zip_of
from tests.support.review import queue_fact
from webapp.stores import SkillDocumentStore

SAMPLE = Path(__file__).resolve().parents[2] / "webapp" / "demo_data" / "skills" / "poem-writer"


def skills_of(settings) -> SkillDocumentStore:
    return SkillDocumentStore(settings.skills_dir, lock_timeout=5)


@pytest.fixture
def edited_skill(settings, tmp_path):
    """The sample skill imported, then its skill document edited here; returns (zip, doc)."""
    folder = Path(shutil.copytree(SAMPLE, tmp_path / "poem-writer"))
    skills_of(settings).import_skill(folder)
    doc = next(d for d in skills_of(settings).list() if d.type == "skill")
    doc = skills_of(settings).save({"id": doc.id, "content": "Mine."}, actor="dashboard")
    return zip_of(folder, "poem-writer/"), doc


def upload(client, data: bytes):
    return client.post(
        "/skills/import",
        data={"archive": (io.BytesIO(data), "poem-writer.zip")},
        content_type="multipart/form-data",
        htmx=True,
    )


def test_an_overwriting_import_is_staged_and_applied_only_on_confirm(
    client, settings, edited_skill
):
    data, doc = edited_skill
    html = upload(client, data).get_data(as_text=True)
    assert "Edited here since the last import" in html
    assert skills_of(settings).get(doc.id).content == "Mine."
    token = re.search(r'name="token" value="([0-9a-f]{32})"', html).group(1)
    staged = settings.data_dir / ".skill-imports" / f"{token}.zip"
    assert staged.read_bytes() == data
    html = client.post("/skills/import/confirm", data={"token": token}, htmx=True).get_data(
        as_text=True
    )
    assert "0 added, 1 updated, 2 unchanged" in html
    assert skills_of(settings).get(doc.id).content != "Mine."
    assert not staged.exists()
    # The same confirmation twice imports nothing more and says why.
    again = client.post("/skills/import/confirm", data={"token": token}, htmx=True)
    assert again.status_code == 422 and "expired or was already applied" in again.get_data(
        as_text=True
    )


@pytest.mark.parametrize(
    "token", ["", "../../.secret_key", "0" * 31, "g" * 32, "0" * 32 + "/../x", "A" * 32]
)
def test_a_hostile_or_unknown_token_reads_nothing(client, settings, edited_skill, token):
    secret = settings.data_dir / ".secret_key"
    before = secret.read_bytes() if secret.exists() else None
    response = client.post("/skills/import/confirm", data={"token": token}, htmx=True)
    assert response.status_code == 422
    assert "expired or was already applied" in response.get_data(as_text=True)
    assert skills_of(settings).get(edited_skill[1].id).content == "Mine."
    assert (secret.read_bytes() if secret.exists() else None) == before


def test_history_page_and_restore_without_javascript(client, settings, edited_skill):
    _, doc = edited_skill
    page = client.get(f"/skills/{doc.id}/history").get_data(as_text=True)
    assert "Edited" in page and "Restore this version" in page
    [entry] = [e for e in skills_of(settings).history(doc.id) if e["action"] == "update"]
    response = client.post(f"/skills/{doc.id}/history/{entry['hid']}/restore")
    assert response.status_code == 303
    assert skills_of(settings).get(doc.id).content == entry["before"]["content"]
    assert client.post(f"/skills/{doc.id}/history/nope/restore").status_code == 404
    assert client.get("/skills/no-such-doc/history").status_code == 404


def test_review_decision_without_javascript_shows_the_notice_after_the_redirect(client, settings):
    item = queue_fact(settings, "User prefers 我喝咖啡不加糖。")
    response = client.post(f"/review/{item.id}/approve")
    assert response.status_code == 303
    html = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Approved “User prefers 我喝咖啡不加糖。” Long-term memory updated." in html
    assert f'name="ids" value="{item.id}"' in html  # the Undo form
    # Shown once: a reload does not repeat it.
    assert "Approved “" not in client.get("/review/").get_data(as_text=True)
    undo = client.post("/review/undo", data={"ids": item.id, "tab": "pending"})
    assert undo.status_code == 303
    assert "Undone: 1 fact pending again." in client.get("/review/").get_data(as_text=True)
