"""The dashboard's secret key (it signs the session cookie and the CSRF tokens): kept in the
data folder, so every worker process and restart shares it."""

from __future__ import annotations

import logging
import os
import re
import secrets
from pathlib import Path

from ...plainfiles import NotRegularFileError, read_regular
from ...settings import Settings
from ...stores import free_path, fsync_dir
from ...stores.dashboard_files import SECRET_KEY_FILE, secret_key_temp

log = logging.getLogger(__name__)

MIN_KEY_LENGTH = 32
_KEY_TEXT = re.compile(r"[A-Za-z0-9_\-]+")


def secret_key_for(settings: Settings) -> str:
    """A secret key kept in the data folder, so every worker process and restart shares it.

    An empty or damaged key file is set aside (``.secret_key.corrupt-<stamp>``, bytes kept) and
    a new key made, with a warning in the log: sessions signed with the old key end.
    """
    key_file = Path(settings.data_dir) / SECRET_KEY_FILE
    key = _read_key(key_file)
    if key is not None:
        return key
    if key_file.exists():
        aside = free_path(key_file, "corrupt")
        try:
            os.replace(key_file, aside)
        except FileNotFoundError:
            pass  # another worker set it aside first
        else:
            log.warning(
                "The secret key file %s was empty or damaged; it was moved to %s and a new key "
                "was made (everyone has to log in again).",
                key_file,
                aside,
            )
    key_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = secret_key_temp(key_file)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, secrets.token_urlsafe(48).encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, key_file)  # first writer wins; the others read its key
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    fsync_dir(key_file.parent)
    key = _read_key(key_file)
    if key is None:
        raise RuntimeError(f"Could not make a usable secret key in {key_file}.")
    return key


def _read_key(key_file: Path) -> str | None:
    """The key in ``key_file``, or None when it is missing, empty, not a key we write or no
    regular file (a FIFO there is set aside like a damaged key, never waited on)."""
    try:
        text = read_regular(key_file).decode("ascii").strip()
    except (FileNotFoundError, NotRegularFileError, UnicodeDecodeError):
        return None
    return text if len(text) >= MIN_KEY_LENGTH and _KEY_TEXT.fullmatch(text) else None
