"""Extraction that runs by itself: the dashboard's server reads due threads in the background.

Every ``MEMORY_AUTO_EXTRACT_EVERY`` seconds the server looks for the threads the seed's pacing
says are due (4 new messages and 60 s since the thread's last extraction, ``waiting``) and
extracts them through the curator (``Curator.extract`` without ``force``: only the new
messages, every rule of a button's extraction), one thread at a time. It is bounded like the
dashboard's own extractions: each takes one of the places a button or a step of "Extract from
all conversations" takes (``slots``; none free: it tries at its next look), and the LLM call
is stopped after ``MEMORY_LLM_TIMEOUT``. Across processes a thread is claimed in the shared
extraction state before it is read (``ExtractionState.claim``), and a thread a running
"Extract from all conversations" has claimed is left to it, so two processes never extract
one thread at once; a claim left by a process that died is taken over after the batch's time
limit (``run_time_limit``: one LLM timeout more than the calls a run may make, plus 30 s).
"""

from __future__ import annotations

import logging
import threading

from ..extraction.batch import job_document
from ..extraction.llm import run_time_limit
from ..extraction.run import ExtractionResult
from ..extraction.state import ExtractionState
from ..extraction.waiting import waiting
from ..stores.errors import NotFoundError
from .core import Curator

log = logging.getLogger(__name__)

ACTOR = "background"  # who the history log says extracted


class BackgroundExtraction:
    """Looks for due threads every ``every`` seconds and extracts them, until ``stop``."""

    def __init__(
        self,
        curator: Curator,
        *,
        slots: threading.Semaphore | None = None,
        every: float | None = None,
    ) -> None:
        self.curator = curator
        self.slots = slots
        self.every = float(every if every is not None else curator.settings.auto_extract_every)
        self.state = ExtractionState.from_settings(curator.settings)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _batch_claims(self) -> set[str]:
        """The threads a running "Extract from all conversations" is reading right now."""
        job = job_document(self.curator.settings).read()
        claims = job.get("claims") if job.get("status") == "running" else None
        return set(claims) if isinstance(claims, dict) else set()

    def run_once(self) -> list[ExtractionResult]:
        """Extract every thread that is due now, one at a time; what each run did."""
        settings = self.curator.settings
        due = waiting(settings, self.curator._conversation_store, self.state).due
        results: list[ExtractionResult] = []
        if not due:
            return results
        taken = self._batch_claims()
        for thread in due:
            if self._stop.is_set():
                break
            if thread in taken:
                continue
            if self.slots is not None and not self.slots.acquire(blocking=False):
                break  # every place for an extraction is taken: the next look tries again
            try:
                result = self._extract(thread)
            except Exception:  # one thread that cannot be read must not stop the others
                log.exception("Background extraction of %r failed", thread)
                continue
            finally:
                if self.slots is not None:
                    self.slots.release()
            if result is not None:
                results.append(result)
        return results

    def _extract(self, thread: str) -> ExtractionResult | None:
        token = self.state.claim(
            thread, stale_after=run_time_limit(self.curator.settings.llm_timeout)
        )
        if token is None:
            return None  # another process is reading it
        try:
            (result,) = self.curator.extract(thread, force=False, actor=ACTOR)
        except NotFoundError:
            return None  # cleared meanwhile: nothing to read
        finally:
            self.state.release(thread, token)
        return result

    # ----------------------------------------------------------------- the thread
    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception:  # a damaged file or a busy lock must not end the looking
                log.exception("Background extraction failed; it tries again at its next look")
            if self._stop.wait(self.every):
                break

    def start(self) -> BackgroundExtraction:
        """Start looking (in a daemon thread); returns itself."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop, name="memory-curator-extraction", daemon=True
            )
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop looking: no new extraction starts, and one under way gets ``timeout`` seconds
        to finish; whether the thread has ended."""
        self._stop.set()
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()
