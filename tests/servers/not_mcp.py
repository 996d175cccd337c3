"""An HTTP endpoint that answers like a broken or wrong server (standard library only).

    python not_mcp.py MODE PORT

MODE: ``json`` (200 with invalid JSON), ``html`` (200 with a web page), ``error500``
(500 on every request, the SSE GET included), ``bearer401`` (401 with an OAuth
``WWW-Authenticate: Bearer`` challenge), ``plain401`` (401 without a challenge),
``prm401`` (401 without a challenge, RFC 9728 protected-resource metadata at
``/.well-known/oauth-protected-resource/mcp``).
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def _answer(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        if MODE == "bearer401":
            where = f"http://127.0.0.1:{self.server.server_address[1]}"
            self.send_header(
                "WWW-Authenticate",
                f'Bearer resource_metadata="{where}/.well-known/oauth-protected-resource"',
            )
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        if MODE == "json":
            self._answer(200, "application/json", b'{"jsonrpc": "2.0", "id": 1, "result": {oops')
        elif MODE == "html":
            self._answer(200, "text/html", b"<html><body>Please sign in</body></html>")
        elif MODE.endswith("401"):
            self._answer(401, "application/json", b'{"error": "invalid_token"}')
        else:
            self._answer(500, "text/plain", b"internal error")

    def do_GET(self) -> None:
        if MODE == "prm401" and self.path == "/.well-known/oauth-protected-resource/mcp":
            where = f"http://127.0.0.1:{self.server.server_address[1]}"
            body = json.dumps(
                {
                    "resource": f"{where}/mcp",
                    "authorization_servers": [f"{where}/issuer"],
                    "bearer_methods_supported": ["header"],
                }
            ).encode()
            self._answer(200, "application/json", body)
            return
        self._answer(500, "text/plain", b"internal error")


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler).serve_forever()
