"""Fixtures shared by every test module: a throw-away data folder, settings pointing at it, and
fake LLM servers on 127.0.0.1 that speak the providers' wire formats."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import flask
import pytest
from flask.testing import FlaskClient

from tests.support.data import make_settings
from tests.support.llm import FakeLlmServer, anthropic_body, openai_body
from webapp.settings import Settings

REPO = Path(__file__).resolve().parent.parent

# One OpenMP thread per process under pytest-xdist (./test.sh runs a worker per core): the
# similarity model's engine would otherwise start two in every worker and every process a test
# starts, and on a machine with no core to spare its threads spin-wait for each other (the
# extraction tests that start a process per thread took 1.7 times as long). The vectors are
# the same; a value set outside is kept. A host's choice reaches the embedder the same way.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")


class BufferedClient(FlaskClient):
    """Flask's test client, reading each response whole and closing it as a browser would (an
    unbuffered static file response otherwise keeps its file open until garbage collection),
    and closing the request body it built (an upload over 500 KB is spooled to a temporary file
    that Werkzeug's client leaves open)."""

    def open(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("buffered", True)
        response = super().open(*args, **kwargs)
        for sent in (*getattr(response, "history", ()), response):
            body = sent.request.environ.get("wsgi.input")
            if body is not None:
                body.close()
        return response


flask.Flask.test_client_class = BufferedClient


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """An empty data folder; nothing a test does touches ./data or /data."""
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


@pytest.fixture
def settings(data_dir: Path, tmp_path: Path) -> Settings:
    """Standalone settings (default caps) with every store under ``data_dir``."""
    return make_settings(tmp_path)


@pytest.fixture
def openai_server() -> Iterator[FakeLlmServer]:
    with FakeLlmServer(openai_body) as server:
        yield server


@pytest.fixture
def anthropic_server() -> Iterator[FakeLlmServer]:
    with FakeLlmServer(anthropic_body) as server:
        yield server
