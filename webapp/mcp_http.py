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

from .curator import Curator
from .mcp_server import SerializableReplies, build_server
from .settings import Settings, SettingsError
from .web.serve import MIN_TOKEN_LENGTH, visible_length

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


@dataclass(frozen=True)
class McpAccess:
    """Who may call the MCP endpoints: any client at a ``trusted`` address, any other only
    with ``Authorization: Bearer <token>`` (no token set: nobody else)."""

    trusted: tuple[Network, ...]
    token: str = ""

    def admits(self, client: str | None, authorization: str | None) -> str | None:
        """How a call is let in ("token" or "address"), or None when it is refused. A token
        that is given must be right, from any address."""
        if authorization is not None:
            scheme, _, given = authorization.strip().partition(" ")
            if scheme.lower() != "bearer" or not self.token:
                return None
            same = hmac.compare_digest(given.strip().encode("utf-8"), self.token.encode("utf-8"))
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
    MEMORY_MCP_TOKEN_FILE); a token too short to be safe stops the server from starting."""
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
    return McpAccess(trusted=tuple(networks), token=_token(settings))


def _token(settings: Settings) -> str:
    token, where = settings.mcp_token.strip(), "MEMORY_MCP_TOKEN"
    if not token and settings.mcp_token_file:
        path = Path(settings.mcp_token_file)
        where = f"the file {path} (MEMORY_MCP_TOKEN_FILE)"
        try:
            lines = path.read_bytes().decode("utf-8").strip().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsError(
                f"Cannot read the MCP token file {path}: {exc}", source=where, value=str(path)
            ) from exc
        token = lines[0].strip() if lines else ""
        if not token:
            raise SettingsError(f"The MCP token file {path} is empty.", source=where, value="")
    if token and visible_length(token) < MIN_TOKEN_LENGTH:
        raise SettingsError(
            f"The MCP access token in {where} has only {visible_length(token)} visible "
            f"characters; use at least {MIN_TOKEN_LENGTH}, e.g. from "
            '`python3 -c "import secrets; print(secrets.token_urlsafe(32))"`.',
            code="token_blank",
            source=where,
            visible=visible_length(token),
            least=MIN_TOKEN_LENGTH,
        )
    return token


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
        if not is_mcp_path(environ.get("PATH_INFO", "")):
            return self._dashboard(environ, start_response)
        chunks = self._bridge(environ, start_response)  # type: ignore[arg-type]
        return _Closing(chunks, environ, self._loop)


def with_mcp(dashboard: WSGIApplication, settings: Settings, *, host: str) -> McpHttp:
    """The dashboard with MCP over HTTP beside it, on the stores the settings name."""
    access = access_from_settings(settings)
    curator = Curator.from_settings(settings, actor=ACTOR)
    server = build_server(
        curator, curator.review, default_person=settings.mcp_default_person.strip()
    )
    return McpHttp(dashboard, server, access, security_from_settings(settings, host))
