"""Which hosts a sandboxed server may reach: its declared `network.allow` entries.

An entry is `host` (any port), `host:port`, `*.example.com` (subdomains only, not the
apex) or an IP literal (`10.0.0.5`, `[::1]:8080`), which matches only itself: a name
never matches an address, so an address is reachable only where it is listed. Names
compare case-insensitively after IDNA (UTS 46) normalisation, so `Bücher.example` and
`xn--bcher-kva.example` are one host.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import idna


class HostEntryError(ValueError):
    """An allow entry that is not a host, `host:port`, `*.domain` or an IP literal."""


@dataclass(frozen=True)
class _Rule:
    host: str  # normalised; for a wildcard the domain after "*."
    port: int | None
    wildcard: bool
    literal: bool


def normalise_host(host: str) -> str | None:
    """The canonical form of a host name or IP literal, or None when it is neither.

    An IPv4 address in a form only the C resolver reads (`2130706433`, `0x7f.1`) is
    refused rather than treated as a name: it would resolve to an address nobody listed.
    """
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    text = text.rstrip(".")
    if not text:
        return None
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        pass
    try:
        socket.inet_aton(text)
    except OSError:
        pass
    else:
        return None
    try:
        return idna.encode(text, uts46=True).decode("ascii")
    except idna.IDNAError:
        return None


def split_authority(authority: str) -> tuple[str, int | None]:
    """`host`, `host:port`, `[v6]` or `[v6]:port` into (host, port); a bare IPv6 has no port.

    Raises ValueError for a port that is not a number in 1..65535.
    """
    text = authority.strip()
    if text.count(":") > 1 and not text.startswith("["):
        return text, None
    parts = urlsplit("//" + text)
    host = parts.hostname if text.startswith("[") else parts.netloc.rsplit(":", 1)[0]
    port = parts.port  # raises ValueError when not a number or out of range
    if port == 0:
        raise ValueError(f"port 0 in {authority!r}")
    if parts.username is not None or parts.path or parts.query or parts.fragment:
        raise ValueError(f"not a host or host:port: {authority!r}")
    return host or "", port


def _rule(entry: str) -> _Rule:
    try:
        host, port = split_authority(entry)
    except ValueError as exc:
        raise HostEntryError(f"network.allow entry {entry!r}: {exc}") from None
    wildcard = host.startswith("*.")
    if wildcard:
        host = host[2:]
    if "*" in host:
        raise HostEntryError(
            f"network.allow entry {entry!r}: only a leading '*.' wildcard is allowed "
            "(observe mode lets everything through while it records)"
        )
    normal = normalise_host(host)
    if normal is None:
        raise HostEntryError(f"network.allow entry {entry!r}: not a host name or IP address")
    literal = _is_ip(normal)
    if wildcard and literal:
        raise HostEntryError(f"network.allow entry {entry!r}: a wildcard needs a domain name")
    return _Rule(normal, port, wildcard, literal)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def entry_for(host: str, port: int | None = None) -> str:
    """The allow entry that admits `host` (on `port`, or any port): what to offer when a
    host was refused, e.g. "allow example.com for this server"."""
    normal = normalise_host(host)
    if normal is None:
        raise HostEntryError(f"not a host name or IP address: {host!r}")
    shown = f"[{normal}]" if ":" in normal else normal
    return shown if port is None else f"{shown}:{port}"


class HostFilter:
    """The declared hosts; `allows(host, port)` is the only question the proxy asks."""

    def __init__(self, allow: Sequence[str]) -> None:
        self._rules = tuple(_rule(entry) for entry in allow)

    @property
    def entries(self) -> tuple[str, ...]:
        """The entries in canonical form (`*.example.com:443`, `[::1]`), for display."""
        return tuple(
            ("*." if rule.wildcard else "") + entry_for(rule.host, rule.port)
            for rule in self._rules
        )

    def allows(self, host: str, port: int) -> bool:
        normal = normalise_host(host)
        if normal is None:
            return False
        literal = _is_ip(normal)
        for rule in self._rules:
            if rule.port is not None and rule.port != port:
                continue
            if rule.literal != literal:
                continue
            if rule.wildcard:
                if normal.endswith("." + rule.host):
                    return True
            elif normal == rule.host:
                return True
        return False
