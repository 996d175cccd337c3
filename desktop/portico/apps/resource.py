"""A view's HTML, read from its server with ``resources/read`` and kept per session."""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from portico.runtime.tool_views import VIEW_MIME

from .csp import ViewCsp, view_csp

MAX_VIEW_BYTES = 4 * 1024 * 1024  # a bigger document is refused, not rendered
PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")


class ViewUnavailable(Exception):
    """The view cannot be shown; the message says why (the tool's text result stays)."""


@dataclass(frozen=True)
class ViewResource:
    server: str
    uri: str
    html: str = field(repr=False)
    csp: ViewCsp
    permissions: tuple[str, ...] = ()  # asked for; each is asked of the person, never granted
    prefers_border: bool | None = None
    digest: str = ""  # sha256 of the HTML: what a review or a log line names

    @property
    def size(self) -> int:
        return len(self.html.encode())


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def view_resource(server: str, uri: str, result: Any) -> ViewResource:
    """The view from a ``resources/read`` result (model or JSON), or ViewUnavailable."""
    contents = _field(result, "contents") or []
    chosen = next((c for c in contents if str(_field(c, "uri")) == uri), None)
    if chosen is None:
        chosen = contents[0] if len(contents) == 1 else None
    where = f"server {server!r}, view {uri}"
    if chosen is None:
        raise ViewUnavailable(f"{where}: the server returned no content for it")
    mime = str(_field(chosen, "mime_type") or _field(chosen, "mimeType") or "")
    if mime.replace(" ", "").lower() != VIEW_MIME:
        raise ViewUnavailable(
            f"{where}: its type is {mime or 'not given'!r}, not {VIEW_MIME!r}; it is not shown"
        )
    text = _field(chosen, "text")
    if text is None:
        blob = _field(chosen, "blob")
        try:
            text = base64.b64decode(str(blob or ""), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise ViewUnavailable(f"{where}: its content is not UTF-8 HTML ({exc})") from exc
    html = str(text)
    if len(html.encode()) > MAX_VIEW_BYTES:
        raise ViewUnavailable(
            f"{where}: {len(html.encode()):,} bytes is over the {MAX_VIEW_BYTES:,}-byte limit"
        )
    meta = _field(chosen, "meta") or _field(chosen, "_meta") or {}
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    ui = ui if isinstance(ui, Mapping) else {}
    asked = ui.get("permissions")
    permissions = tuple(p for p in PERMISSIONS if p in asked) if isinstance(asked, Mapping) else ()
    border = ui.get("prefersBorder")
    return ViewResource(
        server=server,
        uri=uri,
        html=html,
        csp=view_csp(ui, resource=where),
        permissions=permissions,
        prefers_border=border if isinstance(border, bool) else None,
        digest=hashlib.sha256(html.encode()).hexdigest(),
    )


Reader = Callable[[str], Awaitable[Any]]


class ViewCache:
    """Views of one server, read once per session: ``generation`` is the connection's
    (a new session reads again); concurrent asks for one view share one read."""

    def __init__(self, server: str) -> None:
        self.server = server
        self._generation: int | None = None
        self._views: dict[str, asyncio.Future[ViewResource]] = {}
        self.reads = 0  # resources/read requests sent (tests and benchmarks read it)

    async def get(self, uri: str, read: Reader, *, generation: int | None) -> ViewResource:
        if generation != self._generation:
            self._generation = generation
            self._views.clear()
        pending = self._views.get(uri)
        if pending is not None:
            return await asyncio.shield(pending)
        pending = self._views[uri] = asyncio.get_running_loop().create_future()
        self.reads += 1
        try:
            view = view_resource(self.server, uri, await read(uri))
        except asyncio.CancelledError:
            self._views.pop(uri, None)
            pending.cancel()
            raise
        except Exception as exc:
            self._views.pop(uri, None)  # a later ask reads again
            failure = (
                exc
                if isinstance(exc, ViewUnavailable)
                else ViewUnavailable(f"server {self.server!r}, view {uri}: {exc}")
            )
            pending.set_exception(failure)
            pending.exception()  # retrieved, so an unawaited future logs nothing
            if failure is exc:
                raise
            raise failure from exc
        pending.set_result(view)
        return view

    def forget(self) -> None:
        self._views.clear()
