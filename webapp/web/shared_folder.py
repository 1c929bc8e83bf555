"""The add-on's option ``memory_data_dir``: the stores in a folder under /share, which other
add-ons and containers can map too. What the add-on kept in its private /data moves there on
the first start with the option: copied, checked byte for byte, and only then removed; when
it cannot be moved whole, nothing is removed and the add-on says why and does not start."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

from ..settings import Settings, SettingsError

OPTIONS_FILE = "options.json"  # the Supervisor's, stays where it is
# The add-on keeps the memory's files in /data/memories; a data folder keeps them at its top
# (the layout `--data-dir` and MEMORY_DATA_DIR use), so a program in another container
# opens the shared folder like any data folder.
ADDON_MEMORY_FOLDER = "memories"


class MoveError(SettingsError):
    """The private data could not be moved to the shared folder; nothing was removed."""


def move_to_shared_folder(settings: Settings) -> list[Path]:
    """Move the add-on's private data into ``settings.data_dir`` when memory_data_dir names a
    folder elsewhere and the private folder still holds data; the files moved (none when there
    was nothing to move, or the shared folder already holds a memory)."""
    source, target = settings.moved_from, Path(settings.data_dir)
    if source is None or not source.is_dir() or _same(source, target):
        return []
    plan = _plan(source, target)
    if not plan:
        return []
    if target.is_relative_to(source):
        raise MoveError(
            f"memory_data_dir ({target}) is inside the add-on's own folder {source}; "
            "name a folder under /share.",
            source="memory_data_dir",
            value=str(target),
        )
    if (target / "memories.json").exists():
        print(
            f"The shared folder {target} already holds a memory: it is used, and the data "
            f"in {source} was left where it is (not moved, not removed).",
            flush=True,
        )
        return []
    clashes = [str(dst) for _, dst in plan if dst.exists()]
    if clashes or len({dst for _, dst in plan}) < len(plan):
        raise MoveError(
            f"Cannot move the data in {source} to {target}: {', '.join(clashes) or 'two files'} "
            "would be overwritten. Nothing was moved or removed; empty the shared folder or "
            "clear memory_data_dir.",
            source="memory_data_dir",
            value=str(target),
        )
    _copy_and_check(plan, source, target)
    for src, _ in plan:
        _remove(src)
    memory_folder = source / ADDON_MEMORY_FOLDER
    if memory_folder.is_dir() and not any(memory_folder.iterdir()):
        memory_folder.rmdir()
    moved = [dst for _, dst in plan]
    print(
        f"Moved the data from {source} to the shared folder {target} "
        f"({len(moved)} items, each checked before it was removed).",
        flush=True,
    )
    return moved


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _plan(source: Path, target: Path) -> list[tuple[Path, Path]]:
    """(where it is, where it goes) for everything in the private folder but options.json."""
    plan: list[tuple[Path, Path]] = []
    for entry in sorted(source.iterdir()):
        if entry.name == OPTIONS_FILE:
            continue
        if entry.name == ADDON_MEMORY_FOLDER and entry.is_dir():
            plan += [(inner, target / inner.name) for inner in sorted(entry.iterdir())]
        else:
            plan.append((entry, target / entry.name))
    return plan


def _copy_and_check(plan: list[tuple[Path, Path]], source: Path, target: Path) -> None:
    """Copy every item, then compare every file byte for byte; on any failure the copies are
    taken back and the private folder is left whole."""
    made: list[Path] = []
    try:
        target.mkdir(parents=True, exist_ok=True)
        for src, dst in plan:
            made.append(dst)
            if src.is_dir() and not src.is_symlink():
                shutil.copytree(src, dst, symlinks=True)
            else:
                shutil.copy2(src, dst, follow_symlinks=False)
        for src, dst in plan:
            _check_copy(src, dst)
    except (OSError, ValueError) as exc:
        for dst in made:
            try:
                _remove(dst)
            except OSError:
                pass
        raise MoveError(
            f"Cannot move the data in {source} to the shared folder {target}: {exc}. Nothing "
            "was removed from the add-on's folder; fix the cause (space, permissions) or clear "
            "memory_data_dir.",
            source="memory_data_dir",
            value=str(target),
        ) from exc


def _check_copy(src: Path, dst: Path) -> None:
    if src.is_dir() and not src.is_symlink():
        for inner in src.rglob("*"):
            if inner.is_file() and not inner.is_symlink():
                _check_copy(inner, dst / inner.relative_to(src))
        return
    if src.is_file() and not src.is_symlink() and not filecmp.cmp(src, dst, shallow=False):
        raise ValueError(f"the copy of {src} differs from it")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
