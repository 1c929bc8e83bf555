"""The sidecar lock ``<file>.lock`` that writers of one store take, and that survives deletion.

People run ``rm data/*.lock``, and backup or sync tools delete or replace lock files too. A
lock held on a file that is no longer at its path guards nothing: the next writer creates a
new file there and locks that. So a lock counts as taken only while the file it holds is the
one at the path (same device and inode); a waiter that finds otherwise lets go and takes it
again. (filelock checks this only when it takes the lock; ``still_held`` checks it at any
time.) The lock file itself is never deleted, so waiters never split across inodes.

A writer that already holds the lock when it is deleted cannot notice in time to stop a
second writer; the commit step in ``jsonwrite`` (a check that the data file is unchanged,
under ``commit_lock``) is what keeps both changes then.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from .errors import StoreBusyError

log = logging.getLogger(__name__)

LOCK_POLL_SECONDS = 0.005
_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class _Held(threading.local):
    fd: int | None = None
    depth: int = 0


class Gated:
    """Something whose writes take a SidecarLock (``locked()``): ``wait_gate`` bounds how many
    threads of this process may wait for that lock at once (see SidecarLock)."""

    def locked(self) -> SidecarLock:
        """The sidecar lock, bounded: raises StoreBusyError instead of hanging."""
        raise NotImplementedError

    @property
    def wait_gate(self) -> threading.Semaphore | None:
        return self.locked().wait_gate

    @wait_gate.setter
    def wait_gate(self, gate: threading.Semaphore | None) -> None:
        self.locked().wait_gate = gate


class SidecarLock:
    """An exclusive, bounded, per-thread reentrant flock on ``lock_path``.

    ``busy_path`` is the store file named in StoreBusyError. ``wait_gate``, when set, bounds how
    many threads of this process may wait for the lock at once: a thread that finds the lock
    taken and no free place to wait fails at once with StoreBusyError (so waiting writers
    cannot take every thread of a web server).
    """

    def __init__(
        self,
        lock_path: Path,
        *,
        timeout: float,
        busy_path: Path | None = None,
        poll_interval: float = LOCK_POLL_SECONDS,
    ) -> None:
        self.lock_path = Path(lock_path)
        self.timeout = timeout
        self.busy_path = Path(busy_path) if busy_path is not None else self.lock_path
        self.poll_interval = poll_interval
        self.wait_gate: threading.Semaphore | None = None
        self._held = _Held()

    def __enter__(self) -> SidecarLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> None:
        """Take the lock (again, when this thread already holds it); StoreBusyError on timeout."""
        if self._held.depth:
            self._held.depth += 1
            return
        deadline = time.monotonic() + self.timeout
        fd = self._try_once()
        if fd is None:
            fd = self._wait(deadline)
        self._held.fd, self._held.depth = fd, 1

    def _wait(self, deadline: float) -> int:
        gate = self.wait_gate
        if gate is not None and not gate.acquire(blocking=False):
            raise StoreBusyError(self.busy_path, self.timeout)
        try:
            while True:
                if time.monotonic() >= deadline:
                    raise StoreBusyError(self.busy_path, self.timeout)
                time.sleep(self.poll_interval)
                fd = self._try_once()
                if fd is not None:
                    return fd
        finally:
            if gate is not None:
                gate.release()

    def _try_once(self) -> int | None:
        """The locked descriptor of the file at the path, or None when another holds it."""
        fd = os.open(self.lock_path, _OPEN_FLAGS, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        if not _is_at_path(fd, self.lock_path):
            # Deleted (or replaced) between our open and our lock: it guards nothing.
            os.close(fd)
            return None
        return fd

    def still_held(self) -> bool:
        """True when this thread holds the lock and its file is still the one at the path."""
        fd = self._held.fd
        return fd is not None and _is_at_path(fd, self.lock_path)

    def retake(self) -> None:
        """Let go of a lock whose file is no longer at the path and take the one that is.

        The thread keeps its nesting depth; StoreBusyError when the new one stays taken.
        """
        if not self._held.depth:
            raise RuntimeError(f"{self.lock_path} is not held by this thread")
        old, self._held.fd = self._held.fd, None
        if old is not None:
            os.close(old)
        fd = self._try_once()
        if fd is None:
            fd = self._wait(time.monotonic() + self.timeout)
        self._held.fd = fd

    def release(self) -> None:
        """Let go (the last release of a thread unlocks and closes; the file stays)."""
        if not self._held.depth:
            return
        self._held.depth -= 1
        if self._held.depth:
            return
        fd, self._held.fd = self._held.fd, None
        if fd is not None:
            os.close(fd)  # closing the last descriptor releases the flock


def _is_at_path(fd: int, path: Path) -> bool:
    held = os.fstat(fd)
    try:
        current = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino)


@contextlib.contextmanager
def commit_lock(directory: Path) -> Iterator[None]:
    """A short exclusive lock on the folder itself, held only while checking and replacing.

    A folder holding files cannot be deleted, so this lock holds even when someone deletes
    the sidecar lock files: two writers that both think they own a store still check and
    replace one after the other. Filesystems without flock on folders go without it.
    """
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        log.debug("No commit lock on %s: %s", directory, exc)
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            log.debug("No commit lock on %s: %s", directory, exc)
        yield
    finally:
        os.close(fd)
