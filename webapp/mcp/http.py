"""MCP over HTTP on the dashboard's own server and port: the stdio server's tools for
Home Assistant's Assist, bots in other containers and desktop assistants.

- ``/mcp``: streamable HTTP, stateless (every request stands alone, as Home Assistant opens a
  new session for every call), answering JSON where the client accepts it.
- ``/sse`` and ``/sse/messages/``: the older SSE transport, for clients that only speak it.

The SDK's ASGI apps run on one event loop thread of their own and reach waitress through
a2wsgi, so the dashboard's server, its threads and its routes stay as they are. Before a
request reaches the SDK, ``Gate`` decides who may call (``mcp.access.McpAccess``: a
trusted address, or the bearer token), checks the Host header of token-less calls against
DNS rebinding (the SDK's transport security), and holds MCP to threads of its own
(``mcp_threads``, which the server adds to the dashboard's): an LLM's burst of parallel
calls is served at once, a call beyond the bound waits briefly for a slot, then is
answered 503, so a flood of calls never starves the dashboard. A refused call is logged
with its address and the reason.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import ipaddress
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from a2wsgi import ASGIMiddleware
from mcp.server.lowlevel import Server
from mcp.server.sse import SseServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.types import Message, Receive, Scope, Send

from ..assist.http import AssistApi, assist_api, is_assist_path
from ..curator import Curator
from ..settings import Settings, SettingsError
from .access import McpAccess, access_from_settings, security_from_settings
from .screening import SerializableReplies, invalid_request, screen_line
from .server import build_server

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

MCP_PATH = "/mcp"
SSE_PATH = "/sse"
SSE_MESSAGES_PATH = "/sse/messages/"
ACTOR = "mcp"

_TASK_KEY = "memory_curator.mcp_task"  # the WSGI environ's note of the request's asyncio task
_START_TIMEOUT = 30.0
DISCONNECT_POLL = 0.05  # seconds between asking waitress whether an SSE client is still there


@dataclass
class Slots:
    """How many requests of one kind (calls, or SSE streams) may be served at once, and how
    many more may wait for a slot; each holds one of the server's threads either way."""

    serving: int
    waiting: int
    busy: int = 0
    queued: int = 0

    @property
    def threads(self) -> int:
        return self.serving + self.waiting


SLOT_POLL = 0.02  # seconds between looks for a free slot
# An LLM's parallel tool calls reach us at once, each in a session of its own (Home Assistant
# runs them together, with its HTTP client's 5 s read timeout and no retry): this many are
# served at once, this many more wait for a slot up to SLOT_WAIT (well inside those 5 s), and
# any beyond are answered 503 at once. Each holds one of the server's threads, which the
# server adds to the dashboard's, so the dashboard keeps its own however many calls come.
SLOT_WAIT = 2.0
REQUEST_SLOTS = Slots(serving=16, waiting=16)
STREAM_SLOTS = Slots(serving=4, waiting=1)  # SSE streams, for clients that only speak SSE
REFUSAL_LOG_EVERY = 60.0  # seconds: the same refusal of one address is logged once in this

logger = logging.getLogger("memory_curator.mcp")


def is_mcp_path(path: str) -> bool:
    """Whether a request path is one of the MCP endpoints (the dashboard has the rest)."""
    return path in (MCP_PATH, MCP_PATH + "/", SSE_PATH) or path.startswith(SSE_MESSAGES_PATH)


def _is_ip_literal(host_header: str) -> bool:
    host = host_header.rsplit(":", 1)[0] if not host_header.endswith("]") else host_header
    if host_header.startswith("[") and "]" in host_header:
        host = host_header[1 : host_header.index("]")]
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def screened(body: bytes) -> Response | None:
    """The JSON-RPC error answer (HTTP 400) to a body the SDK would not answer, or None to let
    it through. The stdio server's screening (``mcp.screening.screen_line``) applies: the SDK
    took a message whose id is true, NaN, 1.5 or an object for a notification and answered
    202 and nothing; now no JSON (NaN is none) is a parse error (-32700) and an id MCP does
    not allow an invalid request (-32600), with id null when it cannot be echoed. A response
    or notification that cannot be read gets an error with id null too (HTTP lets us say so,
    where stdio can only drop it)."""
    passes, error = screen_line(body.decode("utf-8", errors="replace"))
    if passes:
        return None
    if error is None:
        error = invalid_request("Invalid request: the message cannot be read.")
    return Response(
        error.model_dump_json(by_alias=True, exclude_unset=True),
        status_code=400,
        media_type="application/json",
    )


def _replaying(body: bytes, receive: Receive) -> Receive:
    """``receive`` with the body, read already, given again to the app first."""
    given = False

    async def replay() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


def _plain(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps({"error": message})
    return Response(body, status_code=status, media_type="application/json", headers=headers)


# Headers of one connection, which a WSGI application may not set (PEP 3333); the SSE
# response sets Connection: keep-alive, which waitress does by itself.
_HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"te",
        b"trailers",
        b"transfer-encoding",
        b"upgrade",
    }
)


def _without_hop_by_hop(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [
                (k, v) for k, v in message.get("headers", []) if k.lower() not in _HOP_BY_HOP
            ]
            message = {**message, "headers": headers}
        await send(message)

    return sending


class RefusalLog:
    """Writes a refused call to the log (address, status, reason; never the token), each
    address and reason once per ``REFUSAL_LOG_EVERY`` seconds with how many came meanwhile,
    so a client that keeps knocking cannot flood the log."""

    LIMIT = 1024  # addresses and reasons remembered at most

    def __init__(self) -> None:
        self._last: dict[tuple[str, int, str], tuple[float, int]] = {}

    def note(self, address: str | None, status: int, reason: str) -> None:
        key, now = (address or "an unknown address", status, reason), time.monotonic()
        last, since = self._last.get(key, (None, 0))
        if last is not None and now - last < REFUSAL_LOG_EVERY:
            self._last[key] = (last, since + 1)
            return
        if len(self._last) >= self.LIMIT:
            self._last.clear()
        self._last[key] = (now, 0)
        more = f" ({since} more like it since the last)" if since else ""
        logger.warning("MCP call from %s refused (%d): %s%s", key[0], status, reason, more)


def mcp_threads() -> int:
    """The server threads MCP may hold at most: the server adds them to the dashboard's."""
    return REQUEST_SLOTS.threads + STREAM_SLOTS.threads


@dataclass
class Gate:
    """Lets a request through to the MCP app only when its caller may call, its Host is one
    of ours (token-less calls) and a slot is free; answers 401, 421/403 or 503 otherwise,
    and says why in the log (never the token)."""

    app: Callable[[Scope, Receive, Send], Any]
    access: McpAccess
    security: TransportSecuritySettings
    slots: dict[str, Slots] = field(
        default_factory=lambda: {
            "request": dataclasses.replace(REQUEST_SLOTS),
            "stream": dataclasses.replace(STREAM_SLOTS),
        }
    )
    refusals: RefusalLog = field(default_factory=lambda: RefusalLog())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        client = scope.get("client")
        address = client[0] if client else None
        authorization = request.headers.get("authorization")
        how = self.access.admits(address, authorization)
        if how is None:
            self.refusals.note(address, 401, self._why_unauthorized(authorization))
            refusal = _plain(
                401,
                "Unauthorized: call from a trusted address (MEMORY_MCP_TRUSTED) or send "
                "Authorization: Bearer <MEMORY_MCP_TOKEN>.",
                {"WWW-Authenticate": 'Bearer realm="memory-curator"'},
            )
            return await refusal(scope, receive, send)
        if how == "address":
            rejected = await self._host_problem(request)
            if rejected is not None:
                self.refusals.note(
                    address,
                    rejected.status_code,
                    f"its Host {request.headers.get('host', '')!r} is not one of this "
                    f"server's names (add it to MEMORY_MCP_ALLOWED_HOSTS), or it sent a "
                    f"browser Origin",
                )
                return await rejected(scope, receive, send)
        kind = "stream" if scope["path"] == SSE_PATH else "request"
        if scope["method"] == "POST":
            body = await request.body()
            odd = screened(body)
            if odd is not None:
                return await odd(scope, receive, send)
            receive = _replaying(body, receive)
        slots = self.slots[kind]
        if not await self._slot_frees(slots):
            self.refusals.note(
                address,
                503,
                f"busy: {slots.serving} MCP {kind}s were being served and {slots.waiting} "
                f"more waited for one, the most there may be",
            )
            busy = _plain(
                503,
                f"Busy: {slots.serving} MCP calls are being answered and {slots.waiting} "
                "more wait; retry in a moment.",
            )
            busy.headers["Retry-After"] = "1"
            return await busy(scope, receive, send)
        environ = scope.get("wsgi_environ")
        if isinstance(environ, dict):
            environ[_TASK_KEY] = asyncio.current_task()
        try:
            if kind == "stream":
                await self._stream(scope, receive, _without_hop_by_hop(send), environ)
            else:
                await self.app(scope, receive, _without_hop_by_hop(send))
        finally:
            slots.busy -= 1

    def _why_unauthorized(self, authorization: str | None) -> str:
        if authorization is None:
            trusted = ", ".join(str(network) for network in self.access.trusted)
            return (
                f"it sent no token and its address is not trusted (MEMORY_MCP_TRUSTED, the "
                f"add-on's memory_mcp_trusted: {trusted})"
            )
        if not self.access.token:
            return "it sent a token, but none is set (MEMORY_MCP_TOKEN)"
        return "its token is wrong"

    async def _slot_frees(self, slots: Slots) -> bool:
        """Take a slot now, or wait up to ``SLOT_WAIT`` for one (while fewer than
        ``slots.waiting`` others wait); False when none freed. Runs on the one event loop."""
        if slots.busy < slots.serving:
            slots.busy += 1
            return True
        if slots.queued >= slots.waiting:
            return False
        slots.queued += 1
        try:
            with anyio.move_on_after(SLOT_WAIT):
                while slots.busy >= slots.serving:
                    await anyio.sleep(SLOT_POLL)
            if slots.busy < slots.serving:
                slots.busy += 1
                return True
            return False
        finally:
            slots.queued -= 1

    async def _stream(self, scope: Scope, receive: Receive, send: Send, environ: Any) -> None:
        """Serve an SSE stream until it ends or its client leaves. Waitress notices a closed
        connection only when it next writes; asked (``waitress.client_disconnected``), it
        knows at once, and the stream ends there, freeing its slot and its thread."""
        gone = environ.get("waitress.client_disconnected") if isinstance(environ, dict) else None
        if not callable(gone):
            await self.app(scope, receive, send)
            return
        left = False
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                nonlocal left
                while not gone():
                    await anyio.sleep(DISCONNECT_POLL)
                left = True
                group.cancel_scope.cancel()

            group.start_soon(watch)
            await self.app(scope, receive, send)
            group.cancel_scope.cancel()
        if left:  # end the WSGI response, so the server's thread is free again
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _host_problem(self, request: Request) -> Response | None:
        """The SDK's answer to a Host (or Origin) a DNS-rebinding page would send, or None.
        A Host that is an IP address cannot come from a rebound name, so it passes."""
        security = self.security
        host = request.headers.get("host", "")
        if host and _is_ip_literal(host):
            security = security.model_copy(
                update={"allowed_hosts": [*security.allowed_hosts, host]}
            )
        return await TransportSecurityMiddleware(security).validate_request(request)

    def host_allowed(self, host: str) -> bool:
        """Whether a token-less call naming ``host`` may be served (as ``_host_problem``
        decides for MCP): an IP address, or one of this server's names, with any port."""
        if not host or _is_ip_literal(host):
            return bool(host)
        host = host.lower()
        for pattern in self.security.allowed_hosts:
            if host == pattern or (pattern.endswith(":*") and host.startswith(pattern[:-1])):
                return True
        return False

    def allow_host(self, name: str) -> None:
        """Accept ``name`` (any port) as a Host of token-less calls from now on."""
        name = name.strip().lower()
        if name and name not in self.security.allowed_hosts:
            self.security.allowed_hosts.extend([name, f"{name}:*"])


class _SseEndpoint:
    """GET /sse: one MCP session over a server-sent event stream, until the client leaves."""

    def __init__(self, server: Server, transport: SseServerTransport) -> None:
        self._server = server
        self._transport = transport

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with self._transport.connect_sse(scope, receive, send) as (read, write):
                await self._server.run(
                    read, SerializableReplies(write), self._server.create_initialization_options()
                )
        except ValueError:  # the transport refused the request and has answered it
            return


class _Closing:
    """A streamed MCP answer; closing it (the client left) stops its work on the loop."""

    def __init__(
        self, chunks: Iterable[bytes], environ: WSGIEnvironment, loop: asyncio.AbstractEventLoop
    ) -> None:
        self._chunks = chunks
        self._environ = environ
        self._loop = loop

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._chunks)

    def close(self) -> None:
        task = self._environ.get(_TASK_KEY)
        if isinstance(task, asyncio.Task) and not task.done():
            self._loop.call_soon_threadsafe(task.cancel)
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()


class McpHttp:
    """The dashboard's WSGI app with the MCP endpoints beside it (one server, one port)."""

    def __init__(
        self,
        dashboard: WSGIApplication,
        server: Server,
        access: McpAccess,
        security: TransportSecuritySettings,
        assist: Callable[[McpAccess, Gate], AssistApi] | None = None,
    ) -> None:
        self._dashboard = dashboard
        self._loop = asyncio.new_event_loop()
        threading.Thread(target=self._loop.run_forever, name="mcp-http", daemon=True).start()
        manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)
        sse = SseServerTransport(SSE_MESSAGES_PATH)
        app = Starlette(
            routes=[
                # Stateless: no stream for the server's own messages (GET) and no session to
                # end (DELETE); 405 tells a client so, as the transport's specification asks.
                Route(MCP_PATH, endpoint=StreamableHTTPASGIApp(manager), methods=["POST"]),
                Route(SSE_PATH, endpoint=_SseEndpoint(server, sse), methods=["GET"]),
                Mount(SSE_MESSAGES_PATH, app=sse.handle_post_message),
            ]
        )
        self.gate = Gate(app, access, security)
        self.assist = assist(access, self.gate) if assist is not None else None
        started: concurrent.futures.Future[None] = concurrent.futures.Future()
        asyncio.run_coroutine_threadsafe(self._run(manager, started), self._loop)
        started.result(timeout=_START_TIMEOUT)
        self._bridge = ASGIMiddleware(self.gate, loop=self._loop)  # type: ignore[arg-type]

    async def _run(
        self, manager: StreamableHTTPSessionManager, started: concurrent.futures.Future[None]
    ) -> None:
        """Keep the session manager's task group open for as long as the process serves."""
        async with manager.run():
            started.set_result(None)
            await asyncio.Event().wait()

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if self.assist is not None and is_assist_path(path):
            return self.assist(environ, start_response)
        if not is_mcp_path(path):
            return self._dashboard(environ, start_response)
        chunks = self._bridge(environ, start_response)  # type: ignore[arg-type]
        return _Closing(chunks, environ, self._loop)


class McpOff:
    """The dashboard alone, when the MCP settings cannot be used (a weak token, say): the MCP
    endpoints answer 503 naming the option to fix, every other path is the dashboard's."""

    off: str

    def __init__(
        self, dashboard: WSGIApplication, why: str, assist: AssistApi | None = None
    ) -> None:
        self._dashboard = dashboard
        self.off = why
        self.assist = assist

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if self.assist is not None and is_assist_path(environ.get("PATH_INFO", "")):
            return self.assist(environ, start_response)
        if not is_mcp_path(environ.get("PATH_INFO", "")):
            return self._dashboard(environ, start_response)
        body = json.dumps({"error": f"MCP over HTTP is off: {self.off}"}).encode("utf-8")
        start_response(
            "503 Service Unavailable",
            [("Content-Type", "application/json"), ("Content-Length", str(len(body)))],
        )
        return [body]


def with_mcp(dashboard: WSGIApplication, settings: Settings, *, host: str) -> McpHttp | McpOff:
    """The dashboard with MCP over HTTP beside it, on the stores the settings name; when the
    MCP settings cannot be used (a token too weak, a token file that cannot be read), the
    dashboard alone, with the reason naming the option (``McpOff.off``)."""
    try:
        access = access_from_settings(settings)
    except SettingsError as exc:  # the Assist API, behind the same gate, is off too
        return McpOff(dashboard, str(exc), assist_api(settings, None, off=str(exc)))
    curator = Curator.from_settings(settings, actor=ACTOR)
    server = build_server(
        curator, curator.review, default_person=settings.mcp_default_person.strip()
    )

    def assist(access: McpAccess, gate: Gate) -> AssistApi:
        return assist_api(settings, access, host_allowed=gate.host_allowed)

    return McpHttp(dashboard, server, access, security_from_settings(settings, host), assist)
