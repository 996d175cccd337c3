"""The filtering proxy run for real over its Unix socket: a declared host is reached by
CONNECT and by absolute-form HTTP, an undeclared one gets 403, is reported once and is
never dialled or resolved; observe mode lets it through and reports it."""

from __future__ import annotations

import asyncio
import socket
import stat
from pathlib import Path
from typing import Any

import pytest

from portico.runtime.sandbox.netproxy import (
    HostEntryError,
    HostFilter,
    entry_for,
    start_proxy,
)
from tests.helpers.dns import Dns
from tests.runtime.sandbox.targets import (
    connect_tunnel,
    http_target,
    proxy_request,
    short_dir,
)


def test_filter_names_ports_and_wildcards() -> None:
    hosts = HostFilter(["Example.COM", "api.github.com:443", "*.npmjs.org", "bücher.example"])
    assert hosts.allows("example.com", 443)
    assert hosts.allows("EXAMPLE.com.", 8080)  # no port: any port; trailing dot is the same host
    assert not hosts.allows("www.example.com", 443)  # an exact entry is not its subdomains
    assert hosts.allows("api.github.com", 443)
    assert not hosts.allows("api.github.com", 80)
    assert hosts.allows("registry.npmjs.org", 443)
    assert hosts.allows("a.b.npmjs.org", 443)
    assert not hosts.allows("npmjs.org", 443)  # "*." is the subdomains, not the apex
    assert not hosts.allows("evilnpmjs.org", 443)
    assert hosts.allows("xn--bcher-kva.example", 443)  # IDNA: one host, two spellings
    assert hosts.allows("BÜCHER.example", 443)
    assert hosts.entries == (
        "example.com",
        "api.github.com:443",
        "*.npmjs.org",
        "xn--bcher-kva.example",
    )


def test_filter_ip_literals_only_where_listed() -> None:
    hosts = HostFilter(["10.0.0.5", "[::1]:8080", "localhost"])
    assert hosts.allows("10.0.0.5", 80)
    assert not hosts.allows("10.0.0.6", 80)
    assert hosts.allows("[::1]", 8080)
    assert hosts.allows("0:0:0:0:0:0:0:1", 8080)  # compared in canonical form
    assert not hosts.allows("::1", 8081)
    assert not hosts.allows("127.0.0.1", 80)  # "localhost" is a name, not its address
    # Forms the C resolver reads as 10.0.0.5 are neither that address nor a name.
    assert not hosts.allows("167772165", 80)
    assert not hosts.allows("0xa.0.0.5", 80)
    assert not HostFilter(["example.com"]).allows("", 80)


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ("*", "wildcard"),
        ("a.*.example.com", "wildcard"),
        ("*.10.0.0.1", "domain name"),
        ("example.com:http", "example.com:http"),
        ("example.com:70000", "example.com:70000"),
        ("user@example.com", "not a host"),
        ("example.com/path", "not a host"),
        ("exa mple.com", "not a host name"),
    ],
)
def test_filter_rejects_bad_entries(entry: str, words: str) -> None:
    with pytest.raises(HostEntryError, match=r"network\.allow entry") as caught:
        HostFilter([entry])
    assert words in str(caught.value)


async def test_connect_to_a_declared_host_tunnels() -> None:
    blocked: list[tuple[str, int]] = []
    with short_dir() as run:
        async with http_target() as target:
            proxy = await start_proxy(
                run / "proxy.sock", HostFilter([f"127.0.0.1:{target.port}"]), _append(blocked)
            )
            try:
                assert stat.S_IMODE((run / "proxy.sock").stat().st_mode) == 0o600
                status, reader, writer = await connect_tunnel(
                    proxy.socket_path, f"127.0.0.1:{target.port}"
                )
                assert status == b"HTTP/1.1 200 Connection Established"
                writer.write(b"GET /tunnelled HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                await writer.drain()
                answer = await asyncio.wait_for(reader.read(), 10)
                writer.close()
            finally:
                await proxy.close()
        assert not (run / "proxy.sock").exists()
    assert answer.endswith(b"GET /tunnelled HTTP/1.1|host=t|body="), answer
    assert blocked == []
    assert proxy.seen == {("127.0.0.1", target.port): True}


async def test_absolute_form_http_is_forwarded_with_its_body() -> None:
    with short_dir() as run:
        async with http_target() as target:
            proxy = await start_proxy(
                run / "p.sock", HostFilter([f"127.0.0.1:{target.port}"]), _append([])
            )
            try:
                url = f"http://127.0.0.1:{target.port}/path?q=1"
                status, rest = await proxy_request(
                    proxy.socket_path,
                    f"POST {url} HTTP/1.1\r\nHost: ignored\r\nProxy-Authorization: Basic eA==\r\n"
                    "Proxy-Connection: keep-alive\r\nContent-Length: 5\r\n\r\nhello".encode(),
                )
            finally:
                await proxy.close()
    assert status == b"HTTP/1.1 200 OK"
    assert rest == f"POST /path?q=1 HTTP/1.1|host=127.0.0.1:{target.port}|body=hello".encode()


async def test_an_undeclared_host_is_refused_reported_once_and_never_dialled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    blocked: list[tuple[str, int]] = []
    resolved: list[Any] = []
    loop = asyncio.get_running_loop()
    real = loop.getaddrinfo

    async def recording(*args: Any, **kwargs: Any) -> Any:
        resolved.append(args[0])
        return await real(*args, **kwargs)

    monkeypatch.setattr(loop, "getaddrinfo", recording)
    with short_dir() as run:
        async with http_target() as declared, http_target("127.0.0.2") as other:
            proxy = await start_proxy(
                run / "p.sock", HostFilter([f"127.0.0.1:{declared.port}"]), _append(blocked)
            )
            try:
                for _ in range(2):
                    status, rest = await proxy_request(
                        proxy.socket_path,
                        b"CONNECT Undeclared.Example:443 HTTP/1.1\r\nHost: x\r\n\r\n",
                    )
                    assert status == b"HTTP/1.1 403 Forbidden"
                    assert b"undeclared.example:443 is not in this server's sandbox" in rest
                status, _ = await proxy_request(
                    proxy.socket_path,
                    f"GET http://127.0.0.2:{other.port}/ HTTP/1.1\r\n\r\n".encode(),
                )
                assert status == b"HTTP/1.1 403 Forbidden"
                # the declared host on another port is another (host, port)
                status, _ = await proxy_request(
                    proxy.socket_path,
                    f"CONNECT 127.0.0.1:{declared.port + 1} HTTP/1.1\r\n\r\n".encode(),
                )
                assert status == b"HTTP/1.1 403 Forbidden"
            finally:
                await proxy.close()
    assert blocked == [
        ("undeclared.example", 443),
        ("127.0.0.2", other.port),
        ("127.0.0.1", declared.port + 1),
    ]
    assert proxy.blocked == frozenset(blocked)
    assert other.connections == [] and declared.connections == []
    assert "undeclared.example" not in resolved and resolved == []


async def test_observe_mode_lets_everything_through_and_reports_it() -> None:
    blocked: list[tuple[str, int]] = []
    with short_dir() as run:
        async with http_target() as declared, http_target("127.0.0.2") as other:
            proxy = await start_proxy(
                run / "p.sock",
                HostFilter([f"127.0.0.1:{declared.port}"]),
                _append(blocked),
                observe=True,
            )
            try:
                for target in (declared, other, other):
                    status, _ = await proxy_request(
                        proxy.socket_path,
                        f"GET http://{target.host}:{target.port}/x HTTP/1.1\r\n\r\n".encode(),
                    )
                    assert status == b"HTTP/1.1 200 OK"
            finally:
                await proxy.close()
    assert blocked == [("127.0.0.2", other.port)]
    assert proxy.seen == {("127.0.0.1", declared.port): True, ("127.0.0.2", other.port): False}
    assert len(other.connections) == 2


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"GET /origin-form HTTP/1.1\r\nHost: example.com\r\n\r\n", b"400"),
        (b"GET ftp://example.com/ HTTP/1.1\r\n\r\n", b"400"),
        (b"CONNECT example.com HTTP/1.1\r\n\r\n", b"400"),
        (b"CONNECT example.com:99999 HTTP/1.1\r\n\r\n", b"400"),
        (b"garbage\r\n\r\n", b"400"),
        (b"CONNECT example.com:443 HTTP/2.0\r\n\r\n", b"505"),
    ],
)
async def test_malformed_requests_get_a_clear_status(request_bytes: bytes, status: bytes) -> None:
    blocked: list[tuple[str, int]] = []
    with short_dir() as run:
        proxy = await start_proxy(run / "p.sock", HostFilter(["example.com"]), _append(blocked))
        try:
            line, rest = await proxy_request(proxy.socket_path, request_bytes)
        finally:
            await proxy.close()
    assert line.split(b" ")[1] == status, line
    assert rest.startswith(b"portico sandbox: ")
    assert blocked == []


async def test_a_declared_host_that_is_down_gets_502() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]  # bound, not listening: connect is refused
        with short_dir() as run:
            proxy = await start_proxy(run / "p.sock", HostFilter(["127.0.0.1"]), _append([]))
            try:
                line, rest = await proxy_request(
                    proxy.socket_path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode()
                )
            finally:
                await proxy.close()
    assert line == b"HTTP/1.1 502 Bad Gateway"
    assert f"cannot reach 127.0.0.1:{port}".encode() in rest


async def test_a_socket_path_too_long_is_refused_plainly(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="longer than a Unix socket allows"):
        await start_proxy(tmp_path / ("x" * 120) / "p.sock", HostFilter([]), _append([]))


async def test_a_stale_socket_is_replaced_and_a_file_is_not() -> None:
    with short_dir() as run:
        stale = socket.socket(socket.AF_UNIX)
        stale.bind(str(run / "p.sock"))
        stale.close()  # left behind, as by a crash
        async with http_target() as target:
            proxy = await start_proxy(
                run / "p.sock", HostFilter([f"127.0.0.1:{target.port}"]), _append([])
            )
            try:
                line, _ = await proxy_request(
                    proxy.socket_path,
                    f"GET http://127.0.0.1:{target.port}/ HTTP/1.1\r\n\r\n".encode(),
                )
            finally:
                await proxy.close()
        assert line == b"HTTP/1.1 200 OK"
        assert sorted(p.name for p in run.iterdir()) == []
        (run / "notes.txt").write_text("mine")
        with pytest.raises(ValueError, match="taken by something else"):
            await start_proxy(run / "notes.txt", HostFilter([]), _append([]))
        assert (run / "notes.txt").read_text() == "mine"


def _append(into: list[tuple[str, int]]) -> Any:
    return lambda host, port: into.append((host, port))


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "a loopback address"),
        ("::ffff:127.0.0.1", "a loopback address"),
        ("169.254.169.254", "a link-local address"),
        ("0.0.0.0", "an unspecified address"),
        ("192.168.1.20", "a private network address"),  # the person's LAN, a router
        ("10.0.0.5", "a private network address"),
        ("100.64.0.1", "a private network address"),
        ("fd00::1", "a private network address"),
    ],
)
async def test_a_declared_name_that_resolves_to_this_machine_is_refused(
    address: str, kind: str
) -> None:
    blocked: list[tuple[str, int]] = []
    dns = Dns({"api.example.test": [address]})
    with short_dir() as run:
        async with http_target() as target:
            proxy = await start_proxy(
                run / "p.sock", HostFilter(["api.example.test"]), _append(blocked), resolver=dns
            )
            try:
                line, rest = await proxy_request(
                    proxy.socket_path,
                    f"CONNECT api.example.test:{target.port} HTTP/1.1\r\n\r\n".encode(),
                )
            finally:
                await proxy.close()
    assert line == b"HTTP/1.1 403 Forbidden"
    assert f"api.example.test resolves to {address}, {kind}".encode() in rest
    assert target.connections == []
    assert blocked == []  # declared: nothing to offer; the 403 says why
    assert dns.lookups == ["api.example.test"]


async def test_localhost_is_dialled_at_the_address_it_resolved_to() -> None:
    # The resolver says 127.0.0.2, where alone the target listens: the proxy connects to
    # what it checked instead of resolving the name a second time.
    dns = Dns({"localhost": ["127.0.0.2"], "gone.example.test": []})
    with short_dir() as run:
        async with http_target("127.0.0.2") as target:
            proxy = await start_proxy(
                run / "p.sock",
                HostFilter(["localhost", "unknown.example.test", "gone.example.test"]),
                _append([]),
                resolver=dns,
            )
            try:
                line, rest = await proxy_request(
                    proxy.socket_path,
                    f"GET http://localhost:{target.port}/x HTTP/1.1\r\n\r\n".encode(),
                )
                unknown, why = await proxy_request(
                    proxy.socket_path, b"CONNECT unknown.example.test:443 HTTP/1.1\r\n\r\n"
                )
                gone, why_gone = await proxy_request(
                    proxy.socket_path, b"CONNECT gone.example.test:443 HTTP/1.1\r\n\r\n"
                )
            finally:
                await proxy.close()
    assert line == b"HTTP/1.1 200 OK", rest
    assert rest == f"GET /x HTTP/1.1|host=localhost:{target.port}|body=".encode()
    assert unknown == b"HTTP/1.1 502 Bad Gateway"
    assert b"cannot resolve unknown.example.test: [Errno -2] Name or service not known" in why
    assert gone == b"HTTP/1.1 502 Bad Gateway"
    assert b"cannot resolve gone.example.test: no addresses" in why_gone


@pytest.mark.parametrize(
    ("host", "port", "entry"),
    [
        ("Example.COM.", None, "example.com"),
        ("bücher.example", 443, "xn--bcher-kva.example:443"),
        ("::1", 8080, "[::1]:8080"),
        ("[::1]", None, "[::1]"),
        ("10.0.0.5", None, "10.0.0.5"),
    ],
)
def test_entry_for_a_refused_host_admits_it(host: str, port: int | None, entry: str) -> None:
    assert entry_for(host, port) == entry
    assert HostFilter([entry]).allows(host, port or 443)
    assert HostFilter([entry]).entries == (entry,)
    with pytest.raises(HostEntryError):
        entry_for("167772165")


async def test_allowing_a_host_takes_effect_for_the_next_request() -> None:
    blocked: list[tuple[str, int]] = []
    with short_dir() as run:
        async with http_target() as target:
            proxy = await start_proxy(run / "p.sock", HostFilter([]), _append(blocked))
            request = f"GET http://127.0.0.1:{target.port}/ HTTP/1.1\r\n\r\n".encode()
            try:
                before, _ = await proxy_request(proxy.socket_path, request)
                proxy.replace_filter(HostFilter([*proxy.filter.entries, entry_for("127.0.0.1")]))
                after, _ = await proxy_request(proxy.socket_path, request)
                proxy.replace_filter(HostFilter([]))
                again, _ = await proxy_request(proxy.socket_path, request)
            finally:
                await proxy.close()
    assert (before, after, again) == (
        b"HTTP/1.1 403 Forbidden",
        b"HTTP/1.1 200 OK",
        b"HTTP/1.1 403 Forbidden",
    )
    assert blocked == [("127.0.0.1", target.port)] * 2
