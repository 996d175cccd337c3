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
import socket
import sys
import tempfile
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

from portico.config.model import ServerSpec

# refused(host, port, entry): a host the proxy refused (in learn mode: let through and
# reported), and the allow entry for it
Refused = Callable[[str, int, str], None]

INNER_PORT = 3128  # the sandbox has its own loopback: any port is free there
BLOCKED_NOTE = "sandbox: refused a connection to"
LEARNED_NOTE = "sandbox (learn mode): let through a connection to"


@dataclass(frozen=True)
class SandboxNet:
    """What the launch adds for the network: paths to bind, a command prefix, env."""

    read: tuple[str, ...] = ()
    prefix: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


async def open_network(
    spec: ServerSpec,
    stack: AsyncExitStack,
    note: Callable[[str], None],
    refused: Refused | None = None,
    *,
    port: int = INNER_PORT,
) -> SandboxNet:
    """No network (nothing to add) unless the server declares hosts; then the proxy,
    started now and closed with ``stack``. ``refused(host, port, entry)`` hears of each
    refused host with the ``network.allow`` entry that would allow it. The bridge
    listens on 127.0.0.1:``port``: inside bwrap's own loopback, or (Landlock, macOS,
    which have no network namespace) on this machine's, where ``free_port`` gives one."""
    learn = spec.sandbox_learns
    if not spec.sandbox.network_allow and not learn:
        return SandboxNet()
    from portico.runtime.sandbox.bridge import BRIDGE_SCRIPT, bridge_prefix, proxy_env
    from portico.runtime.sandbox.hostfilter import HostFilter, entry_for
    from portico.runtime.sandbox.netproxy import start_proxy

    def blocked(host: str, port: int) -> None:
        entry = entry_for(host, port)
        if learn:
            note(
                f"{LEARNED_NOTE} {host}:{port} (not in {spec.name}.sandbox.network.allow); "
                f"to allow it once learn mode is off, add {entry!r} there"
            )
        else:
            note(
                f"{BLOCKED_NOTE} {host}:{port} (not in {spec.name}.sandbox.network.allow); "
                f"to allow it, add {entry!r} there"
            )
        if refused is not None:
            refused(host, port, entry)

    folder = Path(tempfile.mkdtemp(prefix="portico-net-", dir="/tmp"))
    stack.callback(shutil.rmtree, folder, True)
    proxy = await start_proxy(
        folder / "proxy.sock", HostFilter(spec.sandbox.network_allow), blocked, observe=learn
    )
    stack.push_async_callback(proxy.close)
    python = sys.executable
    return SandboxNet(
        read=(sys.base_prefix, sys.prefix, BRIDGE_SCRIPT, str(folder)),
        prefix=tuple(bridge_prefix(python, str(proxy.socket_path), port)),
        env=proxy_env(port),
    )


def free_port() -> int:
    """A TCP port free on this machine's loopback now (for a bridge outside a namespace)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
