"""Opening a data file to read its content: a regular file only, and never waiting to open it.

A FIFO put where a store, its backup, its history log, the vector cache or a key belongs would
make ``open()`` wait for a writer that never comes, hanging every page, command and tool that
reads it; a device could be read without end. So every such file is opened with
``O_NONBLOCK`` (which returns at once for a FIFO) and checked with ``fstat`` before a byte is
read: anything but a regular file is refused with ``NotRegularFileError`` (an ``OSError``,
which the stores report as "unreadable"), a folder with ``IsADirectoryError`` as ``open()``
would. For a regular file ``O_NONBLOCK`` changes nothing.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class NotRegularFileError(OSError):
    """A path that should hold a file's content holds a FIFO, socket or device instead."""


def kind_of(mode: int) -> str:
    """What a non-regular file of ``mode`` is, in words."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return "not a regular file"


def check_regular(fd: int, path: str | os.PathLike[str]) -> os.stat_result:
    """``fstat`` of the open ``fd``; NotRegularFileError (IsADirectoryError for a folder) when
    it is no regular file."""
    st = os.fstat(fd)
    if stat.S_ISREG(st.st_mode):
        return st
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    raise NotRegularFileError(errno.EINVAL, f"it is {kind_of(st.st_mode)}", str(path))


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading bytes, once it is known to be a regular file;
    FileNotFoundError when it is missing, NotRegularFileError (or IsADirectoryError)."""
    fd = os.open(path, _FLAGS)
    try:
        check_regular(fd, path)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file ``path`` (``Path.read_bytes`` that never waits on a
    FIFO nor reads a device)."""
    with open_regular(Path(path)) as handle:
        return handle.read()
