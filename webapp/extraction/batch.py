"""Extraction over every conversation, done one thread at a time by whoever asks for the next step.

The job lives in a small file (``extraction-job.json`` next to the review queue), never in a
process's memory: the dashboard runs under several threads and processes, and any of them may
serve the next step or show the progress. ``step()`` claims one thread under the file's lock,
extracts it outside the lock, then records what it found, so two steps running at once never
read the same thread twice. A claim older than ``claim_timeout`` (its process died) is taken
over by the next step.

On disk: ``{"id", "status": "running" | "done", "startedAt", "finishedAt", "todo": [ids],
"claims": {id: ISO time}, "done": int, "total": int, "queued": int, "applied": int,
"skipped": int, "found": [fact texts], "failed": [{"thread", "error"}], "cut": int (facts left
out beyond MEMORY_MAX_FACTS_PER_THREAD), "llmProblems": [{"thread", "code", "values"}] (threads
whose LLM call failed, so the rules ran)}``.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..llm import LlmCallError, LlmConfigError, MemoryLlmCaller, llm_call_error
from ..settings import Settings
from ..stores import Changed, JsonDocument, Unchanged
from ..stores.conversations import ConversationStore
from ..stores.errors import NotFoundError
from ..stores.timefmt import now_iso, parse_ts, unreadable_times
from .llm import run_time_limit
from .run import FROM_SETTINGS, ExtractionResult, extract_conversation

JOB_FILE_NAME = "extraction-job.json"
MAX_FOUND = 50  # fact texts kept for the progress report


COUNTS = ("total", "done", "queued", "applied", "skipped")
STATUSES = ("running", "done")
TIMES = ("startedAt", "finishedAt")


def _validate(data: Any) -> str | None:
    """What makes ``data`` no job (None when it is one, or the empty document of no job).

    Its times may hold anything: one that cannot be read is unknown (a claim of unknown age
    is taken over by the next step)."""
    if not isinstance(data, dict):
        return f"expected a JSON object describing the job, found a JSON {type(data).__name__}"
    if not data:
        return None
    if not isinstance(data.get("id"), str) or data.get("status") not in STATUSES:
        return "the job has no id or no status (running or done)"
    for name in COUNTS:
        value = data.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"the job's {name} is not a count: {value!r}"[:200]
    todo, claims = data.get("todo", []), data.get("claims", {})
    if not isinstance(todo, list) or not all(isinstance(t, str) for t in todo):
        return "the job's todo is not a list of conversation ids"
    if not isinstance(claims, dict):
        return "the job's claims are not an object of conversation ids"
    found, failed = data.get("found", []), data.get("failed", [])
    if not isinstance(found, list) or not all(isinstance(f, str) for f in found):
        return "the job's found is not a list of texts"
    if not isinstance(failed, list) or not all(isinstance(f, dict) for f in failed):
        return "the job's failed is not a list of objects"
    return None


def _unreadable_times(data: Any) -> list[tuple[str, str]]:
    """The job's times that cannot be read (kept; they count as unknown)."""
    if not isinstance(data, dict):
        return []
    found = [("the job", problem) for problem in unreadable_times(data, TIMES)]
    claims = data.get("claims")
    if isinstance(claims, dict):
        found += [
            (f"the claim on {thread!r}", problem)
            for thread in claims
            for problem in unreadable_times(claims, (thread,))
        ]
    return found


def job_document(settings: Settings) -> JsonDocument:
    """The job file ``settings`` describe (next to the review queue), for ``repair``."""
    return JsonDocument(
        settings.review_file.with_name(JOB_FILE_NAME),
        default=dict,
        validate=_validate,
        lock_timeout=settings.lock_timeout,
        unreadable_times=_unreadable_times,
    )


def _count(value: Any) -> int:
    """A count kept in the job file, 0 when it is not a whole number of at least 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True)
class BatchProgress:
    """Where a run over all conversations stands, as a person reads it."""

    id: str
    running: bool
    total: int  # threads in the run
    done: int  # threads read so far (failed ones included)
    queued: int  # facts that landed in Review
    applied: int  # facts written straight to memory (auto mode)
    skipped: int  # facts already proposed or rejected
    found: tuple[str, ...]  # the facts' texts, newest last (at most MAX_FOUND)
    failed: tuple[tuple[str, str], ...]  # (thread id, what went wrong)
    cut: int = 0  # facts left out: a thread gave more than MEMORY_MAX_FACTS_PER_THREAD
    # (thread id, why the LLM gave nothing): the rules read these threads instead
    llm_problems: tuple[tuple[str, LlmCallError], ...] = ()

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> BatchProgress:
        failed = tuple(
            (str(f.get("thread", "")), str(f.get("error", "")))
            for f in record.get("failed", [])
            if isinstance(f, dict)
        )
        problems = []
        listed = record.get("llmProblems", [])
        for entry in listed if isinstance(listed, list) else []:
            if isinstance(entry, dict):
                problem = llm_call_error(entry.get("code"), entry.get("values"))
                if problem is not None:
                    problems.append((str(entry.get("thread", "")), problem))
        return cls(
            id=str(record.get("id", "")),
            running=record.get("status") == "running",
            total=int(record.get("total", 0)),
            done=int(record.get("done", 0)),
            queued=int(record.get("queued", 0)),
            applied=int(record.get("applied", 0)),
            skipped=int(record.get("skipped", 0)),
            found=tuple(str(f) for f in record.get("found", [])),
            failed=failed,
            cut=_count(record.get("cut")),
            llm_problems=tuple(problems),
        )


class ExtractionBatch:
    """Start, advance and read the run of extraction over every conversation."""

    def __init__(
        self,
        settings: Settings,
        *,
        caller: MemoryLlmCaller | None = FROM_SETTINGS,
        actor: str = "extractor",
        claim_timeout: float | None = None,
    ) -> None:
        self.settings = settings
        self._doc = job_document(settings)
        self.path: Path = self._doc.path
        self._caller = caller
        self._actor = actor
        # A thread's LLM calls may take llm_timeout each (and the rules run after them): a
        # claim older than all of those belongs to a process that is gone.
        limit = run_time_limit(settings.llm_timeout)
        timeout = claim_timeout if claim_timeout is not None else limit
        self._claim_timeout = timedelta(seconds=timeout)

    def progress(self) -> BatchProgress | None:
        """The current or last run, or None when there never was one."""
        record = self._doc.read()
        return BatchProgress.from_dict(record) if record.get("id") else None

    def start(self) -> BatchProgress:
        """Begin a run over every live conversation; a run already going is returned as is."""
        threads = [
            s.id for s in ConversationStore.from_settings(self.settings).list_conversations()
        ]

        def mutate(data: dict[str, Any]) -> Changed[dict[str, Any]] | Unchanged[dict[str, Any]]:
            if data.get("status") == "running":
                return Unchanged(dict(data))
            data.clear()
            data.update(
                id=secrets.token_hex(6),
                status="running" if threads else "done",
                startedAt=now_iso(),
                finishedAt=None if threads else now_iso(),
                todo=threads,
                claims={},
                total=len(threads),
                done=0,
                queued=0,
                applied=0,
                skipped=0,
                found=[],
                failed=[],
                cut=0,
                llmProblems=[],
            )
            return Changed(dict(data))

        return BatchProgress.from_dict(self._doc.update(mutate))

    def _claim(self) -> str | None:
        """Take the next thread nobody is working on (or whose worker is gone)."""
        now = datetime.now(UTC)

        def mutate(data: dict[str, Any]) -> Changed[str] | Unchanged[None]:
            if data.get("status") != "running":
                return Unchanged(None)
            claims: dict[str, str] = data.setdefault("claims", {})
            stale = [t for t, at in claims.items() if now - parse_ts(at) > self._claim_timeout]
            todo: list[str] = data.get("todo", [])
            thread = stale[0] if stale else (todo.pop(0) if todo else None)
            if thread is None:
                return Unchanged(None)
            claims[thread] = now_iso()
            return Changed(thread)

        return self._doc.update(mutate)

    def _record(
        self, job_id: str, thread: str, result: ExtractionResult | None, error: str
    ) -> None:
        """Count what one thread gave and finish the run when nothing is left."""

        def mutate(data: dict[str, Any]) -> Changed[None] | Unchanged[None]:
            claims: dict[str, str] = data.get("claims", {})
            if data.get("id") != job_id or thread not in claims:
                return Unchanged(None)  # a newer run, or another step recorded it already
            del claims[thread]
            data["done"] = int(data.get("done", 0)) + 1
            if result is not None:
                data["queued"] = int(data.get("queued", 0)) + len(result.queued)
                data["applied"] = int(data.get("applied", 0)) + len(result.applied)
                data["skipped"] = int(data.get("skipped", 0)) + result.skipped
                texts = [i.content for i in result.queued] + [m.content for m in result.applied]
                data["found"] = (list(data.get("found", [])) + texts)[-MAX_FOUND:]
                if result.cut:
                    data["cut"] = _count(data.get("cut")) + result.cut
                problem = result.llm_problem
                if problem is not None and problem.call_failed:
                    entry = {"thread": thread, "code": problem.code, "values": problem.values}
                    listed = data.get("llmProblems")
                    listed = listed if isinstance(listed, list) else []
                    data["llmProblems"] = [*listed, entry][-MAX_FOUND:]
            if error:
                data.setdefault("failed", []).append({"thread": thread, "error": error})
            if not data.get("todo") and not claims:
                data["status"] = "done"
                data["finishedAt"] = now_iso()
            return Changed(None)

        self._doc.update(mutate)

    def step(self) -> BatchProgress | None:
        """Extract the next thread of the running run (if any) and return the progress."""
        current = self.progress()
        if current is None or not current.running:
            return current
        thread = self._claim()
        if thread is not None:
            result, error = self._extract(thread)
            self._record(current.id, thread, result, error)
        return self.progress()

    def run_to_end(self) -> BatchProgress | None:
        """Step until the run is done (the dashboard without JavaScript, and the tests)."""
        progress = self.progress()
        while progress is not None and progress.running:
            before = progress.done
            progress = self.step()
            if progress is not None and progress.running and progress.done == before:
                break  # every remaining thread is claimed by a live worker elsewhere
        return progress

    def _extract(self, thread: str) -> tuple[ExtractionResult | None, str]:
        try:
            result = extract_conversation(
                self.settings, thread, force=True, caller=self._caller, actor=self._actor
            )
        except NotFoundError:
            return None, ""  # cleared meanwhile: nothing to read
        except LlmConfigError as exc:
            return None, f"the LLM extractor is not set up correctly: {exc}"
        except Exception as exc:  # one unreadable thread must not stop the run over the others
            return None, str(exc) or type(exc).__name__
        return result, ""
