"""The server's own limits, so that no client it has not authenticated can stop it.

waitress (``webapp.web.plumbing.serve``) holds every connection in one event loop and reads a whole
request, body and all, before the dashboard or MCP sees it. Its own settings bound the time
a connection may sit idle (``channel_timeout``), the size of a request's headers and body,
and the connections open at once; this module adds, in a small subclass of its server:

- a share per client address (``MEMORY_SERVER_CONNECTIONS_PER_CLIENT``) and a total for all
  clients that are not exempt (``MEMORY_SERVER_CONNECTIONS``): a connection beyond them is
  answered 503 and closed at once, so one address cannot take the others' places;
- a deadline for one request to arrive whole (``MEMORY_SERVER_REQUEST_TIMEOUT``): headers or
  a body dribbled a byte at a time no longer keep a connection for ever;
- a small body for a request without credentials (``ANONYMOUS_BODY_BYTES``, below the size
  waitress keeps in memory): decided from its headers, before the body is read, so a body
  nobody authenticated is never written to the temporary disk.

Home Assistant's own addresses (its ingress proxy and core) and the addresses the settings
trust are exempt from the share, the total and the deadline: a household's bursts pass.
"""

from __future__ import annotations

import copy
import ipaddress
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.server import MultiSocketServer, TcpWSGIServer
from waitress.task import ThreadedTaskDispatcher

from ...settings import Settings

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Home Assistant's ingress proxy and core, on the Supervisor's network (the add-on only).
HOME_ASSISTANT = ("172.30.32.2", "172.30.32.1")
# The largest request anyone needs: the dashboard's own limit (Flask's MAX_CONTENT_LENGTH),
# which an import upload or a skill zip stays under; an MCP call is far smaller.
MAX_REQUEST_BYTES = 16 * 1024 * 1024
# A request's first line and headers (cookies included): far more than any browser sends.
MAX_HEADER_BYTES = 64 * 1024
# The body of a request without credentials (a login form, a language switch): smaller than
# what waitress keeps in memory (``inbuf_overflow``, 512 KiB), so it never reaches the disk.
ANONYMOUS_BODY_BYTES = 64 * 1024
# Connections beyond MEMORY_SERVER_CONNECTIONS kept for the exempt addresses.
EXEMPT_ROOM = 100
CLEANUP_INTERVAL = 1  # seconds between looks for idle and late connections

BUSY_BODY = b"Busy: too many connections from this address or in all; retry shortly.\n"
BUSY_ANSWER = (
    b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 5\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: "
    + str(len(BUSY_BODY)).encode("ascii")
    + b"\r\n\r\n"
    + BUSY_BODY
)

# Whether a request may send a body larger than ANONYMOUS_BODY_BYTES: (client address, path,
# headers as waitress names them: upper case, underscores).
BodyCheck = Callable[[str, str, Mapping[str, str]], bool]


def _address(client: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(client.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _networks(entries: list[str]) -> tuple[Network, ...]:
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            continue  # the settings that list them refuse or report a bad entry themselves
    return tuple(networks)


@dataclass(frozen=True)
class Limits:
    """How much of the server the clients that are not exempt may hold."""

    connections: int
    per_client: int
    idle_timeout: int
    request_timeout: int
    exempt: tuple[Network, ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        """The limits the settings give; exempt: Home Assistant's proxy and core (in the
        add-on), MEMORY_TRUSTED_PROXIES and the addresses MEMORY_MCP_TRUSTED lists."""
        trusted = [*settings.trusted_proxies]
        trusted += [item for item in settings.mcp_trusted.split(",") if item.strip()]
        if settings.is_addon:
            trusted += HOME_ASSISTANT
        return cls(
            connections=settings.server_connections,
            per_client=settings.server_connections_per_client,
            idle_timeout=settings.server_idle_timeout,
            request_timeout=settings.server_request_timeout,
            exempt=_networks(trusted),
        )

    def is_exempt(self, client: str) -> bool:
        address = _address(client)
        return address is not None and any(
            address.version == net.version and address in net for net in self.exempt
        )

    def adjustments(self) -> dict[str, Any]:
        """waitress's own settings for these limits."""
        return {
            # waitress stops accepting at this many sockets (its own two included): room for
            # the exempt addresses beyond the others' total.
            "connection_limit": self.connections + EXEMPT_ROOM + 2,
            "channel_timeout": self.idle_timeout,
            "cleanup_interval": CLEANUP_INTERVAL,
            "max_request_header_size": MAX_HEADER_BYTES,
            # waitress refuses a body of this size or more (413, connection closed), from the
            # Content-Length before reading it, a chunked one when it gets there.
            "max_request_body_size": MAX_REQUEST_BYTES + 1,
        }


class GuardedParser(HTTPRequestParser):
    """A request parser that, once the headers are in, holds a request without credentials
    to a body of ANONYMOUS_BODY_BYTES (waitress answers 413 past it)."""

    def __init__(self, adj: Adjustments, channel: GuardedChannel) -> None:
        super().__init__(adj)
        self.channel = channel

    def parse_header(self, header_plus: bytes) -> None:
        super().parse_header(header_plus)
        has_body = self.chunked or self.content_length > 0
        if not has_body or self.channel.exempt:
            return
        server = self.channel.server
        path = str(cast(Any, self).path or "")  # set by parse_header (the stub lacks it)
        if not server.body_check(self.channel.client, path, self.headers):
            self.adj = server.anonymous_adj


class GuardedChannel(HTTPChannel):
    """A connection that knows its client's address, whether it is exempt, and since when
    the request it is reading has been arriving."""

    server: GuardedServer
    reading_since: float | None = None

    def __init__(self, server: GuardedServer, sock: socket.socket, addr: Any, adj: Any, map: Any):
        self.client = str(addr[0]) if isinstance(addr, tuple) else str(addr)
        self.exempt = server.limits.is_exempt(self.client)
        super().__init__(server, sock, addr, adj, map=map)

    def parser_class(self, adj: Adjustments) -> GuardedParser:  # type: ignore[override]
        return GuardedParser(adj, self)

    def received(self, data: bytes) -> bool:
        if self.request is None and data:
            self.reading_since = time.monotonic()  # a new request starts with these bytes
        done: bool = super().received(data)
        if self.request is None:
            self.reading_since = None  # what came in is whole requests only
        return done


class GuardedServer(TcpWSGIServer):
    """waitress's TCP server, refusing a connection beyond its address's share or the total,
    and closing one whose request has taken longer than the deadline to arrive."""

    limits: Limits
    body_check: BodyCheck
    anonymous_adj: Adjustments

    def handle_accept(self) -> None:
        try:
            accepted = self.accept()
            if accepted is None:
                return
            conn, addr = accepted
            self.set_socket_options(conn)
        except OSError:  # as waitress: a socket gone before it was accepted
            return
        client = str(addr[0])
        if not self.limits.is_exempt(client) and self._over_share(client):
            _refuse(conn)
            return
        GuardedChannel(self, conn, addr, self.adj, map=self._channels())

    def _over_share(self, client: str) -> bool:
        same = others = 0
        for channel in list(self._channels().values()):
            if isinstance(channel, GuardedChannel) and not channel.exempt:
                others += 1
                same += channel.client == client
        return same >= self.limits.per_client or others >= self.limits.connections

    def _channels(self) -> dict[int, Any]:
        """Every socket of the event loop (wasyncore's map; its stub does not name it)."""
        channels: dict[int, Any] = cast(Any, self)._map  # noqa: SLF001 (waitress internals)
        return channels

    def maintenance(self, now: int) -> None:  # waitress passes time.time(), a float
        super().maintenance(now)  # idle connections (channel_timeout)
        late = time.monotonic() - self.limits.request_timeout
        active: dict[int, Any] = cast(Any, self).active_channels
        for channel in list(active.values()):
            since = getattr(channel, "reading_since", None)
            if since is not None and since < late and not channel.exempt:
                channel.will_close = True


def _refuse(conn: socket.socket) -> None:
    """Answer 503 (best effort: the socket is new, its send buffer empty) and close."""
    try:
        conn.setblocking(False)
        conn.send(BUSY_ANSWER)
    except OSError:
        pass
    conn.close()


def create_server(
    app: WSGIApplication,
    limits: Limits,
    body_check: BodyCheck,
    **options: Any,
) -> GuardedServer | MultiSocketServer:
    """waitress's ``create_server`` with the guarded server, on every address ``options``
    listen on (``host`` and ``port``, threads and the rest as waitress takes them)."""
    adj = Adjustments(**{**options, **limits.adjustments()})
    anonymous = copy.copy(adj)
    anonymous.max_request_body_size = ANONYMOUS_BODY_BYTES + 1
    sockets: dict[int, Any] = {}
    dispatcher = ThreadedTaskDispatcher()
    dispatcher.set_thread_count(adj.threads)
    servers = []
    for sockinfo in cast(Any, adj).listen:
        server = GuardedServer(
            app, sockets, _start=False, dispatcher=dispatcher, adj=adj, sockinfo=sockinfo
        )
        server.limits, server.body_check, server.anonymous_adj = limits, body_check, anonymous
        server.accept_connections()
        servers.append(server)
    if len(servers) == 1:
        return servers[0]
    listening = [(cast(Any, s).effective_host, cast(Any, s).effective_port) for s in servers]
    return MultiSocketServer(sockets, adj, listening, dispatcher, servers[-1].log_info)
