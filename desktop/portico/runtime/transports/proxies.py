"""Which proxy (if any) a request goes through.

Sources: ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``ALL_PROXY`` (either case; ``socks://`` is
normalized to ``socks5://``), else the OS settings (``urllib.request.getproxies``).
``NO_PROXY`` entries: ``*`` (everything), host names (the host and its subdomains),
``.example.com`` (same), ``*.example.com`` (subdomains only), IP addresses, CIDR ranges
(``10.0.0.0/8``), each optionally with ``:port``. Like curl, loopback is proxied unless
``NO_PROXY`` names it (most setups list ``localhost,127.0.0.1``).
"""

from __future__ import annotations

import ipaddress
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


def normalize_proxy_url(url: str) -> str:
    url = url.strip()
    if url.lower().startswith("socks://"):
        return "socks5://" + url[len("socks://") :]
    if "://" not in url:
        return "http://" + url
    return url


def _get(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name.upper()) or environ.get(name.lower())
    return value.strip() if value and value.strip() else None


@dataclass(frozen=True)
class ProxySettings:
    http: str | None = None
    https: str | None = None
    no_proxy: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def from_environ(
        cls,
        environ: Mapping[str, str],
        *,
        use_os_settings: bool = True,
        os_proxies: Callable[[], Mapping[str, str]] | None = None,
    ) -> ProxySettings:
        """``os_proxies``: reads the OS settings (default ``urllib.request.getproxies``:
        the registry on Windows, System Configuration on macOS, the environment on Linux).
        """
        everything = _get(environ, "ALL_PROXY")
        http = _get(environ, "HTTP_PROXY") or everything
        https = _get(environ, "HTTPS_PROXY") or everything
        no_proxy = _get(environ, "NO_PROXY") or ""
        if use_os_settings and not (http or https):
            system = (os_proxies or urllib.request.getproxies)()
            http = system.get("http") or system.get("all")
            https = system.get("https") or system.get("all")
            no_proxy = no_proxy or system.get("no", "")
        return cls(
            http=normalize_proxy_url(http) if http else None,
            https=normalize_proxy_url(https) if https else None,
            no_proxy=tuple(e for e in no_proxy.replace(" ", ",").split(",") if e.strip()),
        )

    def proxy_for(self, scheme: str, host: str, port: int | None) -> str | None:
        proxy = self.https if scheme == "https" else self.http
        if proxy is None or bypass(host, port, self.no_proxy):
            return None
        return proxy


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _split_port(entry: str) -> tuple[str, int | None]:
    if entry.startswith("["):  # [::1]:8080
        host, _, rest = entry[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else None
    if entry.count(":") == 1:
        host, _, port = entry.partition(":")
        if port.isdigit():
            return host, int(port)
    return entry, None


def bypass(host: str, port: int | None, entries: tuple[str, ...] | list[str]) -> bool:
    """Whether ``host`` must be reached directly under these ``NO_PROXY`` entries."""
    host = host.lower().rstrip(".")
    address = _ip(host)
    for raw in entries:
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        if "/" in entry and address is not None:
            try:
                if address in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                pass
            continue
        name, entry_port = _split_port(entry)
        if entry_port is not None and port is not None and entry_port != port:
            continue
        name = name.rstrip(".")
        entry_ip = _ip(name)
        if entry_ip is not None:
            if address is not None and address == entry_ip:
                return True
            continue
        if name.startswith("*."):
            if host.endswith(name[1:]):
                return True
        elif name.startswith("."):
            if host == name[1:] or host.endswith(name):
                return True
        elif host == name or host.endswith("." + name):
            return True
    return False
