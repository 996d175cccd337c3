"""Network checks of an HTTP server's URL: plaintext, credentials, DNS, address classes.

The resolver is injectable (a callable ``(host, port) -> awaitable list of IP strings``)
so tests control DNS; it raises ``OSError`` when the lookup fails.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

Resolver = Callable[[str, int], Awaitable[list[str]]]


async def system_resolver(host: str, port: int) -> list[str]:
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: list[str] = []
    for *_rest, sockaddr in infos:
        ip = str(sockaddr[0])
        if ip not in seen:
            seen.append(ip)
    return seen


def address_class(ip: str) -> str | None:
    """A plain name for a non-public address ('a loopback address'), or None if public."""
    addr = ipaddress.ip_address(ip.split("%", 1)[0])
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    if addr.is_loopback:
        return "a loopback address"
    if addr.is_link_local:
        return "a link-local address"
    if addr.is_unspecified:
        return "an unspecified address"
    if addr.is_multicast:
        return "a multicast address"
    if addr.is_reserved:
        return "a reserved address"
    if addr.is_private:
        return "a private address"
    if not addr.is_global:
        return "a reserved (non-public) address"
    return None


def is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class NetReport:
    """What the URL check found. ``reasons`` empty means: a public HTTPS address."""

    url: str
    host: str
    reasons: tuple[str, ...] = ()
    addresses: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    dns_failed: bool = False
    private_hosts: frozenset[str] = frozenset()

    @property
    def clean(self) -> bool:
        return not self.reasons


def default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


async def resolve_host(host: str, port: int, resolver: Resolver) -> tuple[str, ...]:
    if is_ip_literal(host):
        return (host,)
    return tuple(await resolver(host, port))


async def check_url(url: str, resolver: Resolver | None = None) -> NetReport:
    resolver = resolver or system_resolver
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    reasons: list[str] = []
    if scheme == "http":
        reasons.append(
            "the URL uses plaintext http://, so anyone on the network path can read or "
            "change the traffic"
        )
    elif scheme != "https":
        reasons.append(f"the URL scheme '{scheme}' is not https")
    if parts.username is not None or parts.password is not None:
        reasons.append("the URL carries credentials (user:password@) in plain text")
    if not host:
        return NetReport(url, host, (*reasons, "the URL has no host name"), dns_failed=True)
    try:
        port = parts.port or default_port(scheme)
    except ValueError:
        port = default_port(scheme)
    try:
        ips = await resolve_host(host, port, resolver)
    except (OSError, UnicodeError) as exc:
        reasons.append(
            f"the DNS lookup of '{host}' failed ({exc}); the server's address is unknown, so "
            f"a trust decision cannot be saved until it resolves"
        )
        return NetReport(url, host, tuple(reasons), {}, dns_failed=True)
    if not ips:
        reasons.append(f"the DNS lookup of '{host}' returned no address")
        return NetReport(url, host, tuple(reasons), {}, dns_failed=True)
    private = False
    for ip in ips:
        kind = address_class(ip)
        if kind is not None:
            private = True
            shown = f"'{host}' resolves to {ip}" if not is_ip_literal(host) else f"{ip} is"
            reasons.append(f"{shown}, {kind}" if not is_ip_literal(host) else f"{shown} {kind}")
    return NetReport(
        url,
        host,
        tuple(reasons),
        {host: ips},
        dns_failed=False,
        private_hosts=frozenset({host}) if private else frozenset(),
    )
