"""A connection's feature part: what the server offers, and its schema cache.

The tools, prompts, resources and templates (with the server's info, protocol version,
capabilities and instructions) are fetched on every connect, refreshed after
``list_changed`` (the list refresher calls :meth:`ServerLists.apply`), saved to the
schema cache, and adopted from it by a lazy server that does not start until a call
wants it. A private entry is bound to its credentials (``cache_context.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from portico.config.model import ServerSpec
from portico.runtime import cache_context, schema_cache
from portico.runtime.connection_calls import Calls
from portico.runtime.errors import describe
from portico.runtime.hooks import ConnectionHooks
from portico.runtime.list_refresher import all_pages

if TYPE_CHECKING:
    from mcp import Client


class ServerLists:
    """The server's lists (live, or from the schema cache when ``from_cache``)."""

    def __init__(
        self,
        spec: Callable[[], ServerSpec],
        hooks: ConnectionHooks,
        calls: Calls,
        *,
        note: Callable[[str], None],
        tools_set: Callable[[], None],
    ) -> None:
        self._spec = spec  # the current spec (a reload may replace it)
        self._hooks = hooks
        self._calls = calls
        self._note = note
        self._tools_set = tools_set  # called whenever the tool list is replaced
        self.tools: list[Any] = []
        self.prompts: list[Any] = []
        self.resources: list[Any] = []
        self.resource_templates: list[Any] = []
        self.server_info: Any = None
        self.protocol_version: str | None = None
        self.capabilities: Any = None
        self.instructions: str | None = None
        self.from_cache = False
        self._hints: list[tuple[int, str]] = []  # (ttlMs, cacheScope) per list page
        self._told_private = False  # the log said once that the lists stay off the disk

    def set_tools(self, tools: list[Any]) -> None:
        self.tools = list(tools)
        self._tools_set()

    def apply(self, kind: str, items: list[Any]) -> None:
        """A refreshed list from the server (the list refresher calls this)."""
        if kind == "tools":
            self.set_tools(items)
        elif kind == "prompts":
            self.prompts = list(items)
        elif kind == "resources":
            self.resources = list(items)

    async def fetch(self, client: Client) -> None:
        """Everything a new session's server offers (on every connect)."""
        from mcp import MCPError

        caps = client.server_capabilities
        self.capabilities = caps
        self.server_info = client.server_info
        self.protocol_version = client.protocol_version
        self.instructions = client.instructions
        hints: list[tuple[int, str]] = []
        tools = await all_pages(client.list_tools, "tools", hints) if caps.tools is not None else []
        prompts: list[Any] = []
        resources: list[Any] = []
        templates: list[Any] = []
        try:
            if caps.prompts is not None:
                prompts = await all_pages(client.list_prompts, "prompts", hints)
            if caps.resources is not None:
                resources = await all_pages(client.list_resources, "resources", hints)
                templates = await all_pages(
                    client.list_resource_templates, "resource_templates", hints
                )
        except MCPError as exc:  # a server with broken prompts still offers its tools
            self._note(f"listing prompts/resources failed: {describe(exc)}")
        self.prompts, self.resources, self.resource_templates = prompts, resources, templates
        self._hints = hints
        self.set_tools(tools)

    async def refresh_tools(self) -> list[Any]:
        """Re-fetch the tool list from the server (bypassing the SDK's cache)."""
        client = await self._calls.live_client()
        hints: list[tuple[int, str]] = []
        tools = await all_pages(client.list_tools, "tools", hints, cache_mode="refresh")
        self._hints = hints + self._hints  # the fresh tools page, the others as they were
        self.set_tools(tools)
        await self.save_cache()
        return tools

    async def list_prompts(self) -> list[Any]:
        self.prompts = await self._calls.request(
            "prompts/list", lambda client: all_pages(client.list_prompts, "prompts")
        )
        return self.prompts

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> Any:
        return await self._calls.request(
            f"prompts/get {name}",
            lambda client: asyncio.wait_for(
                client.get_prompt(name, arguments or {}), self._spec().timeout
            ),
        )

    async def list_resources(self) -> list[Any]:
        self.resources = await self._calls.request(
            "resources/list", lambda client: all_pages(client.list_resources, "resources")
        )
        return self.resources

    async def list_resource_templates(self) -> list[Any]:
        calls = self._calls
        client = await calls.live_client()
        mark = calls.begin()
        try:
            return await all_pages(client.list_resource_templates, "resource_templates")
        except Exception as exc:
            raise await calls.failure(exc, "resources/templates/list", mark) from exc
        finally:
            calls.end()

    async def read_resource(self, uri: str) -> Any:
        return await self._calls.request(
            f"resources/read {uri}",
            lambda client: asyncio.wait_for(client.read_resource(uri), self._spec().timeout),
        )

    async def save_cache(self) -> None:
        if not self._hooks.write_schema_cache:
            return
        ttl_ms, scope = schema_cache.freshness(self._hints)
        context = await self._cache_context() if scope == "private" else None
        schema = schema_cache.CachedSchema(
            ttl_ms=ttl_ms,
            cache_scope=scope,
            context=context,
            tools=list(self.tools),
            prompts=list(self.prompts),
            resources=list(self.resources),
            resource_templates=list(self.resource_templates),
            server_info=self.server_info,
            protocol_version=self.protocol_version,
            capabilities=self.capabilities,
        )
        try:
            written = await asyncio.to_thread(schema_cache.save, self._spec(), schema)
        except OSError as exc:
            self._note(f"cannot write the schema cache: {exc}")
            return
        if written is None and not self._told_private:
            self._told_private = True
            self._note(
                "the server marks its lists private (cacheScope) and Portico cannot tell"
                " its credentials apart: they stay in memory for this session only"
            )

    async def adopt_cache(self) -> bool:
        """Take the lists from the schema cache (a lazy server); False when there is no
        entry, or it is another sign-in's, or older than the server allows."""
        cached = await asyncio.to_thread(schema_cache.load, self._spec())
        if cached is None:
            return False
        if cached.cache_scope == "private" and await self._cache_context() != cached.context:
            self._note(
                "the cached lists are private to other credentials or another sign-in:"
                " starting the server to list them again"
            )
            return False
        if cached.expired() and cached.ttl_ms is not None:
            self._note(
                f"the cached lists are older than the {cached.ttl_ms / 1000:g} s the server"
                " allows: starting it to list them again"
            )
            return False
        self.prompts = cached.prompts
        self.resources = cached.resources
        self.resource_templates = cached.resource_templates
        self.server_info = cached.server_info
        self.protocol_version = cached.protocol_version
        self.capabilities = cached.capabilities
        self.from_cache = True
        self.set_tools(cached.tools)
        return True

    async def _cache_context(self) -> str | None:
        """The authorization context of a private entry; None when it cannot be read."""
        try:
            return await cache_context.authorization_context(self._spec(), self._hooks)
        except Exception as exc:
            self._note(f"cannot fingerprint the credentials for the schema cache: {describe(exc)}")
            return None
