"""The dashboard's server extracts due threads by itself (``curator.background``) while it runs.

Started by ``serve.run`` (never by ``create_app``: the tests' apps and a WSGI host that imports
the app extract only when asked); it takes the same places for an extraction as the
dashboard's buttons (``context.MAX_EXTRACTIONS``), and stops when the server stops: on its
return, Ctrl-C or SIGTERM (then the signal goes on to what handled it before)."""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType
from typing import Any

from ...curator.background import BackgroundExtraction
from ...extraction.waiting import Waiting, waiting
from ...settings import Settings
from ...stores import StoreError
from .context import Stores, settings, stores


def start_background(app: Any, settings: Settings) -> BackgroundExtraction | None:
    """Start extracting due threads in the background (None when MEMORY_AUTO_EXTRACT is off)."""
    if not settings.auto_extract:
        return None
    found: Stores = app.extensions["memory_curator"]
    background = BackgroundExtraction(found.curator, slots=found.extractions).start()
    _stop_on_sigterm(background)
    return background


def _stop_on_sigterm(background: BackgroundExtraction) -> None:
    """On SIGTERM, stop the background extraction first, then let the signal do what it did."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous == signal.SIG_IGN:
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        background.stop()
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
        if callable(previous):
            previous(signum, frame)
        else:
            os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, handler)


def waiting_context() -> dict[str, Any]:
    """What the Conversations page says of extraction: when it last ran, what waits, and
    whether it runs by itself (``_waiting.html``)."""
    configured = settings()
    try:
        found: Waiting | None = waiting(configured, stores().conversations)
    except (StoreError, OSError):
        found = None  # a damaged file: its banner says what to do; the page still shows
    return {
        "waiting": found,
        "auto_extract": configured.auto_extract,
        "auto_extract_setting": "memory_auto_extract"
        if configured.is_addon
        else "MEMORY_AUTO_EXTRACT",
    }
