"""A TypeScript bot: the MCP TypeScript SDK's streamable HTTP client (installed from
tests/mcp_ts_client/package-lock.json with ``npm ci``) against ``memory-curator serve`` as a
real process, one session per call."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.auth import TOKEN
from tests.support.mcp_http import dashboard
from webapp.stores import MemoryStore

CLIENT = Path(__file__).resolve().parent / "mcp_ts_client"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed for the MCP TypeScript SDK",
)


@pytest.fixture(scope="module")
def ts_client() -> Path:
    """The client folder with its node_modules, installed exactly as the lock file says."""
    if not (CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=CLIENT,
            check=True,
            capture_output=True,
            timeout=600,
        )
    return CLIENT / "client.mjs"


def run_client(
    ts_client: Path, url: str, token: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["node", str(ts_client), url, *([token] if token else [])],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_typescript_sdk_client_adds_recalls_searches_updates_and_deletes(
    ts_client: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    with dashboard(data, MEMORY_MCP_TRUSTED="10.11.12.13", MEMORY_MCP_TOKEN=TOKEN) as running:
        done = run_client(ts_client, running.mcp_url, TOKEN)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        refused = run_client(ts_client, running.mcp_url)  # no token from an untrusted address
    annotations = {tool["name"]: tool["annotations"] for tool in result["tools"]}
    assert annotations["manage_memory"]["destructiveHint"] is True
    assert annotations["recall"]["readOnlyHint"] is True
    assert annotations["review_memory"]["readOnlyHint"] is True
    assert result["added"]["text"].startswith("Added [")
    assert result["recalled"]["text"] == (
        "<long_term_memory>\n- The robot vacuum is called Dusty.\n</long_term_memory>"
    )
    assert "Dusty" in result["found"]["text"]
    assert "(was: The robot vacuum is called Dusty.)" in result["updated"]["text"]
    assert result["deleted"]["text"].startswith("Deleted [")
    assert not any(step["isError"] for key, step in result.items() if key != "tools")
    assert refused.returncode != 0 and "401" in refused.stderr
    assert MemoryStore(data / "memories.json").get_all() == []
