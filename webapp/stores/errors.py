"""The errors every store raises; the interfaces turn each into a clear message.

Each has a ``code`` and the ``values`` of its message (see ``webapp.problems``); ``str(exc)``
is the English message the CLI and the MCP server show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..problems import CodedError, InputError
from ..sensitive.secrets import KIND_NAMES


class StoreError(CodedError):
    """Base class for store problems a person can act on."""

    code = "store_error"


class StoreCorruptError(StoreError):
    """A store file does not parse or has the wrong shape; it is never overwritten."""

    code = "store_corrupt"
    codes = ("store_corrupt", "store_corrupt_at_line", "store_corrupt_at_byte")

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
        where, code = "", "store_corrupt"
        if line is not None:
            where, code = f" at line {line}, column {column}", "store_corrupt_at_line"
        elif offset is not None:
            where, code = f" at byte {offset}", "store_corrupt_at_byte"
        super().__init__(
            f"The store file {self.path} is damaged{where}: {reason}. It was left untouched; "
            f"run `memory-curator repair` to set it aside and start from the last good backup.",
            code=code,
            path=self.path,
            reason=reason,
            line=line,
            column=column,
            offset=offset,
        )


class StoreBusyError(StoreError):
    """Another process held the store's lock longer than we are willing to wait
    (``store_busy``), or kept replacing the file while a change was saved (``store_replaced``,
    with ``replaced=True``)."""

    code = "store_busy"
    codes = ("store_busy", "store_replaced")

    def __init__(self, path: Path | str, timeout: float, *, replaced: bool = False) -> None:
        self.path = Path(path)
        self.timeout = timeout
        why = (
            "another program kept replacing it while this change was being saved"
            if replaced
            else f"another process held its lock for more than {timeout:g} s"
        )
        super().__init__(
            f"The store file {self.path} is busy: {why}. Nothing was changed; try again.",
            code="store_replaced" if replaced else "store_busy",
            path=self.path,
            seconds=timeout,
        )


class StoreSymlinkError(StoreError):
    """The store file is a symbolic link; writing would replace the link and split the store."""

    code = "store_symlink"

    def __init__(self, path: Path | str, target: Path | str) -> None:
        self.path = Path(path)
        self.target = Path(target)
        super().__init__(
            f"The store file {self.path} is a symbolic link to {self.target}. Saving through it "
            f"would replace the link with a plain file and split the store in two, so nothing was "
            f"changed. Point the data folder setting at the real folder, or move {self.target} "
            f"to {self.path} in place of the link.",
            path=self.path,
            target=self.target,
        )


class StoreFormatNewerError(StoreError):
    """The store file is in a format newer than this release knows (its ``<file>.format``
    says so): it is read, never written, so a newer release's data is not downgraded."""

    code = "store_format_newer"

    def __init__(
        self, path: Path | str, *, version: int, known: int, written_by: str, release: str
    ) -> None:
        self.path = Path(path)
        self.version = version
        self.known = known
        super().__init__(
            f"The store file {self.path} is in format {version}, written by {written_by}; "
            f"this release ({release}) knows format {known} at most, so it does not change "
            f"the file. Nothing was changed; update Memory Curator to write to it.",
            path=self.path,
            version=version,
            known=known,
            written_by=written_by,
            release=release,
        )


class StoreFormatUnreadableError(StoreError):
    """The sidecar naming a store file's format cannot be read: which format the file is in
    is unknown, so it is not written."""

    code = "store_format_unreadable"

    def __init__(self, path: Path | str, data_path: Path | str, reason: str) -> None:
        self.path = Path(path)
        self.data_path = Path(data_path)
        super().__init__(
            f"The format file {self.path} cannot be read ({reason}), so which format "
            f"{self.data_path} is in is unknown and nothing was changed. Put the format file "
            f"back from a backup, or delete it if {self.data_path} is in format 1 (as every "
            f"release before format files wrote it).",
            path=self.path,
            data_path=self.data_path,
            reason=reason,
        )


class StoreWriteError(StoreError, OSError):
    """Saving failed (disk full, I/O error); the file on disk is unchanged. Keeps ``errno``
    (its ``reason`` value is the operating system's English words for it)."""

    code = "store_write"

    def __init__(self, path: Path | str, cause: OSError) -> None:
        self.path = Path(path)
        reason = str(cause.strerror or cause)
        super().__init__(
            f"Could not save {self.path}: {reason}. "
            f"The file was left as it was; nothing was changed.",
            path=self.path,
            reason=reason,
            errno=cause.errno,
        )
        self.errno = cause.errno
        self.strerror = cause.strerror

    def __str__(self) -> str:
        return str(self.args[0])


class MemoryFullError(StoreError):
    """Adding would exceed the memory store's item cap (``memory_full``) or character cap
    (``memory_full_chars``, ``needed`` more characters), or an import would leave more than
    the caps allow (``memory_import_full``). Without ``code`` it follows from the figures."""

    code = "memory_full"
    codes: tuple[str, ...] = ("memory_full", "memory_full_chars", "memory_import_full")

    def __init__(
        self,
        message: str,
        *,
        items: int,
        max_items: int,
        chars: int,
        max_chars: int,
        needed: int = 0,
        code: str | None = None,
    ) -> None:
        self.items = items
        self.max_items = max_items
        self.chars = chars
        self.max_chars = max_chars
        self.needed = needed
        if code is None:
            if items > max_items or chars > max_chars:
                code = "memory_import_full"
            elif items >= max_items:
                code = "memory_full"
            else:
                code = "memory_full_chars"
        super().__init__(
            message,
            code=code,
            items=items,
            max_items=max_items,
            chars=chars,
            max_chars=max_chars,
            needed=needed,
        )


class MemoryTooLongError(MemoryFullError, ValueError):
    """One fact is longer than a memory may be (the store's character cap), however full it is."""

    code = "memory_too_long"
    codes = ()

    def __init__(self, length: int, max_chars: int, *, items: int = 0, chars: int = 0) -> None:
        super().__init__(
            f"This is {length:,} characters; one memory can hold at most {max_chars:,} "
            f"(the whole store's limit). Shorten it.",
            items=items,
            max_items=0,
            chars=chars,
            max_chars=max_chars,
            code="memory_too_long",
        )
        self.length = length
        self.values["length"] = length


class DuplicateMemoryError(StoreError, ValueError):
    """The very same fact is already remembered; ``existing`` is that memory."""

    code = "duplicate_memory"

    def __init__(self, existing: Any) -> None:
        self.existing = existing
        super().__init__(
            f"This is already remembered (id {existing.id}); nothing was added.", id=existing.id
        )


class ConflictError(StoreError):
    """The record changed since the caller read it; ``current`` is what is stored now."""

    code = "conflict"

    def __init__(self, current: Any) -> None:
        self.current = current
        super().__init__(
            "This memory was changed elsewhere since you loaded it; nothing was overwritten."
        )


class NotFoundError(StoreError, KeyError):
    """No record with that id: no such review item (``review_item_not_found``), a memory
    deleted meanwhile (``memory_gone``) or a conversation without messages
    (``conversation_not_found``); ``id`` is the one asked for."""

    code = "not_found"
    codes: tuple[str, ...] = (
        "not_found",
        "review_item_not_found",
        "memory_gone",
        "conversation_not_found",
    )

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "Not found"


class SecretInputError(InputError):
    """The text holds a secret (``webapp.sensitive.secrets``): a memory goes into every prompt, so it
    is kept only when the person confirms. ``values``: ``secret`` (its kind), ``masked`` (the
    text with the secret masked) and ``fact`` (the fact without it)."""

    code = "memory_secret"

    def __init__(self, kind: str, masked: str, fact: str) -> None:
        super().__init__(
            f"This holds a {KIND_NAMES.get(kind, kind)} (“{masked}”). A memory is shown to the "
            f"assistant in every conversation, so a secret is kept only when you confirm it; "
            f"or keep only that there is one: “{fact}”",
            secret=kind,
            masked=masked,
            fact=fact,
        )
