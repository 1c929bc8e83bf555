"""Who may call MCP over HTTP: a trusted address, or the bearer token (MEMORY_MCP_TOKEN, or
the file MEMORY_MCP_TOKEN_FILE names, read again when it changes), as the settings give it
(``McpAccess``), and the Host names a token-less call may use against DNS rebinding."""

from __future__ import annotations

import hmac
import ipaddress
import os
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path

from mcp.server.transport_security import TransportSecuritySettings

from ..settings import Settings, SettingsError, token_problem

# Who may call without a token when MEMORY_MCP_TRUSTED is empty.
ADDON_TRUSTED = ("172.30.32.1",)  # Home Assistant core, on the Supervisor's network
STANDALONE_TRUSTED = ("127.0.0.0/8", "::1")  # this machine
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

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
