"""What the tests share, in one place: the CLI runner (``cli``), store factories (``stores``),
data folders (``data``), the servers they start (``web``, ``mcp_http``, ``mcp_stdio``), fake model
servers (``llm``) and the inputs several test files read. Test modules import from here, never
from one another nor from a ``conftest.py`` (fixtures come from the conftests by name)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
