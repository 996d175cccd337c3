"""The httpx2 client of one HTTP server: headers, identity header, TLS (private CA, mTLS),
proxies, caps.

Every header value is resolved (``${env:}`` / ``${keyring:}``) before the client is built.
The client never follows redirects itself: the SDK follows same-origin ones only.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx2

from portico.config.model import ClientCert, IdentityHeader, ServerSpec, Transport
from portico.runtime.errors import ConfigProblem, HttpErrorRecorder
from portico.runtime.transports.proxies import ProxySettings

MAX_RESPONSE_BYTES = 10 * 1024 * 1024  # per HTTP response body and per SSE event
CONNECT_SECONDS = 30.0
SSE_READ_SECONDS = 300.0
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


class ResponseTooLarge(httpx2.StreamError):
    pass


def identity_header(
    spec: ServerSpec, headers: Mapping[str, str], profile: str
) -> tuple[tuple[str, str] | None, str | None]:
    """(header to add or None, warning or None) for ``spec.identity_header``."""
    block: IdentityHeader | None = spec.identity_header
    if block is None:
        return None, None
    where = f"{spec.source}: {spec.name}.identity_header"
    if spec.transport is Transport.STDIO:
        return None, f"{where}: ignored, identity headers apply to HTTP servers only"
    if not block.name or not _TOKEN.match(block.name):
        return None, f"{where}: ignored, {block.name!r} is not a valid HTTP header name"
    if block.value_from == "static":
        value = block.value
        if not value:
            return None, f"{where}: ignored, value_from = static needs a value"
    elif block.value_from == "profile":
        value = profile
    else:
        return None, f"{where}: ignored, value_from must be 'static' or 'profile'"
    if any(c in value for c in "\r\n\0"):
        return None, f"{where}: ignored, the value contains a line break"
    if any(name.lower() == block.name.lower() for name in headers):
        return None, None  # an explicit header of the same name wins
    return (block.name, value), None


def tls_context(spec: ServerSpec, password: str | None = None) -> ssl.SSLContext | bool:
    """The TLS settings of ``spec``'s connection (and of its icon fetches): ``True`` (the
    system's trust) unless the server sets ``ca_cert`` (extra CAs to trust) or
    ``client_cert`` (mTLS). Raises ConfigProblem naming the file and key."""
    cert: ClientCert | None = spec.client_cert
    if cert is None and not spec.ca_cert:
        return True
    context = ssl.create_default_context()
    if spec.ca_cert:
        ca_path = Path(spec.ca_cert).expanduser()
        where = f"{spec.source}: {spec.name}.ca_cert"
        if not ca_path.is_file():
            raise ConfigProblem(
                f"{where}: CA file {ca_path} does not exist; fix the path or remove ca_cert"
            )
        try:
            context.load_verify_locations(cafile=str(ca_path))
        except (ssl.SSLError, OSError, ValueError) as exc:
            raise ConfigProblem(
                f"{where}: cannot load {ca_path} as PEM CA certificates: {exc}"
            ) from exc
    if cert is not None:
        _load_client_cert(context, spec, cert, password)
    return context


def _load_client_cert(
    context: ssl.SSLContext, spec: ServerSpec, cert: ClientCert, password: str | None
) -> None:
    where = f"{spec.source}: {spec.name}.client_cert"
    cert_path = Path(cert.cert).expanduser()
    if not cert_path.is_file():
        raise ConfigProblem(
            f"{where}: certificate file {cert_path} does not exist; fix the path or remove"
            " client_cert"
        )
    key_path = Path(cert.key).expanduser() if cert.key else None
    if key_path is not None and not key_path.is_file():
        raise ConfigProblem(
            f"{spec.source}: {spec.name}.client_key: key file {key_path} does not exist;"
            " fix the path or remove client_key"
        )
    try:
        context.load_cert_chain(
            str(cert_path), str(key_path) if key_path else None, password=password
        )
    except (ssl.SSLError, OSError) as exc:
        raise ConfigProblem(f"{where}: cannot load {cert_path}: {exc}") from exc


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, limit: int, url: str) -> None:
        self.inner = inner
        self.limit = limit
        self.url = url

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self.inner:
            seen += len(chunk)
            if seen > self.limit:
                raise ResponseTooLarge(
                    f"response from {self.url} exceeded the {self.limit // (1024 * 1024)} MiB"
                    " limit per HTTP response"
                )
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class RoutingTransport(httpx2.AsyncBaseTransport):
    """Sends each request direct or through the proxy its host calls for; caps bodies."""

    def __init__(
        self,
        proxies: ProxySettings,
        make: Callable[[str | None], httpx2.AsyncBaseTransport],
        max_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self.proxies = proxies
        self.make = make
        self.max_bytes = max_bytes
        self._transports: dict[str | None, httpx2.AsyncBaseTransport] = {}

    def route(self, url: httpx2.URL) -> str | None:
        return self.proxies.proxy_for(url.scheme, url.host, url.port)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        proxy = self.route(request.url)
        transport = self._transports.get(proxy)
        if transport is None:
            transport = self._transports[proxy] = self.make(proxy)
        response = await transport.handle_async_request(request)
        content_type = response.headers.get("content-type", "").lower()
        if not content_type.startswith("text/event-stream"):
            response.stream = _CappedStream(response.stream, self.max_bytes, str(request.url))
        return response

    async def aclose(self) -> None:
        for transport in self._transports.values():
            await transport.aclose()


def build_client(
    spec: ServerSpec,
    *,
    headers: Mapping[str, str],
    proxies: ProxySettings,
    recorder: HttpErrorRecorder,
    auth: httpx2.Auth | None = None,
    cert_password: str | None = None,
    max_bytes: int = MAX_RESPONSE_BYTES,
    pins: Mapping[str, Sequence[str]] | None = None,
    verify: ssl.SSLContext | bool | None = None,
) -> httpx2.AsyncClient:
    """The AsyncClient for ``spec`` (raises ConfigProblem before any network use).

    ``verify``: the TLS settings from :func:`tls_context` (built here when None).

    ``pins`` (host -> IPs, the policy's DNS pinning): direct connections to those hosts
    dial the pinned addresses; TLS still verifies the host name.
    """
    if verify is None:
        verify = tls_context(spec, cert_password)

    def make(proxy: str | None) -> httpx2.AsyncBaseTransport:
        try:
            transport = httpx2.AsyncHTTPTransport(verify=verify, proxy=proxy, trust_env=False)
        except ImportError as exc:  # socks5 without socksio
            raise ConfigProblem(f"{spec.name}: proxy {proxy} cannot be used: {exc}") from exc
        if pins and proxy is None:
            from portico.runtime.transports.pinning import pin_transport

            pin_transport(transport, pins)
        return transport

    return httpx2.AsyncClient(
        headers=dict(headers),
        auth=auth,
        timeout=httpx2.Timeout(CONNECT_SECONDS, read=SSE_READ_SECONDS),
        follow_redirects=False,
        transport=RoutingTransport(proxies, make, max_bytes),
        trust_env=False,
        event_hooks={"response": [recorder]},
    )
