"""Keep a connection's tool / prompt / resource lists fresh after list_changed.

A burst of notifications makes one refresh: at most one refresh in flight plus one
pending. 2026 sessions announce changes only on a ``subscriptions/listen`` stream, which
:meth:`ListRefresher.listen` opens and acknowledges before the server is called Running.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from portico.runtime.errors import describe

if TYPE_CHECKING:
    from mcp import Client

LIST_CHANGE_QUIET = 0.05  # a burst of list_changed is over after this long without one
LIST_CHANGE_MAX_WAIT = 0.5  # a steady stream still gets a refresh this often
LISTEN_ACK_SECONDS = 5.0

KIND_OF_METHOD = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}


class ListOwner(Protocol):
    """What the refresher needs from its connection."""

    def note(self, text: str) -> None: ...

    def apply_list(self, kind: str, items: list[Any]) -> None: ...

    async def save_cache(self) -> None: ...


async def all_pages(
    method: Callable[..., Awaitable[Any]], attribute: str, **kwargs: Any
) -> list[Any]:
    """Every page of a ``list_*`` call."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(1000):
        page = await method(cursor=cursor, **kwargs)
        items.extend(getattr(page, attribute))
        cursor = page.next_cursor
        if not cursor:
            break
    return items


class ListRefresher:
    """One per connected session: coalesced refreshes and the 2026 listen stream."""

    def __init__(self, owner: ListOwner, client: Client) -> None:
        self._owner = owner
        self._client = client
        self._pending: set[str] = set()
        self._last_change = 0.0
        self._task: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None

    def changed(self, kind: str) -> None:
        """A list changed on the server: mark it and make sure a refresh will run."""
        self._pending.add(kind)
        self._last_change = time.monotonic()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._loop())

    async def close(self) -> None:
        for task in (self._listener, self._task):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self._listener = self._task = None

    async def _quiet(self) -> None:
        """Until no list_changed came for LIST_CHANGE_QUIET s (at most LIST_CHANGE_MAX_WAIT)."""
        give_up = time.monotonic() + LIST_CHANGE_MAX_WAIT
        while True:
            delay = min(self._last_change + LIST_CHANGE_QUIET, give_up) - time.monotonic()
            if delay <= 0:
                return
            await asyncio.sleep(delay)

    async def _loop(self) -> None:
        client = self._client
        while self._pending:
            await self._quiet()
            kinds, self._pending = self._pending, set()
            try:
                if "tools" in kinds:
                    tools = await all_pages(client.list_tools, "tools", cache_mode="refresh")
                    self._owner.apply_list("tools", tools)
                if "prompts" in kinds:
                    prompts = await all_pages(client.list_prompts, "prompts", cache_mode="refresh")
                    self._owner.apply_list("prompts", prompts)
                if "resources" in kinds:
                    resources = await all_pages(
                        client.list_resources, "resources", cache_mode="refresh"
                    )
                    self._owner.apply_list("resources", resources)
                await self._owner.save_cache()
            except Exception as exc:
                self._owner.note(f"refreshing {', '.join(sorted(kinds))} failed: {describe(exc)}")

    async def listen(self, capabilities: Any, protocol_version: str | None) -> None:
        """On 2026 sessions, open ``subscriptions/listen`` for the lists the server announces."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if protocol_version not in MODERN_PROTOCOL_VERSIONS or capabilities is None:
            return
        caps = capabilities
        wanted = {
            "tools_list_changed": bool(caps.tools and caps.tools.list_changed),
            "prompts_list_changed": bool(caps.prompts and caps.prompts.list_changed),
            "resources_list_changed": bool(caps.resources and caps.resources.list_changed),
        }
        if not any(wanted.values()):
            return
        acked = asyncio.Event()
        client = self._client

        async def run() -> None:
            from mcp.shared.subscriptions import (
                PromptsListChanged,
                ResourcesListChanged,
                ToolsListChanged,
            )

            try:
                async with client.listen(
                    tools_list_changed=wanted["tools_list_changed"],
                    prompts_list_changed=wanted["prompts_list_changed"],
                    resources_list_changed=wanted["resources_list_changed"],
                ) as subscription:
                    acked.set()
                    async for event in subscription:
                        if isinstance(event, ToolsListChanged):
                            self.changed("tools")
                        elif isinstance(event, PromptsListChanged):
                            self.changed("prompts")
                        elif isinstance(event, ResourcesListChanged):
                            self.changed("resources")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the session itself carries on
                self._owner.note(f"list-change subscription ended: {describe(exc)}")
            finally:
                acked.set()

        self._listener = asyncio.create_task(run(), name="mcp-listen")
        # Running only once changes can be heard (a bounded wait: never block the start).
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LISTEN_ACK_SECONDS):
                await acked.wait()
