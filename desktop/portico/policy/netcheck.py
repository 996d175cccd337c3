"""Network checks of an HTTP server's URL: plaintext, credentials, DNS, address classes.

The resolver is injectable (a callable ``(host, port) -> awaitable list of IP strings``)
so tests control DNS; it raises ``OSError`` when the lookup fails.
"""

from __future__ import annotations

import asyncio
import functools
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


@functools.lru_cache(maxsize=4096)
def address_class(ip: str) -> str | None:
    """A plain name for a non-public address ('a loopback address'), or None if public.
    Remembered per address text (a pure function; a 400-server check asks it ~4 times
    per HTTP server, each a parse by ipaddress)."""
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


def address_kind(ip: str) -> str:
    """The class a trust decision binds to: public, private, loopback, link-local, other."""
    kind = address_class(ip)
    if kind is None:
        return "public"
    return {
        "a loopback address": "loopback",
        "a link-local address": "link-local",
        "a private address": "private",
    }.get(kind, "other")


def address_kinds(addresses: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    """Every class among ``addresses`` (host -> IPs), sorted: what trust is bound to."""
    return tuple(sorted({address_kind(ip) for ips in addresses.values() for ip in ips}))


# Cloud instance metadata services: they hand out the machine's credentials to whoever
# asks from inside it. A project server is never connected to one (nor its sign-in).
METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.com",
    }
)
METADATA_IPS = frozenset({"169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200"})


def never_dialled(host: str, ips: tuple[str, ...] | list[str]) -> str | None:
    """Why a project server may not connect to ``host`` at ``ips`` at all, or None:
    link-local addresses (169.254.0.0/16, fe80::/10) and the cloud metadata services."""
    name = host.lower().rstrip(".").strip("[]")
    if name in METADATA_HOSTS:
        return f"'{host}' is a cloud metadata service"
    for ip in ips:
        bare = ip.split("%", 1)[0].lower()
        if bare in METADATA_IPS:
            return f"'{host}' resolves to {ip}, a cloud metadata address"
        if address_kind(bare) == "link-local":
            return f"'{host}' resolves to {ip}, a link-local address"
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
