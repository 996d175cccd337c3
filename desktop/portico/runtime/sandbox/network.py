"""A sandboxed server's network: none, or the declared hosts through the filtering proxy.

With ``sandbox.network.allow`` set, one proxy (``netproxy``) per server listens on a Unix
socket in a fresh folder under /tmp (short enough for ``sun_path``); the folder is bound
into the sandbox, and the bridge (``bridge``) runs first inside it, listening on
127.0.0.1:``INNER_PORT`` with ``HTTP(S)_PROXY`` pointing there. Each refused host is one
line in the server's log naming it and the entry that would allow it. The proxy stops
and its folder goes when the server's session closes.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

from portico.config.model import ServerSpec

INNER_PORT = 3128  # the sandbox has its own loopback: any port is free there
BLOCKED_NOTE = "sandbox: refused a connection to"


@dataclass(frozen=True)
class SandboxNet:
    """What the launch adds for the network: paths to bind, a command prefix, env."""

    read: tuple[str, ...] = ()
    prefix: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


async def open_network(
    spec: ServerSpec, stack: AsyncExitStack, note: Callable[[str], None]
) -> SandboxNet:
    """No network (nothing to add) unless the server declares hosts; then the proxy,
    started now and closed with ``stack``."""
    if not spec.sandbox.network_allow:
        return SandboxNet()
    from portico.runtime.sandbox.bridge import BRIDGE_SCRIPT, bridge_prefix, proxy_env
    from portico.runtime.sandbox.hostfilter import HostFilter, entry_for
    from portico.runtime.sandbox.netproxy import start_proxy

    def blocked(host: str, port: int) -> None:
        note(
            f"{BLOCKED_NOTE} {host}:{port} (not in {spec.name}.sandbox.network.allow); to "
            f"allow it, add {entry_for(host, port)!r} there"
        )

    folder = Path(tempfile.mkdtemp(prefix="portico-net-", dir="/tmp"))
    stack.callback(shutil.rmtree, folder, True)
    proxy = await start_proxy(
        folder / "proxy.sock", HostFilter(spec.sandbox.network_allow), blocked
    )
    stack.push_async_callback(proxy.close)
    python = sys.executable
    return SandboxNet(
        read=(sys.base_prefix, sys.prefix, BRIDGE_SCRIPT, str(folder)),
        prefix=tuple(bridge_prefix(python, str(proxy.socket_path), INNER_PORT)),
        env=proxy_env(INNER_PORT),
    )
