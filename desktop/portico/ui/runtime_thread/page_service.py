"""The server pages' runtime side: everything the pages ask of the hub, policy and config.

Lives on the runtime thread (``RuntimeSession.pages``); every method is a coroutine the
GUI awaits through ``RuntimeThread.submit`` and returns plain data. Tool calls from the
Tools tab go through the policy's ToolGuard in one "direct mode" chat context, so the
approval rules, spend limits and remembered approvals are the same as in a chat.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from portico.runtime.events import ServerState
from portico.ui.runtime_thread import snapshots
from portico.ui.runtime_thread.snapshots import PromptInfo, ResourceInfo, ServerDetails, ToolInfo

if TYPE_CHECKING:
    from portico.config.model import ServerSpec
    from portico.policy.guard import ToolGuard
    from portico.runtime.results import ToolResult
    from portico.ui.runtime_thread.session import RuntimeSession

DIRECT_CHAT_ID = "direct"


class PageService:
    def __init__(self, session: RuntimeSession) -> None:
        self.session = session
        self.hub = session.hub
        self.last_calls: dict[str, float] = {}
        self._guard: Any = None
        self._chat: Any = None

    # --- reading ---------------------------------------------------------------------

    async def details(self, name: str) -> ServerDetails:
        return snapshots.server_details(self.hub, name, self.last_calls)

    async def tools(self, name: str) -> list[ToolInfo]:
        return snapshots.server_tools(self.hub, name)

    async def prompts(self, name: str) -> list[PromptInfo]:
        return await snapshots.server_prompts(self.hub, name)

    async def resources(self, name: str) -> list[ResourceInfo]:
        return await snapshots.server_resources(self.hub, name)

    # --- calling ---------------------------------------------------------------------

    def guard(self) -> ToolGuard:
        if self._guard is None:
            policy = self.session.policy
            from portico.policy.guard import ChatContext

            hub = self.hub
            self._guard = policy.guard(
                hub.registry, approvals_off=lambda: hub.settings.approvals_mode == "off"
            )
            self._chat = ChatContext(chat_id=DIRECT_CHAT_ID)
        return self._guard

    async def call_tool(self, server: str, qualified: str, arguments: dict[str, Any]) -> ToolResult:
        """Call through the ToolGuard (validation, approval, spend) like a chat would."""
        guard = self.guard()
        self.last_calls[server] = time.time()
        return await guard.call(self._chat, qualified, arguments)

    async def get_prompt(self, server: str, prompt: str, arguments: dict[str, str]) -> ToolResult:
        from portico.runtime.results import process_prompt

        conn = self.hub.connection(server)
        self.last_calls[server] = time.time()
        raw = await conn.get_prompt(prompt, arguments or None)
        return process_prompt(raw, self.hub.registry.image_dir)

    async def read_resource(self, server: str, uri: str) -> ToolResult:
        from portico.runtime.results import process_resource

        conn = self.hub.connection(server)
        self.last_calls[server] = time.time()
        return process_resource(await conn.read_resource(uri))

    # --- config write-back -----------------------------------------------------------

    def _spec(self, name: str) -> ServerSpec:
        conn = self.hub.connections.get(name)
        if conn is not None:
            return conn.spec
        config = self.session.config
        spec = config.server(name) if config is not None else None
        if spec is None:
            raise KeyError(f"no server named {name!r} in the loaded config")
        return spec

    async def set_enabled(self, name: str, enabled: bool) -> Path:
        """Write ``enabled`` into the file that defines ``name``; returns that file."""
        path = self._spec(name).source.path

        def write() -> None:
            from portico.config.document import ConfigDocument

            doc = ConfigDocument.load(path)
            doc.set_enabled(name, enabled)
            doc.save()

        await asyncio.to_thread(write)
        return path

    async def remove(self, name: str) -> Path:
        """Remove ``name`` from the file that defines it; returns that file."""
        path = self._spec(name).source.path

        def write() -> None:
            from portico.config.document import ConfigDocument

            doc = ConfigDocument.load(path)
            doc.remove_server(name)
            doc.save()

        await asyncio.to_thread(write)
        return path

    # --- trust -----------------------------------------------------------------------

    async def review_trust(self, name: str) -> ServerState:
        """Ask the trust review again (also after a Reject), then reconnect."""
        await self.session.policy.trust.review(self._spec(name))
        return await self.hub.retry(name)
