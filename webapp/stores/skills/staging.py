"""Uploaded skill zips kept between the preview of an import and its confirmation.

``SkillDocumentStore.preview_import_zip`` plans an upload and keeps its bytes here under a
random token; ``import_staged(token)`` applies exactly those bytes later (another request, another
worker process). A kept upload is removed once it is imported, or after ``STAGED_MAX_AGE_S``.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import SkillImportError
from .importing import ImportPlan

STAGED_MAX_AGE_S = 24 * 3600
STAGING_DIR = ".imports"  # inside the skills folder, unless the store is given another folder
_TOKEN = re.compile(r"[0-9a-f]{32}")


class StagedImportGoneError(SkillImportError):
    """The token names no kept upload: it expired, was applied already, or is not a token."""

    code = "skill_upload_gone"
    codes = ("skill_upload_gone",)

    def __init__(self, token: str) -> None:
        self.token = token
        super().__init__(
            "That import preview has expired or was already applied; choose the file again.",
            code="skill_upload_gone",
        )


@dataclass(frozen=True)
class StagedImport:
    """A previewed zip import: what it would change, and the token that applies it."""

    token: str
    plan: ImportPlan


class ImportStaging:
    """A folder of uploaded zips, each named by its token (``<token>.zip``)."""

    def __init__(self, directory: str | os.PathLike[str], max_age: float = STAGED_MAX_AGE_S):
        self.directory = Path(directory)
        self.max_age = max_age

    def keep(self, data: bytes) -> str:
        """Keep ``data`` and return its token; uploads older than ``max_age`` are dropped."""
        self.directory.mkdir(parents=True, exist_ok=True)
        now = time.time()
        for old in self.directory.glob("*.zip"):
            try:
                if now - old.stat().st_mtime > self.max_age:
                    old.unlink()
            except OSError:
                pass  # another process removed it first
        token = secrets.token_hex(16)
        self._path(token).write_bytes(data)
        return token

    def read(self, token: str) -> bytes:
        """The upload kept under ``token``; StagedImportGoneError when there is none."""
        if not _TOKEN.fullmatch(token):
            raise StagedImportGoneError(token)
        path = self._path(token)
        try:
            if time.time() - path.stat().st_mtime > self.max_age:
                raise StagedImportGoneError(token)
            return path.read_bytes()
        except FileNotFoundError:
            raise StagedImportGoneError(token) from None

    def discard(self, token: str) -> None:
        """Forget the upload kept under ``token`` (nothing happens when there is none)."""
        if _TOKEN.fullmatch(token):
            self._path(token).unlink(missing_ok=True)

    def kept(self) -> list[Path]:
        """The uploads kept now (``<token>.zip`` each), sorted."""
        try:
            names = sorted(os.listdir(self.directory))
        except OSError:
            return []
        return [
            self.directory / n for n in names if n.endswith(".zip") and _TOKEN.fullmatch(n[:-4])
        ]

    def _path(self, token: str) -> Path:
        return self.directory / f"{token}.zip"
