"""One running endpoint over a started hub: what the app and ``portico serve`` share."""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from portico.gateway import discovery
from portico.gateway.clients import ClientBook
from portico.gateway.endpoint import Endpoint
from portico.gateway.server import Gateway

if TYPE_CHECKING:
    from portico.auth.secret_store import SecretStore
    from portico.policy.guard import ToolGuard
    from portico.policy.setup import Policy
    from portico.runtime.hub import Hub

log = logging.getLogger(__name__)


@asynccontextmanager
async def running_endpoint(
    hub: Hub,
    guard: ToolGuard,
    secrets: SecretStore,
    *,
    port: int = 0,
    unix_socket: bool = True,
    write_discovery: bool = True,
    policy: Policy | None = None,
) -> AsyncIterator[Endpoint]:
    """Serve ``hub`` through ``guard`` until the block ends; with ``write_discovery``
    the discovery file names it (with a token for this process's CLI users). With
    ``policy``, a backend's elicitation and sampling during a client's call may go to that
    client (``forwarding.py``)."""
    book = ClientBook(secrets)
    cli_token = book.add_ephemeral(discovery.CLI_CLIENT)
    gateway = Gateway(hub, guard)
    if policy is not None:
        policy.elicitation.route = gateway.forwarder.route_elicitation
        policy.sampling.route = gateway.forwarder.route_sampling
    endpoint = Endpoint(
        gateway,
        book,
        port=port,
        unix_path=discovery.socket_path() if unix_socket else None,
    )
    await endpoint.start()
    # The first validated call imports jsonschema (~0.3 s): not on a client's first call.
    await asyncio.to_thread(importlib.import_module, "jsonschema")
    if write_discovery:
        sock = str(endpoint.unix_path) if endpoint.unix_path is not None else None
        discovery.write(discovery.Discovery(endpoint.url, cli_token, os.getpid(), sock))
    try:
        yield endpoint
    finally:
        if policy is not None:
            policy.elicitation.route = policy.sampling.route = None
        gateway.forwarder.close()
        if write_discovery:
            discovery.remove_if_ours()
        await endpoint.close()
