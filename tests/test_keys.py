"""The small key files (webapp/stores/keys.py): made once, and a failed write leaves nothing."""

from __future__ import annotations

import errno
import os

import pytest

from webapp.stores.keys import secret_key


def test_a_key_is_made_once_and_read_back(tmp_path):
    path = tmp_path / "memories.vectors.key"
    key = secret_key(path)
    assert len(key) == 32 and secret_key(path) == key
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_a_full_disk_while_making_a_key_leaves_no_temp_file(tmp_path, monkeypatch):
    # Found by the dashboard's full-disk test: the key's temp file stayed behind.
    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError, match="No space left"):
        secret_key(tmp_path / "memories.vectors.key")
    assert list(tmp_path.iterdir()) == []
