"""The config watcher applies edits of the real config files to a running hub."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from portico.config import load
from portico.paths import paths
from portico.runtime.events import Status
from portico.runtime.hub import Hub
from portico.runtime.watcher import ConfigWatcher
from tests.helpers.logs import AllowLogs
from tests.helpers.unsandboxed import agreeing_hooks

from .conftest import eventually

pytestmark = pytest.mark.slow  # talks to real servers or processes

TINY = Path(__file__).resolve().parents[1] / "servers" / "tiny.py"


def server_block(name: str, tools: int) -> str:
    command = json.dumps([sys.executable, str(TINY), "--name", name, "--tools", str(tools)])
    return f"[mcp.{name}]\ncommand = {command}\n\n"


async def test_edits_are_applied(project: Path, allow_logs: AllowLogs) -> None:
    allow_logs(r"not valid TOML.*keep their previous settings")
    toml = paths().global_toml
    toml.parent.mkdir(parents=True, exist_ok=True)
    toml.write_text(server_block("alpha", 1))
    async with Hub(hooks=agreeing_hooks()) as hub:
        config = load(project)
        assert not config.errors, config.errors
        await hub.apply(config)
        alpha = hub.connection("alpha")
        alpha_pid = alpha.pid
        watcher = ConfigWatcher(
            hub.apply, project=project, interval=0.1, debounce=0.2, previous=config
        )
        watcher.start()
        try:
            # a project file appears: its server is added, alpha is left alone
            (project / ".portico" / "mcp.toml").write_text(server_block("beta", 3))
            await eventually(
                lambda: (
                    "beta" in hub.connections
                    and hub.connection("beta").state.status is Status.RUNNING
                ),
                what="beta started by the watcher",
            )
            assert hub.connection("alpha") is alpha and alpha.pid == alpha_pid
            assert len(hub.registry.server_tools("beta")) == 4

            # a half-typed edit that does not parse keeps alpha running
            toml.write_text(server_block("alpha", 1) + "[mcp.broken\n")
            reloads = watcher.reloads
            await eventually(lambda: watcher.reloads > reloads, what="reload of the bad file")
            assert hub.connection("alpha") is alpha and alpha.state.status is Status.RUNNING

            # removing alpha from the file stops it
            toml.write_text("")
            await eventually(lambda: alpha.state.status is Status.STOPPED, what="alpha stopped")
            assert "alpha" not in hub.connections
            assert hub.registry.server_tools("alpha") == []
        finally:
            await watcher.stop()
