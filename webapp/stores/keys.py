"""Random secret keys kept in small files (mode 0600): the key of the forgotten facts'
fingerprints (``memories.tombstones.key``) and the key of the vector cache's row names
(``memories.vectors.key``), each made once, by whichever process needs it first."""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path

from ..plainfiles import NotRegularFileError, read_regular
from .document import fsync_dir
from .setaside import free_path

log = logging.getLogger(__name__)

KEY_BYTES = 32


def _read_key(path: Path) -> bytes | None:
    try:
        raw = read_regular(path).strip()
    except (FileNotFoundError, NotRegularFileError):  # (a FIFO is set aside as damaged)
        return None
    try:
        key = bytes.fromhex(raw.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None
    return key if len(key) == KEY_BYTES else None


def secret_key(path: str | os.PathLike[str], what: str = "secret key") -> bytes:
    """The random key in the file ``path`` (64 hex digits), made once (mode 0600).

    A damaged key file is set aside (``<name>.corrupt-<stamp>``, bytes kept, a warning in the
    log) and a new key made; two processes making it at once agree on the first one written."""
    path = Path(path)
    key = _read_key(path)
    if key is not None:
        return key
    if path.exists():  # damaged: set aside with its bytes, never overwritten
        try:
            os.replace(path, free_path(path, "corrupt"))
        except FileNotFoundError:
            pass  # another process set it aside first
        else:
            log.warning("The %s %s was damaged; it was set aside", what, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            os.write(fd, secrets.token_hex(KEY_BYTES).encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:  # a full disk, say: no temp file is left behind
        tmp.unlink(missing_ok=True)
        raise
    try:
        os.link(tmp, path)  # first writer wins; the others read its key
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)
    key = _read_key(path)
    if key is None:  # pragma: no cover - the file was just written
        raise OSError(f"Could not read the {what} {path}")
    return key
