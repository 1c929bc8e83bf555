"""Skill documents: naming, validation, save/deprecate/restore, cache, search, merge, import."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest

from tests.support.data import zip_of
from webapp.stores import (
    InvalidSkillDocumentError,
    SkillDocument,
    SkillDocumentConflictError,
    SkillDocumentStore,
    SkillImportError,
    StoreBusyError,
    UnsafeNameError,
    merge_memories,
)
from webapp.stores.skills import (
    description_of,
    edited_record,
    kebab_case,
    name_problems,
    new_record,
    reference_slug,
    schema,
    text_problems,
)
from webapp.stores.skills.drafts import max_length

SAMPLES = (
    Path(__file__).resolve().parents[1] / "webapp" / "demo_data" / "skills"
)  # copy of ../shared/samples
OLD_NS = 1_600_000_000 * 10**9  # 2020: far outside the "recently changed" window


@pytest.fixture
def src(tmp_path: Path) -> Path:
    """A private copy of the sample skill folders."""
    target = tmp_path / "src"
    shutil.copytree(SAMPLES, target)
    return target


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "skills"


@pytest.fixture
def store(folder: Path) -> SkillDocumentStore:
    return SkillDocumentStore(folder, lock_timeout=1)


def doc(skill: str = "tea-brewing", content: str = "Brew green tea at 80°C.", **fields) -> dict:
    record = {"type": "skill", "skill": skill, "content": content}
    record.update(fields)
    return record


def files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.glob("*.json"))


def sha8(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def everything_under(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


def age(*paths: Path) -> None:
    """Make files look long unchanged, as a folder nobody touched for a while."""
    for path in paths:
        os.utime(path, ns=(OLD_NS, OLD_NS))


# --------------------------------------------------------------------------- names
@pytest.mark.parametrize(
    "name, expected",
    [
        ("poem-writer", "poem-writer"),
        ("Poem Writer", "poem-writer"),
        ("PoemWriter", "poem-writer"),
        ("poem_writer", "poem-writer"),
        ("ＰＯＥＭ－writer", "poem-writer"),
        ("  home--climate  ", "home-climate"),
        ("詩人 Helper", "詩人-helper"),
        ("v2.1 notes", "v2-1-notes"),
    ],
)
def test_kebab_case(name, expected):
    assert kebab_case(name) == expected


@pytest.mark.parametrize(
    "reference, expected",
    [
        ("references/qijue.md", "qijue"),
        ("references/forms/Qi Jue.md", "forms-qi-jue"),
        ("references/七言.md", "七言"),
    ],
)
def test_reference_slug(reference, expected):
    assert reference_slug(reference) == expected


HOSTILE_NAMES = [
    "../x",
    "..",
    "/etc/passwd",
    "a/b",
    "a\\b",
    "C:\\x",
    "x\x00y",
    "tab\tname",
    "bell\x07",
    "\u202eexe.txt",
    "",
    "   ",
    "---",
    "a" * 300,
    "詩" * 40,
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_skill_names_are_refused_and_nothing_is_written(store, tmp_path, name):
    before = everything_under(tmp_path)
    # An empty name already breaks the schema (minLength); either way it is a ValueError.
    expected = InvalidSkillDocumentError if name == "" else UnsafeNameError
    with pytest.raises(expected):
        store.save(doc(skill=name))
    assert files(store.directory) == [] if store.directory.exists() else True
    assert everything_under(tmp_path) - before <= {"skills", "skills/.lock"}


@pytest.mark.parametrize(
    "reference",
    [
        "../../x.md",
        "/abs.md",
        "references/../x.md",
        "C:\\refs\\x.md",
        "references//x.md",
        "refs/\x00.md",
    ],
)
def test_hostile_reference_paths_are_refused(store, tmp_path, reference):
    before = everything_under(tmp_path)
    with pytest.raises(UnsafeNameError):
        store.save(doc(type="reference", reference=reference))
    assert everything_under(tmp_path) - before <= {"skills", "skills/.lock"}


def test_names_differing_only_by_case_are_one_skill(store):
    first = store.save(doc(skill="Poem-Writer"))
    assert first.file_name == f"poem-writer-skill-{sha8(first.content)}.json"
    with pytest.raises(SkillDocumentConflictError, match="already exists"):
        store.save(doc(skill="poem-writer", content="Other text"))
    with pytest.raises(SkillDocumentConflictError):
        store.save(doc(skill="POEM WRITER", content="Other text"))
    assert files(store.directory) == [first.file_name]


def test_chinese_skill_names_keep_their_characters(store):
    saved = store.save(doc(skill="詩詞助手", content="寫詩"))
    assert saved.file_name == f"詩詞助手-skill-{sha8('寫詩')}.json"
    assert (store.directory / saved.file_name).read_text("utf-8").count("詩詞助手") == 1


# --------------------------------------------------------------------------- save
def test_save_creates_a_valid_file_named_by_content_hash(store):
    saved = store.save(doc(meta={"name": "Tea"}))
    path = store.directory / saved.file_name
    assert saved.file_name == f"tea-brewing-skill-{sha8('Brew green tea at 80°C.')}.json"
    on_disk = json.loads(path.read_bytes().decode("utf-8"))
    jsonschema.validate(on_disk, schema())
    assert on_disk == saved.to_dict()
    assert on_disk["createdAt"] == on_disk["updatedAt"] and isinstance(on_disk["createdAt"], int)
    assert on_disk["snippet"] == "Brew green tea at 80°C."
    assert "80°C" in path.read_text("utf-8")  # UTF-8 as is, not \u escapes
    assert store.get(saved.id) == saved


def test_reference_file_name_and_snippet(store):
    saved = store.save(
        doc(
            type="reference",
            reference="references/green.md",
            content="Details",
            meta={"name": "Green tea", "description": "Temperatures"},
        )
    )
    assert saved.file_name == f"tea-brewing-reference-green-{sha8('Details')}.json"
    assert saved.snippet == "Green tea — Temperatures"


def test_changed_content_replaces_the_file_keeps_created_bumps_updated(store):
    first = store.save(doc())
    second = store.save({"id": first.id, "content": "Brew green tea at 75°C."})
    assert second.id == first.id
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at
    assert files(store.directory) == [f"tea-brewing-skill-{sha8('Brew green tea at 75°C.')}.json"]
    assert [d.content for d in store.list()] == ["Brew green tea at 75°C."]


def test_saving_the_same_content_writes_nothing(store):
    first = store.save(doc())
    path = store.directory / first.file_name
    before = os.stat(path)
    again = store.save(first)
    assert again.updated_at == first.updated_at
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_unknown_fields_are_kept_on_rewrite(store, folder):
    folder.mkdir()
    record = {
        "id": "x1",
        "type": "skill",
        "skill": "tea",
        "skillDescription": "",
        "snippet": "s",
        "content": "old",
        "meta": {"name": "Tea", "license": "MIT"},
        "createdAt": 5,
        "updatedAt": 6,
        "reviewedBy": "ana",
    }
    (folder / "hand-written.json").write_text(json.dumps(record), "utf-8")
    saved = store.save({"id": "x1", "content": "new"})
    on_disk = json.loads((folder / saved.file_name).read_text("utf-8"))
    assert on_disk["reviewedBy"] == "ana" and on_disk["meta"]["license"] == "MIT"
    assert on_disk["createdAt"] == 5 and on_disk["content"] == "new"
    assert files(folder) == [saved.file_name]


@pytest.mark.parametrize(
    "record, reason",
    [
        (doc(content=""), "content"),
        (doc(type="recipe"), "type"),
        (doc(type="reference"), "reference"),
        (doc(reference="references/x.md"), "must not have a 'reference'"),
        (doc(content="bad \ud800 surrogate"), "not valid Unicode"),
        (doc(content="nul \x00 inside"), "NUL"),
        (doc(meta={"name": 5}), "meta/name"),
        (["not", "a", "mapping"], "mapping"),
    ],
)
def test_invalid_documents_are_refused_with_the_reason(store, record, reason):
    with pytest.raises(InvalidSkillDocumentError, match=reason):
        store.save(record)
    assert not store.directory.exists() or files(store.directory) == []


def test_html_content_is_stored_verbatim(store):
    hostile = "<script>alert('x')</script> & <b>bold</b>"
    saved = store.save(doc(content=hostile))
    assert store.get(saved.id).content == hostile


def test_save_never_overwrites_an_unreadable_file_at_its_name(store, folder):
    folder.mkdir()
    name = f"tea-brewing-skill-{sha8('Brew green tea at 80°C.')}.json"
    (folder / name).write_bytes(b"{broken")
    with pytest.raises(SkillDocumentConflictError, match="not a valid document"):
        store.save(doc())
    assert (folder / name).read_bytes() == b"{broken"


# --------------------------------------------------------------------------- deprecate / restore
def test_deprecate_and_restore_move_the_file(store):
    saved = store.save(doc())
    assert store.deprecate(saved.id) is True
    assert files(store.directory) == []
    assert files(store.deprecated_directory) == [saved.file_name]
    assert store.list() == []
    listed = store.list(include_deprecated=True)
    assert [d.id for d in listed] == [saved.id] and listed[0].deprecated
    assert store.get(saved.id).deprecated
    assert store.deprecate(saved.id) is False
    assert store.restore(saved.id) is True
    assert files(store.directory) == [saved.file_name]
    assert not store.get(saved.id).deprecated
    assert store.restore(saved.id) is False
    assert store.deprecate("no-such-id") is False


def test_deprecate_and_restore_are_in_the_history_and_are_not_edits(store):
    saved = store.save(doc())
    store.deprecate(saved.id, actor="alice")
    store.deprecate(saved.id, actor="alice")  # nothing moved: nothing recorded
    store.restore(saved.id, actor="bob")
    moves = [(e["action"], e["actor"], e["before"]) for e in store.history(saved.id)[1:]]
    assert moves == [("deprecate", "alice", None), ("undeprecate", "bob", None)]
    assert store.history(saved.id)[-1]["after"]["content"] == saved.content


def test_moving_an_imported_document_is_not_an_edit_made_here(store, src):
    """A re-import asks before overwriting what was edited here; deprecating and bringing a
    document back changes no text, so it must not count."""
    store.import_skill(src / "poem-writer")
    skill = next(d for d in store.list() if d.type == "skill")
    store.deprecate(skill.id)
    store.restore(skill.id)
    assert store.edited_since_import(store.get(skill.id)) is False


def test_a_refused_restore_leaves_no_history_entry(store):
    old = store.save(doc())
    store.deprecate(old.id)
    store.save(doc(content="A newer way to brew."))
    with pytest.raises(SkillDocumentConflictError):
        store.restore(old.id)
    assert [e["action"] for e in store.history(old.id)] == ["add", "deprecate"]


def test_deprecating_frees_the_key_and_restore_refuses_a_clash(store):
    old = store.save(doc())
    store.deprecate(old.id)
    new = store.save(doc(content="A newer way to brew."))
    with pytest.raises(SkillDocumentConflictError):
        store.restore(old.id)
    assert files(store.deprecated_directory) == [old.file_name]
    assert [d.id for d in store.list()] == [new.id]


# --------------------------------------------------------------------------- problems
BAD_FILES = {
    "not-json.json": (b"{not json", "Expecting property name"),
    "latin1.json": ('{"content": "caf\xe9"}'.encode("latin-1"), "not valid UTF-8"),
    "empty.json": (b"", "empty"),
    "array.json": (b"[1, 2]", "expected a JSON object"),
    "wrong-types.json": (
        json.dumps(
            {
                "id": "a",
                "type": "skill",
                "skill": "s",
                "content": "c",
                "snippet": "",
                "skillDescription": "",
                "meta": {},
                "createdAt": "yesterday",
                "updatedAt": 1,
            }
        ).encode(),
        "createdAt: 'yesterday' is not of type 'integer'",
    ),
    "traversal.json": (
        json.dumps(
            {
                "id": "b",
                "type": "skill",
                "skill": "../etc",
                "content": "c",
                "snippet": "",
                "skillDescription": "",
                "meta": {},
                "createdAt": 1,
                "updatedAt": 1,
            }
        ).encode(),
        "path separator",
    ),
}


def test_invalid_files_are_skipped_and_reported_untouched(store, folder):
    good = store.save(doc())
    for name, (raw, _) in BAD_FILES.items():
        (folder / name).write_bytes(raw)
    (folder / "README.md").write_text("not a document", "utf-8")
    assert [d.id for d in store.list()] == [good.id]
    reported = {p.file_name: p.reason for p in store.problems()}
    assert set(reported) == set(BAD_FILES)
    for name, (raw, reason) in BAD_FILES.items():
        assert reason in reported[name], name
        assert (folder / name).read_bytes() == raw


# --------------------------------------------------------------------------- cache
def test_an_unchanged_folder_is_not_read_again(store, folder):
    saved = store.save(doc(content="AAAA"))
    path = folder / saved.file_name
    age(path, folder)
    assert store.list()[0].content == "AAAA"
    # Same size, same inode, same mtime: a listing that re-read files would see "BBBB".
    path.write_bytes(path.read_bytes().replace(b"AAAA", b"BBBB"))
    age(path, folder)
    assert store.list()[0].content == "AAAA"
    os.utime(path)  # now it looks changed
    assert store.list()[0].content == "BBBB"


def test_a_recently_changed_file_is_compared_byte_for_byte(store, folder):
    saved = store.save(doc(content="AAAA"))
    path = folder / saved.file_name
    stat = os.stat(path)
    assert store.list()[0].content == "AAAA"
    path.write_bytes(path.read_bytes().replace(b"AAAA", b"BBBB"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same tick, same size, same inode
    assert store.list()[0].content == "BBBB"


def test_changes_by_another_process_are_seen(store, folder):
    other = SkillDocumentStore(folder, lock_timeout=1)
    saved = store.save(doc())
    assert [d.id for d in other.list()] == [saved.id]
    store.save({"id": saved.id, "content": "Changed elsewhere"})
    assert other.get(saved.id).content == "Changed elsewhere"
    (folder / store.get(saved.id).file_name).unlink()
    assert other.list() == [] and other.get(saved.id) is None


# --------------------------------------------------------------------------- import
def test_import_skill_reads_skill_md_and_references(store, src):
    report = store.import_skill(src / "poem-writer")
    assert (len(report.added), len(report.updated), len(report.unchanged)) == (3, 0, 0)
    skill, qijue, wulv = store.list()
    assert skill.type == "skill" and skill.skill == "poem-writer"
    assert skill.skill_description.startswith("Writes classical Chinese poems")
    assert skill.meta == {"name": "poem-writer", "description": skill.skill_description}
    assert skill.content.startswith("# Poem writer") and "---" not in skill.content
    assert skill.snippet == skill.skill_description
    assert (qijue.reference, wulv.reference) == ("references/qijue.md", "references/wulv.md")
    assert qijue.meta["name"] == "七言絕句"
    assert (
        qijue.snippet == "七言絕句 — Tonal patterns and rhyme rules for seven-character quatrains."
    )
    assert qijue.skill_description == skill.skill_description
    assert files(store.directory) == sorted(
        [
            f"poem-writer-skill-{sha8(skill.content)}.json",
            f"poem-writer-reference-qijue-{sha8(qijue.content)}.json",
            f"poem-writer-reference-wulv-{sha8(wulv.content)}.json",
        ]
    )


def test_reimporting_unchanged_content_changes_nothing(store, src, folder):
    store.import_skill(src / "poem-writer")
    before = {p.name: os.stat(p).st_mtime_ns for p in folder.glob("*.json")}
    report = store.import_skill(src / "poem-writer")
    assert (len(report.added), len(report.updated), len(report.unchanged)) == (0, 0, 3)
    assert {p.name: os.stat(p).st_mtime_ns for p in folder.glob("*.json")} == before


def test_reimporting_changed_content_updates_the_document(store, src):
    store.import_skill(src / "poem-writer")
    old = next(d for d in store.list() if d.reference == "references/qijue.md")
    ref = src / "poem-writer" / "references" / "qijue.md"
    ref.write_text(ref.read_text("utf-8") + "- 新規則：押平聲韻。\n", "utf-8")
    report = store.import_skill(src / "poem-writer")
    assert [d.reference for d in report.updated] == ["references/qijue.md"]
    new = store.get(old.id)
    assert new.created_at == old.created_at and new.updated_at > old.updated_at
    assert "新規則" in new.content
    assert old.file_name not in files(store.directory)
    assert len(files(store.directory)) == 3


def test_import_reports_stored_references_the_folder_no_longer_has(store, src):
    store.import_skill(src / "poem-writer")
    (src / "poem-writer" / "references" / "wulv.md").unlink()
    report = store.import_skill(src / "poem-writer")
    assert [d.reference for d in report.not_in_source] == ["references/wulv.md"]


def test_nested_references_are_named_by_their_path(store, src):
    nested = src / "poem-writer" / "references" / "rhymes"
    nested.mkdir()
    (nested / "Ping Shui.md").write_text("# 平水韻\n一東 二冬", "utf-8")
    store.import_skill(src / "poem-writer")
    assert any(
        n.startswith("poem-writer-reference-rhymes-ping-shui-") for n in files(store.directory)
    )


@pytest.mark.parametrize(
    "breakage, message",
    [
        (lambda d: (d / "SKILL.md").unlink(), "no SKILL.md"),
        (lambda d: (d / "SKILL.md").write_text("# no front matter", "utf-8"), "needs a `name`"),
        (lambda d: (d / "SKILL.md").write_text("---\nname: [unclosed\n---\nbody", "utf-8"), "YAML"),
        (
            lambda d: (d / "SKILL.md").write_text("---\nname: ../evil\n---\nbody", "utf-8"),
            "path separator",
        ),
        (lambda d: (d / "SKILL.md").write_text("---\nname: a..b\n---\nbody", "utf-8"), "'..'"),
        (lambda d: (d / "references" / "qijue.md").write_bytes(b"\xff\xfe bad"), "not valid UTF-8"),
        (
            lambda d: (d / "references" / "empty.md").write_text("---\nname: x\n---\n", "utf-8"),
            "empty",
        ),
        (lambda d: (d / "references" / "link.md").symlink_to("/etc/hostname"), "outside"),
    ],
)
def test_a_broken_skill_folder_is_refused_and_nothing_is_saved(store, src, breakage, message):
    breakage(src / "poem-writer")
    with pytest.raises((SkillImportError, UnsafeNameError), match=message):
        store.import_skill(src / "poem-writer")
    assert store.list() == []


# --------------------------------------------------------------------------- zip import
@pytest.mark.parametrize("prefix", ["", "poem-writer/"])
def test_import_skill_zip_matches_the_folder_import(store, src, prefix):
    report = store.import_skill_zip(zip_of(src / "poem-writer", prefix))
    assert len(report.added) == 3
    assert store.import_skill(src / "poem-writer").changed is False


def hostile_zip(members: dict[str, bytes], symlink: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("SKILL.md", "---\nname: evil\ndescription: d\n---\nbody")
        for name, data in members.items():
            archive.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = 0o120777 << 16
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


@pytest.mark.parametrize(
    "members, symlink, message",
    [
        ({"../evil.md": b"x"}, None, "climbs out"),
        ({"references/../../evil.md": b"x"}, None, "climbs out"),
        ({"/tmp/evil.md": b"x"}, None, "absolute"),
        ({"C:/evil.md": b"x"}, None, "absolute"),
        ({"references\\evil.md": b"x"}, None, "Windows-style"),
        ({}, "references/link.md", "symbolic link"),
        ({"references/bomb.md": b"0" * 25_000_000}, None, "more than"),
    ],
)
def test_hostile_zips_are_refused(store, tmp_path, members, symlink, message):
    before = everything_under(tmp_path)
    with pytest.raises(SkillImportError, match=message):
        store.import_skill_zip(hostile_zip(members, symlink))
    assert everything_under(tmp_path) - before <= {"skills", "skills/.lock"}
    assert not (tmp_path.parent / "evil.md").exists()


def test_not_a_zip_is_refused(store):
    with pytest.raises(SkillImportError, match="not a readable zip"):
        store.import_skill_zip(b"PK\x03\x04 truncated")


# --------------------------------------------------------------------------- merge
def runtime(skill="poem-writer", updated=0, **fields):
    record = {"type": "skill", "skill": skill, "content": f"runtime {skill}", "updatedAt": updated}
    record.update(fields)
    return record


def test_merge_documented_wins_unless_older(store, src):
    store.import_skill(src / "poem-writer")
    skill_doc = next(d for d in store.list() if d.type == "skill")
    newer = runtime(updated=skill_doc.updated_at + 1)
    same = runtime(updated=skill_doc.updated_at)
    merged = {m.key: m for m in merge_memories(store.list(), [same])}
    assert merged[("poem-writer", "skill", "")].origin == "document"
    assert merged[("poem-writer", "skill", "")].overridden.content == "runtime poem-writer"
    merged = {m.key: m for m in merge_memories(store.list(), [newer])}
    winner = merged[("poem-writer", "skill", "")]
    assert winner.origin == "runtime" and winner.document.content == "runtime poem-writer"
    assert winner.overridden.id == skill_doc.id
    assert len(merged) == 3  # one per key: the skill and its two references
    assert {m.origin for k, m in merged.items() if k[1] == "reference"} == {"document"}


def test_merge_keys_references_by_reference(store, src):
    store.import_skill(src / "poem-writer")
    extra = runtime(type="reference", reference="references/qiyan-lushi.md", content="七言律詩")
    merged = merge_memories(store.list(), [extra])
    assert [(m.key[2], m.origin) for m in merged] == [
        ("", "document"),
        ("qijue", "document"),
        ("qiyan-lushi", "runtime"),
        ("wulv", "document"),
    ]
    assert merged[2].to_dict()["origin"] == "runtime"


def test_deprecated_documents_never_take_part(store, src):
    store.import_skill(src / "poem-writer")
    skill_doc = next(d for d in store.list() if d.type == "skill")
    store.deprecate(skill_doc.id)
    merged = merge_memories(store.list(include_deprecated=True), [runtime(updated=0)])
    winner = next(m for m in merged if m.key == ("poem-writer", "skill", ""))
    assert winner.origin == "runtime" and winner.overridden is None
    assert all(not m.document.deprecated for m in merged)


def test_invalid_runtime_memory_is_a_clear_error():
    with pytest.raises(InvalidSkillDocumentError, match="runtime memory"):
        merge_memories([], [{"type": "skill", "skill": "x"}])


# --------------------------------------------------------------------------- search
@pytest.fixture
def imported(store, src) -> SkillDocumentStore:
    store.import_skill(src / "poem-writer")
    store.import_skill(src / "home-climate")
    return store


@pytest.mark.parametrize(
    "query, first",
    [
        ("七言絕句", "references/qijue.md"),
        ("對仗", "references/wulv.md"),
        ("律詩 對仗", "references/wulv.md"),
        ("CLIMATE entities", "references/entities.md"),
        ("ｃｌｉｍａｔｅ ｅｎｔｉｔｉｅｓ", "references/entities.md"),
        ("poem writter", "poem-writer"),
    ],
)
def test_search_ranks_case_insensitively_and_in_chinese(imported, query, first):
    hits = imported.search(query)
    top = hits[0].document
    assert (top.reference or top.skill) == first
    assert hits == sorted(hits, key=lambda h: -h.score)


def test_search_without_a_match_is_empty(imported):
    assert imported.search("quantum chromodynamics") == []
    assert imported.search("茶道") == []


def test_search_includes_runtime_memories(imported, folder):
    tea = runtime(skill="tea-brewing", content="泡綠茶用八十度的水。")
    hits = imported.search("綠茶", runtime=[tea])
    assert [(h.document.skill, h.entry.origin) for h in hits] == [("tea-brewing", "runtime")]
    registered = SkillDocumentStore(folder, runtime=lambda: [tea], lock_timeout=1)
    assert registered.search("八十度")[0].entry.origin == "runtime"
    assert registered.search("七言絕句")[0].entry.origin == "document"


# --------------------------------------------------------------------------- export, lock, settings
def test_export_runtime_writes_documents_once(store):
    memories = [
        runtime(skill="tea-brewing", createdAt=1000, updatedAt=2000),
        runtime(
            skill="tea-brewing",
            type="reference",
            reference="references/green.md",
            content="80°C",
            meta={"name": "Green", "description": "temps"},
        ),
    ]
    report = store.export_runtime(memories)
    assert len(report.added) == 2
    assert store.export_runtime(memories).changed is False
    skill_doc = next(d for d in store.list() if d.type == "skill")
    assert skill_doc.created_at == 1000
    assert [m.origin for m in store.merged(runtime=memories)] == ["document", "document"]
    changed = [dict(memories[0], content="runtime tea, stronger")]
    assert len(store.export_runtime(changed).updated) == 1
    assert store.get(skill_doc.id).content == "runtime tea, stronger"


def test_a_held_lock_gives_store_busy(store, folder):
    folder.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import filelock, sys, time\n"
            f"lock = filelock.FileLock({str(folder / '.lock')!r}); lock.acquire()\n"
            "print('held', flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        busy = SkillDocumentStore(folder, lock_timeout=0.2)
        with pytest.raises(StoreBusyError):
            busy.save(doc())
        assert files(folder) == []
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


def test_default_folder_comes_from_the_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORY_SKILLS_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "data"))
    store = SkillDocumentStore()
    saved = store.save(doc())
    assert (tmp_path / "elsewhere" / saved.file_name).is_file()


def test_documents_round_trip_through_to_dict(store):
    saved = store.save(doc(meta={"name": "Tea"}))
    assert SkillDocument.from_dict(saved.to_dict()) == saved


# ----------------------------------------------------------------- what the forms send
@pytest.mark.parametrize(
    ("content", "description", "problems"),
    [
        ("Brew at 80°C.", "", {}),
        ("  \n", "", {"content": "Content cannot be empty."}),
        ("a\x00b", "", {"content": "Content cannot contain NUL characters."}),
        ("x" * 1_000_001, "", {"content": "at most 1,000,000"}),
        ("ok", "d" * 4001, {"description": "at most 4,000"}),
    ],
)
def test_text_problems_follow_the_schema(content, description, problems):
    found = text_problems(content, description)
    assert found.keys() == problems.keys()
    for field, message in problems.items():
        assert message in found[field]
    assert max_length("content") == schema()["properties"]["content"]["maxLength"]


@pytest.mark.parametrize(
    ("kind", "skill", "reference", "fields"),
    [
        ("skill", "Poem Writer", "", set()),
        ("reference", "poem-writer", "references/qijue.md", set()),
        ("script", "poem-writer", "", {"type"}),
        ("skill", "../etc", "", {"skill"}),
        ("reference", "poem-writer", "  ", {"reference"}),
        ("reference", "", "../../x.md", {"skill", "reference"}),
    ],
)
def test_name_problems_name_the_bad_fields(kind, skill, reference, fields):
    assert set(name_problems(kind, skill, reference)) == fields


def test_records_from_a_form_are_saved_as_typed(store):
    skill = store.save(new_record("skill", " Tea ", "", " How to brew ", "Brew at 80°C."))
    assert (skill.skill, skill.skill_description, skill.meta["name"]) == (
        "Tea",
        "How to brew",
        "Tea",
    )
    ref = store.save(new_record("reference", "Tea", "references/green.md", "Green", "80°C"))
    assert (ref.reference, ref.skill_description) == ("references/green.md", "Green")
    assert description_of(skill) == "How to brew"
    edited = store.save(edited_record(ref, "75°C", " Greener "))
    assert (edited.id, edited.content, description_of(edited)) == (ref.id, "75°C", "Greener")
    edited = store.save(edited_record(skill, "Brew at 75°C.", "Cooler"))
    assert (edited.skill_description, edited.meta["name"]) == ("Cooler", "Tea")


def test_reimport_plan_names_documents_edited_here_and_history_restores_them(tmp_path):
    from webapp.stores.skills import SkillDocumentStore as Store

    folder = tmp_path / "tiny"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: tiny\ndescription: d\n---\nDo it.\n", "utf-8")
    (folder / "references" / "a.md").write_text("Ref A\n", "utf-8")
    store = Store(tmp_path / "skills", lock_timeout=5)
    store.import_skill(folder)
    assert not store.plan_import(folder).overwrites  # re-importing the same: nothing to lose
    skill = next(d for d in store.list() if d.type == "skill")
    store.save({"id": skill.id, "content": "Do it my way."}, actor="dashboard")
    plan = store.plan_import(folder)
    assert [(d.kind, d.edited_here) for d in plan.documents] == [
        ("update", True),
        ("same", False),
    ]
    assert store.get(skill.id).content == "Do it my way."  # planning writes nothing
    report = store.import_skill(folder, actor="import")
    assert len(report.updated) == 1 and store.get(skill.id).content == "Do it."
    assert not store.plan_import(folder).edited_here  # the import is the last word now
    last = store.history(skill.id)[-1]
    assert (last["action"], last["actor"], last["before"]["content"]) == (
        "import",
        "import",
        "Do it my way.",
    )
    store.restore_version(last["hid"], actor="dashboard")
    assert store.get(skill.id).content == "Do it my way."
    assert [e["action"] for e in store.history(skill.id)] == [
        "import",
        "update",
        "import",
        "restore",
    ]
    with pytest.raises(KeyError):
        store.restore_version("no-such-change")
