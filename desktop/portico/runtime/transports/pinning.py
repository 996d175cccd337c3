"""DNS pinning for httpx2: dial the reviewed IP addresses, keep TLS checking the host name.

``pinned_transport(pins)`` returns an ``httpx2.AsyncHTTPTransport`` whose connections to a
pinned host go to the pinned addresses (tried in order). The TLS handshake still uses the
URL's host name for SNI and certificate verification, because httpcore passes the origin
host to ``start_tls`` whatever address the socket was opened to.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx2


def _backend_class() -> type:
    import httpcore2

    class PinnedBackend(httpcore2.AsyncNetworkBackend):
        def __init__(
            self, pins: Mapping[str, Sequence[str]], inner: httpcore2.AsyncNetworkBackend
        ) -> None:
            self.pins = {host.lower(): tuple(ips) for host, ips in pins.items()}
            self.inner = inner
            self.dialed: list[tuple[str, str, int]] = []  # (host, ip, port), for diagnostics

        async def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,  # noqa: ASYNC109 (httpcore signature)
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> httpcore2.AsyncNetworkStream:
            ips = self.pins.get(host.lower().strip("[]"))
            if not ips:
                return await self.inner.connect_tcp(
                    host, port, timeout, local_address, socket_options
                )
            error: Exception | None = None
            for ip in ips:
                try:
                    stream = await self.inner.connect_tcp(
                        ip, port, timeout, local_address, socket_options
                    )
                except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                    error = exc
                    continue
                self.dialed.append((host, ip, port))
                return stream
            assert error is not None
            raise error

        async def connect_unix_socket(
            self,
            path: str,
            timeout: float | None = None,  # noqa: ASYNC109 (httpcore signature)
            socket_options: Iterable[Any] | None = None,
        ) -> httpcore2.AsyncNetworkStream:
            return await self.inner.connect_unix_socket(path, timeout, socket_options)

        async def sleep(self, seconds: float) -> None:
            await self.inner.sleep(seconds)

    return PinnedBackend


def pin_transport(transport: httpx2.AsyncHTTPTransport, pins: Mapping[str, Sequence[str]]) -> Any:
    """Make an existing transport dial ``pins``; returns the installed backend."""
    pool = transport._pool  # the httpcore pool: httpx2 offers no public network_backend option
    backend = _backend_class()(pins, pool._network_backend)
    pool._network_backend = backend
    return backend


def pinned_transport(
    pins: Mapping[str, Sequence[str]] | None, **kwargs: Any
) -> httpx2.AsyncHTTPTransport:
    """An ``httpx2.AsyncHTTPTransport(**kwargs)`` that connects pinned hosts to their IPs."""
    import httpx2

    transport = httpx2.AsyncHTTPTransport(**kwargs)
    if pins and kwargs.get("proxy") is None:
        pin_transport(transport, pins)
    return transport


def live_pinned_transport(
    pins: dict[str, tuple[str, ...]], **kwargs: Any
) -> httpx2.AsyncHTTPTransport:
    """Like :func:`pinned_transport`, but dials whatever ``pins`` holds at connect time:
    the caller adds hosts (lower-case keys) as it vets them, and the transport follows."""
    import httpx2

    transport = httpx2.AsyncHTTPTransport(**kwargs)
    backend = pin_transport(transport, {})
    backend.pins = pins
    return transport
