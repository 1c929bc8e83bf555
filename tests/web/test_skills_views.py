"""Skills views through the Flask test client: list, view, create, edit, deprecate/restore, import."""

from __future__ import annotations

import io
import json
import re
import shutil
import stat
import zipfile
from pathlib import Path

import pytest

from tests.support.data import zip_of
from webapp.stores import SkillDocumentStore
from webapp.web.blueprints.skills import render_markdown

SAMPLE = Path(__file__).resolve().parents[2] / "webapp" / "demo_data" / "skills" / "poem-writer"


def skill_store(settings) -> SkillDocumentStore:
    """The skills folder opened as another process would."""
    return SkillDocumentStore(settings.skills_dir, lock_timeout=5)


@pytest.fixture
def poem(tmp_path) -> Path:
    """A copy of the sample skill folder (the sample itself is never touched)."""
    return Path(shutil.copytree(SAMPLE, tmp_path / "poem-writer"))


@pytest.fixture
def imported(settings, poem):
    """The sample skill imported into the app's skills folder."""
    skill_store(settings).import_skill(poem)
    return {
        d.type + (":" + d.reference if d.reference else ""): d for d in skill_store(settings).list()
    }


def upload(
    client, data: bytes, name: str = "poem-writer.zip", htmx: bool = True, csrf: bool = True
):
    return client.post(
        "/skills/import",
        data={"archive": (io.BytesIO(data), name)},
        content_type="multipart/form-data",
        htmx=htmx,
        csrf=csrf,
    )


def field_error(html: str) -> str:
    match = re.search(r'class="field-error">([^<]*)<', html)
    return match.group(1) if match else ""


def files_in(folder: Path) -> list[str]:
    return (
        sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.json"))
        if folder.exists()
        else []
    )


# ----------------------------------------------------------------- the list
def test_empty_state(client):
    response = client.get("/skills/")
    assert response.status_code == 200
    assert "No skills yet" in response.get_data(as_text=True)


def test_list_groups_documents_by_skill(client, imported):
    html = client.get("/skills/").get_data(as_text=True)
    assert "<!doctype html>" in html
    assert html.count('class="card skill-group"') == 1
    skill = imported["skill"]
    assert html.index(f'id="doc-{skill.id}"') < html.index(
        f'id="doc-{imported["reference:references/qijue.md"].id}"'
    )
    assert "references/wulv.md" in html and "Valid" in html
    assert skill.snippet[:40] in html
    # The tab counts skills (one here) and says how many documents they have (issue 12).
    assert "Skills (1) <span" in html and "· 3 documents" in html and "Deprecated (0)" in html


def test_list_partial_is_the_panel(client, imported):
    response = client.get("/skills/", htmx=True)
    html = response.get_data(as_text=True)
    assert html.lstrip().startswith('<section id="skills-panel"') and "<html" not in html
    assert "HX-Request" in response.headers["Vary"]


def test_invalid_files_are_listed_with_the_reason(client, settings, imported):
    settings.skills_dir.joinpath("broken-skill-00000000.json").write_bytes(b"{not json")
    bad = dict(imported["skill"].to_dict(), id="other", type="nonsense")
    settings.skills_dir.joinpath("odd-skill-11111111.json").write_text(json.dumps(bad))
    html = client.get("/skills/").get_data(as_text=True)
    assert "Invalid files (2)" in html
    assert "broken-skill-00000000.json" in html and "odd-skill-11111111.json" in html
    assert "Skills (1) <span" in html and "· 3 documents" in html


# ----------------------------------------------------------------- one document
def test_document_view_renders_markdown_safely(client, settings):
    hostile = (
        "# Title\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n"
        "[bad](javascript:alert(3)) [rel](references/x.md) [ok](https://example.org)\n\n"
        '![remote](https://example.org/a.png)\n\n<div hx-get="/x">y</div>'
    )
    doc = skill_store(settings).save({"type": "skill", "skill": "hostile", "content": hostile})
    response = client.get(f"/skills/{doc.id}")
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    main = html.split('<main id="main"')[1]
    assert "<script>alert(1)" not in main and "<img" not in main and "<div hx-get" not in main
    assert "javascript:" not in main.replace("[bad](javascript:alert(3))", "")
    assert '<a href="https://example.org" rel="noopener noreferrer nofollow">ok</a>' in main
    assert 'href="references/x.md"' not in main
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in main
    assert "<h1>Title</h1>" in main


@pytest.mark.parametrize(
    "markdown, forbidden",
    [
        ("<b onclick=x>hi</b>", "<b"),
        ("[x](javascript:alert(1))", 'href="javascript'),
        ("[x](data:text/html,hi)", 'href="data'),
        ("![a](https://evil.example/t.png)", "<img"),
        ("<iframe src=https://evil.example></iframe>", "<iframe"),
        ('<a href="https://ok.example" onmouseover="x">a</a>', "<a href"),
    ],
)
def test_render_markdown_allow_list(markdown, forbidden):
    assert forbidden not in render_markdown(markdown)


def test_unknown_document_is_404(client):
    for path in ("/skills/nope", "/skills/nope/edit"):
        assert client.get(path).status_code == 404
        assert client.get(path, htmx=True).status_code == 404
    assert client.post("/skills/nope/edit", data={"content": "x"}).status_code == 404
    assert client.post("/skills/nope/deprecate", htmx=True).status_code == 404


# ----------------------------------------------------------------- edit
def test_edit_form_full_page_and_partial(client, imported):
    doc = imported["skill"]
    full = client.get(f"/skills/{doc.id}/edit").get_data(as_text=True)
    assert "<!doctype html>" in full and 'id="field-content"' in full
    partial = client.get(f"/skills/{doc.id}/edit", htmx=True).get_data(as_text=True)
    assert partial.lstrip().startswith('<form id="skill-form"')
    assert f'name="version" value="{doc.updated_at}"' in partial


def test_edit_saves_content_and_description(client, settings, imported):
    doc = imported["skill"]
    response = client.post(
        f"/skills/{doc.id}/edit",
        htmx=True,
        data={
            "content": "# Poem writer\r\n\r\nNew rules.",
            "description": "Writes poems.",
            "version": str(doc.updated_at),
        },
    )
    assert response.status_code == 200
    assert response.headers["HX-Redirect"].endswith(f"/skills/{doc.id}?saved=1")
    saved = skill_store(settings).get(doc.id)
    assert saved.content == "# Poem writer\n\nNew rules."
    assert saved.skill_description == "Writes poems."
    assert saved.created_at == doc.created_at and saved.updated_at > doc.updated_at
    assert saved.file_name != doc.file_name
    assert not (settings.skills_dir / doc.file_name).exists()
    assert (settings.skills_dir / saved.file_name).exists()


def test_edit_reference_description_goes_to_its_front_matter(client, settings, imported):
    doc = imported["reference:references/qijue.md"]
    client.post(
        f"/skills/{doc.id}/edit",
        data={"content": doc.content, "description": "Quatrains", "version": str(doc.updated_at)},
    )
    assert skill_store(settings).get(doc.id).meta["description"] == "Quatrains"


def test_edit_without_htmx_redirects_to_the_document(client, imported):
    doc = imported["skill"]
    response = client.post(
        f"/skills/{doc.id}/edit",
        data={
            "content": "changed",
            "description": doc.skill_description,  # a skill keeps a description (issue 12)
            "version": str(doc.updated_at),
        },
    )
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/skills/{doc.id}?saved=1")


@pytest.mark.parametrize(
    "data, field, message",
    [
        ({"content": "  ", "description": ""}, "content", "Content cannot be empty."),
        ({"content": "x" * 1_000_001, "description": ""}, "content", "Content is too long"),
        (
            {"content": "ok", "description": "d" * 4001},
            "description",
            "The description is too long",
        ),
    ],
)
def test_edit_validation_keeps_the_file(client, settings, imported, data, field, message):
    doc = imported["skill"]
    before = files_in(settings.skills_dir)
    response = client.post(f"/skills/{doc.id}/edit", data=data, htmx=True)
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert f'id="field-{field}-error"' in html and message in html
    assert files_in(settings.skills_dir) == before
    assert skill_store(settings).get(doc.id).content == doc.content


def test_edit_refused_when_changed_elsewhere(client, settings, imported):
    doc = imported["skill"]
    skill_store(settings).save({"id": doc.id, "content": "Changed by another process"})
    response = client.post(
        f"/skills/{doc.id}/edit",
        htmx=True,
        data={
            "content": "My edit",
            "description": doc.skill_description,  # a skill keeps a description (issue 12)
            "version": str(doc.updated_at),
        },
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 409
    assert "changed elsewhere" in html
    assert "Changed by another process" in html and "My edit</textarea>" in html
    assert skill_store(settings).get(doc.id).content == "Changed by another process"


# ----------------------------------------------------------------- create
def test_new_form_full_and_partial(client):
    assert 'name="skill"' in client.get("/skills/new").get_data(as_text=True)
    partial = client.get("/skills/new?type=reference&skill=poem", htmx=True).get_data(as_text=True)
    assert partial.lstrip().startswith('<form id="skill-form"')
    assert 'value="reference" checked' in partial and 'value="poem"' in partial


def test_create_skill_and_reference(client, settings):
    response = client.post(
        "/skills/new",
        data={
            "type": "skill",
            "skill": "Tea Brewer",
            "description": "Brews tea",
            "content": "# Tea",
        },
    )
    assert response.status_code == 303
    response = client.post(
        "/skills/new",
        htmx=True,
        data={
            "type": "reference",
            "skill": "Tea Brewer",
            "reference": "references/green.md",
            "description": "",
            "content": "Green tea at 80°C",
        },
    )
    assert response.status_code == 200 and "HX-Redirect" in response.headers
    names = files_in(settings.skills_dir)
    assert len(names) == 2
    assert names[0].startswith("tea-brewer-reference-green-") and names[1].startswith(
        "tea-brewer-skill-"
    )
    docs = skill_store(settings).list()
    assert {d.type for d in docs} == {"skill", "reference"}


@pytest.mark.parametrize(
    "data, field",
    [
        ({"type": "skill", "skill": "", "content": "x"}, "skill"),
        ({"type": "skill", "skill": "../../etc", "content": "x"}, "skill"),
        ({"type": "skill", "skill": "a\x00b", "content": "x"}, "skill"),
        ({"type": "skill", "skill": "/abs", "content": "x"}, "skill"),
        ({"type": "skill", "skill": "ok", "content": ""}, "content"),
        ({"type": "reference", "skill": "ok", "reference": "", "content": "x"}, "reference"),
        ({"type": "reference", "skill": "ok", "reference": "../x.md", "content": "x"}, "reference"),
        ({"type": "evil", "skill": "ok", "content": "x"}, "type"),
    ],
)
def test_create_validation_writes_nothing(client, settings, tmp_path, data, field):
    data = {"description": "", "reference": "", **data}
    response = client.post("/skills/new", data=data, htmx=True)
    assert response.status_code == 422
    assert f'id="field-{field}-error"' in response.get_data(as_text=True)
    assert files_in(settings.skills_dir) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


def test_create_duplicate_skill_is_a_conflict(client, settings, imported):
    response = client.post(
        "/skills/new",
        htmx=True,
        data={
            "type": "skill",
            "skill": "Poem-Writer",
            "description": "Another poem skill",  # a skill needs one (issue 12)
            "content": "other",
        },
    )
    assert response.status_code == 409
    assert "already exists" in response.get_data(as_text=True)
    assert len(files_in(settings.skills_dir)) == 3


# ----------------------------------------------------------------- deprecate / restore
def test_deprecate_and_restore_move_the_file(client, settings, imported):
    doc = imported["reference:references/wulv.md"]
    response = client.post(f"/skills/{doc.id}/deprecate", htmx=True)
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and "Deprecated" in html
    assert f'id="doc-{doc.id}"' not in html
    assert (settings.skills_dir / ".deprecated" / doc.file_name).exists()
    assert not (settings.skills_dir / doc.file_name).exists()
    deprecated_tab = client.get("/skills/?tab=deprecated", htmx=True).get_data(as_text=True)
    assert f'id="doc-{doc.id}"' in deprecated_tab and "Restore" in deprecated_tab
    assert client.get(f"/skills/{doc.id}").status_code == 200
    response = client.post(f"/skills/{doc.id}/restore", htmx=True)
    assert response.status_code == 200
    assert (settings.skills_dir / doc.file_name).exists()
    assert not (settings.skills_dir / ".deprecated" / doc.file_name).exists()
    history = client.get(f"/skills/{doc.id}/history").get_data(as_text=True)
    assert "<strong>Deprecated: the assistant stopped seeing it</strong> by" in history
    assert "<strong>Brought back from Deprecated</strong> by" in history
    assert history.count("Restore this version") == 1  # the lead only: a move replaced no text


def test_deprecate_without_htmx_redirects(client, settings, imported):
    doc = imported["skill"]
    response = client.post(f"/skills/{doc.id}/deprecate", data={"next": "document"})
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/skills/{doc.id}")
    assert skill_store(settings).get(doc.id).deprecated


def test_restore_refused_when_a_live_one_took_its_place(client, settings, imported):
    doc = imported["skill"]
    client.post(f"/skills/{doc.id}/deprecate", htmx=True)
    skill_store(settings).save({"type": "skill", "skill": "poem-writer", "content": "new one"})
    response = client.post(f"/skills/{doc.id}/restore", htmx=True)
    assert response.status_code == 409
    assert "already exists" in response.get_data(as_text=True)
    assert skill_store(settings).get(doc.id).deprecated


@pytest.mark.parametrize("path", ["/skills/{id}/deprecate", "/skills/{id}/edit", "/skills/new"])
def test_csrf_is_required(client, settings, imported, path):
    doc = imported["skill"]
    before = files_in(settings.skills_dir)
    response = client.post(
        path.format(id=doc.id),
        data={"content": "x", "skill": "y", "type": "skill"},
        csrf=False,
        htmx=True,
    )
    assert response.status_code == 400
    assert files_in(settings.skills_dir) == before


# ----------------------------------------------------------------- import
def test_import_zip_then_reimport_changes_nothing(client, settings, poem):
    data = zip_of(poem, "poem-writer/")
    response = upload(client, data)
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "Imported poem-writer: 3 added, 0 updated, 0 unchanged." in html
    assert len(files_in(settings.skills_dir)) == 3
    before = {
        p: (settings.skills_dir / p).stat().st_mtime_ns for p in files_in(settings.skills_dir)
    }
    html = upload(client, data).get_data(as_text=True)
    assert "0 added, 0 updated, 3 unchanged" in html
    assert {
        p: (settings.skills_dir / p).stat().st_mtime_ns for p in files_in(settings.skills_dir)
    } == before


def test_import_without_htmx_renders_the_page(client, settings, poem):
    response = upload(client, zip_of(poem), htmx=False)
    assert response.status_code == 200
    assert "<!doctype html>" in response.get_data(as_text=True)
    assert len(files_in(settings.skills_dir)) == 3


def _zip_with(entries: dict[str, bytes], symlink: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


SKILL_MD = b"---\nname: tiny\ndescription: A tiny skill\n---\n# Tiny\n\nDo it.\n"


@pytest.mark.parametrize(
    "data, name, message",
    [
        (b"", "skill.zip", "not a readable zip"),
        (b"PK\x03\x04 garbage", "skill.zip", "not a readable zip"),
        (b"%PDF-1.4", "skill.pdf", "is not a .zip file"),
        (_zip_with({"../evil/SKILL.md": SKILL_MD}), "skill.zip", "climbs out"),
        (_zip_with({"/etc/SKILL.md": SKILL_MD}), "skill.zip", "absolute"),
        (_zip_with({"SKILL.md": SKILL_MD}, symlink="references/link.md"), "skill.zip", "link"),
        (_zip_with({"SKILL.md": b"---\nname: bad\n---\n\xff\xfe not utf-8"}), "skill.zip", "UTF-8"),
        (_zip_with({"README.md": b"hello"}), "skill.zip", "no SKILL.md"),
        (_zip_with({"SKILL.md": b"no front matter"}), "skill.zip", "name"),
        (
            _zip_with({f"references/r{i}.md": b"x" for i in range(1001)} | {"SKILL.md": SKILL_MD}),
            "skill.zip",
            "1000",
        ),
        (
            _zip_with({"SKILL.md": SKILL_MD, "references/big.md": b"a" * 21_000_000}),
            "skill.zip",
            "more than",
        ),
    ],
)
def test_hostile_or_broken_uploads_are_refused_and_nothing_is_written(
    client, settings, tmp_path, data, name, message
):
    response = upload(client, data, name)
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    error = field_error(html)
    assert message.lower() in error.lower().replace(",", ""), error
    assert 'aria-invalid="true"' in html
    assert files_in(settings.skills_dir) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


def test_upload_over_the_request_limit_is_explained(client, settings):
    response = upload(client, b"\0" * (17 * 1024 * 1024))
    assert response.status_code == 413
    assert "too large" in field_error(response.get_data(as_text=True))
    assert files_in(settings.skills_dir) == []


def test_import_without_a_file(client):
    response = client.post("/skills/import", data={}, htmx=True)
    assert response.status_code == 422
    assert "Choose a .zip file" in field_error(response.get_data(as_text=True))


def test_import_needs_csrf(client, settings, poem):
    response = upload(client, zip_of(poem, "poem-writer/"), csrf=False)
    assert response.status_code == 400
    assert files_in(settings.skills_dir) == []
