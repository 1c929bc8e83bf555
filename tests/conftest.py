"""Fixtures shared by every test module: a throw-away data folder and settings pointing at it."""

from __future__ import annotations

from pathlib import Path

import pytest

from webapp.settings import Settings


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """An empty data folder; nothing a test does touches ./data or /data."""
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


@pytest.fixture
def settings(data_dir: Path, tmp_path: Path) -> Settings:
    """Standalone settings (default caps) with every store under ``data_dir``."""
    return Settings.from_env(
        environ={"MEMORY_DATA_DIR": str(data_dir)},
        options_file=tmp_path / "no-options.json",
    )
