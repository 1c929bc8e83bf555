"""MCP over HTTP on the dashboard's own server and port: the stdio server's tools for
Home Assistant's Assist, bots in other containers and desktop assistants.

- ``/mcp``: streamable HTTP, stateless (every request stands alone, as Home Assistant opens a
  new session for every call), answering JSON where the client accepts it.
- ``/sse`` and ``/sse/messages/``: the older SSE transport, for clients that only speak it.

The SDK's ASGI apps run on one event loop thread of their own and reach waitress through
a2wsgi, so the dashboard's server, its threads and its routes stay as they are. Before a
request reaches the SDK, ``Gate`` decides who may call (``McpAccess``: a trusted address, or
the bearer token), checks the Host header of token-less calls against DNS rebinding (the
SDK's transport security), and holds MCP to threads of its own (``mcp_threads``, which the
server adds to the dashboard's): an LLM's burst of parallel calls is served at once, a call
beyond the bound waits briefly for a slot, then is answered 503, so a flood of calls never
starves the dashboard. A refused call is logged with its address and the reason.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import hmac
import ipaddress
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
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
from ..settings import Settings, SettingsError, token_problem
from .screening import SerializableReplies, invalid_request, screen_line
from .server import build_server

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

MCP_PATH = "/mcp"
SSE_PATH = "/sse"
SSE_MESSAGES_PATH = "/sse/messages/"
ACTOR = "mcp"

# Who may call without a token when MEMORY_MCP_TRUSTED is empty.
ADDON_TRUSTED = ("172.30.32.1",)  # Home Assistant core, on the Supervisor's network
STANDALONE_TRUSTED = ("127.0.0.0/8", "::1")  # this machine
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

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
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

logger = logging.getLogger("memory_curator.mcp")


def is_mcp_path(path: str) -> bool:
    """Whether a request path is one of the MCP endpoints (the dashboard has the rest)."""
    return path in (MCP_PATH, MCP_PATH + "/", SSE_PATH) or path.startswith(SSE_MESSAGES_PATH)


TOKEN_OPTION = "MEMORY_MCP_TOKEN (add-on option memory_mcp_token)"
TOKEN_FILE_OPTION = "MEMORY_MCP_TOKEN_FILE (add-on option memory_mcp_token_file)"


def read_token_file(path: Path) -> str:
    """The token on the first line of ``path``; SettingsError when the file cannot be read,
    is empty or holds a token too weak to guard anything (``token_problem``)."""
    where = f"in the file {path} ({TOKEN_FILE_OPTION})"
    try:
        lines = path.read_bytes().decode("utf-8").strip().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(
            f"Cannot read the MCP token file {path} ({TOKEN_FILE_OPTION}): {exc}",
            source=TOKEN_FILE_OPTION,
            value=str(path),
        ) from exc
    token = lines[0].strip() if lines else ""
    if not token:
        raise SettingsError(
            f"The MCP token file {path} ({TOKEN_FILE_OPTION}) is empty.",
            source=TOKEN_FILE_OPTION,
            value="",
        )
    problem = token_problem(token, where)
    if problem is not None:
        raise problem
    return token


def _stamp(path: Path) -> tuple[int, int, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


@dataclass
class TokenFile:
    """MEMORY_MCP_TOKEN_FILE, read again when it changes: each call that brings a token costs
    one ``stat`` of the file, and only a new inode, size or time reads it again. A file
    removed, emptied, unreadable or holding a weak token lets no token in (trusted addresses
    still may call) until it holds a good one again; each change is logged once."""

    path: Path
    _seen: tuple[int, int, int, int] | None = None
    _token: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._seen = _stamp(self.path)
        self._token = read_token_file(self.path)  # at start, a problem stops MCP over HTTP

    def current(self) -> str:
        """The token the file holds now ("" when none is usable)."""
        stamp = _stamp(self.path)
        if stamp != self._seen:
            with self._lock:
                if stamp != self._seen:
                    self._token = self._reread(stamp)
                    self._seen = stamp
        return self._token

    def _reread(self, stamp: tuple[int, int, int, int] | None) -> str:
        try:
            if stamp is None:
                raise SettingsError(f"The MCP token file {self.path} is gone.")
            token = read_token_file(self.path)
        except SettingsError as exc:
            print(f"MCP over HTTP: {exc} No token is let in until it is fixed.", flush=True)
            return ""
        if token != self._token:
            print(f"MCP over HTTP: the token in {self.path} changed; it is used now.", flush=True)
        return token


@dataclass(frozen=True)
class McpAccess:
    """Who may call the MCP endpoints: any client at a ``trusted`` address, any other only
    with ``Authorization: Bearer <token>`` (``token``, or the one ``token_file`` holds now;
    no token: nobody else)."""

    trusted: tuple[Network, ...]
    token: str = ""
    token_file: TokenFile | None = None

    def admits(self, client: str | None, authorization: str | None) -> str | None:
        """How a call is let in ("token" or "address"), or None when it is refused. A token
        that is given must be right, from any address."""
        if authorization is not None:
            scheme, _, given = authorization.strip().partition(" ")
            token = self.token_file.current() if self.token_file is not None else self.token
            if scheme.lower() != "bearer" or not token:
                return None
            same = hmac.compare_digest(given.strip().encode("utf-8"), token.encode("utf-8"))
            return "token" if same else None
        return "address" if self.is_trusted(client) else None

    def is_trusted(self, client: str | None) -> bool:
        if not client:
            return False
        try:
            address = ipaddress.ip_address(client.split("%")[0])
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self.trusted)


def access_from_settings(settings: Settings) -> McpAccess:
    """The access rules the settings give (MEMORY_MCP_TRUSTED, MEMORY_MCP_TOKEN or
    MEMORY_MCP_TOKEN_FILE); SettingsError naming the option for a token too weak to be safe
    (``token_problem``) or a token file that cannot be used (then MCP over HTTP stays off)."""
    listed = [item.strip() for item in settings.mcp_trusted.split(",") if item.strip()]
    if not listed:
        listed = list(ADDON_TRUSTED if settings.is_addon else STANDALONE_TRUSTED)
    networks = []
    for item in listed:
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise SettingsError(
                f"MEMORY_MCP_TRUSTED must list IP addresses or networks (such as 172.30.32.1 "
                f"or 192.168.1.0/24), separated by commas; {item!r} is neither.",
                source="MEMORY_MCP_TRUSTED",
                value=repr(item),
            ) from None
    token = settings.mcp_token.strip()
    if token:
        problem = token_problem(token, f"in {TOKEN_OPTION}")
        if problem is not None:
            raise problem
        return McpAccess(trusted=tuple(networks), token=token)
    if settings.mcp_token_file:
        return McpAccess(
            trusted=tuple(networks), token_file=TokenFile(Path(settings.mcp_token_file))
        )
    return McpAccess(trusted=tuple(networks))


def security_from_settings(settings: Settings, host: str) -> TransportSecuritySettings:
    """The Host names a token-less call may use (DNS-rebinding protection): this machine's
    names, the container's host name, the address listened on and MEMORY_MCP_ALLOWED_HOSTS.
    No browser Origin is allowed."""
    names = {*LOOPBACK_HOSTS, socket.gethostname().lower()}
    if host not in ("0.0.0.0", "::", ""):
        names.add(f"[{host}]" if ":" in host else host)
    names.update(
        item.strip().lower() for item in settings.mcp_allowed_hosts.split(",") if item.strip()
    )
    allowed = sorted({pattern for name in names for pattern in (name, f"{name}:*")})
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=allowed, allowed_origins=[]
    )


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
    it through. The stdio server's screening (``mcp_server.screen_line``) applies: the SDK
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
