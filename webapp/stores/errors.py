"""The errors every store raises; the interfaces turn each into a clear message."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class StoreError(Exception):
    """Base class for store problems a person can act on."""


class StoreCorruptError(StoreError):
    """A store file does not parse or has the wrong shape; it is never overwritten."""

    def __init__(
        self,
        path: Path | str,
        reason: str,
        *,
        line: int | None = None,
        column: int | None = None,
        offset: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.reason = reason
        self.line = line
        self.column = column
        self.offset = offset
        where = ""
        if line is not None:
            where = f" at line {line}, column {column}"
        elif offset is not None:
            where = f" at byte {offset}"
        super().__init__(
            f"The store file {self.path} is damaged{where}: {reason}. It was left untouched; "
            f"run `memory-curator repair` to set it aside and start from the last good backup."
        )


class StoreBusyError(StoreError):
    """Another process held the store's lock longer than we are willing to wait."""

    def __init__(self, path: Path | str, timeout: float, *, reason: str | None = None) -> None:
        self.path = Path(path)
        self.timeout = timeout
        why = reason or f"another process held its lock for more than {timeout:g} s"
        super().__init__(
            f"The store file {self.path} is busy: {why}. Nothing was changed; try again."
        )


class StoreSymlinkError(StoreError):
    """The store file is a symbolic link; writing would replace the link and split the store."""

    def __init__(self, path: Path | str, target: Path | str) -> None:
        self.path = Path(path)
        self.target = Path(target)
        super().__init__(
            f"The store file {self.path} is a symbolic link to {self.target}. Saving through it "
            f"would replace the link with a plain file and split the store in two, so nothing was "
            f"changed. Point the data folder setting at the real folder, or move {self.target} "
            f"to {self.path} in place of the link."
        )


class StoreWriteError(StoreError, OSError):
    """Saving failed (disk full, I/O error); the file on disk is unchanged. Keeps ``errno``."""

    def __init__(self, path: Path | str, cause: OSError) -> None:
        self.path = Path(path)
        super().__init__(
            f"Could not save {self.path}: {cause.strerror or cause}. "
            f"The file was left as it was; nothing was changed."
        )
        self.errno = cause.errno
        self.strerror = cause.strerror

    def __str__(self) -> str:
        return str(self.args[0])


class MemoryFullError(StoreError):
    """Adding would exceed the memory store's item or character cap."""

    def __init__(
        self, message: str, *, items: int, max_items: int, chars: int, max_chars: int
    ) -> None:
        self.items = items
        self.max_items = max_items
        self.chars = chars
        self.max_chars = max_chars
        super().__init__(message)


class MemoryTooLongError(MemoryFullError, ValueError):
    """One fact is longer than a memory may be (the store's character cap), however full it is."""

    def __init__(self, length: int, max_chars: int, *, items: int = 0, chars: int = 0) -> None:
        super().__init__(
            f"This is {length:,} characters; one memory can hold at most {max_chars:,} "
            f"(the whole store's limit). Shorten it.",
            items=items,
            max_items=0,
            chars=chars,
            max_chars=max_chars,
        )
        self.length = length


class DuplicateMemoryError(StoreError, ValueError):
    """The very same fact is already remembered; ``existing`` is that memory."""

    def __init__(self, existing: Any) -> None:
        self.existing = existing
        super().__init__(f"This is already remembered (id {existing.id}); nothing was added.")


class ConflictError(StoreError):
    """The record changed since the caller read it; ``current`` is what is stored now."""

    def __init__(self, current: Any) -> None:
        self.current = current
        super().__init__(
            "This memory was changed elsewhere since you loaded it; nothing was overwritten."
        )


class NotFoundError(StoreError, KeyError):
    """No record with that id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "Not found"
