"""The dashboard's own files in the data folder: its secret key, the logins that have not ended
and the failed logins counted.

The dashboard (``web.secret_key``, ``web.auth``) uses them; they are named here, below it, so
``stats`` and ``repair`` (through the curator) find, check and repair them without knowing
the dashboard.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from typing import Any

from .document import JsonDocument
from .owned import DAMAGED, SECRET_KEY, UNFINISHED, OwnFile, existing, set_aside_paths

SECRET_KEY_FILE = ".secret_key"
SESSIONS_FILE = ".sessions.json"
ATTEMPTS_FILE = ".login_attempts.json"
LOGIN_LOCK_TIMEOUT = 5.0
_KEY_TEMP = re.compile(rf"{re.escape(SECRET_KEY_FILE)}\.\d+\.[0-9a-f]+\.tmp")


def secret_key_temp(key_file: Path) -> Path:
    """A new temp file name for writing the secret key ``key_file`` (``.secret_key.<pid>.<hex>.tmp``)."""
    return key_file.with_name(f"{key_file.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def secret_key_files(data_dir: Path) -> list[OwnFile]:
    """The secret key of the data folder, a damaged one set aside, and unfinished writes."""
    key_file = data_dir / SECRET_KEY_FILE
    try:
        temps = sorted(n for n in os.listdir(data_dir) if _KEY_TEMP.fullmatch(n))
    except OSError:
        temps = []
    return [
        *existing(key_file, SECRET_KEY),
        *(OwnFile(p, DAMAGED) for p in set_aside_paths(key_file, "corrupt")),
        *(OwnFile(data_dir / n, UNFINISHED) for n in temps),
    ]


def sessions_document(path: Path) -> JsonDocument:
    """The logins that have not ended: ``{session id: [mark, started]}``."""
    return JsonDocument(
        path, default=dict, validate=_validate_sessions, lock_timeout=LOGIN_LOCK_TIMEOUT
    )


def attempts_document(path: Path) -> JsonDocument:
    """Failed logins per client address: ``{client: [time, ...]}``."""
    return JsonDocument(
        path, default=dict, validate=_validate_attempts, lock_timeout=LOGIN_LOCK_TIMEOUT
    )


def _validate_sessions(data: Any) -> str | None:
    if not isinstance(data, dict) or not all(
        isinstance(v, list) and len(v) == 2 and isinstance(v[1], (int, float))
        for v in data.values()
    ):
        return "sessions must be an object of [mark, time] pairs"
    return None


def _validate_attempts(data: Any) -> str | None:
    if not isinstance(data, dict) or not all(
        isinstance(v, list) and all(isinstance(t, (int, float)) for t in v) for v in data.values()
    ):
        return "login attempts must be an object of number lists"
    return None
