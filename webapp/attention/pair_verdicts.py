"""The LLM tier's verdicts kept between processes: one small JSON file beside the memories.

A verdict is about a pair of memory versions: it is filed under the keyed hashes of the two
texts (``SemanticIndex.text_key``, the vector cache's row names), never their words, so the
file holds no memory's text. A pair whose two memories did not change is found again after a
restart and not asked about again; a changed memory has another hash, so its pairs are asked
anew. The verdicts of facts deleted forever (their tombstones' ``vector_keys``) are never
read and are dropped whenever the file is written; the file keeps at most ``KEPT`` verdicts
per model, the oldest let go first.

The file is ``memories.pair-verdicts.json`` (``JsonDocument``: a lock, atomic writes, a damaged
file set aside and started again), listed by ``verdict_files`` for ``stats`` and ``repair``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..stores import Changed, Unchanged
from ..stores.document import JsonDocument
from ..stores.owned import OwnFile
from .semantic import semantic_index

FORMAT = "memory-curator-pair-verdicts/1"
KEPT = 20_000  # verdicts kept per model
VERDICTS = frozenset({"same", "contradiction", "different", "unsure"})

Pair = tuple[str, str]


def verdict_path_for(store_path: str | os.PathLike[str]) -> Path:
    """``memories.pair-verdicts.json`` beside ``memories.json``."""
    path = Path(store_path)
    return path.with_name(f"{path.stem}.pair-verdicts.json")


def _empty() -> dict[str, Any]:
    return {"format": FORMAT, "models": {}}


def _problem(data: Any) -> str | None:
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        return "not a pair verdict file"
    return None


class PairVerdicts:
    """Verdicts per model and pair of texts, kept in the file under the texts' keyed hashes."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        key: Callable[[str], bytes],
        forgotten: Callable[[], Collection[bytes]] = frozenset,
    ) -> None:
        self.path = Path(path)
        self._key = key
        self._forgotten = forgotten
        self._document = JsonDocument(self.path, default=_empty, validate=_problem)

    def _name(self, pair: Pair) -> str:
        first, second = sorted((self._key(pair[0]).hex(), self._key(pair[1]).hex()))
        return f"{first}:{second}"

    def _gone(self) -> frozenset[str]:
        return frozenset(key.hex() for key in self._forgotten())

    def get(self, model: str, pairs: Sequence[Pair]) -> dict[Pair, str]:
        """The verdicts ``model`` gave about ``pairs`` (keyed as given); none of a fact deleted
        forever."""
        if not pairs or not self.path.exists():
            return {}
        kept = self._document.read()["models"].get(model)
        if not isinstance(kept, dict) or not kept:
            return {}
        gone = self._gone()
        found: dict[Pair, str] = {}
        for pair in pairs:
            name = self._name(pair)
            verdict = kept.get(name)
            if verdict in VERDICTS and not gone.intersection(name.split(":")):
                found[pair] = verdict
        return found

    def put(self, model: str, verdicts: Mapping[Pair, str]) -> None:
        """Keep ``verdicts`` of ``model`` (the newest last; the oldest beyond ``KEPT`` go)."""
        named = {self._name(pair): v for pair, v in verdicts.items() if v in VERDICTS}
        if not named:
            return
        gone = self._gone()

        def mutate(data: dict[str, Any]) -> Changed[None] | Unchanged[None]:
            models = data.setdefault("models", {})
            kept = models.get(model)
            kept = dict(kept) if isinstance(kept, dict) else {}
            for name, verdict in named.items():
                kept.pop(name, None)
                kept[name] = verdict
            for name in [n for n in kept if gone.intersection(n.split(":"))]:
                del kept[name]
            for name in list(kept)[: max(0, len(kept) - KEPT)]:
                del kept[name]
            models[model] = kept
            data["format"] = FORMAT
            return Changed(None)

        self._document.update(mutate)

    def own_files(self) -> list[OwnFile]:
        """The file, its backup, lock and what the file layer set aside, when there."""
        return self._document.own_files()


def verdict_files(store_path: str | os.PathLike[str]) -> list[OwnFile]:
    """The verdict file beside the memory file and what the file layer keeps beside it."""
    return JsonDocument(verdict_path_for(store_path), default=_empty).own_files()


def pair_verdicts(store_path: str | os.PathLike[str]) -> PairVerdicts:
    """The verdict file of the memory file at ``store_path``, its rows named by the memory
    file's similarity index (whose model is loaded when a verdict is first looked up: by the
    scan thread, never a page)."""
    index = semantic_index(store_path)
    return PairVerdicts(verdict_path_for(store_path), index.text_key, index.forgotten_keys)
