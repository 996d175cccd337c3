"""A running endpoint over a real hub, in the test's own loop, and SDK clients for it."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2

from portico.config.model import ServerSpec
from portico.gateway.endpoint import Endpoint
from portico.gateway.run import running_endpoint
from portico.prompts import Prompter
from portico.runtime.hub import Hub
from portico.services import build_services
from tests.helpers.specs import config_of


@dataclass
class Running:
    endpoint: Endpoint
    hub: Hub

    @property
    def url(self) -> str:
        return self.endpoint.url


@asynccontextmanager
async def serving(
    prompter: Prompter, *specs: ServerSpec, **settings: Any
) -> AsyncIterator[Running]:
    """The hub of ``specs`` behind an endpoint, as ``portico serve`` runs them."""
    settings.setdefault("defer_tools", 1000)
    config = config_of(*specs, **settings)
    services = build_services(prompter, config=config)
    hub = services.start_hub()
    try:
        await hub.apply(config)
        async with running_endpoint(
            hub,
            services.guard,
            services.secrets,
            unix_socket=False,
            write_discovery=False,
            policy=services.policy,
        ) as endpoint:
            yield Running(endpoint, hub)
    finally:
        await hub.close()


class _ClosingRace(logging.Filter):
    """The SDK's client logs an ERROR when a notification reaches its reader just as it
    closes its own read stream (a 2025-11-25 session's GET stream, as the client exits):
    a race inside the test's client, not the endpoint's fault."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        closing = isinstance(error, anyio.ClosedResourceError)
        return not (closing and record.getMessage().startswith("Error parsing SSE message"))


@asynccontextmanager
async def sdk_client(
    url: str,
    token: str | None,
    *,
    origin: str | None = None,
    mode: str = "auto",
    **callbacks: Any,
) -> AsyncIterator[Any]:
    """The MCP Python SDK's own client, with a bearer token (and an Origin) on every request."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if origin is not None:
        headers["Origin"] = origin
    race = _ClosingRace()
    sdk_log = logging.getLogger("mcp.client.streamable_http")
    sdk_log.addFilter(race)
    try:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode, **callbacks) as c,
        ):
            yield c
    finally:
        sdk_log.removeFilter(race)


def texts(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}
