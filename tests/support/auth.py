"""Standalone access as the tests use it: the token, logging in through the form with its CSRF
token, and the command that serves the dashboard on every interface."""

from __future__ import annotations

import re
import sys
from pathlib import Path

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')

TOKEN = "correct-horse-battery-staple-42"


def log_in(client, token: str = TOKEN, next_url: str | None = None, remote: str = "127.0.0.1"):
    data = {"token": token, "csrf_token": login_form_token(client)}
    if next_url is not None:
        data["next"] = next_url
    return client.post("/login", data=data, environ_base={"REMOTE_ADDR": remote})


def serve_command(port: int, data_dir: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "webapp",
        "serve",
        "--host",
        "0.0.0.0",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        *extra,
    ]


def login_form_token(client) -> str:
    page = client.get("/login").get_data(as_text=True)
    return CSRF.search(page).group(1)
