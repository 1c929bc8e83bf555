"""Unpacking an uploaded skill ``.zip`` safely: no zip-slip, no links, no zip bomb."""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
import tempfile
import unicodedata
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, BinaryIO

from .errors import SkillImportError

if TYPE_CHECKING:
    import zipfile

MAX_ZIP_MEMBERS = 1_000
MAX_ZIP_BYTES = 20_000_000  # total unpacked size of an uploaded zip


@contextlib.contextmanager
def unpacked_skill(source: bytes | BinaryIO | str | os.PathLike[str]) -> Iterator[Path]:
    """The folder holding SKILL.md inside a temporary unpacked copy of the zip, removed on exit."""
    import zipfile  # deferred: only an upload needs it

    data = io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source
    try:
        archive = zipfile.ZipFile(data)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise SkillImportError(
            f"The upload is not a readable zip file: {exc}", code="zip_unreadable", detail=str(exc)
        ) from exc
    with archive, tempfile.TemporaryDirectory(prefix="skill-import-") as tmp:
        _extract_zip(archive, Path(tmp))
        yield _skill_root(Path(tmp))


def _safe_member(name: str) -> PurePosixPath | None:
    """The relative path of a zip member, None for entries to ignore; SkillImportError if hostile."""
    if "\x00" in name or any(unicodedata.category(c) == "Cc" for c in name):
        raise SkillImportError(
            f"The zip holds a file name with control characters: {name!r}.",
            code="zip_control_characters",
            name=repr(name),
        )
    if "\\" in name or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise SkillImportError(
            f"The zip holds an absolute or Windows-style path: {name!r}.",
            code="zip_absolute_path",
            name=repr(name),
        )
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise SkillImportError(
            f"The zip holds a path that climbs out of the folder: {name!r}.",
            code="zip_climbs_out",
            name=repr(name),
        )
    if not parts or parts[0] == "__MACOSX" or parts[-1] == ".DS_Store" or name.endswith("/"):
        return None
    return PurePosixPath(*parts)


def _extract_zip(archive: zipfile.ZipFile, target: Path) -> None:
    """Unpack into ``target`` with limits on count and size (read, not trusted from headers)."""
    members = archive.infolist()
    if len(members) > MAX_ZIP_MEMBERS:
        raise SkillImportError(
            f"The zip holds {len(members)} entries; at most {MAX_ZIP_MEMBERS}.",
            code="zip_too_many_entries",
            count=len(members),
            most=MAX_ZIP_MEMBERS,
        )
    budget = MAX_ZIP_BYTES
    for info in members:
        relative = _safe_member(info.filename)
        if relative is None:
            continue
        if stat.S_ISLNK(info.external_attr >> 16):
            raise SkillImportError(
                f"The zip holds a symbolic link: {info.filename!r}.",
                code="zip_symlink",
                name=repr(info.filename),
            )
        if info.flag_bits & 0x1:
            raise SkillImportError(
                f"The zip entry {info.filename!r} is encrypted.",
                code="zip_encrypted",
                name=repr(info.filename),
            )
        dest = target.joinpath(*relative.parts)
        if not dest.resolve().is_relative_to(target.resolve()):
            raise SkillImportError(
                f"The zip entry {info.filename!r} points outside the folder.",
                code="zip_points_outside",
                name=repr(info.filename),
            )
        dest.parent.mkdir(parents=True, exist_ok=True)
        budget = _copy_member(archive, info, dest, budget)


def _copy_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path, budget: int) -> int:
    """Copy one member, stopping as soon as the unpacked total would pass the limit."""
    import zipfile

    try:
        with archive.open(info) as src, open(dest, "xb") as out:
            while chunk := src.read(65536):
                budget -= len(chunk)
                if budget < 0:
                    raise SkillImportError(
                        f"The zip unpacks to more than {MAX_ZIP_BYTES} bytes; it was not imported.",
                        code="zip_too_large",
                        most=MAX_ZIP_BYTES,
                    )
                out.write(chunk)
    except FileExistsError as exc:
        raise SkillImportError(
            f"The zip holds {info.filename!r} twice.", code="zip_twice", name=repr(info.filename)
        ) from exc
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as exc:
        raise SkillImportError(
            f"The zip entry {info.filename!r} cannot be unpacked: {exc}",
            code="zip_entry_unreadable",
            name=repr(info.filename),
            detail=str(exc),
        ) from exc
    return budget


def _skill_root(unpacked: Path) -> Path:
    """The folder holding SKILL.md: the zip's top level or its single top-level folder."""
    if (unpacked / "SKILL.md").is_file():
        return unpacked
    candidates = [d for d in unpacked.iterdir() if d.is_dir() and (d / "SKILL.md").is_file()]
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        raise SkillImportError(
            "The zip holds several skills; upload one skill folder per zip.",
            code="zip_several_skills",
        )
    raise SkillImportError(
        "The zip has no SKILL.md at its top level or in its top folder.", code="zip_no_skill_md"
    )
