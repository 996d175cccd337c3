"""server-everything (node, as installed under tests/peers) connects and answers a call
when its command runs in the bwrap launcher."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from portico.runtime.sandbox.bwrap import BwrapPlan
from tests.runtime.conftest import EVERYTHING
from tests.runtime.sandbox.targets import need_bwrap


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
