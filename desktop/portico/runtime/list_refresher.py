"""Keep a connection's tool / prompt / resource lists fresh after list_changed.

A burst of notifications makes one refresh: at most one refresh in flight plus one
pending. 2026 sessions announce changes only on a ``subscriptions/listen`` stream, which
:meth:`ListRefresher.listen` opens and acknowledges before the server is called Running,
and opens again whenever it ends (with the backoff of :mod:`portico.runtime.relisten`),
then fetches the lists again: the stream has no replay.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from portico.runtime import relisten
from portico.runtime.errors import describe
from portico.runtime.events import EventBus, ListsChanged

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

    bus: EventBus

    @property
    def name(self) -> str: ...

    def note(self, text: str) -> None: ...

    def apply_list(self, kind: str, items: list[Any]) -> None: ...

    def resource_updated(self, uri: str) -> None: ...

    async def save_cache(self) -> None: ...


@contextlib.contextmanager
def handshake_era() -> Iterator[None]:
    """Calls that are deprecated in 2026 and still the way of handshake-era servers."""
    import warnings

    from mcp.shared.exceptions import MCPDeprecationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        yield


async def all_pages(
    method: Callable[..., Awaitable[Any]],
    attribute: str,
    hints: list[tuple[int, str]] | None = None,
    **kwargs: Any,
) -> list[Any]:
    """Every page of a ``list_*`` call. With ``hints``, each page's caching hint
    ``(ttlMs, cacheScope)`` is appended to it, for pages whose server sent one."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(1000):
        page = await method(cursor=cursor, **kwargs)
        if hints is not None and "ttl_ms" in getattr(page, "model_fields_set", ()):
            hints.append((int(page.ttl_ms), str(page.cache_scope)))
        items.extend(getattr(page, attribute))
        cursor = page.next_cursor
        if not cursor:
            break
    return items


def _wanted(caps: Any) -> dict[str, bool]:
    """Which list changes the server announces (its capabilities' listChanged)."""
    return {
        "tools_list_changed": bool(caps and caps.tools and caps.tools.list_changed),
        "prompts_list_changed": bool(caps and caps.prompts and caps.prompts.list_changed),
        "resources_list_changed": bool(caps and caps.resources and caps.resources.list_changed),
    }


class ListRefresher:
    """One per connected session: coalesced refreshes and the 2026 listen stream."""

    def __init__(
        self, owner: ListOwner, client: Client, subscriptions: set[str] | None = None
    ) -> None:
        self._owner = owner
        self._client = client
        self.subscriptions = subscriptions if subscriptions is not None else set()
        self._listen_args: tuple[Any, str | None] | None = None
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
                other = tuple(k for k in ("prompts", "resources") if k in kinds)
                if other:  # tools changes are ToolsChanged already
                    self._owner.bus.publish(ListsChanged(self._owner.name, other))
            except Exception as exc:
                self._owner.note(f"refreshing {', '.join(sorted(kinds))} failed: {describe(exc)}")

    def caught_up(self, capabilities: Any) -> None:
        """A 2025-11-25 session's event stream was opened again: what the server sent
        meanwhile was lost, so fetch every list it offers again (a legacy server may
        announce changes without declaring listChanged)."""
        caps = capabilities
        offered = {
            "tools_list_changed": caps is not None and caps.tools is not None,
            "prompts_list_changed": caps is not None and caps.prompts is not None,
            "resources_list_changed": caps is not None and caps.resources is not None,
        }
        self._catch_up(offered, sorted(self.subscriptions))

    def _caught_up(self, wanted: dict[str, bool], resources: list[str], deaf: float) -> None:
        """Listening again after a drop: what changed meanwhile was never announced, so
        fetch the announced lists again and count every subscribed resource as updated."""
        self._owner.note(
            f"listening for list changes again after {deaf:.1f} s; fetching the lists again"
        )
        self._catch_up(wanted, resources)

    def _catch_up(self, wanted: dict[str, bool], resources: list[str]) -> None:
        for key, kind in (
            ("tools_list_changed", "tools"),
            ("prompts_list_changed", "prompts"),
            ("resources_list_changed", "resources"),
        ):
            if wanted[key]:
                self.changed(kind)
        for uri in resources:
            self._owner.resource_updated(uri)

    async def subscribe_all(self, capabilities: Any, protocol_version: str | None) -> None:
        """Handshake-era sessions: ``resources/subscribe`` for every subscribed URI (again,
        after a reconnect). 2026 sessions carry them on the listen stream instead."""
        from mcp import MCPError
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if protocol_version in MODERN_PROTOCOL_VERSIONS or not self.subscriptions:
            return
        caps = capabilities
        if caps is None or caps.resources is None or not caps.resources.subscribe:
            self._owner.note("the server offers no resource subscriptions")
            return
        for uri in sorted(self.subscriptions):
            try:
                with handshake_era():
                    await self._client.subscribe_resource(uri)
            except MCPError as exc:
                self._owner.note(f"subscribing to {uri} failed: {describe(exc)}")

    async def relisten(self) -> None:
        """The subscribed URIs changed: open the 2026 listen stream again with them."""
        if self._listen_args is None:
            return
        listener, self._listener = self._listener, None
        if listener is not None and not listener.done():
            listener.cancel()
            with contextlib.suppress(BaseException):
                await listener
        await self.listen(*self._listen_args)

    async def listen(self, capabilities: Any, protocol_version: str | None) -> None:
        """On 2026 sessions, open ``subscriptions/listen`` for the lists the server announces
        and the resources subscribed to."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if protocol_version not in MODERN_PROTOCOL_VERSIONS or capabilities is None:
            return
        self._listen_args = (capabilities, protocol_version)
        caps = capabilities
        wanted = _wanted(caps)
        resources = sorted(self.subscriptions) if caps.resources is not None else []
        if not any(wanted.values()) and not resources:
            return
        acked = asyncio.Event()
        client = self._client

        async def run() -> None:
            from mcp.shared.subscriptions import (
                PromptsListChanged,
                ResourcesListChanged,
                ResourceUpdated,
                ToolsListChanged,
            )

            backoff = relisten.Backoff()
            deaf_since: float | None = None  # a stream was lost: changes since then missed
            while True:
                heard = False
                try:
                    async with client.listen(
                        tools_list_changed=wanted["tools_list_changed"],
                        prompts_list_changed=wanted["prompts_list_changed"],
                        resources_list_changed=wanted["resources_list_changed"],
                        resource_subscriptions=resources,
                    ) as subscription:
                        acked.set()
                        heard = True
                        backoff.reset()
                        if deaf_since is not None:
                            self._caught_up(wanted, resources, time.monotonic() - deaf_since)
                            deaf_since = None
                        async for event in subscription:
                            if isinstance(event, ToolsListChanged):
                                self.changed("tools")
                            elif isinstance(event, PromptsListChanged):
                                self.changed("prompts")
                            elif isinstance(event, ResourcesListChanged):
                                self.changed("resources")
                            elif isinstance(event, ResourceUpdated):
                                self._owner.resource_updated(event.uri)
                    why = "the server closed it"
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # the session itself carries on
                    if not heard and relisten.refused(exc):
                        self._owner.note(f"list-change subscription refused: {describe(exc)}")
                        return
                    why = describe(exc)
                finally:
                    acked.set()
                delay = backoff.next()
                if deaf_since is None:  # once per outage, not once per attempt
                    deaf_since = time.monotonic()
                    self._owner.note(
                        f"list-change subscription ended ({why}); listening again in"
                        f" {delay:g} s, then fetching the lists again"
                    )
                await asyncio.sleep(delay)

        self._listener = asyncio.create_task(run(), name="mcp-listen")
        # Running only once changes can be heard (a bounded wait: never block the start).
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LISTEN_ACK_SECONDS):
                await acked.wait()
