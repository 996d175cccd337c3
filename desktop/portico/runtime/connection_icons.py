"""A connection's feature part: the icons its server announces, fetched in the background.

The connect never waits for them: :meth:`ServerIcons.want` starts a fetch of the server's
icon and those of its tools, prompts and resources (files in ``hooks.icon_cache``), and
calls ``shown`` once they are known, so the connection can publish them.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from portico.config.model import ServerSpec
from portico.runtime.hooks import ConnectionHooks


class Offered(Protocol):
    """What the server offers (the connection's lists), read when the fetch runs."""

    server_info: Any
    tools: list[Any]
    prompts: list[Any]
    resources: list[Any]
    resource_templates: list[Any]


class ServerIcons:
    """The announced icons, once fetched: the server's, and by tool, prompt and resource."""

    def __init__(
        self,
        spec: ServerSpec,
        hooks: ConnectionHooks,
        *,
        note: Callable[[str], None],
        pins: Callable[[], Any],
        tls: Callable[[], Awaitable[ssl.SSLContext | bool]],
        shown: Callable[[bool], None],
    ) -> None:
        self._spec = spec
        self._hooks = hooks
        self._note = note
        self._pins = pins  # host -> IPs the connection may use (DNS pinning)
        self._tls = tls  # the server's TLS settings (icons come from its origin)
        self._shown = shown  # called after a fetch; True when any item has an icon
        self.path: str | None = None  # the server's own icon
        self.tools: dict[str, str] = {}  # by tool name
        self.prompts: dict[str, str] = {}  # by prompt name
        self.resources: dict[str, str] = {}  # by resource uri (or template)
        self._task: asyncio.Task[None] | None = None

    def want(self, offered: Offered) -> None:
        """Fetch the announced icons in the background (the connect never waits for them)."""
        if self._hooks.icon_cache is None:
            return
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = asyncio.create_task(self._fetch(offered), name=f"icons:{self._spec.name}")

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _fetch(self, offered: Offered) -> None:
        from portico.runtime import icons

        cache = self._hooks.icon_cache
        assert cache is not None
        from portico.runtime.transports.pinning import pinned_transport

        origin = self._spec.url if self._spec.is_remote else None
        hook = self._hooks.pinned_addresses
        pins = hook(self._spec) if hook is not None else self._pins()
        tls = await self._tls() if origin is not None else True
        kept: dict[str, str] = {}  # src list -> file: items sharing an icon fetch it once

        async def one(announced: Any) -> str | None:
            key = repr([getattr(i, "src", i) for i in announced or ()])
            if key not in kept:
                path = await icons.fetch_best(
                    announced,
                    origin,
                    cache,
                    webp_ok=self._hooks.icon_webp,
                    note=self._note,
                    transports=lambda: pinned_transport(pins, verify=tls, trust_env=False),
                )
                kept[key] = "" if path is None else str(path)
            return kept[key] or None

        server_icon = await one(getattr(offered.server_info, "icons", None))
        found: list[dict[str, str]] = [
            {},
            {},
            {},
        ]  # tools by name, prompts by name, resources by uri
        groups = [
            (offered.tools, "name"),
            (offered.prompts, "name"),
            (list(offered.resources) + list(offered.resource_templates), "uri"),
        ]
        budget = icons.MAX_TOOL_ICONS
        for (items, key), into in zip(groups, found, strict=True):
            for item in items:
                if budget <= 0:
                    break
                if getattr(item, "icons", None):
                    budget -= 1
                    path = await one(item.icons)
                    ident = getattr(item, key, None) or getattr(item, "uri_template", None)
                    if path is not None and ident is not None:
                        into[str(ident)] = path
        self.tools, self.prompts, self.resources = found
        self.path = server_icon
        self._shown(any(found))
