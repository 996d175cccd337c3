"""The CLI's side of the endpoint's CLI routes: one HTTP request, standard library only.

A command asks :func:`live_endpoint` first; it answers None (with the reason ``-v``
prints) when no discovery file names a running process, and a request that finds nobody
listening says so, so the command goes direct instead.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from portico.gateway import discovery

CONNECT_TIMEOUT = 2.0
CALL_TIMEOUT = 3600.0  # a tool call may run long; the server's own timeout ends it first


class Unreachable(Exception):
    """Nobody answered at the discovery file's address."""


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


@dataclass(frozen=True)
class LiveEndpoint:
    found: discovery.Discovery

    @property
    def where(self) -> str:
        return self.found.socket or self.found.url if self._use_socket() else self.found.url

    def _use_socket(self) -> bool:
        return bool(self.found.socket) and Path(self.found.socket or "").exists()

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._use_socket():
            assert self.found.socket is not None
            return _UnixConnection(self.found.socket, timeout)
        parts = urllib.parse.urlsplit(self.found.url)
        return http.client.HTTPConnection(
            parts.hostname or "127.0.0.1", parts.port, timeout=timeout
        )

    def request(
        self, method: str, path: str, body: Any = None, *, query: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        url = f"{discovery.CLI_PREFIX}/{path}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = {"Authorization": f"Bearer {self.found.token}", "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        conn = self._connection(CONNECT_TIMEOUT)
        try:
            try:
                conn.connect()
            except OSError as exc:
                raise Unreachable(f"nothing answers at {self.where} ({exc})") from exc
            assert conn.sock is not None
            conn.sock.settimeout(CALL_TIMEOUT)
            conn.request(method, url, body=data, headers=headers)
            reply = conn.getresponse()
            raw = reply.read()
        except (OSError, http.client.HTTPException) as exc:
            raise Unreachable(
                f"the running Portico at {self.where} failed to answer ({exc})"
            ) from exc
        finally:
            conn.close()
        try:
            return reply.status, json.loads(raw) if raw else None
        except ValueError as exc:
            raise Unreachable(f"the running Portico at {self.where} sent no JSON") from exc


def live_endpoint() -> tuple[LiveEndpoint | None, str]:
    """The endpoint the discovery file names, if its process runs; else None and why."""
    path = discovery.discovery_file()
    found = discovery.read(path)
    if found is None:
        return None, f"no running Portico ({path} names none)"
    if not found.alive():
        return None, f"no running Portico (process {found.pid} in {path} has ended)"
    return LiveEndpoint(found), ""
