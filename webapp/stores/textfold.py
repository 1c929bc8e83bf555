"""Text folded for matching: case, width and Chinese script, so 綠茶 finds 绿茶 and ＡＢＣ finds abc.

Traditional characters map to simplified ones one by one (OpenCC's TSCharacters table, shipped
in the opencc-purepy package, Apache-2.0). Character by character keeps every folded character
traceable to the original one, which the dashboard's highlighting relies on.
"""

from __future__ import annotations

import functools
import unicodedata
from importlib.resources import files


@functools.cache
def traditional_to_simplified() -> dict[int, str]:
    """A str.translate table from each traditional character to its usual simplified form."""
    lines = files("opencc_purepy").joinpath("dicts/TSCharacters.txt").read_text("utf-8")
    table: dict[int, str] = {}
    for line in lines.splitlines():
        source, _, targets = line.partition("\t")
        target = targets.split(" ")[0] if targets else ""
        if len(source) == 1 and len(target) == 1:
            table[ord(source)] = target
    return table


def fold(text: str) -> str:
    """Case-, width- and script-insensitive form (NFKC, case folding, traditional → simplified)."""
    return unicodedata.normalize("NFKC", text).casefold().translate(traditional_to_simplified())
