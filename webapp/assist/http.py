"""The Assist API, version 1: what the Home Assistant integration ``memory_curator`` calls.

Served beside ``/mcp`` on the dashboard's own server and port (``mcp_http.with_mcp`` routes
``/api/assist/`` here, whether the MCP endpoints are on or not), behind the same gate: a
trusted address (``MEMORY_MCP_TRUSTED``; in the add-on, Home Assistant core) or
``Authorization: Bearer <MEMORY_MCP_TOKEN>``. A door like the others: it parses the JSON
body and calls one curator operation (``webapp.curator.assist``), which decides whose memory
the request reads and changes; the wire contract is ``docs/assist-api.md``.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC
from typing import TYPE_CHECKING, Any, Protocol

from werkzeug.wrappers import Request, Response

from ..curator import Curator
from ..curator import assist as operations
from ..curator.assist import AssistContext, Speaker
from ..curator.errors import AmbiguousMemoryError
from ..language.moments import iso_time
from ..problems import CodedError, InputError
from ..settings import VERSION
from ..stores import Memory, StoreBusyError

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment


class Admission(Protocol):
    """Who may call: the MCP door's access rule (``webapp.mcp.access.McpAccess``), the one the
    Assist API shares; "token" or "address" for a call let in, None for one refused."""

    def admits(self, client: str | None, authorization: str | None) -> str | None: ...


PREFIX = "/api/assist/"
API_VERSION = 1
SUPPORTED = (1,)
ACTOR = "assist"
MAX_BODY_BYTES = 512 * 1024  # far above a spoken exchange; a body beyond is refused unread
MAX_TEXT_CHARS = 100_000  # one said text or reply
MAX_CONTEXT_CHARS = 200  # one context value (an id, a name)
CONTEXT_FIELDS = (
    "user_id",
    "user_name",
    "device_id",
    "device_name",
    "language",
    "agent_id",
    "conversation_id",
)
TOOLS = ("remember", "forget", "recall")
# Calls served at once; one beyond waits up to BUSY_WAIT for a turn, then is answered 503,
# so a flood of calls never takes every thread of the dashboard.
SERVING = 8
BUSY_WAIT = 2.0
logger = logging.getLogger("memory_curator.assist")
_VERSIONED = re.compile(r"^v(\d{1,6})(/.*)?$")


def is_assist_path(path: str) -> bool:
    """Whether a request path is the Assist API's."""
    return path.startswith(PREFIX)


class BadRequest(Exception):
    """A request the API cannot take: its HTTP status, code and a sentence to act on."""

    def __init__(self, message: str, *, status: int = 400, code: str = "bad_request") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def answer(body: Mapping[str, Any], status: int = 200, **headers: str) -> Response:
    """A JSON answer with the API's version and the add-on's."""
    payload = {"api": API_VERSION, "addon_version": VERSION, **body}
    text = json.dumps(payload, ensure_ascii=False)
    return Response(text, status=status, mimetype="application/json", headers=headers)


def error(status: int, code: str, message: str, **extra: Any) -> Response:
    return answer({"error": {"code": code, "message": message}, **extra}, status)


def _text(value: Any, name: str, *, most: int, required: bool = True) -> str | None:
    """``value`` as text of at most ``most`` characters (None when absent and not
    ``required``), or BadRequest naming ``name``."""
    if value is None and not required:
        return None
    if not isinstance(value, str):
        kind = "missing" if value is None else f"a {type(value).__name__}, not text"
        raise BadRequest(f'The field "{name}" is {kind}; send it as a JSON string.')
    if len(value) > most:
        raise BadRequest(
            f'The field "{name}" is {len(value)} characters long; at most {most} are taken.'
        )
    if "\x00" in value or any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        raise BadRequest(f'The field "{name}" is not valid Unicode text.')
    return value


def read_body(request: Request) -> dict[str, Any]:
    """The request's JSON object, or BadRequest (not JSON, not UTF-8, too large, not an
    object)."""
    if request.mimetype != "application/json":
        raise BadRequest("Send the body as JSON, with Content-Type: application/json.")
    length = request.content_length
    if length is not None and length > MAX_BODY_BYTES:
        raise BadRequest(f"The body is {length} bytes; at most {MAX_BODY_BYTES} are taken.")
    raw = request.stream.read(MAX_BODY_BYTES + 1)
    if len(raw) > MAX_BODY_BYTES:
        raise BadRequest(f"The body is over {MAX_BODY_BYTES} bytes; send less.")
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise BadRequest("The body is not valid UTF-8; send it encoded as UTF-8.") from None
    except (ValueError, RecursionError):
        raise BadRequest("The body is not valid JSON.") from None
    if not isinstance(body, dict):
        raise BadRequest("The body must be a JSON object.")
    return body


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_context(body: Mapping[str, Any]) -> AssistContext:
    """The ``context`` object of a body (every field text or null), or BadRequest."""
    raw = body.get("context")
    if not isinstance(raw, dict):
        raise BadRequest('The field "context" is missing or not a JSON object.')
    values = {
        name: _text(raw.get(name), f"context.{name}", most=MAX_CONTEXT_CHARS, required=False)
        for name in CONTEXT_FIELDS
    }
    return AssistContext(**{k: (v.strip() or None) if v else None for k, v in values.items()})


def _memory(memory: Memory) -> dict[str, str]:
    scope = "person" if memory.person is not None else "household"
    return {"id": memory.id, "content": memory.content, "scope": scope}


class AssistApi:
    """The Assist API as a WSGI application, on the stores of one data folder."""

    def __init__(
        self,
        curator: Curator,
        access: Admission | None,
        *,
        off: str = "",
        host_allowed: Callable[[str], bool] | None = None,
    ) -> None:
        self.curator = curator
        self.access = access
        self.off = off
        self.host_allowed = host_allowed
        self._turns = threading.BoundedSemaphore(SERVING)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        response = self.respond(Request(environ))
        return response(environ, start_response)

    def respond(self, request: Request) -> Response:
        """The answer to one request: refused (401, 403, 404, 503) or served."""
        if self.access is None:
            return error(503, "unavailable", f"The Assist API is off: {self.off}")
        if self.access.admits(request.remote_addr, request.headers.get("Authorization")) is None:
            return answer(
                {
                    "error": {
                        "code": "unauthorized",
                        "message": "Call from a trusted address (memory_mcp_trusted) or send "
                        "Authorization: Bearer <memory_mcp_token>.",
                    }
                },
                401,
                **{"WWW-Authenticate": 'Bearer realm="memory-curator"'},
            )
        if request.headers.get("Origin") or not self._host_ok(request):
            return error(
                403,
                "forbidden",
                "Browsers may not call this API, and a call without a token must name this "
                "server as its Host (add the name to memory_mcp_allowed_hosts).",
            )
        if not self._turns.acquire(timeout=BUSY_WAIT):
            return answer(
                {
                    "error": {
                        "code": "busy",
                        "message": f"{SERVING} calls are being answered; retry in a moment.",
                    }
                },
                503,
                **{"Retry-After": "1"},
            )
        try:
            return self._route(request)
        except BadRequest as exc:
            return error(exc.status, exc.code, str(exc))
        except StoreBusyError as exc:
            return error(503, "busy", f"{exc} Retry in a moment.")
        except InputError as exc:  # a field the curator refused: a context id, a key
            return error(400, "bad_request", str(exc))
        except CodedError as exc:  # a store that cannot be read: what to do is in the words
            return error(500, exc.code, str(exc))
        except Exception:  # never an HTML page or a dropped connection to the integration
            logger.exception("Assist API call failed unexpectedly")
            return error(500, "internal", "The add-on failed to answer; its log says why.")
        finally:
            self._turns.release()

    def _host_ok(self, request: Request) -> bool:
        if request.headers.get("Authorization") is not None or self.host_allowed is None:
            return True
        return self.host_allowed(request.host)

    def _route(self, request: Request) -> Response:
        path = request.path[len(PREFIX) :]
        versioned = _VERSIONED.match(path)
        if versioned is None:
            raise BadRequest(f"No such path {request.path!r}; see /api/assist/v1/info.", status=404)
        if int(versioned.group(1)) not in SUPPORTED:
            return error(
                404,
                "api_version",
                f"This add-on serves the Assist API version {API_VERSION}, not "
                f"{versioned.group(1)}: update the add-on or the integration.",
                supported=list(SUPPORTED),
            )
        endpoint = (versioned.group(2) or "").strip("/")
        method = "GET" if endpoint == "info" else "POST"
        known = ("info", "prompt", "exchanges", *(f"tools/{tool}" for tool in TOOLS))
        if endpoint not in known:
            raise BadRequest(
                f"No such endpoint {endpoint!r}; the tools are {', '.join(TOOLS)}.", status=404
            )
        if request.method != method:
            raise BadRequest(f"Use {method} for {request.path}.", status=405)
        if endpoint == "info":
            return answer({"service": "memory_curator", "supported": list(SUPPORTED)})
        body = read_body(request)
        context = read_context(body)
        # Every field is read before anything is written (a user or device seen is recorded
        # by ``speaker``): a request refused as bad leaves the data as it was.
        if endpoint == "exchanges":  # whose it is as of when it was said: the curator's
            return self._exchange(body, context)()
        if endpoint == "prompt":
            run: Callable[[Speaker], Response] = self._prompt
        else:
            run = self._tool(endpoint[6:], body)
        return run(operations.speaker(self.curator, context))

    def _prompt(self, who: Speaker) -> Response:
        return answer(
            {
                "prompt": operations.memory_block(self.curator, who),
                "speaker": {"scope": who.scope, "name": who.name},
            }
        )

    def _tool(self, name: str, body: Mapping[str, Any]) -> Callable[[Speaker], Response]:
        arguments = body.get("arguments", {})
        if not isinstance(arguments, dict):
            raise BadRequest('The field "arguments" must be a JSON object.')
        tool = self._read_tool(name, arguments)

        def run(who: Speaker) -> Response:
            try:
                result = tool(who)
            except AmbiguousMemoryError as exc:
                return answer(
                    {
                        "ok": False,
                        "error": {"code": exc.code, "message": str(exc)},
                        "candidates": [_memory(m) for m in exc.candidates],
                    }
                )
            except StoreBusyError:
                raise
            except CodedError as exc:  # a refusal the model reads: a secret, a full store…
                return answer({"ok": False, "error": {"code": exc.code, "message": str(exc)}})
            return answer({"ok": True, "result": result})

        return run

    def _read_tool(
        self, name: str, arguments: Mapping[str, Any]
    ) -> Callable[[Speaker], dict[str, Any]]:
        """The tool call ``arguments`` ask for, checked, to run for a speaker."""
        if name == "remember":
            fact = str(_text(arguments.get("fact"), "arguments.fact", most=MAX_TEXT_CHARS))

            def remember(who: Speaker) -> dict[str, Any]:
                outcome, memory = operations.remember(self.curator, who, fact)
                return {"outcome": outcome, "memory": _memory(memory)}

            return remember
        if name == "forget":
            given = _text(
                arguments.get("memory_id"), "arguments.memory_id", most=200, required=False
            )
            text = _text(
                arguments.get("fact"), "arguments.fact", most=MAX_TEXT_CHARS, required=False
            )
            memory_id = (given or "").strip().strip("[]").strip() or None
            if memory_id is None and not (text or "").strip():
                raise BadRequest('forget takes "memory_id" or "fact" (a text to match).')

            def forget(who: Speaker) -> dict[str, Any]:
                gone = operations.forget(self.curator, who, memory_id=memory_id, fact=text)
                return {"forgotten": {"id": gone.id, "content": gone.content}}

            return forget
        query = _text(arguments.get("query"), "arguments.query", most=1000, required=False) or ""

        def recall(who: Speaker) -> dict[str, Any]:
            found, more = operations.recall(self.curator, who, query)
            return {"memories": [_memory(m) for m in found], "more": more}

        return recall

    def _exchange(self, body: Mapping[str, Any], context: AssistContext) -> Callable[[], Response]:
        key = str(_text(body.get("key"), "key", most=200))
        if not key.strip():
            raise BadRequest('The field "key" is empty; send the exchange\'s idempotency key.')
        conversation_id = str(_text(body.get("conversation_id"), "conversation_id", most=200))
        if not conversation_id.strip():
            raise BadRequest('The field "conversation_id" is empty.')
        user_text = str(_text(body.get("user_text"), "user_text", most=MAX_TEXT_CHARS))
        reply = str(_text(body.get("reply"), "reply", most=MAX_TEXT_CHARS))
        said = str(_text(body.get("at"), "at", most=64))
        said_at = iso_time(said, naive=None)
        if said_at is None:
            raise BadRequest(f'The field "at" is not an ISO-8601 time: {said[:64]!r}.')
        if said_at.tzinfo is None:
            raise BadRequest('The field "at" needs its time zone (e.g. 2026-11-28T20:04:16Z).')
        try:
            said_at.astimezone(UTC)
        except OverflowError:  # 0001-01-01T00:00+14:00 is before the year 1 in UTC
            raise BadRequest(f'The field "at" is outside the calendar: {said[:64]!r}.') from None

        def store() -> Response:
            stored = operations.record_exchange(
                self.curator,
                context,
                key=key,
                conversation_id=conversation_id,
                user_text=user_text,
                reply=reply,
                said_at=said_at,
            )
            if stored == "expired":
                logger.warning(
                    "An Assist exchange said at %s was not stored: conversations older than "
                    "%d days are not kept (conversation_max_age_days)",
                    said_at.isoformat(),
                    self.curator.conversations.max_age_days,
                )
                return answer({"stored": False, "expired": True})
            return answer(
                {"stored": True} if stored == "stored" else {"stored": False, "duplicate": True}
            )

        return store


def assist_api(settings: Any, access: Admission | None, **kwargs: Any) -> AssistApi:
    """The API on the stores ``settings`` name."""
    return AssistApi(Curator.from_settings(settings, actor=ACTOR), access, **kwargs)
