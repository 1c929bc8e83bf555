"""Skill zip imports previewed, then confirmed: the store keeps the upload between the two."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from tests.support.data import zip_of
from webapp.settings import Settings
from webapp.stores.skills import (
    STAGED_MAX_AGE_S,
    SkillDocumentStore,
    SkillImportError,
    StagedImport,
    StagedImportGoneError,
)

SAMPLES = Path(__file__).resolve().parents[1] / "webapp" / "demo_data" / "skills"


@pytest.fixture
def store(tmp_path: Path) -> SkillDocumentStore:
    return SkillDocumentStore(tmp_path / "skills", lock_timeout=1)


@pytest.fixture
def upload(tmp_path: Path) -> bytes:
    source = tmp_path / "src"
    shutil.copytree(SAMPLES / "poem-writer", source)
    return zip_of(source, "poem-writer/")


def kept(store: SkillDocumentStore) -> list[Path]:
    return sorted(store.staging.directory.glob("*.zip"))


def test_a_preview_plans_and_keeps_the_upload_without_writing_documents(store, upload):
    staged = store.preview_import_zip(upload)
    assert isinstance(staged, StagedImport) and len(staged.token) == 32
    assert staged.plan.skill == "poem-writer" and staged.plan.of_kind("add")
    assert store.list() == []  # nothing imported yet
    assert [p.read_bytes() for p in kept(store)] == [upload]


def test_the_token_imports_exactly_the_kept_upload_once(store, upload):
    staged = store.preview_import_zip(upload)
    report = store.import_staged(staged.token, actor="dashboard")
    assert len(report.added) == len(staged.plan.documents) and not report.updated
    assert kept(store) == []
    with pytest.raises(StagedImportGoneError) as refused:
        store.import_staged(staged.token)
    assert "expired or was already applied" in str(refused.value)


@pytest.mark.parametrize("token", ["", "../../.secret_key", "0" * 31, "g" * 32, "A" * 32])
def test_a_hostile_or_unknown_token_reads_nothing(store, token):
    with pytest.raises(StagedImportGoneError):
        store.import_staged(token)
    store.discard_staged(token)  # nothing to discard, nothing raised


def test_an_unusable_upload_is_refused_and_nothing_is_kept(store):
    with pytest.raises(SkillImportError):
        store.preview_import_zip(b"not a zip")
    assert kept(store) == []


def test_old_uploads_expire(store, upload):
    old = store.preview_import_zip(upload)
    past = time.time() - STAGED_MAX_AGE_S - 60
    (path,) = kept(store)
    os.utime(path, (past, past))
    with pytest.raises(StagedImportGoneError):
        store.import_staged(old.token)
    fresh = store.preview_import_zip(upload)  # keeping a new one drops the expired one
    assert [p.stem for p in kept(store)] == [fresh.token]


def test_a_cancelled_preview_is_discarded(store, upload):
    staged = store.preview_import_zip(upload)
    store.discard_staged(staged.token)
    assert kept(store) == []


def test_the_dashboard_keeps_uploads_in_the_data_folder(tmp_path):
    settings = Settings().with_data_dir(tmp_path / "data")
    store = SkillDocumentStore.from_settings(settings)
    assert store.staging.directory == settings.data_dir / ".skill-imports"
    assert SkillDocumentStore(tmp_path / "s").staging.directory == tmp_path / "s" / ".imports"
