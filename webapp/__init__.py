"""Memory Curator: long-term memory and conversation history for a personal LLM assistant.

``create_app`` lives here so ``flask --app webapp`` works, but Flask is imported only when
it is called: the library (``webapp.stores``, ``webapp.prompts``, ...) never needs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .settings import VERSION as __version__

if TYPE_CHECKING:
    from flask import Flask

    from .settings import Settings

__all__ = ["__version__", "create_app"]


def create_app(settings: Settings | None = None, **overrides: Any) -> Flask:
    """Build the dashboard application (see ``webapp.web``)."""
    from .web import create_app as _create_app

    return _create_app(settings, **overrides)
