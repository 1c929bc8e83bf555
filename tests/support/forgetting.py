"""Delete forever as its tests check it: the words a fact was said in, and every file under a
data folder that still holds one of them (as UTF-8 or as JSON's ASCII escapes)."""

from __future__ import annotations

import json
from pathlib import Path

EN_FACT = "Usually goes to sleep by eleven"

EN_SAID = "I usually go to sleep by eleven."


EN_WORDS = (EN_FACT, EN_SAID, "usually go to sleep by eleven")


def files_holding(data_dir: Path, words: tuple[str, ...]) -> list[str]:
    """Every file under the data folder that holds one of ``words`` (case-insensitively)."""
    found = []
    for path in sorted(data_dir.rglob("*")):
        if not path.is_file():
            continue
        raw = path.read_bytes().lower()
        for word in words:
            if any(form.lower() in raw for form in encoded_forms(word)):
                found.append(f"{path.relative_to(data_dir)}: {word}")
    return found


def encoded_forms(word: str) -> list[bytes]:
    """The bytes a file could hold the words as: UTF-8, and JSON's ASCII escapes."""
    return list(dict.fromkeys([word.encode("utf-8"), json.dumps(word)[1:-1].encode("ascii")]))
