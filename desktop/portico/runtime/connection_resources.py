"""A connection's feature part: the resources a person subscribed to.

The subscribed URIs are kept across reconnects (every new session subscribes again, the
list refresher does it): ``subscriptions/listen`` on 2026 sessions, ``resources/subscribe``
on handshake-era ones. A change the server announces becomes a ``ResourceUpdated`` event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from portico.runtime.connection_calls import Calls, Offered, Session
from portico.runtime.events import EventBus, ResourceUpdated
from portico.runtime.lifecycle import Phase
from portico.runtime.list_refresher import ListRefresher, handshake_era


class Subscriptions:
    """The URIs to hear about (iterable, ``in``), subscribed on the live session."""

    def __init__(
        self,
        name: str,
        bus: EventBus,
        session: Session,
        offered: Offered,
        calls: Calls,
        *,
        refresher: Callable[[], ListRefresher | None],
    ) -> None:
        self._name = name
        self._bus = bus
        self._session = session
        self._offered = offered
        self._calls = calls
        self._refresher = refresher  # the live session's (None unless connected)
        self.uris: set[str] = set()  # the refresher of every session reads this set
        # URIs whose (un)subscribe is on its way to the server: until it is acknowledged,
        # an update the server makes is not yet announced to us
        self.pending: set[str] = set()

    def __contains__(self, uri: object) -> bool:
        return uri in self.uris

    def __iter__(self) -> Iterator[str]:
        return iter(self.uris)

    def __len__(self) -> int:
        return len(self.uris)

    async def subscribe(self, uri: str) -> None:
        """Hear about changes of ``uri`` (``ResourceUpdated`` events), now and after every
        reconnect."""
        if uri in self.uris:
            return
        self.uris.add(uri)
        await self._sent(uri, on=True)

    async def unsubscribe(self, uri: str) -> None:
        if uri not in self.uris:
            return
        self.uris.discard(uri)
        await self._sent(uri, on=False)

    def updated(self, uri: str) -> None:
        self._bus.publish(ResourceUpdated(self._name, uri))

    def heard(self, message: Any) -> None:
        """``notifications/resources/updated`` on a handshake-era session (2026 sessions
        hear it on the listen stream: the refresher reports it there)."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        uri = str(getattr(getattr(message, "params", None), "uri", "") or "")
        if uri in self.uris and self._offered.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self.updated(uri)

    async def _sent(self, uri: str, *, on: bool) -> None:
        self.pending.add(uri)
        try:
            await self._resubscribe(uri, on=on)
        finally:
            self.pending.discard(uri)

    async def _resubscribe(self, uri: str, *, on: bool) -> None:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        client, refresher = self._session.client(), self._refresher()
        if client is None or refresher is None or self._session.life.phase is not Phase.RUNNING:
            return  # applied on the next connect
        if self._offered.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await refresher.relisten()
            return
        caps = self._offered.capabilities
        if caps is None or caps.resources is None or not caps.resources.subscribe:
            return  # the server offers none; asking would only get "method not found"
        calls = self._calls
        mark = calls.begin()
        try:
            with handshake_era():
                if on:
                    await client.subscribe_resource(uri)
                else:
                    await client.unsubscribe_resource(uri)
        except Exception as exc:
            verb = "resources/subscribe" if on else "resources/unsubscribe"
            raise await calls.failure(exc, f"{verb} {uri}", mark) from exc
        finally:
            calls.end()
