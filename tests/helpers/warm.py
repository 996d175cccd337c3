"""The test session's fork server (forkserver.py): started once by the run's controlling
process (tests/conftest.py), shared by every worker. It runs the ``portico`` commands of
:func:`tests.helpers.cli.run_cli` and the SDK test servers of ``tests/servers/`` (through
``tests/servers/warm_start.py``) with their imports already done.

Measured (2 cores): ``toolbox.py stdio`` 0.45 s of CPU to its first answer when started
plainly, ~0.03 s forked; a ``portico`` command 0.3-1.0 s, of which 0.25-0.6 s is import.
``PORTICO_TEST_FORKSERVER=0`` turns it off (every command starts its own interpreter)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers.forkserver import CLIENT, started

ENV = "PORTICO_TEST_FORKSERVER"  # the socket's path, for the workers' run_cli
MARKER = Path(__file__).resolve().parents[1] / "servers" / ".forkserver"  # for warm_start.py

PRELOAD = (
    # the SDK test servers: the server stack, both transports
    "mcp.server",
    "mcp.server.mcpserver",
    "mcp.server.stdio",
    "mcp.server.streamable_http",
    "mcp.server.streamable_http_manager",
    "mcp.server.sse",
    "mcp.server.apps",
    "mcp.server.caching",
    "mcp.server.transport_security",
    "mcp.shared.exceptions",
    "mcp_types",
    "uvicorn",
    "uvicorn.main",
    "sse_starlette",
    "starlette.applications",
    # the portico commands: the CLI, the runtime, the clients of both transports
    "portico.cli.main",
    "portico.cli.commands",
    "portico.cli.runtime_cmds",
    "portico.cli.chat_cmds",
    "portico.cli.auth_cmds",
    "portico.cli.config_cmds",
    "portico.cli.edit_cmds",
    "portico.cli.trust_cmds",
    "portico.cli.model_cmds",
    "portico.cli.connect_cmds",
    "portico.cli.serve_cmds",
    "portico.services",
    "portico.runtime.hub",
    "portico.chat.host",
    "portico.gateway.cli_client",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "mcp.client.sse",
    "httpx2",
)


def wanted() -> bool:
    return sys.platform == "linux" and os.environ.get(ENV) != "0"


@contextmanager
def session_fork_server() -> Iterator[None]:
    """The fork server for the run, named in the environment (inherited by the workers)
    and in the marker file, both taken back at the end. A run inside a test (a pytest
    the suite starts) uses the server of the run around it; a second run beside this
    one starts its own and gives the marker back when it ends."""
    if not wanted():
        yield
        return
    outer = os.environ.get(ENV)
    if outer and os.path.exists(outer):
        yield
        return
    folder = Path(tempfile.mkdtemp(prefix="portico-fork-"))
    try:
        before: str | None = MARKER.read_text(encoding="utf-8")
    except OSError:
        before = None
    with started(folder / "fork.sock", *PRELOAD) as path:
        os.environ[ENV] = path
        MARKER.write_text(path + "\n", encoding="utf-8")
        try:
            yield
        finally:
            os.environ.pop(ENV, None)
            with contextlib.suppress(OSError):
                if MARKER.read_text(encoding="utf-8").strip() == path:
                    if before is None:
                        MARKER.unlink()
                    else:
                        MARKER.write_text(before, encoding="utf-8")
    with contextlib.suppress(OSError):
        folder.rmdir()


def python_command(*argv: str) -> list[str]:
    """``python *argv`` through the session's fork server when it runs; else plain."""
    path = os.environ.get(ENV)
    if not path or path == "0" or not os.path.exists(path):
        return [sys.executable, *argv]
    return [sys.executable, "-S", str(CLIENT), path, *argv]
