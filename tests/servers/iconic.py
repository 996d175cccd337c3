"""iconic: an MCP server (the SDK's MCPServer) that announces icons, over Streamable HTTP.

Run: ``python tests/servers/iconic.py --port N [--server-icon PATH]`` (endpoint ``/mcp``,
on 127.0.0.1). The server's icon is ``http://127.0.0.1:N<PATH>`` (default ``/icon.png``);
with ``--tls-cert/--tls-key`` it serves HTTPS (icon ``https://...``), and with
``--tls-client-ca`` it also demands a client certificate signed by that CA, for MCP and
icons alike;
the tool ``paint`` carries a red ``data:`` PNG icon, the prompt ``greet`` and the
resource ``iconic://readme`` a green one. Besides MCP it serves:

  /icon.png        a real 16x16 PNG (``png_bytes()``)
  /evil.svg        an SVG with a script, an onload handler and an external image
  /big.png         a PNG header followed by 300 KiB of padding (over the per-icon cap)
  /away            a redirect to another origin (``http://localhost:N+1/icon.png``)
  /cookie.png      the PNG, but answers 403 when the request carries a Cookie or
                   Authorization header (proves the fetch sends neither)
"""

from __future__ import annotations

import argparse
import base64
import struct
import zlib

EVIL_SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
    b' width="16" height="16" onload="alert(1)">'
    b"<script>alert(2)</script>"
    b'<foreignObject width="10" height="10"><div xmlns="http://www.w3.org/1999/xhtml">x</div>'
    b"</foreignObject>"
    b'<image xlink:href="https://tracker.example/p.png" width="1" height="1"/>'
    b'<rect width="16" height="16" fill="url(https://tracker.example/f)" onclick="x()"/>'
    b'<circle cx="8" cy="8" r="4" fill="#2a64b8"/>'
    b"</svg>"
)


def png_bytes(size: int = 16, rgb: tuple[int, int, int] = (42, 100, 184)) -> bytes:
    """A valid RGB PNG of ``size`` x ``size`` in one colour (stdlib only)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * size
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * size))
        + chunk(b"IEND", b"")
    )


def data_url(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def main() -> None:
    from mcp.server.mcpserver import MCPServer
    from mcp_types import Icon
    from starlette.requests import Request
    from starlette.responses import RedirectResponse, Response

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--server-icon", default="/icon.png")
    parser.add_argument("--tls-cert", default=None)
    parser.add_argument("--tls-key", default=None)
    parser.add_argument("--tls-client-ca", default=None)
    opts = parser.parse_args()
    scheme = "https" if opts.tls_cert else "http"
    origin = f"{scheme}://127.0.0.1:{opts.port}"
    server = MCPServer(
        "iconic",
        icons=[Icon(src=origin + opts.server_icon, mimeType="image/png", sizes=["16x16"])],
    )

    def paint(color: str) -> str:
        """Pretend to paint."""
        return f"painted {color}"

    server.add_tool(
        paint,
        icons=[Icon(src=data_url(png_bytes(rgb=(200, 40, 40))), mimeType="image/png")],
        structured_output=False,
    )

    green = [Icon(src=data_url(png_bytes(rgb=(40, 160, 60))), mimeType="image/png")]

    @server.prompt(icons=green)
    def greet(who: str) -> str:
        """Greet someone."""
        return f"Hello {who}"

    @server.resource("iconic://readme", icons=green, mime_type="text/plain")
    def readme() -> str:
        return "read me"

    @server.custom_route("/icon.png", methods=["GET"])
    async def icon(request: Request) -> Response:
        return Response(png_bytes(), media_type="image/png")

    @server.custom_route("/evil.svg", methods=["GET"])
    async def evil(request: Request) -> Response:
        return Response(EVIL_SVG, media_type="image/svg+xml")

    @server.custom_route("/big.png", methods=["GET"])
    async def big(request: Request) -> Response:
        return Response(png_bytes() + b"\x00" * (300 * 1024), media_type="image/png")

    @server.custom_route("/away", methods=["GET"])
    async def away(request: Request) -> Response:
        return RedirectResponse(f"http://localhost:{opts.port + 1}/icon.png", status_code=302)

    @server.custom_route("/cookie.png", methods=["GET"])
    async def cookie(request: Request) -> Response:
        if "cookie" in request.headers or "authorization" in request.headers:
            return Response(b"credentials were sent", status_code=403)
        return Response(png_bytes(), media_type="image/png")

    if not opts.tls_cert:
        server.run("streamable-http", host="127.0.0.1", port=opts.port)
        return
    import ssl

    import uvicorn

    uvicorn.Server(
        uvicorn.Config(
            server.streamable_http_app(host="127.0.0.1"),
            host="127.0.0.1",
            port=opts.port,
            log_level="warning",
            ssl_certfile=opts.tls_cert,
            ssl_keyfile=opts.tls_key,
            ssl_ca_certs=opts.tls_client_ca,
            ssl_cert_reqs=ssl.CERT_REQUIRED if opts.tls_client_ca else ssl.CERT_NONE,
        )
    ).run()


if __name__ == "__main__":
    main()
