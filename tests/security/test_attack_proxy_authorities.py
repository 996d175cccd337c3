"""Attack: a sandboxed server dresses an undeclared host up as its declared one, for the
filtering proxy to check one authority and dial another. The declared entry is
``127.0.0.2:PORT``; a listener on an undeclared port of that address and one on
127.0.0.3 count every connection. Each trick is refused (403, or 400 for what is no
authority at all) and neither listener is reached:

- the declared host on a port it did not declare (``CONNECT 127.0.0.2:OTHER``);
- userinfo: ``http://127.0.0.2:PORT@127.0.0.3:OTHER/`` (URL parsers disagree on which
  side of the ``@`` is the host) and ``CONNECT 127.0.0.2:PORT@127.0.0.3:OTHER``;
- the undeclared address in the forms only the C resolver reads (``2130706435``,
  ``0x7f.0.0.3``) or as IPv4-mapped IPv6;
- a ``Host`` header naming the undeclared host on a request to the declared one: the
  declared host gets the request, with its own authority as ``Host``.
"""

from __future__ import annotations

import pytest

from portico.runtime.sandbox.netproxy import HostFilter, start_proxy
from tests.runtime.sandbox.targets import http_target, proxy_request, short_dir

pytestmark = pytest.mark.slow


async def test_an_undeclared_authority_in_disguise_is_refused() -> None:
    blocked: list[tuple[str, int]] = []
    async with (
        http_target("127.0.0.2") as declared,
        http_target("127.0.0.2") as other_port,
        http_target("127.0.0.3") as other_host,
    ):
        allow = f"127.0.0.2:{declared.port}"
        port, elsewhere = other_port.port, f"127.0.0.3:{other_host.port}"
        tricks = {
            f"CONNECT 127.0.0.2:{port} HTTP/1.1\r\n\r\n": b"403",
            f"GET http://127.0.0.2:{port}/ HTTP/1.1\r\n\r\n": b"403",
            f"GET http://{allow}@{elsewhere}/ HTTP/1.1\r\n\r\n": b"403",
            f"CONNECT {allow}@{elsewhere} HTTP/1.1\r\n\r\n": b"400",
            f"CONNECT 2130706435:{other_host.port} HTTP/1.1\r\n\r\n": b"403",
            f"CONNECT 0x7f.0.0.3:{other_host.port} HTTP/1.1\r\n\r\n": b"403",
            f"CONNECT [::ffff:127.0.0.3]:{other_host.port} HTTP/1.1\r\n\r\n": b"403",
            f"GET http://[::ffff:127.0.0.2]:{declared.port}/ HTTP/1.1\r\n\r\n": b"403",
        }
        with short_dir() as run:
            proxy = await start_proxy(
                run / "p.sock", HostFilter([allow]), lambda h, p: blocked.append((h, p))
            )
            try:
                for request, code in tricks.items():
                    status, _ = await proxy_request(proxy.socket_path, request.encode())
                    assert status.split()[1] == code, (request, status)
                status, body = await proxy_request(
                    proxy.socket_path,
                    f"GET http://{allow}/in HTTP/1.1\r\nHost: {elsewhere}\r\n\r\n".encode(),
                )
            finally:
                await proxy.close()
        assert other_port.connections == [] and other_host.connections == []
    assert status == b"HTTP/1.1 200 OK", status
    assert body == f"GET /in HTTP/1.1|host={allow}|body=".encode(), body
    assert len(declared.connections) == 1
    assert ("127.0.0.2", port) in blocked and ("127.0.0.3", other_host.port) in blocked
