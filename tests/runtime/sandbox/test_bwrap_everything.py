"""server-everything (node, as installed under tests/peers) connects and answers a call
when its command runs in the bwrap launcher, and under the Landlock one."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from portico.runtime.sandbox.bwrap import BwrapPlan
from portico.runtime.sandbox.landlock import landlock_argv
from tests.runtime.conftest import EVERYTHING
from tests.runtime.sandbox.targets import need_bwrap, need_landlock


async def test_server_everything_runs_sandboxed(tmp_path: Path) -> None:
    bwrap = need_bwrap()
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on PATH")
    script = EVERYTHING.resolve()
    modules = script.parents[3]  # the resolved node_modules (the shared install)
    home = tmp_path / "home"
    home.mkdir()
    plan = BwrapPlan(home=str(home), read=[str(modules)])
    argv = plan.argv(bwrap, [node, str(script), "stdio"])
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with Client(params, mode="legacy") as client:
        result = await client.call_tool("echo", {"message": "inside"})
    texts = [getattr(block, "text", "") for block in result.content]
    assert any("inside" in text for text in texts), texts


def _install_of(program: str) -> str:
    """The folder node is installed in (``/usr`` for ``/usr/bin/node``)."""
    return str(Path(program).resolve().parents[1])


async def test_server_everything_runs_under_landlock_and_the_socket_filter() -> None:
    """Node under the Landlock launcher with TCP shut off, so with the seccomp filter
    (no UDP, no io_uring: libuv must do without)."""
    need_landlock(4)
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on PATH")
    script = EVERYTHING.resolve()
    modules = script.parents[3]
    argv = landlock_argv(
        sys.executable,
        [node, str(script), "stdio"],
        read=[str(modules), _install_of(node)],
        net="none",
    )
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with Client(params, mode="legacy") as client:
        result = await client.call_tool("echo", {"message": "filtered"})
    texts = [getattr(block, "text", "") for block in result.content]
    assert any("filtered" in text for text in texts), texts
