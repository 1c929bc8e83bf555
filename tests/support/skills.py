"""The sample skill folder shipped with the demo data, zipped as a person uploads it."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "webapp" / "demo_data" / "skills" / "poem-writer"


def make_zip(folder: Path, target: Path) -> Path:
    """Zip ``folder`` the way a person does (the folder itself at the top of the archive)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"{folder.name}/{path.relative_to(folder).as_posix()}")
    target.write_bytes(buffer.getvalue())
    return target
